package otf2

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/ptrace-dev/ptrace/internal/units"
	"github.com/ptrace-dev/ptrace/trace"
)

// Anchor is what the anchor file (NAME.otf2) says about the archive.
type Anchor struct {
	Version            [3]uint8 // OTF2 major, minor, bugfix of the writer
	ChunkEvents        uint64
	ChunkDefs          uint64
	Substrate          uint8
	Compression        uint8
	NumLocations       uint64
	NumGlobalDefs      uint64
	Machine, Creator   string
	Description        string
	Properties         map[string]string
	TraceID            uint64
	anchorFormat       uint8
	traceFormatVersion uint8
}

// MaxTraceFormat is the newest OTF2 trace format this reader decodes (the
// anchor's trace format version, which OTF2's own reader checks; OTF2 3.x
// still writes 2). Within it, later OTF2 versions only append attributes to
// records and add record types, which the records' lengths let a reader
// skip: the OTF2 version number itself is no limit.
const MaxTraceFormat = 2

const anchorMagic = "OTF2"

// substrates and compressions the anchor may name
const (
	substratePOSIX   = 1
	substrateSION    = 2
	substrateNone    = 3
	compressionNone  = 1
	compressionUndef = 0
)

// Chunk sizes OTF2 allows (OTF2_CHUNK_SIZE_MIN/MAX are 256 KiB and 16 MiB;
// smaller chunks are accepted for tests, larger ones are corruption).
const (
	minChunk = 256
	maxChunk = 16 << 20
	// maxAnchor bounds the anchor file: a few hundred bytes plus the
	// properties.
	maxAnchor = 1 << 20
)

// readAnchor parses the anchor file at path.
func readAnchor(path string) (*Anchor, error) {
	f, err := trace.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("anchor file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxAnchor+1))
	if err != nil {
		return nil, fmt.Errorf("anchor file %s: %w", path, err)
	}
	if len(b) > maxAnchor {
		return nil, &FormatError{File: path, Offset: maxAnchor, Msg: fmt.Sprintf("anchor file larger than %d bytes", maxAnchor)}
	}
	return decodeAnchor(b, path)
}

// decodeAnchor parses an anchor file held in b.
func decodeAnchor(b []byte, path string) (*Anchor, error) {
	d := &dec{b: b, file: path}
	if err := d.chunkHeader(false); err != nil {
		return nil, err
	}
	a := &Anchor{}
	magic, err := d.str()
	if err != nil {
		return nil, err
	}
	if magic != anchorMagic {
		return nil, d.errf(2, "not an OTF2 anchor file (magic %q)", magic)
	}
	if a.anchorFormat, err = d.u8(); err != nil {
		return nil, err
	}
	if a.anchorFormat == 0 {
		return nil, d.errf(d.pos-1, "invalid anchor format 0")
	}
	if a.traceFormatVersion, err = d.u8(); err != nil {
		return nil, err
	}
	if a.traceFormatVersion > MaxTraceFormat {
		return nil, d.errf(d.pos-1, "OTF2 trace format %d is newer than this reader supports (%d)", a.traceFormatVersion, MaxTraceFormat)
	}
	for i := range a.Version {
		if a.Version[i], err = d.u8(); err != nil {
			return nil, err
		}
	}
	if a.ChunkEvents, err = d.u64full(); err != nil {
		return nil, err
	}
	if a.ChunkEvents < minChunk || a.ChunkEvents > maxChunk {
		return nil, d.errf(d.pos-8, "invalid event chunk size %d (OTF2 allows %d to %d)", a.ChunkEvents, 256<<10, maxChunk)
	}
	if a.ChunkDefs, err = d.u64full(); err != nil {
		return nil, err
	}
	if a.ChunkDefs < minChunk || a.ChunkDefs > maxChunk {
		return nil, d.errf(d.pos-8, "invalid definition chunk size %d (OTF2 allows %d to %d)", a.ChunkDefs, 256<<10, maxChunk)
	}
	if a.Substrate, err = d.u8(); err != nil {
		return nil, err
	}
	if a.Compression, err = d.u8(); err != nil {
		return nil, err
	}
	switch a.Substrate {
	case substratePOSIX:
	case substrateSION:
		return nil, d.errf(d.pos-2, "the archive's files are inside SIONlib containers (Score-P with SCOREP_TRACING_USE_SION=true), which ptrace does not read: record again with SCOREP_TRACING_USE_SION=false for one file per location")
	case substrateNone:
		return nil, d.errf(d.pos-2, "the archive was written with OTF2's substrate NONE: it holds no event files")
	default:
		return nil, d.errf(d.pos-2, "file substrate %d is not supported (only POSIX, one file per location)", a.Substrate)
	}
	if a.Compression != compressionNone && a.Compression != compressionUndef {
		return nil, d.errf(d.pos-1, "compressed archives (compression %d, zlib is 2) are not supported: OTF2's own tools read them", a.Compression)
	}
	if a.NumLocations, err = d.u64full(); err != nil {
		return nil, err
	}
	if a.NumGlobalDefs, err = d.u64full(); err != nil {
		return nil, err
	}
	for _, s := range []*string{&a.Machine, &a.Creator, &a.Description} {
		if *s, err = d.str(); err != nil {
			return nil, err
		}
	}
	if a.anchorFormat >= 2 {
		n, err := d.u32full()
		if err != nil {
			return nil, err
		}
		if int64(n) > int64(len(d.b)-d.pos)/2 { // a property is two strings of at least one byte
			return nil, d.errf(d.pos-4, "implausible property count %d", n)
		}
		a.Properties = make(map[string]string, n)
		for i := uint32(0); i < n; i++ {
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			v, err := d.str()
			if err != nil {
				return nil, err
			}
			a.Properties[k] = v
		}
		if a.TraceID, err = d.u64full(); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Global definition record types (otf2_global_definitions.h). Types 5 to 8
// are global-only records; 10 and up are shared with local definitions.
const (
	gdClockProperties       = 5
	gdParadigm              = 6
	gdParadigmProperty      = 7
	gdIoParadigm            = 8
	gdString                = 10
	gdAttribute             = 11
	gdSystemTreeNode        = 12
	gdLocationGroup         = 13
	gdLocation              = 14
	gdRegion                = 15
	gdCallsite              = 16
	gdCallpath              = 17
	gdGroup                 = 18
	gdMetricMember          = 19
	gdMetricClass           = 20
	gdMetricInstance        = 21
	gdComm                  = 22
	gdParameter             = 23
	gdRmaWin                = 24
	gdMetricClassRecorder   = 25
	gdSystemTreeNodeProp    = 26
	gdSystemTreeNodeDomain  = 27
	gdLocationGroupProperty = 28
	gdLocationProperty      = 29
	gdCartDimension         = 30
	gdCartTopology          = 31
	gdCartCoordinate        = 32
	gdSourceCodeLocation    = 33
	gdCallingContext        = 34
	gdCallingContextProp    = 35
	gdInterruptGenerator    = 36
	gdIoFileProperty        = 37
	gdIoRegularFile         = 38
	gdIoDirectory           = 39
	gdIoHandle              = 40
	gdIoPreCreatedHandle    = 41
	gdCallpathParameter     = 42
	gdInterComm             = 43
	gdLastKnown             = 43
)

// defNames are the definition records' names as otf2-print spells them.
var defNames = [...]string{
	gdClockProperties: "CLOCK_PROPERTIES", gdParadigm: "PARADIGM", gdParadigmProperty: "PARADIGM_PROPERTY",
	gdIoParadigm: "IO_PARADIGM", gdString: "STRING", gdAttribute: "ATTRIBUTE", gdSystemTreeNode: "SYSTEM_TREE_NODE",
	gdLocationGroup: "LOCATION_GROUP", gdLocation: "LOCATION", gdRegion: "REGION", gdCallsite: "CALLSITE",
	gdCallpath: "CALLPATH", gdGroup: "GROUP", gdMetricMember: "METRIC_MEMBER", gdMetricClass: "METRIC_CLASS",
	gdMetricInstance: "METRIC_INSTANCE", gdComm: "COMM", gdParameter: "PARAMETER", gdRmaWin: "RMA_WIN",
	gdMetricClassRecorder: "METRIC_CLASS_RECORDER", gdSystemTreeNodeProp: "SYSTEM_TREE_NODE_PROPERTY",
	gdSystemTreeNodeDomain: "SYSTEM_TREE_NODE_DOMAIN", gdLocationGroupProperty: "LOCATION_GROUP_PROPERTY",
	gdLocationProperty: "LOCATION_PROPERTY", gdCartDimension: "CART_DIMENSION", gdCartTopology: "CART_TOPOLOGY",
	gdCartCoordinate: "CART_COORDINATE", gdSourceCodeLocation: "SOURCE_CODE_LOCATION",
	gdCallingContext: "CALLING_CONTEXT", gdCallingContextProp: "CALLING_CONTEXT_PROPERTY",
	gdInterruptGenerator: "INTERRUPT_GENERATOR", gdIoFileProperty: "IO_FILE_PROPERTY",
	gdIoRegularFile: "IO_REGULAR_FILE", gdIoDirectory: "IO_DIRECTORY", gdIoHandle: "IO_HANDLE",
	gdIoPreCreatedHandle: "IO_PRE_CREATED_HANDLE", gdCallpathParameter: "CALLPATH_PARAMETER",
	gdInterComm: "INTER_COMM",
}

// DefName returns the OTF2 name of a global definition record type.
func DefName(t uint8) string {
	if int(t) < len(defNames) && defNames[t] != "" {
		return defNames[t]
	}
	return fmt.Sprintf("UNKNOWN_DEFINITION(%d)", t)
}

// Local definition record types (otf2_local_definitions.h).
const (
	ldMappingTable = 5
	ldClockOffset  = 6
)

// Mapping types of mapping tables (OTF2_MappingType) this reader applies.
const (
	mapRegion         = 3
	mapGroup          = 4
	mapComm           = 6
	mapRmaWin         = 8
	mapCallingContext = 10
	numMaps           = 15
)

// Region is a region definition.
type Region struct {
	Name      string
	Canonical string
	File      string
	Line      uint32
	Role      uint8
	Paradigm  uint8
	Flags     uint32
	// string ids, resolved into the names once every string is known
	nameID, canonID, fileID uint32
}

// isTaskgroup tells a taskgroup region (OTF2 has no role of its own for it;
// Score-P names it "!$omp taskgroup") from a taskwait.
func (r *Region) isTaskgroup() bool { return strings.Contains(r.Name, "taskgroup") }

// Group is a group definition. For MPI COMM_GROUP groups Members are ranks
// (positions in the paradigm's COMM_LOCATIONS group), for COMM_LOCATIONS
// and LOCATIONS groups location ids.
type Group struct {
	Name     string
	Type     uint8
	Paradigm uint8
	Flags    uint32
	Members  []uint64
	nameID   uint32
}

// Comm is a communicator definition: an intracommunicator (Comm) or, with
// Inter set, an intercommunicator (OTF2 3.0's InterComm) between Group and
// GroupB, made from the common communicator Parent.
type Comm struct {
	Name   string
	Group  uint32
	GroupB uint32
	Parent uint32
	Flags  uint32
	Inter  bool
	nameID uint32
}

// RmaWin is an RMA window definition (Score-P: an MPI window): its
// name and the communicator it was made on, whose members are the
// window's group.
type RmaWin struct {
	Name   string
	Comm   uint32
	Flags  uint32
	nameID uint32
}

// CallingContext is a node of the calling-context tree (OTF2 2.0) that
// Score-P writes with unwinding (SCOREP_ENABLE_UNWINDING): the region it
// is in, its parent node (undefined32 at a root).
type CallingContext struct {
	Region uint32
	Parent uint32
}

// LocationGroup is a process (or an accelerator's group of streams).
type LocationGroup struct {
	ID       uint32
	Name     string
	Type     uint8
	Parent   uint32
	Creating uint32 // the location group that created it (OTF2 3.0); undefined before
	nameID   uint32
}

// Location is one event stream: a CPU thread, an accelerator stream or a
// metric recorder.
type Location struct {
	ID     uint64
	name   uint32 // string id; Defs.LocationName resolves it
	Type   uint8
	Events uint64
	Group  uint32
}

// ClockOffset is a local ClockOffset definition: at local time Time the
// global clock read Time+Offset, with StdDev.
type ClockOffset struct {
	Time   uint64
	Offset int64
	StdDev float64
}

// Defs holds the global definitions the converter uses, in memory
// proportional to the definition file (strings, the location table, the
// groups' members) and checked against a memory limit while they are read.
type Defs struct {
	TimerResolution uint64
	GlobalOffset    uint64
	TraceLength     uint64
	strings         idTable[string]
	regions         idTable[Region]
	groups          idTable[*Group]
	comms           idTable[Comm]
	wins            idTable[RmaWin]
	contexts        idTable[CallingContext]
	nodes           idTable[uint32]  // system tree node → its name's string id
	paradigms       map[uint8]uint32 // paradigm → its name's string id
	LocationGroups  []LocationGroup
	Locations       []Location
	// Records counts the definition records read, by type.
	Records [256]int64
	// Warnings are tolerated problems (references to undefined
	// definitions, duplicates), counted with the first few listed.
	Warnings []string
	warnN    int64
	// groupDups counts the Group ids defined twice (among the warnings)
	groupDups int64
	// Memory is what the definitions hold, in bytes (an estimate).
	Memory   int64
	limit    int64
	path     string
	hasClock bool
}

// maxDefWarnings is how many definition problems are listed (the rest are
// counted).
const maxDefWarnings = 10

func (g *Defs) warn(format string, args ...any) {
	g.warnN++
	if len(g.Warnings) < maxDefWarnings {
		g.Warnings = append(g.Warnings, fmt.Sprintf(format, args...))
	}
}

// WarningCount returns the number of definition problems (Warnings lists
// the first).
func (g *Defs) WarningCount() int64 { return g.warnN }

// String resolves a string id; OTF2's undefined id (all ones) is "".
func (g *Defs) String(id uint32) string {
	s, _ := g.strings.get(id)
	return s
}

// Region returns region id, or nil.
func (g *Defs) Region(id uint32) *Region { return g.regions.ptr(id) }

// Group returns group id, or nil.
func (g *Defs) Group(id uint32) *Group {
	grp, _ := g.groups.get(id)
	return grp
}

// Comm returns communicator id, or nil.
func (g *Defs) Comm(id uint32) *Comm { return g.comms.ptr(id) }

// RmaWin returns RMA window id, or nil.
func (g *Defs) RmaWin(id uint32) *RmaWin { return g.wins.ptr(id) }

// RmaWinIDs returns the RMA window ids in increasing order.
func (g *Defs) RmaWinIDs() []uint32 { return g.wins.ids() }

// CallingContext returns calling context id, nil when undefined.
func (g *Defs) CallingContext(id uint32) *CallingContext { return g.contexts.ptr(id) }

// CommIDs returns the communicator ids in increasing order.
func (g *Defs) CommIDs() []uint32 { return g.comms.ids() }

// NodeName returns the name of system tree node id and whether it exists.
func (g *Defs) NodeName(id uint32) (string, bool) {
	s, ok := g.nodes.get(id)
	if !ok {
		return "", false
	}
	return g.String(s), true
}

// LocationName returns a location's name.
func (g *Defs) LocationName(l *Location) string { return g.String(l.name) }

// ParadigmName names an OTF2 paradigm (from the archive's Paradigm
// definitions, else OTF2's enumeration).
func (g *Defs) ParadigmName(p uint8) string {
	if id, ok := g.paradigms[p]; ok && g.String(id) != "" {
		return g.String(id)
	}
	if int(p) < len(paradigmNames) && paradigmNames[p] != "" {
		return paradigmNames[p]
	}
	return fmt.Sprintf("paradigm %d", p)
}

var paradigmNames = [...]string{"unknown", "user", "compiler", "OpenMP", "MPI", "CUDA", "measurement",
	"pthread", "HMPP", "OmpSs", "hardware", "GASPI", "UPC", "SHMEM", "Windows threads", "QThreads",
	"ACE threads", "TBB threads", "OpenACC", "OpenCL", "MTAPI", "sampling", "none", "HIP", "Kokkos"}

// charge adds n bytes to what the definitions hold and fails past the
// limit.
func (g *Defs) charge(n int64) error {
	g.Memory += n
	if g.limit > 0 && g.Memory > g.limit {
		return fmt.Errorf("%s: the global definitions need more than %s in memory, over the limit of %s (--memory-limit)",
			g.path, units.Bytes(g.Memory), units.Bytes(g.limit))
	}
	return nil
}

// forEachRecord walks the records of a chunked definition file read from r,
// one chunk in memory at a time, calling fn with the record type and the
// decoder positioned at the record's first attribute and limited to the
// record (reads past its end fail); end is the record's end.
func forEachRecord(r io.Reader, path string, chunk uint64, fn func(t uint8, d *dec, end int) error) error {
	if chunk < minChunk || chunk > maxChunk {
		return fmt.Errorf("%s: invalid definition chunk size %d", path, chunk)
	}
	buf := make([]byte, chunk)
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Size() < int64(chunk) {
			buf = make([]byte, st.Size())
		}
	}
	big := false
	for off := int64(0); ; off += int64(chunk) {
		n, err := io.ReadFull(r, buf)
		if n == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF) {
			return &FormatError{File: path, Offset: off, Msg: "truncated definition file: no end-of-file record"}
		}
		if err != nil && err != io.ErrUnexpectedEOF {
			return fmt.Errorf("%s: offset %d: %w", path, off, err)
		}
		d := &dec{b: buf[:n], file: path, base: off, big: big}
		if err := d.chunkHeader(true); err != nil {
			return err
		}
		big = d.big
	chunk:
		for {
			if d.pos >= len(d.b) {
				return d.errf(d.pos, "truncated definition file: chunk ends without an end record")
			}
			at := d.pos
			t := d.b[d.pos]
			d.pos++
			switch t {
			case recEndOfChunk, recEndOfBuffer:
				break chunk
			case recEndOfFile:
				return nil
			case recChunkHeader:
				return d.errf(at, "unexpected chunk header inside a chunk")
			}
			// Definition files have no timestamps or attribute lists: types
			// 5 and 6 are definitions there.
			end, err := d.recordLen()
			if err != nil {
				return err
			}
			full := d.b
			d.b = full[:end]
			err = fn(t, d, end)
			d.b = full
			if err != nil {
				var fe *FormatError
				if errors.As(err, &fe) {
					fe.Msg = fmt.Sprintf("%s definition at offset %d: %s", DefName(t), d.base+int64(at), fe.Msg)
				}
				return err
			}
			d.pos = end
		}
		if n < len(buf) {
			return &FormatError{File: path, Offset: off + int64(n), Msg: "truncated definition file: no end-of-file record"}
		}
	}
}

// readGlobalDefs parses the global definition file, holding at most limit
// bytes of definitions (0: no limit).
func readGlobalDefs(path string, chunk uint64, limit int64) (*Defs, error) {
	f, err := trace.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("global definitions: %w", err)
	}
	defer f.Close()
	return decodeGlobalDefs(f, path, chunk, limit)
}

// Memory charged per definition, on top of its strings and members: the
// table slots, headers and map overhead (an upper estimate).
const (
	memString   = 32
	memRegion   = 96
	memGroup    = 96
	memComm     = 48
	memContext  = 24
	memLocation = 40
	memLocGroup = 56
	memNode     = 16
	memOffset   = 24
)

// decodeGlobalDefs parses global definitions read from r (the fuzz target).
func decodeGlobalDefs(r io.Reader, path string, chunk uint64, limit int64) (*Defs, error) {
	g := &Defs{paradigms: map[uint8]uint32{}, limit: limit, path: path}
	err := forEachRecord(r, path, chunk, func(t uint8, d *dec, end int) error {
		g.Records[t]++
		return g.record(t, d, end)
	})
	if err != nil {
		return nil, err
	}
	if err := g.check(); err != nil {
		return nil, err
	}
	return g, nil
}

// record decodes one global definition. Each record is read as OTF2's own
// reader does: the attributes of the record's first version, then each
// group a later version appended, read only when the record is long enough
// to hold it (defaults otherwise); bytes past the known attributes are
// skipped by the caller.
func (g *Defs) record(t uint8, d *dec, end int) error {
	switch t {
	case gdClockProperties:
		var err error
		if g.TimerResolution, err = d.u64(); err != nil {
			return err
		}
		if g.GlobalOffset, err = d.u64(); err != nil {
			return err
		}
		if g.TraceLength, err = d.u64(); err != nil {
			return err
		}
		// 3.0 appended realtimeTimestamp: not used.
		if g.hasClock {
			g.warn("%s: more than one ClockProperties definition; the last one counts", g.path)
		}
		g.hasClock = true
	case gdString:
		id, err := d.u32()
		if err != nil {
			return err
		}
		s, err := d.str()
		if err != nil {
			return err
		}
		if err := g.charge(memString + int64(len(s))); err != nil {
			return err
		}
		if g.strings.put(uint32(id), s) {
			g.warn("%s: string %d defined twice", g.path, id)
		}
	case gdParadigm: // since 1.5: paradigm, name, class
		p, err := d.u8()
		if err != nil {
			return err
		}
		name, err := d.u32()
		if err != nil {
			return err
		}
		g.paradigms[p] = uint32(name) // at most 256 entries
	case gdSystemTreeNode: // id, name, className, parent
		id, err := d.u32()
		if err != nil {
			return err
		}
		name, err := d.u32()
		if err != nil {
			return err
		}
		if err := g.charge(memNode); err != nil {
			return err
		}
		g.nodes.put(uint32(id), uint32(name))
	case gdLocationGroup: // id, name, type, parent; 3.0: creatingLocationGroup
		v, err := readFields(d, "ubu")
		if err != nil {
			return err
		}
		lg := LocationGroup{ID: uint32(v[0]), nameID: uint32(v[1]), Type: uint8(v[2]), Parent: uint32(v[3]), Creating: undefined32}
		if lg.Creating, err = d.opt32(end, undefined32); err != nil { // 3.0
			return err
		}
		if err := g.charge(memLocGroup); err != nil {
			return err
		}
		g.LocationGroups = append(g.LocationGroups, lg)
	case gdLocation: // id (64 bits), name, type, numberOfEvents, locationGroup
		id, err := d.u64()
		if err != nil {
			return err
		}
		v, err := readFields(d, "bUu")
		if err != nil {
			return err
		}
		if err := g.charge(memLocation); err != nil {
			return err
		}
		g.Locations = append(g.Locations, Location{ID: id, name: uint32(v[0]), Type: uint8(v[1]), Events: v[2], Group: uint32(v[3])})
	case gdRegion:
		// id, name, description, regionType (attic since 1.1), sourceFile,
		// beginLineNumber, endLineNumber; 1.1: canonicalName, regionRole,
		// paradigm, regionFlags
		v, err := readFields(d, "uubuuu")
		if err != nil {
			return err
		}
		r := Region{nameID: uint32(v[1]), fileID: uint32(v[4]), Line: uint32(v[5]), canonID: undefined32}
		r.Role, r.Paradigm, r.Flags = convertRegionType(uint8(v[3]))
		if d.pos < end {
			// 1.1: each attribute read while the record holds it (an
			// OTF2 1.1 writer stopped after canonicalName)
			if r.canonID, err = d.opt32(end, undefined32); err != nil {
				return err
			}
			if r.Role, err = d.opt8(end, r.Role); err != nil {
				return err
			}
			if r.Paradigm, err = d.opt8(end, r.Paradigm); err != nil {
				return err
			}
			if r.Flags, err = d.opt32(end, r.Flags); err != nil {
				return err
			}
		}
		if err := g.charge(memRegion); err != nil {
			return err
		}
		if g.regions.put(uint32(v[0]), r) {
			g.warn("%s: region %d defined twice", g.path, v[0])
		}
	case gdGroup:
		// id, name, groupType (pre 1.2 numbering, attic), numberOfMembers,
		// members; 1.2: groupType, paradigm, groupFlags
		v, err := readFields(d, "ubu")
		if err != nil {
			return err
		}
		n := v[3]
		if n > uint64(end-d.pos) { // every member takes at least one byte
			return d.errf(d.pos, "group %d: %d members cannot fit in a record of %d bytes", v[0], n, end-d.pos)
		}
		if err := g.charge(memGroup + 8*int64(n)); err != nil {
			return err
		}
		grp := &Group{nameID: uint32(v[1]), Members: make([]uint64, n)}
		for i := range grp.Members {
			if grp.Members[i], err = d.u64(); err != nil {
				return err
			}
		}
		grp.Type, grp.Paradigm = convertGroupTypePre12(uint8(v[2]))
		if d.pos < end { // 1.2
			if grp.Type, err = d.opt8(end, 0); err != nil {
				return err
			}
			if grp.Paradigm, err = d.opt8(end, 0); err != nil {
				return err
			}
			if grp.Flags, err = d.opt32(end, 0); err != nil {
				return err
			}
		}
		if g.groups.put(uint32(v[0]), grp) {
			g.groupDups++
			g.warn("%s: group %d defined twice", g.path, v[0])
		}
	case gdComm: // id, name, group, parent; 3.0: flags
		v, err := readFields(d, "uuu")
		if err != nil {
			return err
		}
		cm := Comm{nameID: uint32(v[1]), Group: uint32(v[2]), GroupB: undefined32, Parent: uint32(v[3])}
		if cm.Flags, err = d.opt32(end, 0); err != nil { // 3.0
			return err
		}
		if err := g.charge(memComm); err != nil {
			return err
		}
		if g.comms.put(uint32(v[0]), cm) {
			g.warn("%s: communicator %d defined twice", g.path, v[0])
		}
	case gdRmaWin: // id, name, comm; 3.0: flags
		v, err := readFields(d, "uuu")
		if err != nil {
			return err
		}
		w := RmaWin{nameID: uint32(v[1]), Comm: uint32(v[2])}
		if w.Flags, err = d.opt32(end, 0); err != nil { // 3.0
			return err
		}
		if err := g.charge(memComm); err != nil {
			return err
		}
		if g.wins.put(uint32(v[0]), w) {
			g.warn("%s: RMA window %d defined twice", g.path, v[0])
		}
	case gdCallingContext: // 2.0: id, region, sourceCodeLocation, parent
		v, err := readFields(d, "uuu")
		if err != nil {
			return err
		}
		if err := g.charge(memContext); err != nil {
			return err
		}
		if g.contexts.put(uint32(v[0]), CallingContext{Region: uint32(v[1]), Parent: uint32(v[3])}) {
			g.warn("%s: calling context %d defined twice", g.path, v[0])
		}
	case gdInterComm: // 3.0: id, name, groupA, groupB, commonCommunicator, flags
		v, err := readFields(d, "uuuuu")
		if err != nil {
			return err
		}
		cm := Comm{nameID: uint32(v[1]), Group: uint32(v[2]), GroupB: uint32(v[3]), Parent: uint32(v[4]), Flags: uint32(v[5]), Inter: true}
		if err := g.charge(memComm); err != nil {
			return err
		}
		if g.comms.put(uint32(v[0]), cm) {
			g.warn("%s: communicator %d defined twice", g.path, v[0])
		}
	}
	return nil
}

// opt8 reads a one-byte attribute a later OTF2 version appended, or
// returns def when the record ends before it (OTF2's rule: the record's
// length tells which attributes its writer knew).
func (d *dec) opt8(end int, def uint8) (uint8, error) {
	if d.pos >= end {
		return def, nil
	}
	return d.u8()
}

// opt32 is opt8 for a compressed 32-bit attribute.
func (d *dec) opt32(end int, def uint32) (uint32, error) {
	if d.pos >= end {
		return def, nil
	}
	v, err := d.u32()
	return uint32(v), err
}

// fields reads the attributes of spec (fU8, fU32, fU64) into a fixed array.
func fields(d *dec, spec string) ([8]uint64, error) {
	var out [8]uint64
	var err error
	for i := 0; i < len(spec); i++ {
		switch spec[i] {
		case fU8:
			var b uint8
			b, err = d.u8()
			out[i] = uint64(b)
		case fU32:
			out[i], err = d.u32()
		case fU64:
			out[i], err = d.u64()
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// readFields reads a leading uint32 id followed by the fields of spec and
// returns id then the fields.
func readFields(d *dec, spec string) ([8]uint64, error) {
	var out [8]uint64
	id, err := d.u32()
	if err != nil {
		return out, err
	}
	f, err := fields(d, spec)
	out[0] = id
	copy(out[1:], f[:len(spec)])
	return out, err
}

// OTF2 paradigms, region roles and group types the reader uses.
const (
	paradigmUnknown  = 0
	paradigmUser     = 1
	paradigmCompiler = 2
	paradigmOpenMP   = 3
	paradigmMPI      = 4
	paradigmPthread  = 7
	paradigmSampling = 21 // unwound frames (OTF2 2.0)

	roleFunction        = 1
	roleWrapper         = 2
	roleLoop            = 3
	roleCode            = 4
	roleParallel        = 5
	roleSections        = 6
	roleSection         = 7
	roleWorkshare       = 8
	roleSingle          = 9
	roleSingleSBlock    = 10
	roleMaster          = 11
	roleCritical        = 12
	roleCriticalSBlock  = 13
	roleAtomic          = 14
	roleBarrier         = 15
	roleImplicitBarrier = 16
	roleFlush           = 17
	roleOrdered         = 18
	roleOrderedSBlock   = 19
	roleTask            = 20
	roleTaskCreate      = 21
	roleTaskWait        = 22
	roleCollOne2All     = 23
	roleCollAll2One     = 24
	roleCollAll2All     = 25
	roleCollOther       = 26
	roleFileIO          = 27
	roleThreadWait      = 33
	roleTaskUntied      = 34

	groupTypeLocations = 1
	groupTypeCommLocs  = 4
	groupTypeCommGroup = 5
	groupTypeCommSelf  = 6
	undefined32        = 0xffffffff
	locationTypeCPU    = 1
	locationTypeStream = 2
	locationTypeMetric = 3
	lgTypeProcess      = 1
	lgTypeAccelerator  = 2
	regionFlagDynamic  = 1
	regionFlagPhase    = 2

	// OTF2 3.0's special roots of a collective (OTF2_CollectiveRoot): this
	// rank is the root of an intercommunicator's collective (MPI_ROOT), or
	// in the root's group without taking part (MPI_PROC_NULL).
	collRootSelf      = undefined32 - 1
	collRootThisGroup = undefined32 - 2
)

// convertRegionType maps an OTF2 1.0 region type onto the role, paradigm
// and flags OTF2 1.1 replaced it with, as OTF2's reader does
// (otf2_attic_def_region_convert_region_type).
func convertRegionType(t uint8) (role, paradigm uint8, flags uint32) {
	omp := func(r uint8) (uint8, uint8, uint32) { return r, paradigmOpenMP, 0 }
	mpi := func(r uint8) (uint8, uint8, uint32) { return r, paradigmMPI, 0 }
	switch t {
	case 1, 3: // function, user region: several adapters, paradigm unknown
		return roleFunction, paradigmUnknown, 0
	case 2:
		return roleLoop, paradigmUser, 0
	case 4:
		return roleFileIO, paradigmUser, 0
	case 5:
		return omp(roleParallel)
	case 6:
		return omp(roleLoop)
	case 7:
		return omp(roleSections)
	case 8:
		return omp(roleSection)
	case 9:
		return omp(roleWorkshare)
	case 10:
		return omp(roleSingle)
	case 11:
		return omp(roleMaster)
	case 12:
		return omp(roleCritical)
	case 13:
		return omp(roleAtomic)
	case 14:
		return omp(roleBarrier)
	case 15:
		return omp(roleImplicitBarrier)
	case 16:
		return omp(roleFlush)
	case 17:
		return omp(roleCriticalSBlock)
	case 18:
		return omp(roleSingleSBlock)
	case 19:
		return omp(roleWrapper)
	case 20:
		return omp(roleTask)
	case 21:
		return omp(roleTaskWait)
	case 22:
		return mpi(roleBarrier)
	case 23:
		return mpi(roleCollOne2All)
	case 24:
		return mpi(roleCollAll2One)
	case 25:
		return mpi(roleCollAll2All)
	case 26:
		return mpi(roleCollOther)
	case 27, 28:
		return roleCode, paradigmUser, map[uint8]uint32{27: 0, 28: regionFlagDynamic}[t]
	case 29:
		return roleCode, paradigmUser, regionFlagDynamic | regionFlagPhase
	case 30:
		return roleLoop, paradigmUser, regionFlagDynamic
	case 31:
		return roleFunction, paradigmUser, regionFlagDynamic
	case 32:
		return roleLoop, paradigmUser, regionFlagDynamic | regionFlagPhase
	case 33:
		return omp(roleTaskCreate)
	case 34:
		return omp(roleOrdered)
	case 35:
		return omp(roleOrderedSBlock)
	}
	return 0, paradigmUnknown, 0
}

// convertGroupTypePre12 maps an OTF2 1.0/1.1 group type onto the type and
// paradigm of 1.2 (otf2_attic_def_group_convert_group_type_pre_1_2).
func convertGroupTypePre12(t uint8) (typ, paradigm uint8) {
	switch t {
	case 1: // locations
		return groupTypeLocations, paradigmUnknown
	case 2, 3: // regions, metric (OTF2 maps both to regions)
		return 2, paradigmUnknown
	case 4: // MPI group
		return groupTypeCommGroup, paradigmMPI
	case 5: // MPI_COMM_SELF
		return groupTypeCommSelf, paradigmMPI
	case 6: // MPI locations
		return groupTypeCommLocs, paradigmMPI
	}
	return 0, paradigmUnknown
}

// Timer resolutions outside this range are corruption: no clock ticks
// slower than once a second or faster than a femtosecond, and a resolution
// of 2⁶⁴−2 would make every timestamp 0 ns.
const (
	minResolution = 1
	maxResolution = 1_000_000_000_000_000
)

// check resolves the string references once every definition is read and
// counts the references to undefined definitions as warnings: a name that
// points nowhere would silently turn MPI_Init into an unnamed region.
func (g *Defs) check() error {
	if !g.hasClock {
		// OTF2's own test archives have none; a measurement always does.
		g.warn("%s: no ClockProperties definition: timestamps taken as nanoseconds", g.path)
		g.TimerResolution = 1_000_000_000
	}
	if g.TimerResolution < minResolution || g.TimerResolution > maxResolution {
		return fmt.Errorf("%s: ClockProperties: timer resolution %d ticks per second is implausible (%d to %d)",
			g.path, g.TimerResolution, minResolution, uint64(maxResolution))
	}
	name := func(what string, id uint32, ref uint32) string {
		if ref == undefined32 {
			return ""
		}
		s, ok := g.strings.get(ref)
		if !ok {
			g.warn("%s: %s %d refers to undefined string %d", g.path, what, id, ref)
			return fmt.Sprintf("<%s %d>", what, id)
		}
		return s
	}
	for i := range g.regions.dense {
		if g.regions.has[i/64]&(1<<(i%64)) != 0 {
			g.resolveRegion(uint32(i), &g.regions.dense[i], name)
		}
	}
	for id, r := range g.regions.sparse {
		g.resolveRegion(id, &r, name)
		g.regions.sparse[id] = r
	}
	g.groups.each(func(id uint32, grp **Group) { (*grp).Name = name("group", id, (*grp).nameID) })
	for i := range g.comms.dense {
		if g.comms.has[i/64]&(1<<(i%64)) != 0 {
			cm := &g.comms.dense[i]
			cm.Name = name("communicator", uint32(i), cm.nameID)
			g.checkCommGroups(uint32(i), cm)
		}
	}
	for id, cm := range g.comms.sparse {
		cm.Name = name("communicator", id, cm.nameID)
		g.checkCommGroups(id, &cm)
		g.comms.sparse[id] = cm
	}
	resolveWin := func(id uint32, w *RmaWin) {
		w.Name = name("RMA window", id, w.nameID)
		if g.comms.ptr(w.Comm) == nil {
			g.warn("%s: RMA window %d refers to undefined communicator %d", g.path, id, w.Comm)
		}
	}
	for i := range g.wins.dense {
		if g.wins.has[i/64]&(1<<(i%64)) != 0 {
			resolveWin(uint32(i), &g.wins.dense[i])
		}
	}
	for id, w := range g.wins.sparse {
		resolveWin(id, &w)
		g.wins.sparse[id] = w
	}
	for i := range g.LocationGroups {
		lg := &g.LocationGroups[i]
		lg.Name = name("location group", lg.ID, lg.nameID)
	}
	for i := range g.Locations {
		l := &g.Locations[i]
		if l.name != undefined32 {
			if _, ok := g.strings.get(l.name); !ok {
				g.warn("%s: location %d refers to undefined string %d", g.path, l.ID, l.name)
			}
		}
	}
	return nil
}

// checkCommGroups warns about a communicator's undefined groups.
func (g *Defs) checkCommGroups(id uint32, cm *Comm) {
	if cm.Group != undefined32 && g.Group(cm.Group) == nil {
		g.warn("%s: communicator %d refers to undefined group %d", g.path, id, cm.Group)
	}
	if cm.Inter && cm.GroupB != undefined32 && g.Group(cm.GroupB) == nil {
		g.warn("%s: communicator %d refers to undefined group %d", g.path, id, cm.GroupB)
	}
}

func (g *Defs) resolveRegion(id uint32, r *Region, name func(string, uint32, uint32) string) {
	r.Name = name("region", id, r.nameID)
	r.Canonical = name("region", id, r.canonID)
	r.File = name("region", id, r.fileID)
}

// LocalDefs holds what a location's local definition file says: the
// mapping of local to global ids (for the mapping types the converter
// applies) and clock offsets.
type LocalDefs struct {
	maps    [numMaps]idMap
	Offsets []ClockOffset
	// Maps counts the mapping tables read, Other the records not used.
	Maps, Other int64
}

// idMap is one mapping table: dense (global id of local id i at i) or
// sparse (local ids sorted, with their global ids).
type idMap struct {
	present bool
	dense   []uint64
	local   []uint64
	global  []uint64
}

func (m *idMap) lookup(id uint64) (uint64, bool) {
	if m.dense != nil {
		if id < uint64(len(m.dense)) {
			return m.dense[id], true
		}
		return 0, false
	}
	i := sort.Search(len(m.local), func(i int) bool { return m.local[i] >= id })
	if i < len(m.local) && m.local[i] == id {
		return m.global[i], true
	}
	return 0, false
}

// Map translates a local id of the given mapping type to its global id;
// without a table ids are global already, and so are ids the table does not
// list (OTF2's reader keeps them too).
func (l *LocalDefs) Map(kind int, id uint64) uint64 {
	if l == nil || !l.maps[kind].present {
		return id
	}
	if g, ok := l.maps[kind].lookup(id); ok {
		return g
	}
	return id
}

// readLocalDefs parses a location's local definition file.
func readLocalDefs(path string, chunk uint64) (*LocalDefs, error) {
	f, err := trace.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("local definitions: %w", err)
	}
	defer f.Close()
	return decodeLocalDefs(f, path, chunk)
}

func decodeLocalDefs(r io.Reader, path string, chunk uint64) (*LocalDefs, error) {
	l := &LocalDefs{}
	err := forEachRecord(r, path, chunk, func(t uint8, d *dec, end int) error {
		switch t {
		case ldMappingTable:
			l.Maps++
			kind, err := d.u8()
			if err != nil {
				return err
			}
			n, err := d.u64()
			if err != nil {
				return err
			}
			mode, err := d.u8()
			if err != nil {
				return err
			}
			per := uint64(1)
			if mode != 0 {
				per = 2
			}
			if n > uint64(end-d.pos)/per { // every id takes at least one byte
				return d.errf(d.pos, "mapping table of %d entries cannot fit in its record", n)
			}
			if int(kind) >= numMaps || (kind != mapRegion && kind != mapGroup && kind != mapComm && kind != mapRmaWin && kind != mapCallingContext) {
				return nil // a mapping the converter never applies
			}
			m := idMap{present: true}
			if mode == 0 {
				m.dense = make([]uint64, n)
			} else {
				m.local, m.global = make([]uint64, n), make([]uint64, n)
			}
			sorted := true
			for i := uint64(0); i < n; i++ {
				if mode != 0 {
					if m.local[i], err = d.u64(); err != nil {
						return err
					}
					sorted = sorted && (i == 0 || m.local[i] > m.local[i-1])
					if m.global[i], err = d.u64(); err != nil {
						return err
					}
				} else if m.dense[i], err = d.u64(); err != nil {
					return err
				}
			}
			if !sorted {
				sort.Sort(pairs{m.local, m.global})
			}
			l.maps[kind] = m
		case ldClockOffset:
			t, err := d.u64full()
			if err != nil {
				return err
			}
			off, err := d.u64()
			if err != nil {
				return err
			}
			sd, err := d.u64full()
			if err != nil {
				return err
			}
			sdev := math.Float64frombits(sd)
			if math.IsNaN(sdev) || math.IsInf(sdev, 0) {
				sdev = 0
			}
			l.Offsets = append(l.Offsets, ClockOffset{Time: t, Offset: int64(off), StdDev: sdev})
		default:
			l.Other++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// pairs sorts a sparse mapping table by local id.
type pairs struct{ local, global []uint64 }

func (p pairs) Len() int           { return len(p.local) }
func (p pairs) Less(i, j int) bool { return p.local[i] < p.local[j] }
func (p pairs) Swap(i, j int) {
	p.local[i], p.local[j] = p.local[j], p.local[i]
	p.global[i], p.global[j] = p.global[j], p.global[i]
}

package otf2

import (
	"fmt"
	"math"
	"os"
	"strings"
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

// MaxMajor is the newest OTF2 major version this reader decodes. Minor
// versions only append attributes, which records' lengths let it skip.
const MaxMajor = 3

const anchorMagic = "OTF2"

// substrates and compressions the anchor may name
const (
	substratePOSIX   = 1
	compressionNone  = 1
	compressionUndef = 0
)

// readAnchor parses the anchor file at path.
func readAnchor(path string) (*Anchor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("anchor file: %w", err)
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
	for i := range a.Version {
		if a.Version[i], err = d.u8(); err != nil {
			return nil, err
		}
	}
	if a.Version[0] > MaxMajor {
		return nil, d.errf(d.pos-3, "OTF2 version %d.%d.%d is newer than this reader supports (%d.x)",
			a.Version[0], a.Version[1], a.Version[2], MaxMajor)
	}
	if a.ChunkEvents, err = d.u64full(); err != nil {
		return nil, err
	}
	if a.ChunkDefs, err = d.u64full(); err != nil {
		return nil, err
	}
	if a.Substrate, err = d.u8(); err != nil {
		return nil, err
	}
	if a.Compression, err = d.u8(); err != nil {
		return nil, err
	}
	if a.Substrate != substratePOSIX {
		return nil, d.errf(d.pos-2, "file substrate %d is not supported (only POSIX, one file per location)", a.Substrate)
	}
	if a.Compression != compressionNone && a.Compression != compressionUndef {
		return nil, d.errf(d.pos-1, "compressed archives (compression %d) are not supported", a.Compression)
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
		if int64(n) > int64(len(d.b)) {
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

// Global definition record types (otf2_global_definitions.h).
const (
	gdClockProperties = 5
	gdString          = 10
	gdSystemTreeNode  = 12
	gdLocationGroup   = 13
	gdLocation        = 14
	gdRegion          = 15
	gdGroup           = 18
	gdComm            = 22
)

// Local definition record types (otf2_local_definitions.h).
const (
	ldMappingTable = 5
	ldClockOffset  = 6
)

// Mapping types of mapping tables (OTF2_MappingType).
const (
	mapString = 0
	mapRegion = 3
	mapGroup  = 4
	mapComm   = 6
	numMaps   = 14
)

// Region is a region definition.
type Region struct {
	Name      string
	Role      uint8
	Paradigm  uint8
	defined   bool
	canonical string
	file      string
	line      uint32
}

// isTaskgroup tells a taskgroup region (OTF2 has no role of its own for it;
// Score-P names it "!$omp taskgroup") from a taskwait.
func (r *Region) isTaskgroup() bool { return strings.Contains(r.Name, "taskgroup") }

// Group is a group definition; for MPI groups Members are world ranks, for
// location groups location ids.
type Group struct {
	Type     uint8
	Paradigm uint8
	Members  []uint64
}

// Comm is a communicator definition.
type Comm struct {
	Name   string
	Group  uint32
	Parent uint32
}

// LocationGroup is a process.
type LocationGroup struct {
	ID     uint32
	Name   string
	Type   uint8
	Parent uint32
}

// Location is a thread (or another event stream) of a location group.
type Location struct {
	ID     uint64
	Name   string
	Type   uint8
	Events uint64
	Group  uint32
}

// ClockOffset is a local ClockOffset definition: at local time Time the
// master clock read Time+Offset, with StdDev.
type ClockOffset struct {
	Time   uint64
	Offset int64
	StdDev float64
}

// Defs holds the global definitions the converter uses.
type Defs struct {
	TimerResolution uint64
	GlobalOffset    uint64
	TraceLength     uint64
	Strings         map[uint32]string
	Regions         map[uint32]*Region
	Groups          map[uint32]*Group
	Comms           map[uint32]*Comm
	LocationGroups  []LocationGroup
	// Nodes names system tree nodes (a location group's parent is its host).
	Nodes     map[uint32]string
	Locations []Location
	// Other counts definition records this reader does not use.
	Other int64
}

func (g *Defs) str(id uint64) string {
	if s, ok := g.Strings[uint32(id)]; ok {
		return s
	}
	return ""
}

// forEachRecord walks the records of a chunked definition file in memory,
// calling fn with the record type and the decoder positioned at the record's
// first attribute; end is the record's end.
func forEachRecord(b []byte, path string, chunk uint64, fn func(t uint8, d *dec, end int) error) error {
	if chunk < 256 || chunk > 1<<30 {
		return fmt.Errorf("%s: invalid definition chunk size %d", path, chunk)
	}
	big := false
	for off := 0; off < len(b); off += int(chunk) {
		stop := min(len(b), off+int(chunk))
		d := &dec{b: b[off:stop], file: path, base: int64(off), big: big}
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
				return err
			}
			d.pos = end
		}
	}
	return &FormatError{File: path, Offset: int64(len(b)), Msg: "truncated definition file: no end-of-file record"}
}

// readGlobalDefs parses the global definition file.
func readGlobalDefs(path string, chunk uint64) (*Defs, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("global definitions: %w", err)
	}
	return decodeGlobalDefs(b, path, chunk)
}

// decodeGlobalDefs parses global definitions held in b (the fuzz target).
func decodeGlobalDefs(b []byte, path string, chunk uint64) (*Defs, error) {
	g := &Defs{
		Strings: map[uint32]string{}, Regions: map[uint32]*Region{},
		Groups: map[uint32]*Group{}, Comms: map[uint32]*Comm{}, Nodes: map[uint32]string{},
	}
	err := forEachRecord(b, path, chunk, func(t uint8, d *dec, end int) error {
		at := d.pos
		wrap := func(err error) error {
			if fe, ok := err.(*FormatError); ok {
				fe.Msg = fmt.Sprintf("global definition record %d at offset %d: %s", t, d.base+int64(at), fe.Msg)
			}
			return err
		}
		switch t {
		case gdClockProperties:
			var err error
			if g.TimerResolution, err = d.u64(); err != nil {
				return wrap(err)
			}
			if g.GlobalOffset, err = d.u64(); err != nil {
				return wrap(err)
			}
			if g.TraceLength, err = d.u64(); err != nil {
				return wrap(err)
			}
		case gdString:
			id, err := d.u32()
			if err != nil {
				return wrap(err)
			}
			s, err := d.str()
			if err != nil {
				return wrap(err)
			}
			g.Strings[uint32(id)] = s
		case gdSystemTreeNode:
			v, err := readFields(d, "u")
			if err != nil {
				return wrap(err)
			}
			g.Nodes[uint32(v[0])] = g.str(v[1])
		case gdLocationGroup:
			v, err := readFields(d, "ubu")
			if err != nil {
				return wrap(err)
			}
			g.LocationGroups = append(g.LocationGroups, LocationGroup{ID: uint32(v[0]), Name: g.str(v[1]), Type: uint8(v[2]), Parent: uint32(v[3])})
		case gdLocation:
			id, err := d.u64()
			if err != nil {
				return wrap(err)
			}
			v, err := readFields(d, "bUu")
			if err != nil {
				return wrap(err)
			}
			g.Locations = append(g.Locations, Location{ID: id, Name: g.str(v[0]), Type: uint8(v[1]), Events: v[2], Group: uint32(v[3])})
		case gdRegion:
			v, err := readFields(d, "uubuuu")
			if err != nil {
				return wrap(err)
			}
			r := &Region{Name: g.str(v[1]), defined: true, file: g.str(v[4]), line: uint32(v[5])}
			if d.pos < end {
				w, err := readFields(d, "bbu")
				if err != nil {
					return wrap(err)
				}
				r.canonical, r.Role, r.Paradigm = g.str(w[0]), uint8(w[1]), uint8(w[2])
			}
			g.Regions[uint32(v[0])] = r
		case gdGroup:
			v, err := readFields(d, "ubu")
			if err != nil {
				return wrap(err)
			}
			n := v[3]
			if n > uint64(end-d.pos) { // every member takes at least one byte
				return d.errf(at, "group %d: %d members cannot fit in a record of %d bytes", v[0], n, end-at)
			}
			grp := &Group{Type: uint8(v[2]), Members: make([]uint64, n)}
			for i := range grp.Members {
				if grp.Members[i], err = d.u64(); err != nil {
					return wrap(err)
				}
			}
			if d.pos < end {
				typ, err := d.u8()
				if err != nil {
					return wrap(err)
				}
				par, err := d.u8()
				if err != nil {
					return wrap(err)
				}
				grp.Type, grp.Paradigm = typ, par
			}
			g.Groups[uint32(v[0])] = grp
		case gdComm:
			v, err := readFields(d, "uuuu")
			if err != nil {
				return wrap(err)
			}
			g.Comms[uint32(v[0])] = &Comm{Name: g.str(v[1]), Group: uint32(v[2]), Parent: uint32(v[3])}
		default:
			g.Other++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// readFields reads a leading uint32 id followed by the fields of spec
// (fU8/fU32/fU64) and returns id then the fields.
func readFields(d *dec, spec string) ([]uint64, error) {
	out := make([]uint64, 1+len(spec))
	var err error
	if out[0], err = d.u32(); err != nil {
		return nil, err
	}
	for i := 0; i < len(spec); i++ {
		switch spec[i] {
		case fU8:
			var b uint8
			b, err = d.u8()
			out[i+1] = uint64(b)
		case fU32:
			out[i+1], err = d.u32()
		case fU64:
			out[i+1], err = d.u64()
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// LocalDefs holds what a location's local definition file says: the mapping
// of local to global ids (per mapping type) and clock offsets.
type LocalDefs struct {
	maps    [numMaps]map[uint64]uint64
	Offsets []ClockOffset
}

// Map translates a local id of the given mapping type to its global id;
// without a table ids are global already.
func (l *LocalDefs) Map(kind int, id uint64) uint64 {
	if l == nil || l.maps[kind] == nil {
		return id
	}
	if g, ok := l.maps[kind][id]; ok {
		return g
	}
	return id
}

// readLocalDefs parses a location's local definition file; a missing file
// means no local definitions only when missingOK.
func readLocalDefs(path string, chunk uint64) (*LocalDefs, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("local definitions: %w", err)
	}
	return decodeLocalDefs(b, path, chunk)
}

func decodeLocalDefs(b []byte, path string, chunk uint64) (*LocalDefs, error) {
	l := &LocalDefs{}
	err := forEachRecord(b, path, chunk, func(t uint8, d *dec, end int) error {
		switch t {
		case ldMappingTable:
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
			if n > uint64(end-d.pos) {
				return d.errf(d.pos, "mapping table of %d entries cannot fit in its record", n)
			}
			m := make(map[uint64]uint64, n)
			for i := uint64(0); i < n; i++ {
				local := i
				if mode != 0 { // sparse: pairs
					if local, err = d.u64(); err != nil {
						return err
					}
				}
				gid, err := d.u64()
				if err != nil {
					return err
				}
				m[local] = gid
			}
			if int(kind) < numMaps {
				l.maps[kind] = m
			}
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
			l.Offsets = append(l.Offsets, ClockOffset{Time: t, Offset: int64(off), StdDev: math.Float64frombits(sd)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

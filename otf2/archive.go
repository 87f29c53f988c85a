package otf2

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unsafe"
)

// Archive is an opened OTF2 archive: its anchor file and global definitions.
// Event and local definition files are read per process, by Convert.
type Archive struct {
	Anchor *Anchor
	Defs   *Defs
	// Path is the anchor file; Dir the directory of the per-location files.
	Path, Dir string
	procs     []process
	// Notes say what the archive holds that the conversion leaves out
	// (metric and accelerator locations, definitions of kinds ptrace does
	// not model); they are not problems.
	Notes []string
	// salvage: Options.Salvage
	salvage bool
	// uncounted: the writer's location event counts are known to be off
	// (TAU, APEX), so they are not checked against the event files
	uncounted bool
}

type process struct {
	gi   int32 // index in Defs.LocationGroups; −1: a location of no defined group
	rank int32
	// locations are its CPU threads sorted by id (index = ptrace thread
	// index): a part of Defs.Locations, not a copy
	locations []Location
}

// group returns the location group of process p (for a location of no
// defined group, one named after the location).
func (a *Archive) group(p *process) LocationGroup {
	if p.gi >= 0 {
		return a.Defs.LocationGroups[p.gi]
	}
	return LocationGroup{ID: undefined32, Name: a.Defs.LocationName(&p.locations[0]), Type: lgTypeProcess, Parent: undefined32, Creating: undefined32}
}

// Process describes one process (location group) for partitioning.
type Process struct {
	Rank    int
	Name    string
	Threads int
	Events  int64 // from the location definitions
	Bytes   int64 // size of its event files
}

// Options bound what opening an archive may hold.
type Options struct {
	// MemoryLimit bounds the bytes the global definitions may hold (0: no
	// limit); past it Open fails with the estimate.
	MemoryLimit int64
	// Salvage converts what precedes a damaged part of a location's event
	// file, and a location whose event file is missing as one without
	// events, each a warning (Stats.Salvaged), instead of failing.
	Salvage bool
}

// IsArchive reports whether path is an OTF2 anchor file or a directory
// holding exactly one.
func IsArchive(path string) bool {
	_, err := anchorPath(path)
	return err == nil
}

func anchorPath(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		if strings.HasSuffix(path, ".otf2") {
			return path, nil
		}
		return "", fmt.Errorf("%s: not an OTF2 anchor file (*.otf2)", path)
	}
	m, err := filepath.Glob(filepath.Join(path, "*.otf2"))
	if err != nil {
		return "", err
	}
	var files []string
	for _, f := range m {
		if st, err := os.Stat(f); err == nil && !st.IsDir() {
			files = append(files, f)
		}
	}
	switch len(files) {
	case 0:
		return "", fmt.Errorf("%s: no OTF2 anchor file (*.otf2)", path)
	case 1:
		return files[0], nil
	}
	return "", fmt.Errorf("%s: %d OTF2 anchor files; name one", path, len(files))
}

// Open reads the anchor file (path, or the one in directory path) and the
// global definitions, with no memory limit.
func Open(path string) (*Archive, error) { return OpenWith(path, Options{}) }

// OpenWith is Open with options.
func OpenWith(path string, o Options) (*Archive, error) {
	ap, err := anchorPath(path)
	if err != nil {
		return nil, err
	}
	an, err := readAnchor(ap)
	if err != nil {
		return nil, err
	}
	a := &Archive{Anchor: an, Path: ap, Dir: strings.TrimSuffix(ap, ".otf2"), salvage: o.Salvage}
	if a.Defs, err = readGlobalDefs(a.Dir+".def", an.ChunkDefs, o.MemoryLimit); err != nil {
		return nil, err
	}
	if strings.HasPrefix(an.Creator, tau2otf2Creator) {
		a.Defs.tau2otf2Regions()
		if n := a.Defs.tau2otf2Groups(); n != "" {
			a.Notes = append(a.Notes, n)
		}
	}
	if isTAU(an.Creator) {
		a.Defs.tauRegions()
		// TAU 2.35 counts 3 records too few per location, and with
		// OpenMP gives every location its process's first one's count.
		a.Notes = append(a.Notes, "TAU's location event counts are not checked against the event files (TAU writes them off): each file's records are used")
		a.uncounted = true
	}
	if n := a.Defs.regions.n; strings.HasPrefix(an.Creator, "APEX") && len(a.Defs.Locations) > 0 && apexCounts(a.Defs.Locations, uint64(n)) {
		// APEX 1.2 writes the number of its regions as every location's
		// event count (79 in each of the three locations of 79 regions,
		// the empty one too): no count of records.
		a.Notes = append(a.Notes, fmt.Sprintf("APEX's location event counts are the number of its regions (%d), not of the locations' records: not checked against the event files", n))
		a.uncounted = true
	}
	if err := a.layout(); err != nil {
		return nil, err
	}
	a.scorepConfig()
	return a, nil
}

// Warnings returns the definitions' problems (counted, the first listed).
func (a *Archive) Warnings() (int64, []string) { return a.Defs.WarningCount(), a.Defs.Warnings }

// layout groups the CPU-thread locations into processes and numbers the
// processes by MPI world rank (or by location-group id without MPI).
// Locations ptrace does not model (metric recorders, accelerator streams)
// are left out and noted. It sorts the definitions' tables in place and
// points into them, so that a million locations cost no second copy.
func (a *Archive) layout() error {
	g := a.Defs
	groups := g.LocationGroups
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].ID < groups[j].ID })
	dupGroups := 0
	for i := 1; i < len(groups); i++ {
		if groups[i].ID == groups[i-1].ID {
			dupGroups++
		}
	}
	if dupGroups > 0 {
		g.warn("%s: %d location groups defined twice; the first definition counts", g.path, dupGroups)
	}
	groupIdx := func(id uint32) int {
		i := sort.Search(len(groups), func(i int) bool { return groups[i].ID >= id })
		if i < len(groups) && groups[i].ID == id {
			return i
		}
		return -1
	}
	locs := g.Locations
	// MPI ranks first, by location id: the rank of each location group.
	sort.SliceStable(locs, func(i, j int) bool { return locs[i].ID < locs[j].ID })
	rankOf := make([]int32, len(groups))
	for i := range rankOf {
		rankOf[i] = -1
	}
	if wl := a.mpiLocations(); wl != nil {
		for r, loc := range wl {
			i := sort.Search(len(locs), func(i int) bool { return locs[i].ID >= loc })
			if i == len(locs) || locs[i].ID != loc {
				g.warn("%s: MPI rank %d's location %d is not defined", g.path, r, loc)
				continue
			}
			if gi := groupIdx(locs[i].Group); gi >= 0 {
				if rankOf[gi] >= 0 {
					g.warn("%s: location group %d holds MPI ranks %d and %d; the first counts", g.path, groups[gi].ID, rankOf[gi], r)
					continue
				}
				rankOf[gi] = int32(min(r, math.MaxInt32))
			}
		}
	}
	// Then by group, the CPU threads of each first, by id: each
	// process's threads are a run of the table.
	other := func(l *Location) bool { return l.Type != locationTypeCPU && l.Type != 0 }
	sort.SliceStable(locs, func(i, j int) bool {
		a, b := &locs[i], &locs[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if oa, ob := other(a), other(b); oa != ob {
			return ob
		}
		return a.ID < b.ID
	})
	var metric, stream, accel, dup, orphans int
	for i := 0; i < len(locs); {
		j := i
		for j < len(locs) && locs[j].Group == locs[i].Group {
			j++
		}
		run := locs[i:j]
		i = j
		gi := groupIdx(run[0].Group)
		n := 0 // CPU threads, without duplicated ids
		for k := range run {
			l := &run[k]
			switch {
			case n > 0 && run[n-1].ID == l.ID && !other(l):
				dup++
			case l.Type == locationTypeMetric:
				metric++
			case l.Type == locationTypeStream:
				stream++
			case other(l):
				g.warn("%s: location %d has unknown type %d; left out", g.path, l.ID, l.Type)
			case gi >= 0 && groups[gi].Type == lgTypeAccelerator:
				accel++
			default:
				run[n], run[k] = run[k], run[n]
				n++
			}
		}
		switch {
		case n == 0:
		case gi < 0:
			// OTF2 1.x writers may define no location groups: such a
			// location is a process of its own.
			for k := 0; k < n; k++ {
				a.procs = append(a.procs, process{gi: -1, rank: -1, locations: run[k : k+1 : k+1]})
			}
			orphans += n
		case gi > 0 && groups[gi-1].ID == groups[gi].ID:
		default:
			a.procs = append(a.procs, process{gi: int32(gi), rank: rankOf[gi], locations: run[:n:n]})
		}
	}
	if dup > 0 {
		g.warn("%s: %d locations defined twice; the first definition counts", g.path, dup)
	}
	if metric > 0 {
		a.Notes = append(a.Notes, fmt.Sprintf("%d metric locations (hardware counters, plugins) not analysed", metric))
	}
	if stream+accel > 0 {
		a.Notes = append(a.Notes, fmt.Sprintf("%d accelerator (GPU) stream locations not analysed: ptrace models CPU threads", stream+accel))
	}
	if orphans > 0 {
		a.Notes = append(a.Notes, fmt.Sprintf("%d CPU locations belong to no defined location group: each is taken as a process", orphans))
	}
	if len(a.procs) == 0 {
		return fmt.Errorf("%s: the archive defines no CPU-thread locations (%d locations in all)", a.Path, len(locs))
	}
	if err := g.charge(int64(cap(a.procs)) * int64(unsafe.Sizeof(process{}))); err != nil {
		return err
	}
	sort.SliceStable(a.procs, func(i, j int) bool {
		ri, rj := a.procs[i].rank, a.procs[j].rank
		if (ri < 0) != (rj < 0) {
			return ri >= 0
		}
		if ri != rj {
			return ri < rj
		}
		// without MPI: by location-group id (their order in the table)
		return a.procs[i].gi < a.procs[j].gi
	})
	for i := range a.procs {
		if r := a.procs[i].rank; r >= 0 && int(r) != i {
			return fmt.Errorf("%s: MPI ranks of the location groups are not 0..%d (group %q has rank %d)",
				a.Path, len(a.procs)-1, a.group(&a.procs[i]).Name, r)
		}
		a.procs[i].rank = int32(i)
	}
	a.noteDefinitions()
	return nil
}

// noteDefinitions notes the kinds of definitions the conversion does not
// use (metrics, RMA windows, I/O, source code locations...).
func (a *Archive) noteDefinitions() {
	g := a.Defs
	var parts []string
	for t, n := range g.Records {
		if n == 0 {
			continue
		}
		switch t {
		case gdClockProperties, gdString, gdSystemTreeNode, gdLocationGroup, gdLocation, gdRegion, gdGroup,
			gdComm, gdInterComm, gdParadigm, gdParadigmProperty, gdAttribute, gdSystemTreeNodeProp, gdSystemTreeNodeDomain,
			gdLocationGroupProperty, gdLocationProperty, gdCallingContext:
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %d", DefName(uint8(t)), n))
	}
	if len(parts) > 0 {
		a.Notes = append(a.Notes, "definitions not used: "+strings.Join(parts, ", "))
	}
}

// mpiLocations returns the members of the MPI COMM_LOCATIONS group: the
// location of each world rank.
func (a *Archive) mpiLocations() []uint64 {
	var out []uint64
	a.Defs.groups.each(func(_ uint32, grp **Group) {
		if out == nil && (*grp).Type == groupTypeCommLocs && (*grp).Paradigm == paradigmMPI {
			out = (*grp).Members
		}
	})
	return out
}

// NumProcesses returns the number of processes (location groups with
// locations).
func (a *Archive) NumProcesses() int { return len(a.procs) }

// Process describes process i; Bytes comes from the sizes of its event files.
func (a *Archive) Process(i int) Process {
	p := &a.procs[i]
	out := Process{Rank: int(p.rank), Name: a.group(p).Name, Threads: len(p.locations)}
	for _, l := range p.locations {
		out.Events += int64(min(l.Events, 1<<62))
		if st, err := os.Stat(a.evtPath(l.ID)); err == nil {
			out.Bytes += st.Size()
		}
	}
	return out
}

// EventPath returns the event file of location loc.
func (a *Archive) EventPath(loc uint64) string { return a.evtPath(loc) }

func (a *Archive) evtPath(loc uint64) string {
	return filepath.Join(a.Dir, strconv.FormatUint(loc, 10)+".evt")
}

func (a *Archive) defPath(loc uint64) string {
	return filepath.Join(a.Dir, strconv.FormatUint(loc, 10)+".def")
}

// Locations returns the location ids of process i, in thread order.
func (a *Archive) Locations(i int) []uint64 {
	out := make([]uint64, len(a.procs[i].locations))
	for k, l := range a.procs[i].locations {
		out[k] = l.ID
	}
	return out
}

// OpenEvents opens the event file of location loc.
func (a *Archive) OpenEvents(loc uint64) (*EventReader, error) {
	return OpenEvents(a.evtPath(loc), a.Anchor.ChunkEvents)
}

// clock converts timer ticks to nanoseconds since the global offset, rounded
// to nearest with exact integer arithmetic, so a timer of any resolution
// converts without floating-point error.
type clock struct {
	res, offset uint64
}

func (c clock) ns(t uint64) int64 {
	if t < c.offset {
		return -c.span(c.offset - t)
	}
	return c.span(t - c.offset)
}

// span converts a duration of d ticks to ns.
func (c clock) span(d uint64) int64 {
	if c.res == 1_000_000_000 {
		return int64(min(d, 1<<63-1))
	}
	hi, lo := bits.Mul64(d, 1_000_000_000)
	lo, carry := bits.Add64(lo, c.res/2, 0)
	hi += carry
	if hi >= c.res {
		return 1<<63 - 1
	}
	q, _ := bits.Div64(hi, lo, c.res)
	return int64(min(q, 1<<63-1))
}

func (c clock) signedSpan(d int64) int64 {
	if d < 0 {
		return -c.span(uint64(-d))
	}
	return c.span(uint64(d))
}

// Producer describes the archive: OTF2 version and creator (e.g.
// "OTF2 3.0.2 archive (Score-P 8.4)").
func (a *Archive) Producer() string {
	v := a.Anchor.Version
	s := fmt.Sprintf("OTF2 %d.%d.%d archive", v[0], v[1], v[2])
	if a.Anchor.Creator != "" {
		s += " (" + strings.TrimSpace(strings.SplitN(a.Anchor.Creator, "\n", 2)[0]) + ")"
	}
	return s
}

// ClockOffsets returns the ClockOffset definitions of location loc (from its
// local definition file).
func (a *Archive) ClockOffsets(loc uint64) ([]ClockOffset, error) {
	ld, err := readLocalDefs(a.defPath(loc), a.Anchor.ChunkDefs)
	if err != nil {
		return nil, err
	}
	return ld.Offsets, nil
}

// apexCounts reports whether every location's event count is the number
// of regions n, as APEX writes them.
func apexCounts(locs []Location, n uint64) bool {
	for i := range locs {
		if locs[i].Events != n {
			return false
		}
	}
	return true
}

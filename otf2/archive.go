package otf2

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Archive is an opened OTF2 archive: its anchor file and global definitions.
// Event and local definition files are read per process, by WriteProcess.
type Archive struct {
	Anchor *Anchor
	Defs   *Defs
	// Path is the anchor file; Dir the directory of the per-location files.
	Path, Dir string
	procs     []process
	// worldLoc maps an MPI world rank to its master location (from the MPI
	// COMM_LOCATIONS group), when the archive has one.
	worldLoc []uint64
}

type process struct {
	group     LocationGroup
	rank      int
	locations []Location // sorted by id: index = ptrace thread index
}

// Process describes one process (location group) for partitioning.
type Process struct {
	Rank    int
	Name    string
	Threads int
	Events  int64 // from the location definitions
	Bytes   int64 // size of its event files
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
// global definitions.
func Open(path string) (*Archive, error) {
	ap, err := anchorPath(path)
	if err != nil {
		return nil, err
	}
	an, err := readAnchor(ap)
	if err != nil {
		return nil, err
	}
	a := &Archive{Anchor: an, Path: ap, Dir: strings.TrimSuffix(ap, ".otf2")}
	if a.Defs, err = readGlobalDefs(a.Dir+".def", an.ChunkDefs); err != nil {
		return nil, err
	}
	if a.Defs.TimerResolution == 0 {
		return nil, fmt.Errorf("%s.def: no ClockProperties definition (timer resolution)", a.Dir)
	}
	if err := a.layout(); err != nil {
		return nil, err
	}
	return a, nil
}

// layout groups locations into processes and numbers processes by MPI
// world rank (or by location-group id without MPI).
func (a *Archive) layout() error {
	g := a.Defs
	byGroup := map[uint32][]Location{}
	for _, l := range g.Locations {
		if l.Type == locationTypeCPUThread || l.Type == 0 {
			byGroup[l.Group] = append(byGroup[l.Group], l)
		}
	}
	groups := append([]LocationGroup(nil), g.LocationGroups...)
	sort.Slice(groups, func(i, j int) bool { return groups[i].ID < groups[j].ID })
	rankOf := map[uint32]int{}
	if wl := a.mpiLocations(); wl != nil {
		a.worldLoc = wl
		locGroup := map[uint64]uint32{}
		for _, l := range g.Locations {
			locGroup[l.ID] = l.Group
		}
		for r, loc := range wl {
			if lg, ok := locGroup[loc]; ok {
				rankOf[lg] = r
			}
		}
	}
	for _, lg := range groups {
		locs := byGroup[lg.ID]
		if len(locs) == 0 {
			continue
		}
		sort.Slice(locs, func(i, j int) bool { return locs[i].ID < locs[j].ID })
		r, ok := rankOf[lg.ID]
		if !ok {
			r = -1
		}
		a.procs = append(a.procs, process{group: lg, rank: r, locations: locs})
	}
	if len(a.procs) == 0 {
		return fmt.Errorf("%s: the archive defines no locations", a.Path)
	}
	sort.SliceStable(a.procs, func(i, j int) bool {
		ri, rj := a.procs[i].rank, a.procs[j].rank
		if (ri < 0) != (rj < 0) {
			return ri >= 0
		}
		return ri < rj
	})
	for i := range a.procs {
		if a.procs[i].rank >= 0 && a.procs[i].rank != i {
			return fmt.Errorf("%s: MPI ranks of the location groups are not 0..%d (group %q has rank %d)",
				a.Path, len(a.procs)-1, a.procs[i].group.Name, a.procs[i].rank)
		}
		a.procs[i].rank = i
	}
	return nil
}

const (
	locationTypeCPUThread = 1
	groupTypeCommLocs     = 4
	groupTypeCommGroup    = 5
	groupTypeCommSelf     = 6
	paradigmOpenMP        = 3
	paradigmMPI           = 4
	paradigmUser          = 1
	undefined32           = 0xffffffff
)

// mpiLocations returns the members of the MPI COMM_LOCATIONS group: the
// location of each world rank.
func (a *Archive) mpiLocations() []uint64 {
	for _, grp := range a.Defs.Groups {
		if grp.Type == groupTypeCommLocs && grp.Paradigm == paradigmMPI {
			return grp.Members
		}
	}
	return nil
}

// NumProcesses returns the number of processes (location groups with
// locations).
func (a *Archive) NumProcesses() int { return len(a.procs) }

// Process describes process i; Bytes comes from the sizes of its event files.
func (a *Archive) Process(i int) Process {
	p := &a.procs[i]
	out := Process{Rank: p.rank, Name: p.group.Name, Threads: len(p.locations)}
	for _, l := range p.locations {
		out.Events += int64(l.Events)
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
		return int64(d)
	}
	hi, lo := bits.Mul64(d, 1_000_000_000)
	lo, carry := bits.Add64(lo, c.res/2, 0)
	hi += carry
	if hi >= c.res {
		return 1<<63 - 1
	}
	q, _ := bits.Div64(hi, lo, c.res)
	return int64(q)
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
		s += " (" + a.Anchor.Creator + ")"
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

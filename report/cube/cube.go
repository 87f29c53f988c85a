// Package cube writes ptrace's results as a CUBE4 experiment (a .cubex
// file), the format Scalasca and Score-P write and CubeGUI, CubeLib's
// command-line tools (cube_dump, cube_stat, cube_diff, cube_merge) and
// Extra-P read: a metric tree × a call tree × a system tree of severity
// values.
//
// The package has two layers. File and its trees are a plain model of one
// experiment with a writer of the on-disk format (write.go), which follows
// CubeW 4.8's output byte for byte where CubeLib's reader depends on it: a
// tar archive (CubeLib's own reading of tar headers, see write.go) holding
// anchor.xml, the experiment's definitions in the exact token layout of
// CubeLib's anchor scanner, and per metric an index file and a data file
// of rows of 64-bit values. FromReport (render.go) fills that model from
// a report.Report and nothing else: it renders the report, it computes
// no analysis. docs/cube.md says which metric is which.
package cube

import (
	"fmt"
	"math"
)

// DType is a metric's value type as CUBE names it.
type DType string

// The two value types ptrace writes: times in seconds and counts.
const (
	Double DType = "DOUBLE"
	Uint64 DType = "UINT64"
)

// File is one CUBE experiment. Its trees are built by the caller; ids are
// given at write time (preorder), so a tree can be built in any order.
type File struct {
	// Attrs are the experiment's key/value attributes (cube_dump -w
	// attributes, CubeGUI's info panel), in this order.
	Attrs    []Attr
	Metrics  []*Metric // metric tree roots
	Calls    []*Cnode  // call tree roots
	Machines []*SystemNode
}

// Attr is one key/value attribute.
type Attr struct{ Key, Value string }

// Metric is one node of the metric tree. CUBE4 stores a metric's values
// inclusive along the metric tree (a parent's value holds its children's)
// and, for the EXCLUSIVE metric type written here, exclusive along the
// call tree (a call path's own value, its callees' not included).
type Metric struct {
	Name     string // unique name, the key tools select by (cube_dump -m)
	Disp     string // display name
	DType    DType
	Unit     string // "sec", "occ", ...
	URL      string
	Descr    string
	Children []*Metric

	vals map[*Cnode]map[*Location]float64
}

// Set stores v as the metric's value at call path c and location l,
// replacing any earlier value there.
func (m *Metric) Set(c *Cnode, l *Location, v float64) {
	if m.vals == nil {
		m.vals = map[*Cnode]map[*Location]float64{}
	}
	row := m.vals[c]
	if row == nil {
		row = map[*Location]float64{}
		m.vals[c] = row
	}
	row[l] = v
}

// Add adds v to the metric's value at call path c and location l.
func (m *Metric) Add(c *Cnode, l *Location, v float64) {
	m.Set(c, l, m.Value(c, l)+v)
}

// Value is the metric's stored value at call path c and location l (0
// when none was set).
func (m *Metric) Value(c *Cnode, l *Location) float64 {
	return m.vals[c][l]
}

// Region is a code region (a function, an OpenMP construct, an MPI call)
// that call paths enter.
type Region struct {
	Name       string
	Mangled    string // defaults to Name
	Mod        string // source file or module
	Begin, End int    // source lines, -1 when unknown
	Paradigm   string // "mpi", "openmp", "user", "measurement", ...
	Role       string // "function", "parallel", "barrier", "point2point", ...
	URL, Descr string
}

// Cnode is one call path: its region entered from its parent's.
type Cnode struct {
	Callee   *Region
	Mod      string // file of the call site; "" when unknown
	Line     int    // line of the call site; -1 when unknown
	Children []*Cnode
}

// SystemNode is a machine or a node (host) of the system tree.
type SystemNode struct {
	Name, Class, Descr string
	Children           []*SystemNode
	Groups             []*LocationGroup
}

// LocationGroup is a process.
type LocationGroup struct {
	Name      string
	Rank      int
	Type      string // "process"
	Locations []*Location
}

// Location is a thread, the system tree's leaf: every value belongs to
// one.
type Location struct {
	Name string
	Rank int    // thread number within its process
	Type string // "thread"
}

// layout holds the preorder numbering of a file's trees.
type layout struct {
	metrics []*Metric
	regions []*Region
	cnodes  []*Cnode
	locs    []*Location
	metID   map[*Metric]int
	regID   map[*Region]int
	cnodeID map[*Cnode]int
	locID   map[*Location]int
}

// number walks the trees in preorder, giving ids and checking that every
// node appears once and every value lies on the file's own call paths and
// locations.
func (f *File) number() (*layout, error) {
	ly := &layout{metID: map[*Metric]int{}, regID: map[*Region]int{}, cnodeID: map[*Cnode]int{}, locID: map[*Location]int{}}
	var walkM func(m *Metric) error
	walkM = func(m *Metric) error {
		if _, dup := ly.metID[m]; dup {
			return fmt.Errorf("cube: metric %q appears twice in the metric tree", m.Name)
		}
		if m.Name == "" {
			return fmt.Errorf("cube: a metric without a unique name")
		}
		if m.DType != Double && m.DType != Uint64 {
			return fmt.Errorf("cube: metric %q: value type %q", m.Name, m.DType)
		}
		ly.metID[m] = len(ly.metrics)
		ly.metrics = append(ly.metrics, m)
		for _, c := range m.Children {
			if err := walkM(c); err != nil {
				return err
			}
		}
		return nil
	}
	names := map[string]bool{}
	for _, m := range f.Metrics {
		if err := walkM(m); err != nil {
			return nil, err
		}
	}
	for _, m := range ly.metrics {
		if names[m.Name] {
			return nil, fmt.Errorf("cube: two metrics named %q", m.Name)
		}
		names[m.Name] = true
	}
	var walkC func(c *Cnode) error
	walkC = func(c *Cnode) error {
		if _, dup := ly.cnodeID[c]; dup {
			return fmt.Errorf("cube: a call path appears twice in the call tree")
		}
		if c.Callee == nil {
			return fmt.Errorf("cube: a call path without a region")
		}
		if _, ok := ly.regID[c.Callee]; !ok {
			ly.regID[c.Callee] = len(ly.regions)
			ly.regions = append(ly.regions, c.Callee)
		}
		ly.cnodeID[c] = len(ly.cnodes)
		ly.cnodes = append(ly.cnodes, c)
		for _, k := range c.Children {
			if err := walkC(k); err != nil {
				return err
			}
		}
		return nil
	}
	for _, c := range f.Calls {
		if err := walkC(c); err != nil {
			return nil, err
		}
	}
	if len(ly.cnodes) == 0 {
		return nil, fmt.Errorf("cube: the call tree is empty")
	}
	seenGroup := map[*LocationGroup]bool{}
	var walkS func(s *SystemNode) error
	walkS = func(s *SystemNode) error {
		for _, g := range s.Groups {
			if seenGroup[g] {
				return fmt.Errorf("cube: process %q appears twice in the system tree", g.Name)
			}
			seenGroup[g] = true
			for _, l := range g.Locations {
				if _, dup := ly.locID[l]; dup {
					return fmt.Errorf("cube: thread %q of %q appears twice in the system tree", l.Name, g.Name)
				}
				ly.locID[l] = len(ly.locs)
				ly.locs = append(ly.locs, l)
			}
		}
		for _, k := range s.Children {
			if err := walkS(k); err != nil {
				return err
			}
		}
		return nil
	}
	for _, s := range f.Machines {
		if err := walkS(s); err != nil {
			return nil, err
		}
	}
	if len(ly.locs) == 0 {
		return nil, fmt.Errorf("cube: the system tree has no location")
	}
	for _, m := range ly.metrics {
		for c, row := range m.vals {
			if _, ok := ly.cnodeID[c]; !ok {
				return nil, fmt.Errorf("cube: metric %q has a value on a call path outside the call tree", m.Name)
			}
			for l, v := range row {
				if _, ok := ly.locID[l]; !ok {
					return nil, fmt.Errorf("cube: metric %q has a value on a location outside the system tree", m.Name)
				}
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("cube: metric %q: value %v", m.Name, v)
				}
				if m.DType == Uint64 && (v < 0 || v != math.Trunc(v) || v >= 1<<63) {
					return nil, fmt.Errorf("cube: metric %q: %v is not a count", m.Name, v)
				}
			}
		}
	}
	return ly, nil
}

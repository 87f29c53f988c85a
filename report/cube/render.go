package cube

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/ptrace-dev/ptrace/report"
)

// How a report becomes a CUBE (docs/cube.md):
//
// Every value in the file is a number of the report, put at the finest
// call path and location the report resolves it to; nothing is computed
// about the trace. The report gives most values per process (the
// breakdown, the wait states, the OpenMP waits, the critical path) and
// some per call path summed over processes (call sites, sync and task
// constructs, mutexes): a value known per process sits on the call tree's
// root (the program: "not attributed to a deeper call path"), and where
// the report also says which call path of which process it belongs to it
// moves there, taking along the metrics above it in the metric tree (the
// MPI time of a call site is also time). Rows summed over processes belong
// to a process only when the report has one process; with several they
// stay on the root. Rows that name a process and a call path (the delay
// costs: process × code; the causes: the process waited for × the
// waiters' call site) are placed as they are. The report holds no
// per-thread values: a process's values are stored on its first thread.
//
// The same rule in the metric tree: a value the report gives only for a
// parent metric (the mutex waiting of a process, but not by kind) stays in
// the parent's own (exclusive) value.

// Options control FromReports.
type Options struct {
	// Creator names the writing program, e.g. "ptrace 0.1.0".
	Creator string
}

// FromReport renders one report as a CUBE experiment.
func FromReport(r *report.Report, o Options) (*File, error) {
	fs, err := FromReports([]*report.Report{r}, o)
	if err != nil {
		return nil, err
	}
	return fs[0], nil
}

// FromReports renders several reports (runs of one program) with the same
// metric tree and the same call tree (the union of the call paths all
// reports name), so that cube_diff, cube_merge and Extra-P line them up.
// Each file's system tree is its own run's.
func FromReports(reps []*report.Report, o Options) ([]*File, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("cube: no report")
	}
	ct := newCallTree(programName(reps))
	for _, r := range reps {
		if r == nil {
			return nil, fmt.Errorf("cube: a nil report")
		}
		visitCallPaths(r, func(p []step) { ct.insert(p) })
	}
	ct.finish()
	files := make([]*File, len(reps))
	for i, r := range reps {
		f, err := render(r, ct, o)
		if err != nil {
			if len(reps) > 1 {
				return nil, fmt.Errorf("report of %s: %w", r.Trace.Dir, err)
			}
			return nil, err
		}
		files[i] = f
	}
	return files, nil
}

// programName is the root region's name: the traced program's base name
// (the first report's that names one), the same for every file.
func programName(reps []*report.Report) string {
	for _, r := range reps {
		if r != nil && len(r.Trace.Command) > 0 && r.Trace.Command[0] != "" {
			return path.Base(r.Trace.Command[0])
		}
	}
	return "program"
}

// A step is one level of a call path: the region entered and where from.
type step struct {
	order int // sort class among siblings (kind of node)
	reg   Region
	mod   string // call site file ("" unknown)
	line  int    // call site line (-1 unknown)
}

// Sort classes of call-tree nodes below the root.
const (
	orderSerial = iota
	orderParallel
	orderSync
	orderTask
	orderMutex
	orderUser
	orderMPI
)

func (s step) key() string {
	return fmt.Sprintf("%d\x00%s\x00%s\x00%d\x00%s\x00%d", s.order, s.reg.Name, s.reg.Mod, s.reg.Begin, s.mod, s.line)
}

type ctNode struct {
	step  step
	cnode *Cnode
	kids  map[string]*ctNode
}

// callTree is the union of the call paths of a set of reports. Regions
// are shared by call paths entering the same code.
type callTree struct {
	root    *ctNode
	regions map[string]*Region
}

func newCallTree(program string) *callTree {
	ct := &callTree{regions: map[string]*Region{}}
	rs := step{reg: Region{Name: program, Begin: -1, End: -1, Paradigm: "user", Role: "artificial",
		Descr: "the program in the analysis window; values the report does not attribute to a deeper call path"}, line: -1}
	ct.root = &ctNode{step: rs, kids: map[string]*ctNode{}}
	return ct
}

func (ct *callTree) insert(p []step) {
	n := ct.root
	for _, s := range p {
		k := s.key()
		c := n.kids[k]
		if c == nil {
			c = &ctNode{step: s, kids: map[string]*ctNode{}}
			n.kids[k] = c
		}
		n = c
	}
}

// finish makes the Cnodes, children in a fixed order (kind, then name).
func (ct *callTree) finish() {
	var mk func(n *ctNode) *Cnode
	mk = func(n *ctNode) *Cnode {
		rk := fmt.Sprintf("%s\x00%s\x00%d\x00%s", n.step.reg.Name, n.step.reg.Mod, n.step.reg.Begin, n.step.reg.Paradigm)
		reg := ct.regions[rk]
		if reg == nil {
			r := n.step.reg
			reg = &r
			ct.regions[rk] = reg
		}
		n.cnode = &Cnode{Callee: reg, Mod: n.step.mod, Line: n.step.line}
		kids := make([]*ctNode, 0, len(n.kids))
		for _, k := range n.kids {
			kids = append(kids, k)
		}
		slices.SortFunc(kids, func(a, b *ctNode) int {
			return cmp.Or(cmp.Compare(a.step.order, b.step.order), strings.Compare(a.step.reg.Name, b.step.reg.Name),
				strings.Compare(a.step.mod, b.step.mod), cmp.Compare(a.step.line, b.step.line), strings.Compare(a.step.key(), b.step.key()))
		})
		for _, k := range kids {
			n.cnode.Children = append(n.cnode.Children, mk(k))
		}
		return n.cnode
	}
	mk(ct.root)
}

// lookup returns the Cnode of a path inserted before finish.
func (ct *callTree) lookup(p []step) *Cnode {
	n := ct.root
	for _, s := range p {
		n = n.kids[s.key()]
		if n == nil {
			return nil
		}
	}
	return n.cnode
}

// splitLoc splits a report location "file:line:col" (or "file:line") into
// file and line; other names (functions, module+offset) give ("", -1).
func splitLoc(loc string) (string, int) {
	parts := strings.Split(loc, ":")
	n := len(parts)
	if n >= 3 {
		l, err1 := strconv.Atoi(parts[n-2])
		_, err2 := strconv.Atoi(parts[n-1])
		if err1 == nil && err2 == nil {
			if l < 0 {
				return "", -1
			}
			return strings.Join(parts[:n-2], ":"), l
		}
	}
	if n >= 2 {
		if l, err := strconv.Atoi(parts[n-1]); err == nil && l >= 0 {
			return strings.Join(parts[:n-1], ":"), l
		}
	}
	return "", -1
}

// ompStep is an OpenMP construct's node, named as Score-P names them
// ("!$omp taskwait @file:line:col").
func ompStep(order int, what, role, loc string) step {
	name := "!$omp " + what
	if loc != "" {
		name += " @" + loc
	}
	file, line := splitLoc(loc)
	return step{order: order, reg: Region{Name: name, Mod: file, Begin: line, End: -1, Paradigm: "openmp", Role: role}, line: -1}
}

// parallelStep is the node of the parallel region at loc; descr names the
// function the report gives with it, if any.
func parallelStep(loc, descr string) step {
	s := ompStep(orderParallel, "parallel", "parallel", loc)
	s.reg.Descr = descr
	return s
}

var syncWhat = map[string][2]string{
	"barrier_implicit": {"implicit barrier", "implicit barrier"},
	"barrier_explicit": {"barrier", "barrier"},
	"taskwait":         {"taskwait", "barrier"},
	"taskgroup":        {"taskgroup", "barrier"},
	"other_sync":       {"sync region", "barrier"},
	"thread_join":      {"thread join", "barrier"},
	"cond_wait":        {"condition wait", "barrier"},
	"thread_barrier":   {"thread barrier", "barrier"},
}

// syncPath is the call path of an OpenMP sync construct row; nil for the
// time in no construct (it belongs to the root).
func syncPath(c *report.OMPWaitConstruct) []step {
	w, ok := syncWhat[c.Kind]
	if !ok {
		return nil
	}
	var p []step
	if c.Region != "" {
		p = append(p, parallelStep(c.Region, ""))
	}
	loc := c.Construct
	if loc == "" {
		loc = "unknown location"
	}
	return append(p, ompStep(orderSync, w[0], w[1], loc))
}

var mutexWhat = map[string][2]string{
	"critical":       {"!$omp critical", "critical"},
	"atomic":         {"!$omp atomic", "atomic"},
	"ordered":        {"!$omp ordered", "ordered"},
	"lock":           {"omp_set_lock", "wrapper"},
	"test_lock":      {"omp_test_lock", "wrapper"},
	"nest_lock":      {"omp_set_nest_lock", "wrapper"},
	"test_nest_lock": {"omp_test_nest_lock", "wrapper"},
}

func mutexPath(m *report.OMPMutex) []step {
	if m.Kind == "pthread_mutex" {
		// named by its call (Score-P's pthread_mutex_lock, or the
		// pthread_cond_wait that reacquired it), as Score-P names its
		// pthread regions
		name := m.Construct
		if name == "" {
			name = "pthread_mutex_lock"
		}
		file, line := splitLoc(m.Construct)
		return []step{{order: orderMutex, reg: Region{Name: name, Mod: file, Begin: line, End: -1, Paradigm: "pthread", Role: "wrapper"}, line: -1}}
	}
	w, ok := mutexWhat[m.Kind]
	if !ok {
		w = [2]string{"omp mutex " + m.Kind, "wrapper"}
	}
	name := w[0]
	if m.Construct != "" {
		name += " @" + m.Construct
	}
	file, line := splitLoc(m.Construct)
	return []step{{order: orderMutex, reg: Region{Name: name, Mod: file, Begin: line, End: -1, Paradigm: "openmp", Role: w[1]}, line: -1}}
}

func taskPath(c *report.Construct) []step {
	kind := c.Kind
	if kind == "" {
		kind = "task"
	}
	s := ompStep(orderTask, kind, "task", c.Name)
	return []step{s}
}

// mpiRoles are CUBE's region roles of MPI functions (as Score-P writes them).
var mpiRoles = map[string]string{
	"MPI_Barrier": "barrier", "MPI_Ibarrier": "barrier",
	"MPI_Bcast": "one2all", "MPI_Scatter": "one2all", "MPI_Scatterv": "one2all",
	"MPI_Reduce": "all2one", "MPI_Gather": "all2one", "MPI_Gatherv": "all2one",
	"MPI_Allreduce": "all2all", "MPI_Allgather": "all2all", "MPI_Allgatherv": "all2all",
	"MPI_Alltoall": "all2all", "MPI_Alltoallv": "all2all", "MPI_Alltoallw": "all2all",
	"MPI_Reduce_scatter": "all2all", "MPI_Reduce_scatter_block": "all2all",
	"MPI_Scan": "other", "MPI_Exscan": "other",
	"MPI_Send": "point2point", "MPI_Ssend": "point2point", "MPI_Bsend": "point2point", "MPI_Rsend": "point2point",
	"MPI_Isend": "point2point", "MPI_Issend": "point2point", "MPI_Ibsend": "point2point", "MPI_Irsend": "point2point",
	"MPI_Recv": "point2point", "MPI_Irecv": "point2point", "MPI_Sendrecv": "point2point", "MPI_Sendrecv_replace": "point2point",
	"MPI_Start": "point2point", "MPI_Startall": "point2point",
}

// callSite identifies an MPI call site as the report's wait-state rows
// name it: the function, the innermost user region around the call and
// the call's own location ("file:line:col", or "function+0xoffset"
// without debug information; "" when the report does not carry it).
type callSite struct{ fn, region, loc string }

func siteOf(fn, region, loc string) callSite { return callSite{fn, region, loc} }

// sitePath is the call path of an MPI call site: the innermost user
// region around the call, if known, then the MPI function entered from
// the call's file and line, if known.
func sitePath(s callSite) []step {
	var p []step
	if s.region != "" {
		file, line := splitLoc(s.region)
		p = append(p, step{order: orderUser, reg: Region{Name: s.region, Mod: file, Begin: line, End: -1, Paradigm: "user", Role: "function"}, line: -1})
	}
	role := mpiRoles[s.fn]
	if role == "" {
		role = "function"
	}
	// A call site without a line ("function+0xoffset" for a program
	// without debug information, module+offset) is kept whole as the
	// call's module, so that two such sites stay two call paths.
	file, line := splitLoc(s.loc)
	if file == "" {
		file = s.loc
	}
	return append(p, step{order: orderMPI, reg: Region{Name: s.fn, Mod: "MPI", Begin: -1, End: -1, Paradigm: "mpi", Role: role}, mod: file, line: line})
}

// delayPath is the call path of a delay's code: "serial code", an MPI
// call site ("MPI_Waitall at file:line:col", its time outside waits: the
// call site's path, as the wait states give it without the user region),
// a parallel region as "func (location)" or its location alone, or a user
// region by its name. A user region's name may hold colons (C++'s
// "std::vector<char>::_M_default_append(unsigned long)", which Score-P's
// compiler instrumentation gives): a code is a parallel region only where
// it, or what its parentheses hold, is a location (isLocName).
func delayPath(code string) []step {
	if code == "" || code == "serial code" {
		return []step{{order: orderSerial, reg: Region{Name: "serial code", Begin: -1, End: -1, Paradigm: "user", Role: "artificial",
			Descr: "code outside parallel regions"}, line: -1}}
	}
	if fn, loc, ok := mpiSiteName(code); ok {
		return sitePath(siteOf(fn, "", loc))
	}
	if isLocName(code) {
		return []step{parallelStep(code, "")}
	}
	if strings.HasSuffix(code, ")") {
		for i := strings.Index(code, " ("); i > 0; {
			if loc := code[i+2 : len(code)-1]; isLocName(loc) {
				return []step{parallelStep(loc, "in "+code[:i])}
			}
			j := strings.Index(code[i+2:], " (")
			if j < 0 {
				break
			}
			i += 2 + j
		}
	}
	return []step{{order: orderUser, reg: Region{Name: code, Begin: -1, End: -1, Paradigm: "user", Role: "function"}, line: -1}}
}

// mpiSiteName splits an MPI call site's name as trace.CallSiteName gives
// it ("MPI_Send at file:line:col", or "MPI_Send") into the function and
// the location; ok is false for other names.
func mpiSiteName(code string) (fn, loc string, ok bool) {
	fn = code
	if i := strings.Index(code, " at "); i > 0 {
		fn, loc = code[:i], code[i+4:]
	}
	if !strings.HasPrefix(fn, "MPI_") || strings.ContainsAny(fn, " :()<>") {
		return "", "", false
	}
	return fn, loc, true
}

// isLocName reports whether s is a location as trace.Location.Name renders
// one: "file:line:col", "file:line", "func at file:line (approximate)",
// "func+0xoff", "module+0xoff" or "0xaddr" (a location of a function
// name alone is not told from a user region: it stays one).
func isLocName(s string) bool {
	if _, l := splitLoc(s); l >= 0 || strings.HasSuffix(s, " (approximate)") {
		return true
	}
	hex := s
	if i := strings.LastIndex(s, "+0x"); i > 0 {
		hex = s[i+1:]
	}
	if len(hex) < 3 || !strings.HasPrefix(hex, "0x") {
		return false
	}
	_, err := strconv.ParseUint(hex[2:], 16, 64)
	return err == nil
}

// visitCallPaths calls fn with every call path the report names.
func visitCallPaths(r *report.Report, fn func([]step)) {
	if ws := r.WaitStates; ws != nil {
		for i := range ws.CallSites {
			fn(sitePath(siteOfRow(&ws.CallSites[i])))
		}
		for i := range ws.Causes {
			fn(sitePath(siteOfCause(&ws.Causes[i])))
		}
		for i := range ws.Delays {
			fn(delayPath(ws.Delays[i].Code))
		}
		if o := ws.OpenMP; o != nil {
			for i := range o.Constructs {
				if p := syncPath(&o.Constructs[i]); p != nil {
					fn(p)
				}
			}
			for i := range o.Mutexes {
				fn(mutexPath(&o.Mutexes[i]))
			}
		}
	}
	if t := r.Tasks; t != nil {
		for i := range t.Constructs {
			fn(taskPath(&t.Constructs[i]))
		}
	}
}

// siteOfRow and siteOfCause are the call sites of the report's rows: the
// function, the user region around the call and the call's file:line.
func siteOfRow(s *report.WaitSite) callSite    { return siteOf(s.Func, s.Region, s.Site) }
func siteOfCause(c *report.WaitCause) callSite { return siteOf(c.Func, c.Region, c.Site) }

// placer fills one file's metrics. Values are kept as exclusive amounts
// in nanoseconds (or counts) per metric, call path and process while
// placing, and turned into CUBE's stored form (inclusive along the metric
// tree, seconds) at the end.
type placer struct {
	ms    *metricSet
	root  *Cnode
	loc   map[int]*Location // rank → the process's first thread
	order []int             // ranks in the system tree's order
}

// set puts a process's total of metric name on the root.
func (p *placer) set(name string, rank int, v float64) {
	p.ms.byName[name].Add(p.root, p.loc[rank], v)
}

// place puts v of metric name at call path c of process rank, and takes it
// from the root's value of the nearest metric at or above it that has a
// per-process total: the report resolved that much of the total further.
func (p *placer) place(name string, c *Cnode, rank int, v float64) {
	if v == 0 {
		return
	}
	m := p.ms.byName[name]
	l := p.loc[rank]
	m.Add(c, l, v)
	for a := m; a != nil; a = p.ms.parent[a] {
		if p.ms.def[a].total {
			a.Add(p.root, l, -v)
			return
		}
	}
}

// render fills a file from one report on the shared call tree.
func render(r *report.Report, ct *callTree, o Options) (*File, error) {
	ms := newMetrics(r.WaitStates != nil && r.WaitStates.Locks())
	f := &File{Metrics: ms.roots, Calls: []*Cnode{ct.root.cnode}}
	f.Attrs = attributes(r, o)
	p := &placer{ms: ms, root: ct.root.cnode, loc: map[int]*Location{}}
	if err := systemTree(r, f, p); err != nil {
		return nil, err
	}
	known := func(what string, rank int) error {
		if _, ok := p.loc[rank]; !ok {
			return fmt.Errorf("cube: %s names rank %d, not a process of the report", what, rank)
		}
		return nil
	}
	single := len(p.order) == 1
	var only int
	if single {
		only = p.order[0]
	}

	// systemTree made sure the breakdown's rows are there.
	for i := range r.Breakdown.PerProcess {
		q := &r.Breakdown.PerProcess[i]
		if err := known("breakdown.per_process", q.Rank); err != nil {
			return nil, err
		}
		p.set(mTime, q.Rank, float64(q.ThreadTimeNS-q.WorkNS-q.MPINS-q.OverheadNS-q.IdlenessNS-q.InstrumentationNS))
		p.set(mWork, q.Rank, float64(q.WorkNS))
		p.set(mMPI, q.Rank, float64(q.MPINS-q.InitFinalizeNS))
		p.set(mInitFinalize, q.Rank, float64(q.InitFinalizeNS))
		p.set(mOverhead, q.Rank, float64(q.OverheadNS-q.ForkJoinNS-q.SyncRuntimeNS))
		p.set(mForkJoin, q.Rank, float64(q.ForkJoinNS))
		p.set(mSyncRuntime, q.Rank, float64(q.SyncRuntimeNS))
		p.set(mIdleness, q.Rank, float64(q.IdlenessNS-q.IdlenessSerialNS-q.IdlenessParallelNS))
		p.set(mIdleSerial, q.Rank, float64(q.IdlenessSerialNS))
		p.set(mIdleParallel, q.Rank, float64(q.IdlenessParallelNS))
		p.set(mInstrument, q.Rank, float64(q.InstrumentationNS))
	}
	if ws := r.WaitStates; ws != nil {
		for i := range ws.PerProcess {
			q := &ws.PerProcess[i]
			if err := known("wait_states.per_process", q.Rank); err != nil {
				return nil, err
			}
			for _, pt := range patterns {
				v := patternNS(&q.WaitTimes, pt.key)
				if p.ms.byName[pt.metric] == nil {
					continue // a metric the file leaves out: 0 (metricTree)
				}
				p.set(pt.metric, q.Rank, float64(v))
				p.set(mMPI, q.Rank, -float64(v)) // inside mpi: mpi's own value is the rest
			}
			p.set(mCalls, q.Rank, float64(q.Calls-q.WaitingCalls))
			p.set(mWaitingCalls, q.Rank, float64(q.WaitingCalls))
		}
		// Call sites: summed over processes; a process's own only in a
		// single-process report.
		if single {
			for i := range ws.CallSites {
				s := &ws.CallSites[i]
				c := ct.lookup(sitePath(siteOfRow(s)))
				var waits int64
				for _, pt := range patterns {
					v := patternNS(&s.WaitTimes, pt.key)
					if p.ms.byName[pt.metric] == nil {
						continue // a metric the file leaves out: 0 (metricTree)
					}
					waits += v
					p.place(pt.metric, c, only, float64(v))
				}
				rest := mMPI
				if isInitFinalize(s.Func) {
					rest = mInitFinalize
				}
				p.place(rest, c, only, float64(s.MPINS-waits))
				p.place(mCalls, c, only, float64(s.Calls-s.WaitingCalls))
				p.place(mWaitingCalls, c, only, float64(s.WaitingCalls))
			}
		}
		for i := range ws.Causes {
			c := &ws.Causes[i]
			if err := known("wait_states.causes", c.Rank); err != nil {
				return nil, err
			}
			if !knownPattern(c.Pattern) {
				return nil, fmt.Errorf("cube: wait_states.causes: pattern %q", c.Pattern)
			}
			p.place(causedName(c.Pattern), ct.lookup(sitePath(siteOfCause(c))), c.Rank, float64(c.NS))
		}
		for i := range ws.Delays {
			d := &ws.Delays[i]
			if err := known("wait_states.delays", d.Rank); err != nil {
				return nil, err
			}
			c := ct.lookup(delayPath(d.Code))
			p.place(mDelayShort, c, d.Rank, float64(d.NS))
			p.place(mDelayLong, c, d.Rank, float64(d.LongTermNS))
			p.place(mDelayProp, c, d.Rank, float64(d.PropagatedNS))
		}
		if om := ws.OpenMP; om != nil {
			for i := range om.PerProcess {
				q := &om.PerProcess[i]
				if err := known("wait_states.openmp.per_process", q.Rank); err != nil {
					return nil, err
				}
				t := &q.OMPWaitTimes
				places := t.BarrierImplicitNS + t.BarrierExplicitNS + t.TaskwaitNS + t.TaskgroupNS + t.OtherSyncNS + t.OutsideSyncNS + t.ThreadSyncNS
				p.set(mOMPWaiting, q.Rank, float64(t.WaitingNS-places))
				p.set(mOMPBarImplicit, q.Rank, float64(t.BarrierImplicitNS))
				p.set(mOMPBarExplicit, q.Rank, float64(t.BarrierExplicitNS))
				p.set(mOMPTaskwait, q.Rank, float64(t.TaskwaitNS))
				p.set(mOMPTaskgroup, q.Rank, float64(t.TaskgroupNS))
				p.set(mOMPOtherSync, q.Rank, float64(t.OtherSyncNS+t.ThreadSyncNS)) // the program's own thread syncs: constructs of no OpenMP kind
				p.set(mOMPOutside, q.Rank, float64(t.OutsideSyncNS))
				p.set(mOMPWhy, q.Rank, float64(t.WaitingNS-t.TaskReadyNS-t.DependencesNS-t.NoTaskNS))
				p.set(mOMPTaskReady, q.Rank, float64(t.TaskReadyNS))
				p.set(mOMPDeps, q.Rank, float64(t.DependencesNS))
				p.set(mOMPNoTask, q.Rank, float64(t.NoTaskNS))
				p.set(mMutex, q.Rank, float64(t.MutexWaitNS))
				p.set(mWork, q.Rank, -float64(t.MutexWaitNS)) // inside work: work's own value is the rest
			}
			if single {
				for i := range om.Constructs {
					k := &om.Constructs[i]
					c := p.root
					if sp := syncPath(k); sp != nil {
						c = ct.lookup(sp)
					}
					if m := syncMetric[k.Kind]; m != "" {
						p.place(m, c, only, float64(k.WaitingNS))
					} else {
						p.place(mOMPWaiting, c, only, float64(k.WaitingNS))
					}
					p.place(mOMPTaskReady, c, only, float64(k.TaskReadyNS))
					p.place(mOMPDeps, c, only, float64(k.DependencesNS))
					p.place(mOMPNoTask, c, only, float64(k.NoTaskNS))
					p.place(mOMPWhy, c, only, float64(k.WaitingNS-k.TaskReadyNS-k.DependencesNS-k.NoTaskNS))
					p.place(mSyncEntries, c, only, float64(k.Count))
				}
				for i := range om.Mutexes {
					mx := &om.Mutexes[i]
					c := ct.lookup(mutexPath(mx))
					switch m := mutexMetric(mx.Kind); m {
					case mMutexCritical, mMutexLock, mMutexPthread:
						// Scalasca's contention; the hand-over after the
						// release is the parent's own value there.
						p.place(m, c, only, float64(mx.ContentionNS))
						p.place(mMutex, c, only, float64(mx.WaitNS-mx.ContentionNS))
					default:
						p.place(m, c, only, float64(mx.WaitNS))
					}
				}
			}
		}
	}
	if cp := r.CriticalPath; cp != nil {
		for i := range cp.ByProcess {
			s := &cp.ByProcess[i]
			rank, ok := strings.CutPrefix(s.Name, "rank ")
			n, err := strconv.Atoi(rank)
			if !ok || err != nil {
				return nil, fmt.Errorf("cube: critical_path.by_process: %q is not \"rank N\"", s.Name)
			}
			if err := known("critical_path.by_process", n); err != nil {
				return nil, err
			}
			p.set(mCP, n, float64(s.NS))
			if cp.RunTimeNS > 0 {
				p.set(mCPShare, n, float64(s.NS)/float64(cp.RunTimeNS))
			}
		}
		if single {
			for i := range cp.ByKind {
				k := &cp.ByKind[i]
				if !knownKind(k.Name) {
					continue // a kind this version does not know stays in critical_path's own value
				}
				p.place(cpKindName(k.Name), p.root, only, float64(k.NS))
			}
		}
	}
	if t := r.Tasks; t != nil && single {
		for i := range t.Constructs {
			k := &t.Constructs[i]
			c := ct.lookup(taskPath(k))
			p.place(mTasksCreated, c, only, float64(k.Count))
			p.place(mTasksExecuted, c, only, float64(k.Executed))
			p.place(mTaskTime, c, only, float64(k.SumNS))
		}
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return f, nil
}

var syncMetric = map[string]string{
	"barrier_implicit": mOMPBarImplicit,
	"barrier_explicit": mOMPBarExplicit,
	"taskwait":         mOMPTaskwait,
	"taskgroup":        mOMPTaskgroup,
	"other_sync":       mOMPOtherSync,
	"outside_sync":     mOMPOutside,
	"thread_join":      mOMPOtherSync,
	"cond_wait":        mOMPOtherSync,
	"thread_barrier":   mOMPOtherSync,
}

func mutexMetric(kind string) string {
	switch kind {
	case "critical":
		return mMutexCritical
	case "lock", "test_lock", "nest_lock", "test_nest_lock":
		return mMutexLock
	case "ordered":
		return mMutexOrdered
	case "atomic":
		return mMutexAtomic
	case "pthread_mutex":
		return mMutexPthread
	}
	return mMutex // a kind this version does not know: the parent's own value
}

func isInitFinalize(fn string) bool {
	return fn == "MPI_Init" || fn == "MPI_Init_thread" || fn == "MPI_Finalize"
}

func knownPattern(p string) bool {
	for _, pt := range patterns {
		if pt.key == p {
			return true
		}
	}
	return false
}

func knownKind(k string) bool {
	for _, c := range cpKinds {
		if c.kind == k {
			return true
		}
	}
	return false
}

func patternNS(w *report.WaitTimes, key string) int64 {
	switch key {
	case "late_sender":
		return w.LateSenderNS
	case "late_receiver":
		return w.LateReceiverNS
	case "wait_nxn":
		return w.WaitNxNNS
	case "wait_barrier":
		return w.WaitBarrierNS
	case "late_broadcast":
		return w.LateBroadcastNS
	case "early_reduce":
		return w.EarlyReduceNS
	case "wait_at_fence":
		return w.WaitAtFenceNS
	case "wait_at_win_create":
		return w.WaitAtWinCreateNS
	case "wait_at_win_free":
		return w.WaitAtWinFreeNS
	case "late_post":
		return w.LatePostNS
	case "early_wait":
		return w.EarlyWaitNS
	case "lock_contention":
		return w.LockContentionNS
	case "wait_for_progress":
		return w.WaitForProgressNS
	}
	return 0
}

// finish checks that no metric's own value went below zero (the report's
// parts exceed its whole: an inconsistent report), then turns the
// exclusive amounts into CUBE's stored values: inclusive along the metric
// tree, times in seconds.
func (p *placer) finish() error {
	var all []*Metric
	var walk func(m *Metric)
	walk = func(m *Metric) {
		all = append(all, m)
		for _, c := range m.Children {
			walk(c)
		}
	}
	for _, m := range p.ms.roots {
		walk(m)
	}
	rankOf := map[*Location]int{}
	for r, l := range p.loc {
		rankOf[l] = r
	}
	for _, m := range all {
		for c, row := range m.vals {
			for l, v := range row {
				if v < 0 {
					where := "the program"
					if c != p.root {
						where = c.Callee.Name
					}
					return fmt.Errorf("cube: inconsistent report: the parts of %s at rank %d (%s) exceed it by %.0f", m.Name, rankOf[l], where, -v)
				}
			}
		}
	}
	// Reverse preorder: children are final before their parent adds them.
	for i := len(all) - 1; i >= 0; i-- {
		m := all[i]
		for _, k := range m.Children {
			for c, row := range k.vals {
				for l, v := range row {
					m.Add(c, l, v)
				}
			}
		}
	}
	for _, m := range all {
		if m.Unit != "sec" {
			continue
		}
		for _, row := range m.vals {
			for l, v := range row {
				row[l] = v / 1e9
			}
		}
	}
	return nil
}

// systemTree builds machine → host → process → thread from the report's
// breakdown rows (which name host and threads) and points each rank at
// its first thread. The names are Score-P's on Linux, so that CubeLib's
// tools (cube_diff, cube_merge) merge the system tree of a ptrace file
// with that of a Score-P or Scalasca file of the same run.
func systemTree(r *report.Report, f *File, p *placer) error {
	type proc struct {
		rank, threads int
		host          string
	}
	if r.Breakdown == nil || len(r.Breakdown.PerProcess) == 0 {
		return fmt.Errorf("cube: the report has no breakdown.per_process rows: no processes to put values on")
	}
	procs := make([]proc, 0, len(r.Breakdown.PerProcess))
	for _, q := range r.Breakdown.PerProcess {
		procs = append(procs, proc{q.Rank, q.Threads, q.Host})
	}
	slices.SortStableFunc(procs, func(a, b proc) int { return cmp.Compare(a.rank, b.rank) })
	total := 0
	for i, q := range procs {
		if q.rank < 0 || (i > 0 && procs[i-1].rank == q.rank) {
			return fmt.Errorf("cube: breakdown.per_process: rank %d twice or negative", q.rank)
		}
		if q.threads < 1 {
			procs[i].threads = 1
		}
		if procs[i].threads > maxThreads {
			return fmt.Errorf("cube: rank %d: %d threads, more than %d", q.rank, q.threads, maxThreads)
		}
		total += procs[i].threads
		if total > maxLocations {
			return fmt.Errorf("cube: more than %d threads in the report", maxLocations)
		}
	}
	mpiRun := r.WaitStates != nil
	omp := !r.Trace.NoOpenMP
	machine := &SystemNode{Name: "machine Linux", Class: "machine", Descr: "the analysed trace: " + r.Trace.Dir}
	hosts := map[string]*SystemNode{}
	for _, q := range procs {
		host := q.host
		if host == "" {
			host = "unknown host"
		}
		h := hosts[host]
		if h == nil {
			h = &SystemNode{Name: "node " + host, Class: "node"}
			hosts[host] = h
			machine.Children = append(machine.Children, h)
		}
		name := fmt.Sprintf("Process %d", q.rank)
		if mpiRun {
			name = fmt.Sprintf("MPI Rank %d", q.rank)
		}
		g := &LocationGroup{Name: name, Rank: q.rank, Type: "process"}
		for t := 0; t < q.threads; t++ {
			name := "Master thread"
			if t > 0 {
				name = fmt.Sprintf("thread %d", t)
				if omp {
					name = fmt.Sprintf("OMP thread %d", t)
				}
			}
			g.Locations = append(g.Locations, &Location{Name: name, Rank: t, Type: "thread"})
		}
		h.Groups = append(h.Groups, g)
		p.loc[q.rank] = g.Locations[0]
		p.order = append(p.order, q.rank)
	}
	f.Machines = []*SystemNode{machine}
	return nil
}

// Bounds on what a report may claim before the system tree is allocated
// (a report read back by compare is input like a trace): far beyond the
// runs ptrace analyses (16 384 processes × a few threads), and small
// enough that a hostile claim costs seconds, not the machine.
const (
	maxThreads   = 1 << 16
	maxLocations = 1 << 21
)

// attributes are the experiment's key/value attributes: what the file
// holds and what the report says beside its per-process values.
func attributes(r *report.Report, o Options) []Attr {
	a := []Attr{{"CUBE_CT_AGGR", "SUM"}}
	if o.Creator != "" {
		a = append(a, Attr{"Creator", o.Creator})
	}
	a = append(a,
		Attr{"ptrace::schema", r.Schema},
		Attr{"ptrace::trace", r.Trace.Dir},
		Attr{"ptrace::resolution", resolution(r)})
	if len(r.Trace.Command) > 0 {
		a = append(a, Attr{"ptrace::command", strings.Join(r.Trace.Command, " ")})
	}
	if w := r.Trace.Window; w != nil {
		a = append(a, Attr{"ptrace::window", fmt.Sprintf("%d..%d ns (%s)", w.StartNS, w.EndNS, w.Bounds)})
	}
	if r.Trace.Partial {
		a = append(a, Attr{"ptrace::partial", "true: events of some process are missing; times and counts are lower bounds"})
	}
	if len(r.Trace.Unavailable) > 0 {
		a = append(a, Attr{"ptrace::unavailable", strings.Join(r.Trace.Unavailable, ", ")})
	}
	if cp := r.CriticalPath; cp != nil {
		a = append(a,
			Attr{"ptrace::critical_path_ns", strconv.FormatInt(cp.LengthNS, 10)},
			Attr{"ptrace::critical_path_share_of_run_time", strconv.FormatFloat(cp.ShareOfRunTime, 'g', -1, 64)},
			Attr{"ptrace::parallelism", strconv.FormatFloat(cp.Parallelism, 'g', -1, 64)})
		// The time off the path is the run's, of no process or call path,
		// and its classes may be negative: an attribute, not metrics.
		if op := cp.OffPath; op != nil {
			a = append(a, Attr{"ptrace::critical_path_off_path", fmt.Sprintf(
				"ns=%d share=%s before_first_ns=%d between_ns=%d after_last_ns=%d wake_up_ns=%d fork_ns=%d tasks_ns=%d across_threads_ns=%d across_processes_ns=%d mpi_ns=%d start_skew_ns=%d",
				op.NS, strconv.FormatFloat(op.Share, 'g', -1, 64), op.Before, op.Between, op.After,
				op.WakeUp, op.Fork, op.Tasks, op.Threads, op.Processes, op.MPI, op.StartSkew)})
		}
	}
	if t := r.Tasks; t != nil {
		a = append(a, Attr{"ptrace::tasks", strconv.FormatInt(t.Count, 10)})
	}
	if cs := r.ClockSync; cs != nil {
		a = append(a, Attr{"ptrace::messages", strconv.FormatInt(cs.Messages, 10)})
	}
	return a
}

func resolution(r *report.Report) string {
	procs := r.Trace.Processes
	if b := r.Breakdown; b != nil {
		procs = len(b.PerProcess)
	}
	s := "values per process, on each process's first thread (the report holds no per-thread values); "
	if procs == 1 {
		return s + "call sites, sync, task and mutex constructs and the critical path's kinds per call path (single-process report)"
	}
	return s + "call paths only for the delay costs (process × code) and the caused waiting (process × the waiters' call site): " +
		"the report sums call sites, constructs and the critical path's kinds over processes, so their values stay on the program (root) and in parent metrics"
}

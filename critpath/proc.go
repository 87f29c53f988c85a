package critpath

import (
	"github.com/ptrace-dev/ptrace/internal/narrow"
	"github.com/ptrace-dev/ptrace/internal/packed"
	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// Proc is what the critical path keeps of one process's simulation: its
// fragment graph, and its task graph's ingredients (explicit tasks that
// ran, their run times, dependence edges, remote-dependence events). The
// anomalies phase, which runs before the critical path, reads its run
// times and construct names too (RunTime, TaskName).
type Proc struct {
	rank  int
	frags *sim.Frags
	names map[int32]string // location id → construct name
	sites []string         // MPI call sites (sim.Frags.MPISites) by name: "MPI_Send at file:line:col"
	strs  []string         // the string table: the user regions serial and region code ran in
	// taskW is, per dense task, its time running, -1 if it never ran,
	// packed by frame of reference (tasks made one after another run
	// alike: a gen trace's take a header a block of 64, a packed varint
	// list took 3 bytes a task).
	taskW narrow.Framed
	deps  packed.Pairs // dependence edges: (predecessor, successor) task pairs
	// distinct: no pair of deps repeats an earlier one (the simulation's
	// check); kept: besides, every task they join ran, so the task graph
	// takes every pair as it is (keepsAll, without its pass).
	distinct, kept bool
	// fragDeps are the dependence edges of tasks that ran, without
	// repeats, as fragment pairs (the task graph makes them, the fragment
	// DAG takes them).
	fragDeps packed.Pairs
	depOut   sim.EventNodes // remote_dep_out event → predecessor task
	depIn    sim.EventNodes // remote_dep_in event → successor task
}

// CompactDeps stores the process's dependence pairs anew without the
// marks only the simulation read (packed.Pairs.Compact: a byte a pair of
// a task's neighbours instead of two, from the simulation's end to the
// critical path's). The simulation's own list (Sim.DepEdges) must not be
// read after. Called once the simulation's working state is collected,
// the new list takes its pages rather than fresh ones (a process
// simulated alone, as the lean stencil: 4 MiB of max RSS).
func (g *Proc) CompactDeps() { g.deps.Compact() }

// SpillFrags moves the attributes and weights of the process's fragment
// nodes still in memory to f (sim.Frags.Spill): the critical path reads
// the attributes of its own nodes only, once its walk is done, and the
// weights in node order. On an error they stay in memory.
func (g *Proc) SpillFrags(f sim.SpillFile) error {
	if g.frags == nil {
		return nil
	}
	return g.frags.Spill(f)
}

// NewProc keeps what the critical path needs of process p's simulation s
// (run with RecordDeps), its fragment graph f (sim.FragPass.Take, with
// DepsApart) and its remote dependences rd (the pass, if it ran over s;
// nil for a process without remote dependences). Call it after s ran and
// before s is recycled.
func NewProc(p *trace.Process, s *sim.Sim, f *sim.Frags, rd *RemoteDeps) *Proc {
	g := &Proc{rank: p.Header.Rank, frags: f, names: map[int32]string{}, strs: p.Strings, deps: s.DepEdges}
	if rd != nil {
		g.depOut, g.depIn = rd.out, rd.in
	}
	if f != nil {
		g.sites = make([]string, len(f.MPISites))
		for i, st := range f.MPISites {
			g.sites[i] = trace.CallSiteName(&p.Tables, st.Func, st.Loc)
		}
	}
	// Names of the tasks' constructs: a task fragment's location is its
	// task's, and the anomaly records name tasks by theirs.
	ran := false
	g.distinct = s.DepEdgesDistinct()
	g.kept = g.distinct
	// A task's run time, -1 for one that never ran, read in task order.
	var times *sim.TaskTimes
	runTime := func(t int) int64 {
		if st, run := times.At(sim.Task(t)); s.Tasks[t].Kind == sim.KindExplicit && st >= 0 {
			return run
		}
		return -1
	}
	// The column's words counted first: grown by doubling as the blocks
	// pack, they left up to its size again as garbage at the simulation's
	// end, the peak of a task-heavy trace (1–2 MiB on BOTS health).
	var plan narrow.FramedPlan
	times = s.Times()
	for t := range s.Tasks {
		plan.Add(runTime(t))
	}
	var tw narrow.FramedBuilder
	tw.Reserve(len(s.Tasks))
	tw.ReserveWords(plan.Words())
	times = s.Times()
	for t := range s.Tasks {
		w := runTime(t)
		ran = ran || w >= 0
		if w < 0 && g.kept && s.DepEnd(sim.Task(t)) {
			g.kept = false // a task the graph has no node for (didRun)
		}
		tw.Append(w)
		if l := s.Loc(sim.Task(t)); l >= 0 {
			if _, ok := g.names[l]; !ok {
				g.names[l] = p.LocationName(int64(l))
			}
		}
	}
	g.taskW = tw.Finish()
	// Without an explicit task that ran (an MPI code with parallel loops),
	// the per-task arrays hold nothing the later phases read: 24 bytes for
	// every implicit task and region id (17 MB on the 10 M-event halo).
	// Nor do its dependences and remote dependences (tasks created that
	// never ran, in a trace cut short): the graphs have no node to put
	// them on.
	if !ran {
		g.taskW, g.deps = narrow.Framed{}, packed.Pairs{}
		g.depOut, g.depIn = sim.EventNodes{}, sim.EventNodes{}
		if f != nil {
			f.DropTasks()
		}
	}
	return g
}

// eachRan calls fn for every explicit task that ran, in task order, with
// its time running.
func (pg *Proc) eachRan(fn func(t int32, w int64)) {
	for t := range pg.taskW.Len() {
		if w := pg.taskW.At(t); w >= 0 {
			fn(int32(t), w)
		}
	}
}

// firstMarks returns a bit per node of pg's fragment graph, set at the
// first fragment of each task that ran, or nil when two tasks share one
// (counted by the marks, they would count once).
func (pg *Proc) firstMarks() []uint64 {
	f := pg.frags
	marks := make([]uint64, (f.Len()+63)/64)
	shared := false
	pg.eachRan(func(t int32, _ int64) {
		if first := f.FirstOf(t); first >= 0 {
			shared = shared || marks[first/64]&(1<<(first%64)) != 0
			marks[first/64] |= 1 << (first % 64)
		}
	})
	if shared {
		return nil
	}
	return marks
}

// Rank is the process's rank in the trace.
func (pg *Proc) Rank() int { return pg.rank }

// RunTime returns the time task slot t ran: -1 for one that never ran (an
// implicit task, or a task created but not run), as the simulation left
// it.
func (pg *Proc) RunTime(t int) int64 { return pg.taskW.At(t) }

// TaskName names a task construct by its location id.
func (pg *Proc) TaskName(loc int32) string {
	if loc < 0 {
		return "<unknown>"
	}
	return pg.names[loc]
}

// RemoteDeps is a simulation pass that records which task each
// remote_dep_out and remote_dep_in event belongs to, for the task graph.
type RemoteDeps struct {
	m       *ompt.Model
	out, in sim.EventNodes
}

// NewRemoteDeps returns the pass for a simulation driven by model m.
func NewRemoteDeps(m *ompt.Model) *RemoteDeps { return &RemoteDeps{m: m} }

// Before implements sim.Pass.
func (rd *RemoteDeps) Before(s *sim.Sim, e *trace.Event, th int, dt int64) {}

// Finish implements sim.Pass: the maps live until the critical path.
func (rd *RemoteDeps) Finish(s *sim.Sim) {
	rd.out.Trim()
	rd.in.Trim()
}

// Kinds implements sim.Filtered.
func (rd *RemoteDeps) Kinds() (before, after sim.KindSet) {
	return 0, sim.KindsOf(trace.RemoteDepOut, trace.RemoteDepIn)
}

// After implements sim.Pass.
func (rd *RemoteDeps) After(s *sim.Sim, e *trace.Event, th int) {
	switch e.Kind {
	case trace.RemoteDepOut:
		if t := rd.m.Task(e.Args[0]); t != sim.NoTask {
			rd.out.Add(th, s.Pos(th), t)
		}
	case trace.RemoteDepIn:
		if t := rd.m.Task(e.Args[0]); t != sim.NoTask {
			rd.in.Add(th, s.Pos(th), t)
		}
	}
}

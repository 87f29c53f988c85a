package clocksync

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/trace"
)

// Default parameters (see the package documentation for the reasons).
const (
	DefaultGamma        = 0.99999
	DefaultDeltaNS      = 1
	DefaultMinLatencyNS = 0
)

// Options are the CLC parameters. Every rank must pass the same.
type Options struct {
	// Gamma (γ, 0 < γ ≤ 1) is the least rate at which a corrected clock
	// runs against its own: after a jump, the correction decays by (1−γ)
	// of the elapsed time.
	Gamma float64
	// DeltaNS (δ ≥ 0) is the clock resolution: events a clock told apart
	// stay at least δ apart.
	DeltaNS int64
	// MinLatencyNS (l_min ≥ 0) is the least time between a send-like event
	// and its receive-like event.
	MinLatencyNS int64
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{Gamma: DefaultGamma, DeltaNS: DefaultDeltaNS, MinLatencyNS: DefaultMinLatencyNS}
}

func (o Options) check() error {
	switch {
	case !(o.Gamma > 0 && o.Gamma <= 1):
		return fmt.Errorf("clocksync: gamma %g: need 0 < gamma ≤ 1", o.Gamma)
	case o.DeltaNS < 0:
		return fmt.Errorf("clocksync: delta %d ns: need ≥ 0", o.DeltaNS)
	case o.MinLatencyNS < 0:
		return fmt.Errorf("clocksync: minimum latency %d ns: need ≥ 0", o.MinLatencyNS)
	}
	return nil
}

type params struct {
	gamma       float64
	delta, lmin int64
}

// Methods of Local.Method.
const (
	MethodNone = "none" // timestamps used as recorded
	MethodCLC  = "clc"  // offset model, then the controlled logical clock
)

// ProcessStats is one process's clock correction.
type ProcessStats struct {
	Rank          int
	OffsetSource  string // Source* constant, or "reference" for rank 0 without measurements
	OffsetInitNS  int64  // offset added at the first measurement (or the constant one)
	OffsetFinalNS int64  // offset added at the last measurement
	DriftPPM      float64
	Events        int64
	// Corrections are what the CLC added to the interpolated times
	// (always ≥ 0): their maximum and sum over the process's events.
	MaxCorrectionNS int64
	SumCorrectionNS int64
	// Receive-like events of this process earlier than their send-like
	// event + l_min: as recorded, after the offset model, after the CLC.
	ViolationsBefore       int64
	ViolationsInterpolated int64
	ViolationsAfter        int64
}

// Local is one rank's result: a row per process it holds.
type Local struct {
	Method   string
	Options  Options
	Procs    []ProcessStats
	Warnings []string
	// NodeTimes holds the final time of every event node of the matching
	// (what graph.ExchangeEdges needs, without touching the events); nil
	// when the times are the recorded ones, interpolated or as they are
	// (NodeTime).
	NodeTimes []int64
	// models are, when the times are interpolated only, each process's
	// offset model: NodeTime applies it to the recorded time, where a copy
	// of the times took 8 bytes a node to the exchange's end. With neither
	// (Census), the final times are the matching's recorded ones.
	models []OffsetModel
	// Timebases hold, per process, the corrected time of every event
	// (nil entries: times as recorded, method "none").
	Timebases []*trace.Timebase
}

// Sync synchronizes the timestamps of this rank's processes (m.Procs) in
// place: offset model per process, CLC forward amortization in a forward
// replay of m's happened-before graph, smoothing in a backward replay. It
// is collective; every rank passes the same options, and an error is
// returned on every rank. Afterwards every receive-like event is at least
// l_min after its send-like event, and no thread's time goes back;
// CountAfter verifies the first on the exchanged edges.
func Sync(c comm.Comm, m *graph.Matching, o Options) (*Local, error) {
	return SyncBounded(c, m, o, graph.Bounded{})
}

// SyncBounded is Sync under a memory limit's bounds (graph.Bounded): its
// Check is called on every rank at fixed points where the phase's state
// grows (after each batch of the violations' count, and once it is made;
// every event's merged time read; the forward replay's values made), and
// its error returned: the heap guard, collective, which stops the phase
// there on every rank instead of at its end; its Batch bounds the count's
// batches.
func SyncBounded(c comm.Comm, m *graph.Matching, o Options, bd graph.Bounded) (*Local, error) {
	check := func() error {
		if bd.Check == nil {
			return nil
		}
		return bd.Check()
	}
	if err := o.check(); err != nil {
		return nil, err // same options everywhere: every rank fails here
	}
	p := params{gamma: o.Gamma, delta: o.DeltaNS, lmin: o.MinLatencyNS}
	l, mdls, err := prepare(c, m, o, MethodCLC)
	if err != nil {
		return nil, err
	}
	if err := l.countBefore(c, m, p.lmin, mdls, bd); err != nil {
		return nil, err
	}
	var left int64
	for i := range l.Procs {
		left += l.Procs[i].ViolationsInterpolated
	}
	tot, err := c.AllreduceInt64(comm.Sum, []int64{left})
	if err != nil {
		return nil, err
	}
	if err := check(); err != nil {
		return nil, err
	}
	if tot[0] == 0 {
		// No receive precedes its sender by less than l_min on the
		// interpolated times: the forward pass would keep every event at
		// its interpolated time (LC = t until a first jump, and a jump needs
		// such a receive; see forwardTo) and the backward pass would move
		// nothing. The result is the offset models, found without a walk
		// over the events.
		l.interpolated(m, mdls)
		return l, nil
	}
	// The CLC's sweeps read every event's time in merged order: one more
	// decode of this rank's processes, made only now that there is
	// something to correct.
	locs := make([]*location, len(m.Procs))
	var werr error
	for i, proc := range m.Procs {
		order, times, err := graph.MergedTimes(proc, nil)
		if err != nil {
			werr = fmt.Errorf("rank %d: clocksync: %s: %w", c.Rank(), proc.File, err)
			break
		}
		m.SetPositions(i, order)
		locs[i] = newLocation(proc, order, times, mdls[i])
	}
	if err := comm.Agree(c, werr); err != nil {
		return nil, err
	}
	if err := check(); err != nil {
		return nil, err
	}

	// Forward amortization. Eval runs the location up to the node's event
	// as internal events, then the node's event with its receive
	// constraint; collective nodes pass on the latest enter.
	n := m.Len()
	jump, x0, x1 := make([]int64, n), make([]int64, n), make([]int64, n)
	var bad error
	fail := func(v int32, dir string) {
		if bad == nil {
			bad = fmt.Errorf("rank %d: clocksync: %s replay reached %s out of its process's event order", c.Rank(), dir, m.Describe(v))
		}
	}
	fwd, err := graph.Replay(c, m.DAG, graph.ReplayOptions{
		Describe: m.Describe,
		Eval: func(v int32, in graph.Input) int64 {
			if m.Role[v] == graph.RoleColl {
				return inOr(in, math.MinInt64)
			}
			loc, pos := locs[m.ProcOf(v)], int(m.Pos[v])
			if pos < loc.pos {
				fail(v, "forward")
				return 0
			}
			loc.forwardTo(pos, &p)
			f, j, a, b := loc.forwardNode(pos, in.In, in.HasIn, &p)
			if j > 0 {
				jump[v], x0[v], x1[v] = j, a, b
			}
			return f
		},
	})
	if err != nil {
		return nil, err
	}
	for _, loc := range locs {
		loc.forwardTo(len(loc.order), &p)
		loc.startBackward()
	}
	if err := check(); err != nil {
		return nil, err
	}

	// Backward smoothing: a node's inputs are now its receivers (min of
	// their final times); the cap keeps every send l_min before them.
	bwd, err := graph.Replay(c, m.DAG, graph.ReplayOptions{
		Backward: true,
		Min:      true,
		Describe: m.Describe,
		Eval: func(v int32, in graph.Input) int64 {
			if m.Role[v] == graph.RoleColl {
				return inOr(in, math.MaxInt64)
			}
			loc, pos := locs[m.ProcOf(v)], int(m.Pos[v])
			if loc.tail(pos) {
				return fwd.Values[v] // after the last jump: b = f
			}
			if pos > loc.pos {
				fail(v, "backward")
				return 0
			}
			loc.backwardTo(pos+1, &p)
			b := loc.backStep(in.In-p.lmin, in.HasIn, &p)
			if jump[v] > 0 {
				loc.setRamp(jump[v], x0[v], x1[v])
			}
			return b
		},
	})
	if err != nil {
		return nil, err
	}
	l.Timebases = make([]*trace.Timebase, len(locs))
	for i, loc := range locs {
		loc.backwardTo(0, &p)
		l.Procs[i].MaxCorrectionNS, l.Procs[i].SumCorrectionNS = loc.maxCorr, loc.sumCorr
		l.Timebases[i] = loc.tb
		locs[i] = nil // its merged order and interpolated times go
	}
	if err := comm.Agree(c, bad); err != nil {
		return nil, err
	}
	l.NodeTimes = bwd.Values
	return l, nil
}

// Census counts violations without changing any timestamp, for traces
// from one shared clock (--no-clocksync): method "none", the interpolated
// count equals the recorded one. It is collective.
func Census(c comm.Comm, m *graph.Matching, o Options) (*Local, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	l, _, err := prepare(c, m, o, MethodNone)
	if err != nil {
		return nil, err
	}
	l.Timebases = make([]*trace.Timebase, len(m.Procs))
	// As countBefore: a bit a violating node, not the largest values.
	late := make([]uint64, (m.Len()+63)/64)
	err = graph.PropagateMaxTo(c, m, 1, func(n int32, v []int64) { v[0] = m.RecordedAt(n) }, func(to int32, v []int64) {
		if m.RecordedAt(to)-o.MinLatencyNS < v[0] {
			late[to>>6] |= 1 << (to & 63)
		}
	})
	if err != nil {
		return nil, err
	}
	eachSet(late, func(n int32) {
		p := &l.Procs[m.ProcOf(n)]
		p.ViolationsBefore++
		p.ViolationsInterpolated++
	})
	return l, nil
}

// CountAfter sets the violations after synchronization from the exchanged
// edges (graph.ExchangeEdges, or ExchangeEdgesAt with NodeTime; one entry
// per process of m): a receive-like event earlier than its predecessor's
// final time + l_min. It checks the result with data the rest of the
// pipeline uses, at no communication cost.
// Messages within one process are not counted: they share one clock (see
// graph.Matching.SelfPairs).
func (l *Local) CountAfter(m *graph.Matching, edges []graph.RemoteEdges) {
	time := l.NodeTime(m)
	for i := range l.Procs {
		var v int64
		p, r := m.Procs[i], &edges[i]
		// Rows without their own times (graph.ExchangeEdgesAt) are the
		// process's receive-like nodes with a predecessor, in node order:
		// a row's node is the next one of its thread and event.
		n := m.ProcNodes[i]
		for j := 0; j < r.Len(); j++ {
			var t int64
			if r.Time != nil {
				t = r.Time[j]
			} else {
				th, ev := r.ThreadAt(j), r.EventAt(j)
				for n < m.ProcNodes[i+1] && (m.Role[n] != graph.RoleRecv || m.ThreadOf(n) != th || m.EventOf(n) != ev) {
					n++
				}
				if n == m.ProcNodes[i+1] {
					break // not the matching's rows
				}
				t = time(int32(i), n)
				n++
			}
			if int(r.PredProcAt(j)) != p.Header.Rank && t-l.Options.MinLatencyNS < r.PredTimeAt(j) {
				v++
			}
		}
		l.Procs[i].ViolationsAfter = v
	}
}

func inOr(in graph.Input, none int64) int64 {
	if in.HasIn {
		return in.In
	}
	return none
}

// prepare builds each process's offset model. Processes
// without measurements are aligned on their first event with rank 0's,
// which needs one Allreduce.
func prepare(c comm.Comm, m *graph.Matching, o Options, method string) (*Local, []OffsetModel, error) {
	// Rank 0's first event and its clock (ClockKey), in one reduction.
	ref, key0 := int64(math.MinInt64), int64(math.MinInt64)
	for _, p := range m.Procs {
		if p.Header.Rank == 0 {
			if f, ok := firstEvent(p); ok {
				ref = f
			}
			key0 = ClockKey(&p.Header)
		}
	}
	r, err := c.AllreduceInt64(comm.Max, []int64{ref, key0})
	if err != nil {
		return nil, nil, err
	}
	ref, key0 = r[0], r[1]
	l := &Local{Method: method, Options: o, Procs: make([]ProcessStats, len(m.Procs))}
	mdls := make([]OffsetModel, len(m.Procs))
	for i, p := range m.Procs {
		same := p.Header.Rank != 0 && key0 >= 0 && ClockKey(&p.Header) == key0
		mdl := NewOffsetModel(p.Header.Rank, p.ClockOffsets, same)
		if mdl.source == SourceFirstEvent {
			if f, ok := firstEvent(p); ok && p.Header.Rank != 0 && ref != math.MinInt64 {
				mdl.off, mdl.final = ref-f, ref-f
			}
			if p.Header.Rank == 0 {
				mdl.source = "reference"
			}
		}
		if mdl.note != "" {
			l.Warnings = append(l.Warnings, mdl.note)
		}
		l.Procs[i] = ProcessStats{Rank: p.Header.Rank, OffsetSource: mdl.source, OffsetInitNS: mdl.off,
			OffsetFinalNS: mdl.final, DriftPPM: mdl.driftPPM(), Events: p.NumEvents()}
		mdls[i] = mdl
	}
	return l, mdls, nil
}

// interpolated sets the result of a synchronization whose CLC corrects
// nothing: each process's offset model as its timebase, and the nodes'
// interpolated times (collective nodes, which carry no time of their own,
// keep their recorded value as in Census).
func (l *Local) interpolated(m *graph.Matching, mdls []OffsetModel) {
	l.Timebases = make([]*trace.Timebase, len(m.Procs))
	for i, p := range m.Procs {
		mdl := &mdls[i]
		l.Timebases[i] = trace.NewTimebase(mdl.off, mdl.at, mdl.slope, p.NumThreads())
	}
	l.NodeTimes, l.models = nil, mdls
}

// NodeTime returns the final time of event node v of local process proc
// of m (graph.ExchangeEdgesAt).
func (l *Local) NodeTime(m *graph.Matching) func(proc, v int32) int64 {
	switch {
	case l.NodeTimes != nil:
		return func(_, v int32) int64 { return l.NodeTimes[v] }
	case l.models != nil:
		return func(proc, v int32) int64 { return l.models[proc].Apply(m.RecordedAt(v)) }
	}
	return func(_, v int32) int64 { return m.RecordedAt(v) }
}

// countBefore counts violations on the recorded and on the interpolated
// times, in one exchange over the explicit edges. A receive violates when
// any of its predecessors' times lies after its own less lmin, so each
// value is checked as it arrives and a violating node marked, a bit a
// node for each clock: PropagateMax's largest values took 16 bytes a
// receive (45 MB, the clock synchronization's peak, on the 10 M-event
// spread's 2.86 M remote dependences).
func (l *Local) countBefore(c comm.Comm, m *graph.Matching, lmin int64, mdls []OffsetModel, bd graph.Bounded) error {
	n := m.Len()
	before, interp := make([]uint64, (n+63)/64), make([]uint64, (n+63)/64)
	// The nodes come nearly in order: each side's process is found
	// again from its last (a binary search per node and edge was most of
	// this phase on a pure MPI program).
	var from, to graph.ProcCursor
	err := graph.PropagateMaxToBounded(c, m, 2, func(n int32, v []int64) {
		t := m.RecordedAt(n)
		v[0], v[1] = t, mdls[from.Of(m, n)].Apply(t)
	}, func(u int32, v []int64) {
		t := m.RecordedAt(u)
		if t-lmin < v[0] {
			before[u>>6] |= 1 << (u & 63)
		}
		if mdls[to.Of(m, u)].Apply(t)-lmin < v[1] {
			interp[u>>6] |= 1 << (u & 63)
		}
	}, bd)
	if err != nil {
		return err
	}
	eachSet(before, func(n int32) { l.Procs[m.ProcOf(n)].ViolationsBefore++ })
	eachSet(interp, func(n int32) { l.Procs[m.ProcOf(n)].ViolationsInterpolated++ })
	return nil
}

// eachSet calls f with each node whose bit is set, in order.
func eachSet(set []uint64, f func(n int32)) {
	for i, w := range set {
		for ; w != 0; w &= w - 1 {
			f(int32(i<<6 + bits.TrailingZeros64(w)))
		}
	}
}

package waitstate

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

type oneRank struct{}

func (oneRank) Owner(int) int { return 0 }

// The recorder's columns are narrow; what does not fit them comes back
// exactly: a call of 5 s (beyond the 4.29 s of its uint32 duration), a
// time outside MPI of 3 s, labels outside int32 (location ids as the file
// gives them), more than 2¹⁶ (site, label) pairs (beyond uint16), and the
// codes of a time outside MPI split over two of them. One thread:
// MPI_Init, a parallel region labelled 2⁴⁰ + 3 lasting 1 ns, 3 s later
// MPI_Comm_rank lasting 5 s, then 70 000 times a region labelled 2⁴¹ + j
// filling the 1 ns to a call of 1 ns.
func TestRecorderWideValues(t *testing.T) {
	const (
		fnInit, fnRank = 0, 1
		gap, long      = 3_000_000_000, 5_000_000_000
		label1, label2 = 1<<40 + 3, 1 << 41
		short          = 70_000
	)
	var evs []trace.Event
	ev := func(k trace.Kind, tm int64, args ...int64) {
		e := trace.Event{Time: tm, Kind: k}
		copy(e.Args[:], args)
		evs = append(evs, e)
	}
	init := trace.MakeID(0, 1)
	ev(trace.ThreadBegin, 0, 1)
	ev(trace.ImplicitTaskBegin, 0, 0, init, 1, 0, ompt.TaskInitial)
	ev(trace.MPIEnter, 0, fnInit)
	ev(trace.MPIExit, 10, fnInit)
	region := func(tm, id, loc int64) {
		par, impl := trace.MakeID(0, id), trace.MakeID(0, id+1)
		ev(trace.ParallelBegin, tm, par, init, 1, 0, loc)
		ev(trace.ImplicitTaskBegin, tm, par, impl, 1, 0, ompt.TaskImplicit)
		ev(trace.ImplicitTaskEnd, tm+1, par, impl, 1, 0, ompt.TaskImplicit)
		ev(trace.ParallelEnd, tm+1, par, init, 0, loc)
	}
	region(10, 2, label1)
	b := int64(10 + gap)
	ev(trace.MPIEnter, b, fnRank)
	ev(trace.MPIExit, b+long, fnRank)
	tm := b + long
	for j := range int64(short) {
		region(tm, 4+2*j, label2+j)
		tm++
		ev(trace.MPIEnter, tm, fnRank)
		ev(trace.MPIExit, tm+1, fnRank)
		tm++
	}
	ev(trace.ImplicitTaskEnd, tm, 0, init, 1, 0, ompt.TaskInitial)
	ev(trace.ThreadEnd, tm)
	tables := trace.Tables{Strings: []string{"MPI_Init", "MPI_Comm_rank"}, Locations: []trace.Location{{ID: 0, File: "t.c", Line: 1}}}
	recordOne(t, tables, [][]trace.Event{evs}, func(cm comm.Comm, a *Analysis) error {
		c := &a.procs[0]
		if c.len() != 2+short {
			return fmt.Errorf("%d calls, want %d", c.len(), 2+short)
		}
		check := func(what string, k int32, got, want int64) {
			t.Helper()
			if got != want {
				t.Errorf("call %d: %s %d, want %d", k, what, got, want)
			}
		}
		check("enter", 1, c.enterAt(1), b)
		check("exit", 1, c.exitAt(1), b+long)
		// Before it: 1 ns in the region, the rest in serial code, the
		// code it ran last.
		check("label", 1, c.labelAt(1), -1)
		check("prev", 1, int64(c.prevAt(1)), 0)
		if sp := splitOf(c, 1); len(sp) != 2 || sp[0] != (regionTime{Code: label1, NS: 1}) || sp[1] != (regionTime{Code: -1, NS: gap - 1}) {
			t.Errorf("call 1: codes before it %v, want 1 ns in %d and %d in serial code", sp, int64(label1), gap-1)
		}
		for _, k := range []int32{2, 1 << 16, 2 + short - 1} {
			j := int64(k - 2)
			e := b + long + 1 + 2*j
			check("enter", k, c.enterAt(k), e)
			check("exit", k, c.exitAt(k), e+1)
			// 1 ns in the region, which ended as the call began.
			if sp := splitOf(c, k); sp != nil {
				t.Errorf("call %d: codes before it %v, want one", k, sp)
			}
			check("label", k, c.labelAt(k), label2+j)
			check("prev", k, int64(c.prevAt(k)), int64(k-1))
		}
		// The long call's time reaches the rows whole.
		rows, _, _, err := a.Analyze(cm, oneRank{}, nil, 0, math.MaxInt64)
		if err != nil {
			return err
		}
		var mpi int64
		for _, r := range rows {
			mpi += r.MPINS
		}
		if want := int64(10 + long + short); mpi != want {
			t.Errorf("MPI time %d, want %d", mpi, want)
		}
		return nil
	})
}

// splitOf collects call k's codes (calls.eachSplit), nil when it has none.
func splitOf(c *calls, k int32) []regionTime {
	var out []regionTime
	c.eachSplit(k, func(code, ns int64) { out = append(out, regionTime{Code: code, NS: ns}) })
	return out
}

// A synchronization point keeps its event index (40 bits), wait and
// completion exactly, the wide ones beside it, in 28 bytes; a later point
// of the same event keeps none of its wide values over the first's.
func TestSyncPointFields(t *testing.T) {
	if n := unsafe.Sizeof(syncPt{}); n != 24 {
		t.Errorf("a point is %d bytes, want 24", n)
	}
	if n := unsafe.Sizeof(task{}); n != 12 {
		t.Errorf("a task is %d bytes, want 12", n)
	}
	// The waiter, pattern and flags in one word, at their ends.
	x := makeTask(-1, trace.MaxRanks-1, math.MaxInt32, NumPatterns-1)
	x.set(taskDone)
	if x.waiter() != trace.MaxRanks-1 || x.pat() != NumPatterns-1 || x.wsync != math.MaxInt32 || x.pos != -1 ||
		!x.has(taskDone) || x.has(taskColl|taskMade|taskReady) {
		t.Errorf("task fields: waiter %d, pattern %d, flags %04b", x.waiter(), x.pat(), x.wpf&0xf)
	}
	var p delayProc
	cases := []struct{ ev, w, c, wantEv int64 }{
		{0, 0, 0, 0},
		{1<<32 + 5, math.MaxInt32, math.MinInt32 + 1, 1<<32 + 5},
		{evMax, math.MaxInt32 + 1, math.MinInt32, evMax},
		{math.MaxInt64, 5_000_000_000, -5_000_000_000, evMax},
	}
	for k, c := range cases {
		p.push(syncPt{call: int32(k), th: 1}, c.ev, c.w, c.c)
	}
	// The same event as the last, later: its values are not the point's.
	p.push(syncPt{call: 3, th: 1}, math.MaxInt64, 7_000_000_000, 1)
	for k, c := range cases {
		s := &p.syncs[k]
		if s.event() != c.wantEv || p.waitOf(s) != c.w || p.complOf(s) != c.c {
			t.Errorf("point %d: event %d, wait %d, completion %d; want %d, %d, %d", k, s.event(), p.waitOf(s), p.complOf(s), c.wantEv, c.w, c.c)
		}
	}
	if !p.syncs[3].sameEvent(&p.syncs[4]) || p.syncs[2].sameEvent(&p.syncs[3]) {
		t.Error("sameEvent is wrong")
	}
	p.setCompl(3, 6_000_000_000)
	if got := p.complOf(&p.syncs[3]); got != 6_000_000_000 {
		t.Errorf("completion set to 6 s is %d", got)
	}
	if got := p.waitOf(&p.syncs[3]); got != 5_000_000_000 {
		t.Errorf("wait after the completion set is %d, want 5 s", got)
	}
}

// A thread's previous call: none kept while each call follows the one
// before on its thread, exact once two threads interleave, from the
// first call on; a distance past 16 bits kept aside.
func TestCallsPrevious(t *testing.T) {
	var threads []int
	threads = append(threads, 0, 0, 0, 1, 0, 1, 1)
	for range 70_000 {
		threads = append(threads, 0)
	}
	threads = append(threads, 1)
	c := calls{siteIdx: map[site]int32{}, whereIdx: map[whereKey]int32{}, room: 4}
	last := map[int]int32{}
	var want []int32
	for k, th := range threads {
		prev, ok := last[th]
		if !ok {
			prev = -1
		}
		want = append(want, prev)
		last[th] = c.add(int64(k), site{}, -1, prev)
		if k == 2 && c.prevBack.Len() != 0 {
			t.Errorf("after 3 calls of one thread, %d distances kept, want none", c.prevBack.Len())
		}
	}
	for k, w := range want {
		if got := c.prevAt(int32(k)); got != w {
			t.Fatalf("call %d (thread %d): previous %d, want %d", k, threads[k], got, w)
		}
	}
	var one calls
	one.siteIdx, one.whereIdx = map[site]int32{}, map[whereKey]int32{}
	for k := range int32(5) {
		one.add(int64(k), site{}, -1, k-1)
	}
	if one.prevBack.Len() != 0 || one.prevAt(0) != -1 || one.prevAt(4) != 3 {
		t.Errorf("one thread: %d distances kept, previous of 0 and 4 %d, %d; want none, -1, 3", one.prevBack.Len(), one.prevAt(0), one.prevAt(4))
	}
}

// PropagateMax's values come back exactly from their narrow columns:
// none (math.MinInt64) on either side, differences from the call beyond
// 32 bits, and times at the ends of int64, where the differences wrap.
// Each node's values are the largest of several deliveries in any order,
// as a plain maximum over them gives, and a node none delivered to is
// none.
func TestNodeVals(t *testing.T) {
	type node struct{ v0, v1, enter, exit int64 }
	var nodes []node
	for k := range int64(100) {
		nodes = append(nodes, node{1000 + k, -(2000 + k), 1500, 2500}) // the usual: a few µs apart
	}
	nodes = append(nodes,
		node{math.MinInt64, -5, 1, 9},
		node{7, math.MinInt64, 1, 9},
		node{math.MinInt64, math.MinInt64, 1, 9},
		node{10_000_000_000, -1, 0, 3}, // a wait of 10 s
		node{math.MaxInt64, -math.MaxInt64, math.MinInt64 + 1, math.MaxInt64},
		node{math.MinInt64 + 1, math.MaxInt64, math.MaxInt64, math.MinInt64 + 1},
		node{-3, 4, -1 << 62, 1 << 62})
	rng := rand.New(rand.NewPCG(3, 4))
	// The deliveries: each node's own values, and smaller ones before and
	// after them (a message's and a collective's other members).
	type delivery struct {
		j      int
		v0, v1 int64
	}
	var ds []delivery
	smaller := func(x int64) int64 {
		if x == math.MinInt64 {
			return x
		}
		return x - rng.Int64N(1<<40)%max(1, x/2-math.MinInt64/2) // no wrap below MinInt64
	}
	for j, n := range nodes {
		ds = append(ds, delivery{j, n.v0, n.v1})
		for range rng.IntN(3) {
			ds = append(ds, delivery{j, smaller(n.v0), smaller(n.v1)})
		}
	}
	rng.Shuffle(len(ds), func(a, b int) { ds[a], ds[b] = ds[b], ds[a] })
	nv := makeNodeVals(len(nodes) + 1) // the last one gets nothing
	for _, d := range ds {
		n := nodes[d.j]
		nv.max(d.j, []int64{d.v0, d.v1}, n.enter, n.exit)
	}
	for j, n := range nodes {
		if l, e := nv.at(j, n.enter, n.exit); l != n.v0 || e != n.v1 {
			t.Errorf("node %d: %d, %d; want %d, %d", j, l, e, n.v0, n.v1)
		}
	}
	if l, e := nv.at(len(nodes), 5, 6); l != math.MinInt64 || e != math.MinInt64 {
		t.Errorf("node without deliveries: %d, %d; want none", l, e)
	}
	if w := nv.lat.Wide() + nv.ex.Wide(); w > 10 {
		t.Errorf("%d values kept aside, want at most the 10 of the last 5 nodes", w)
	}
}

// A process's collective calls keep their communicators, in call order
// whatever order they came in, one past int8 exactly, the first of a call
// that holds two; other calls have none.
func TestCollComms(t *testing.T) {
	in := []callComm{{130, 5}, {3, 0}, {64, -1}, {63, 1_000_000}, {130, 7}, {200, 2}}
	c := makeCollComms(slices.Clone(in), 201)
	want := map[int32]int32{3: 0, 63: 1_000_000, 64: -1, 130: 5, 200: 2}
	for k := range int32(201) {
		got, ok := c.of(k)
		w, wok := want[k]
		if ok != wok || got != w {
			t.Errorf("call %d: communicator %d, %v; want %d, %v", k, got, ok, w, wok)
		}
	}
	if c.comm.Len() != 5 || c.comm.Wide() != 1 {
		t.Errorf("%d communicators, %d aside; want 5, 1", c.comm.Len(), c.comm.Wide())
	}
}

// The replay's messages carry only the patterns' costs that are not 0,
// whole (64 bits, negative too); a message cut anywhere is refused.
func TestInflowMessages(t *testing.T) {
	msgs := [][delayPatterns]int64{
		{},
		{0, 5},
		{0, math.MaxInt64, 0, -3, 0, 0, math.MinInt64},
		{0, 1, 2, 3, 4, 5, 6},
		{WaitAtWinFree: 7}, // a pattern past the eighth: the mask's second byte
	}
	var b []byte
	for k, in := range msgs {
		b = appendInflow(b, int32(k), -int32(k), math.MaxInt32-int32(k), &in)
	}
	if want := 5*inflowHead + 8*(1+3+6+1); len(b) != want {
		t.Errorf("%d bytes, want %d", len(b), want)
	}
	rest := b
	for k, want := range msgs {
		cause, waiter, wsync, in, r, ok := readInflow(rest)
		if !ok || cause != int32(k) || waiter != -int32(k) || wsync != math.MaxInt32-int32(k) || in != want {
			t.Fatalf("message %d: %d %d %d %v %v; want %d %d %d %v", k, cause, waiter, wsync, in, ok, k, -k, math.MaxInt32-k, want)
		}
		rest = r
	}
	if len(rest) != 0 {
		t.Errorf("%d bytes left", len(rest))
	}
	last := appendInflow(nil, 1, 2, 3, &msgs[2])
	for n := range len(last) {
		if _, _, _, _, _, ok := readInflow(last[:n]); ok {
			t.Errorf("a message cut to %d of %d bytes is read", n, len(last))
		}
	}
	bad := slices.Clone(last)
	binary.LittleEndian.PutUint16(bad[12:], binary.LittleEndian.Uint16(bad[12:])|1<<delayPatterns)
	if _, _, _, _, _, ok := readInflow(bad); ok {
		t.Error("a message with a pattern past delayPatterns is read")
	}
}

// The nodes' calls come back exactly from their blocks: calls in order
// with nodes outside any (a byte a node), a block of none, a block whose
// calls spread past a byte, a block with sends outside calls (−2 − j),
// and a last block cut short.
func TestNodeCalls(t *testing.T) {
	var call []int32
	for v := range 64 {
		k := int32(1000 + v/2)
		if v%5 == 0 {
			k = -1
		}
		call = append(call, k)
	}
	for range 64 {
		call = append(call, -1)
	}
	for v := range 64 {
		call = append(call, int32(v*5)) // 315 apart: whole
	}
	for v := range 64 {
		call = append(call, int32(7+v%3))
	}
	call[3*64+10] = -2 - 12 // a send outside any call: whole
	for v := range 20 {
		call = append(call, math.MaxInt32-int32(v))
	}
	c := packNodeCalls(call)
	for v, want := range call {
		if got := c.at(int32(v)); got != want {
			t.Fatalf("node %d: call %d, want %d", v, got, want)
		}
	}
	if len(c.bytes) != 3*64 || len(c.whole) != 2*64 {
		t.Errorf("%d bytes and %d whole values, want 192 and 128", len(c.bytes), len(c.whole))
	}
}

// A task's call paths are its own range of the process's: the records
// that make them come in any order, so a range is where its record put
// it, of any length, a count past 16 bits kept aside.
func TestTaskCallPathRanges(t *testing.T) {
	counts := []int{3, 0, wideCount - 1, wideCount, 70_000, 1}
	var p delayProc
	p.tasks = make([]task, len(counts))
	p.td = makeTaskDelays(len(counts))
	// Made in reverse: the last task's call paths come first.
	for j := len(counts) - 1; j >= 0; j-- {
		p.td.cpOff[j] = int32(len(p.cpD))
		for range counts[j] {
			p.addAmount(int64(j), 0)
		}
		p.setCount(int32(j), counts[j])
	}
	for j, n := range counts {
		lo, hi := p.cpsOf(int32(j))
		if int(hi-lo) != n {
			t.Errorf("task %d: %d call paths, want %d", j, hi-lo, n)
		}
		for k := lo; k < hi; k++ {
			if p.amount(k) != int64(j) {
				t.Fatalf("task %d: call path %d is task %d's", j, k, p.amount(k))
			}
		}
	}
	if len(p.wideN) != 2 {
		t.Errorf("%d counts kept aside, want 2 (%d and 70 000)", len(p.wideN), wideCount)
	}
}

// nodeRank numbers exactly the MPI_Send and MPI_Recv nodes, in node order,
// across its words' boundaries.
func TestNodeRank(t *testing.T) {
	kinds := []trace.Kind{trace.MPISend, trace.CollBegin, trace.MPIRecv, trace.CollEnd, trace.MPIRecv, trace.TaskCreate}
	m := &graph.Matching{}
	for v := range 300 {
		m.Kind = append(m.Kind, kinds[(v*v+v/7)%len(kinds)])
		m.Role = append(m.Role, graph.RoleSend)
	}
	var r nodeRank
	n := r.number(m)
	count := int32(0)
	for v := range int32(300) {
		p2p := m.Kind[v] == trace.MPISend || m.Kind[v] == trace.MPIRecv
		j, ok := r.rank(v)
		if ok != p2p || ok && j != count {
			t.Fatalf("node %d (%v): rank %d, %v; want %d, %v", v, m.Kind[v], j, ok, count, p2p)
		}
		if p2p {
			count++
		}
	}
	if n != int(count) {
		t.Errorf("%d point-to-point nodes, want %d", n, count)
	}
	for _, v := range []int32{-1, 300, 1 << 20} {
		if _, ok := r.rank(v); ok {
			t.Errorf("node %d, outside, has a rank", v)
		}
	}
}

// The codes and times of the calls with a split come back exactly after
// the recording (finish turns the list of calls into a bit a call): codes
// and times of every width, calls across the bit words' boundaries, and
// none for the calls without.
func TestCallsSplits(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	c := &calls{siteIdx: map[site]int32{}, whereIdx: map[whereKey]int32{}}
	want := map[int32][]regionTime{}
	codes := []int64{-1, -2, -7, 3, 0, 200, -2 - 40_000, 1 << 40}
	for k := int32(0); k < 1000; k++ {
		if got := c.add(int64(k)*10, site{1, 2, -1}, -1, k-1); got != k {
			t.Fatalf("call %d added as %d", k, got)
		}
		if k == 0 || k == 63 || k == 64 || rng.IntN(3) == 0 {
			var rts []regionTime
			for range 2 + rng.IntN(3) {
				ns := rng.Int64N(3000)
				if rng.IntN(20) == 0 {
					ns = rng.Int64N(1 << 36) // past 32 bits
				}
				rts = append(rts, regionTime{Code: codes[rng.IntN(len(codes))], NS: ns})
			}
			c.addSplit(k, rts)
			want[k] = rts
		}
	}
	r := &callRecorder{c: c}
	r.finish()
	if c.splitCall != nil {
		t.Fatal("the list of calls with a split is kept after the recording")
	}
	for k := int32(0); k < 1000; k++ {
		if got := splitOf(c, k); !slices.Equal(got, want[k]) {
			t.Fatalf("call %d: split %v, want %v", k, got, want[k])
		}
	}
}

// A thread that calls MPI as a worker of a team (it began no region) is in
// its region's code: the location of the parallel_begin of the thread that
// began the region, also a nested region's, begun by a worker of the outer
// team that calls no MPI itself (so read for it). Threads: 0 begins
// regions 7 and 11 and calls MPI_Init; 1, a worker of region 7, begins the
// nested region 9; 2 is thread 1 of region 9, then of region 11, and calls
// MPI_Comm_rank in each.
func TestRecorderWorkerLabels(t *testing.T) {
	const fnInit, fnRank, fnFin = 0, 1, 2
	ev := func(evs *[]trace.Event, k trace.Kind, tm int64, args ...int64) {
		e := trace.Event{Time: tm, Kind: k}
		copy(e.Args[:], args)
		*evs = append(*evs, e)
	}
	var t0, t1, t2 []trace.Event
	init := trace.MakeID(0, 1)
	p7, p9, p11 := trace.MakeID(0, 2), trace.MakeID(1, 1), trace.MakeID(0, 3)
	ev(&t0, trace.ThreadBegin, 0, 1)
	ev(&t0, trace.ImplicitTaskBegin, 0, 0, init, 1, 0, ompt.TaskInitial)
	ev(&t0, trace.MPIEnter, 0, fnInit)
	ev(&t0, trace.MPIExit, 10, fnInit)
	ev(&t0, trace.ParallelBegin, 20, p7, init, 2, 0, 7)
	ev(&t0, trace.ImplicitTaskBegin, 20, p7, trace.MakeID(0, 4), 2, 0, ompt.TaskImplicit)
	ev(&t0, trace.ImplicitTaskEnd, 100, p7, trace.MakeID(0, 4), 2, 0, ompt.TaskImplicit)
	ev(&t0, trace.ParallelEnd, 101, p7, init, 0, 7)
	ev(&t0, trace.ParallelBegin, 200, p11, init, 2, 0, 11)
	ev(&t0, trace.ImplicitTaskBegin, 200, p11, trace.MakeID(0, 5), 2, 0, ompt.TaskImplicit)
	ev(&t0, trace.ImplicitTaskEnd, 300, p11, trace.MakeID(0, 5), 2, 0, ompt.TaskImplicit)
	ev(&t0, trace.ParallelEnd, 301, p11, init, 0, 11)
	ev(&t0, trace.MPIEnter, 400, fnFin)
	ev(&t0, trace.MPIExit, 410, fnFin)
	ev(&t0, trace.ImplicitTaskEnd, 420, 0, init, 1, 0, ompt.TaskInitial)
	ev(&t0, trace.ThreadEnd, 420)
	w1 := trace.MakeID(1, 2)
	ev(&t1, trace.ThreadBegin, 21, 2)
	ev(&t1, trace.ImplicitTaskBegin, 21, p7, w1, 2, 1, ompt.TaskImplicit)
	ev(&t1, trace.ParallelBegin, 30, p9, w1, 2, 0, 9)
	ev(&t1, trace.ImplicitTaskBegin, 30, p9, trace.MakeID(1, 3), 2, 0, ompt.TaskImplicit)
	ev(&t1, trace.ImplicitTaskEnd, 90, p9, trace.MakeID(1, 3), 2, 0, ompt.TaskImplicit)
	ev(&t1, trace.ParallelEnd, 91, p9, w1, 0, 9)
	ev(&t1, trace.ImplicitTaskEnd, 99, p7, w1, 2, 1, ompt.TaskImplicit)
	ev(&t1, trace.ThreadEnd, 500)
	ev(&t2, trace.ThreadBegin, 31, 2)
	ev(&t2, trace.ImplicitTaskBegin, 31, p9, trace.MakeID(2, 1), 2, 1, ompt.TaskImplicit)
	ev(&t2, trace.MPIEnter, 50, fnRank)
	ev(&t2, trace.MPIExit, 60, fnRank)
	ev(&t2, trace.ImplicitTaskEnd, 89, p9, trace.MakeID(2, 1), 2, 1, ompt.TaskImplicit)
	ev(&t2, trace.ImplicitTaskBegin, 201, p11, trace.MakeID(2, 2), 2, 1, ompt.TaskImplicit)
	ev(&t2, trace.MPIEnter, 250, fnRank)
	ev(&t2, trace.MPIExit, 260, fnRank)
	ev(&t2, trace.ImplicitTaskEnd, 299, p11, trace.MakeID(2, 2), 2, 1, ompt.TaskImplicit)
	ev(&t2, trace.ThreadEnd, 500)
	tables := trace.Tables{Strings: []string{"MPI_Init", "MPI_Comm_rank", "MPI_Finalize"},
		Locations: []trace.Location{{ID: 0, File: "t.c", Line: 1}}}
	recordOne(t, tables, [][]trace.Event{t0, t1, t2}, func(_ comm.Comm, a *Analysis) error {
		c := &a.procs[0]
		if c.len() != 4 {
			return fmt.Errorf("%d calls, want 4", c.len())
		}
		for k, want := range []int64{-1, 9, 11, -1} { // Init, the workers' calls, Finalize
			if got := c.labelAt(int32(k)); got != want {
				t.Errorf("call %d: label %d, want %d", k, got, want)
			}
		}
		return nil
	})
}

// recordOne records the MPI calls of one process of threads (events by
// thread) on one in-process rank and hands the analysis to check.
func recordOne(t *testing.T, tables trace.Tables, threads [][]trace.Event, check func(cm comm.Comm, a *Analysis) error) {
	t.Helper()
	p, err := trace.NewProcess(trace.Header{NRanks: 1}, tables, threads, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = inproc.Run(1, func(cm comm.Comm) error {
		m, err := graph.Match(cm, oneRank{}, []*trace.Process{p}, graph.MatchOptions{})
		if err != nil {
			return err
		}
		a := New(m)
		if err := a.Record(0, p, nil, nil); err != nil {
			return err
		}
		return check(cm, a)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// findWhere finds a call's where from any start of its scan: in a cycle
// (the start the one after the last found), in reverse, at random, with
// sites that differ in one field only, and past the scan's eight wheres
// (the map).
func TestFindWhere(t *testing.T) {
	for _, n := range []int{1, 2, 5, 8, 9, 20} {
		keys := make([]whereKey, n)
		for j := range keys {
			// Neighbours differ in one field only: fn, loc, region or label.
			keys[j] = whereKey{fn: int64(j / 4), loc: int64(j % 4 / 3), region: int64(j % 4 / 2 % 2), label: int64(j % 2)}
		}
		c := &calls{siteIdx: map[site]int32{}, whereIdx: map[whereKey]int32{}}
		r := rand.New(rand.NewPCG(uint64(n), 7))
		var order []int
		for range 3 {
			for j := range n {
				order = append(order, j) // the cycle
			}
		}
		for j := n - 1; j >= 0; j-- {
			order = append(order, j)
		}
		for range 10 * n {
			order = append(order, r.IntN(n))
		}
		for x, j := range order {
			wk := keys[j]
			k := c.add(int64(x), site{wk.fn, wk.loc, wk.region}, wk.label, -1)
			st := c.sites[c.siteAt(k)]
			if got := (whereKey{st.fn, st.loc, st.region, c.labelAt(k)}); got != wk {
				t.Fatalf("%d wheres, call %d: where %+v, want %+v", n, x, got, wk)
			}
		}
		if len(c.wheres) != n {
			t.Fatalf("%d wheres made, want %d", len(c.wheres), n)
		}
	}
}

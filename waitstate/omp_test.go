package waitstate

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// prog is a hand-written process: per-thread events in time order.
type prog struct {
	events [][]trace.Event
	deps   [][]trace.Dep
}

func (g *prog) ev(th int, k trace.Kind, t int64, args ...int64) {
	e := trace.Event{Time: t, Kind: k}
	copy(e.Args[:], args)
	g.events[th] = append(g.events[th], e)
}

func (g *prog) create(th int, t, task, parent int64, ds ...trace.Dep) {
	g.ev(th, trace.TaskCreate, t, task, parent, ompt.TaskExplicit, 0)
	e := trace.Event{Time: t, Kind: trace.TaskDeps}
	e.Args[0], e.Args[1], e.Args[2] = task, int64(len(ds)), int64(len(g.deps[th]))
	g.deps[th] = append(g.deps[th], ds...)
	g.events[th] = append(g.events[th], e)
}

func (g *prog) sync(th int, kind, from, to, par, task int64) {
	g.ev(th, trace.SyncBegin, from, kind, par, task, 0)
	g.ev(th, trace.SyncWaitBegin, from, kind, par, task)
	g.ev(th, trace.SyncWaitEnd, to, kind, par, task)
	g.ev(th, trace.SyncEnd, to, kind, par, task, 0)
}

func id(th int, seq int64) int64 { return trace.MakeID(th, seq) }

// Two threads in a region (times in ns). Thread 0 creates A and B (B
// depends on A) and enters an explicit barrier at 0; thread 1 runs A 0..40
// and enters the barrier at 43 (its wait from 45 to 70, runtime code
// around it until 71); thread 0 takes B at 50 and runs it to 70,
// when the barrier ends. Then thread 0 holds a lock 70..100 while thread 1
// waits for it from 72 and holds it 100..110; thread 0 waits in the
// region's implicit barrier 100..110.
//
// Explicit barrier: thread 0 waits on dependences 0..40 (A runs, B
// blocked) and with B ready 40..50; thread 1 with B ready 45..50 and on
// nothing 50..70. Implicit barrier: thread 0 on nothing 100..110. Lock: 2
// acquisitions, waiting 28 (thread 1, 72..100), all of it contention
// (thread 0 releases it at 100), held 30 + 10.
func TestOMPWaitsHand(t *testing.T) {
	g := &prog{events: make([][]trace.Event, 2), deps: make([][]trace.Dep, 2)}
	par, init, impl0, impl1 := id(0, 2), id(0, 1), id(0, 3), id(1, 1)
	a, b := id(0, 4), id(0, 5)
	g.ev(0, trace.ThreadBegin, 0, 1)
	g.ev(0, trace.ImplicitTaskBegin, 0, 0, init, 1, 0, ompt.TaskInitial)
	g.ev(0, trace.ParallelBegin, 0, par, init, 2, 0, 0)
	g.ev(0, trace.ImplicitTaskBegin, 0, par, impl0, 2, 0, ompt.TaskImplicit)
	g.ev(1, trace.ThreadBegin, 0, 2)
	g.ev(1, trace.ImplicitTaskBegin, 0, par, impl1, 2, 1, ompt.TaskImplicit)
	g.create(0, 0, a, impl0, trace.Dep{Addr: 8, Type: trace.DepOut})
	g.create(0, 0, b, impl0, trace.Dep{Addr: 8, Type: trace.DepIn})
	g.ev(0, trace.SyncBegin, 0, ompt.SyncBarrierExplicit, par, impl0, 0)
	g.ev(0, trace.SyncWaitBegin, 0, ompt.SyncBarrierExplicit, par, impl0)
	g.ev(0, trace.TaskSchedule, 50, impl0, ompt.StatusSwitch, b)
	g.ev(0, trace.TaskSchedule, 70, b, ompt.StatusComplete, impl0)
	g.ev(0, trace.SyncWaitEnd, 70, ompt.SyncBarrierExplicit, par, impl0)
	g.ev(0, trace.SyncEnd, 70, ompt.SyncBarrierExplicit, par, impl0, 0)
	g.ev(1, trace.TaskSchedule, 0, impl1, ompt.StatusSwitch, a)
	g.ev(1, trace.TaskSchedule, 40, a, ompt.StatusComplete, impl1)
	// Runtime code 43..45 and 70..71 around the wait: the breakdown's sync
	// runtime, not waiting.
	g.ev(1, trace.SyncBegin, 43, ompt.SyncBarrierExplicit, par, impl1, 0)
	g.ev(1, trace.SyncWaitBegin, 45, ompt.SyncBarrierExplicit, par, impl1)
	g.ev(1, trace.SyncWaitEnd, 70, ompt.SyncBarrierExplicit, par, impl1)
	g.ev(1, trace.SyncEnd, 71, ompt.SyncBarrierExplicit, par, impl1, 0)
	g.ev(0, trace.MutexAcquire, 70, 1, 0x1000, 0)
	g.ev(0, trace.MutexAcquired, 70, 1, 0x1000, 0)
	g.ev(0, trace.MutexReleased, 100, 1, 0x1000, 0)
	g.ev(1, trace.MutexAcquire, 72, 1, 0x1000, 0)
	g.ev(1, trace.MutexAcquired, 100, 1, 0x1000, 0)
	g.ev(1, trace.MutexReleased, 110, 1, 0x1000, 0)
	g.sync(0, ompt.SyncBarrierImplicitParallel, 100, 110, par, impl0)
	g.sync(1, ompt.SyncBarrierImplicitParallel, 110, 110, par, impl1)
	for th, impl := range []int64{impl0, impl1} {
		g.ev(th, trace.ImplicitTaskEnd, 110, par, impl, 2, int64(th), ompt.TaskImplicit)
	}
	g.ev(0, trace.ParallelEnd, 110, par, init, 0, 0)
	g.ev(0, trace.ImplicitTaskEnd, 110, 0, init, 1, 0, ompt.TaskInitial)
	g.ev(0, trace.ThreadEnd, 110)
	g.ev(1, trace.ThreadEnd, 110)
	tables := trace.Tables{Locations: []trace.Location{{ID: 0, File: "t.c", Line: 1}}}
	p, err := trace.NewProcess(trace.Header{NRanks: 1}, tables, g.events, g.deps)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		end                      int64
		explicit                 [NumReasons]int64
		implicit                 [NumReasons]int64
		acq, wait, maxWait, hold int64
		contention               int64
	}{
		{110, [NumReasons]int64{15, 40, 20}, [NumReasons]int64{0, 0, 10}, 2, 28, 28, 40, 28},
		// A window ending at 90 cuts the lock's second wait and holds and
		// leaves its second acquisition out.
		{90, [NumReasons]int64{15, 40, 20}, [NumReasons]int64{}, 1, 18, 18, 20, 18},
	} {
		s := sim.New(p, nil, true)
		s.SetWindow(0, c.end)
		pass := NewOMPPass(3, p.NumThreads())
		if err := s.Run(ompt.NewModel(), pass); err != nil {
			t.Fatal(err)
		}
		got := map[Sync][NumReasons]int64{}
		for _, r := range pass.Rows {
			if r.Rank != 3 || r.Construct != "t.c:1" && r.Sync != SyncOutside {
				t.Errorf("end %d: row %+v", c.end, r)
			}
			got[r.Sync] = r.NS
		}
		if got[SyncExplicitBarrier] != c.explicit || got[SyncImplicitBarrier] != c.implicit || got[SyncOutside] != ([NumReasons]int64{}) {
			t.Errorf("end %d: rows %+v, want explicit barrier %v, implicit %v", c.end, pass.Rows, c.explicit, c.implicit)
		}
		// The reasons split the breakdown's overhead (less fork/join and sync
		// runtime) and idleness.
		var over, idle, ready, blocked, runtime int64
		for _, tt := range s.Breakdown.Threads {
			over += tt.Overhead + tt.OverheadSerial - tt.ForkJoin - tt.SyncRuntime
			idle += tt.Idle + tt.IdleSerial
			runtime += tt.SyncRuntime
		}
		if runtime != 3 {
			t.Errorf("end %d: sync runtime %d, want 3", c.end, runtime)
		}
		for _, r := range pass.Rows {
			ready += r.NS[ReasonReady]
			blocked += r.NS[ReasonDeps] + r.NS[ReasonNoTask]
		}
		if ready != over || blocked != idle {
			t.Errorf("end %d: task ready %d, no task %d; breakdown overhead %d, idleness %d", c.end, ready, blocked, over, idle)
		}
		want := []MutexRow{{Rank: 3, Kind: "lock", Construct: "t.c:1", Acquisitions: c.acq, WaitNS: c.wait, MaxWaitNS: c.maxWait, HoldNS: c.hold, ContentionNS: c.contention}}
		if len(pass.Mutexes) != 1 || pass.Mutexes[0] != want[0] {
			t.Errorf("end %d: mutexes %+v, want %+v", c.end, pass.Mutexes, want)
		}
	}
}

// Barriers of consecutive regions go to the rows of their own regions'
// constructs, region after region (a thread's last row is reused only for
// the same construct in the same region).
func TestOMPRowsFollowRegions(t *testing.T) {
	g := &prog{events: make([][]trace.Event, 2), deps: make([][]trace.Dep, 2)}
	init := id(0, 1)
	g.ev(0, trace.ThreadBegin, 0, 1)
	g.ev(1, trace.ThreadBegin, 0, 2)
	g.ev(0, trace.ImplicitTaskBegin, 0, 0, init, 1, 0, ompt.TaskInitial)
	locs := []int64{1, 2, 2, 1, 2}
	now := int64(0)
	for i, loc := range locs {
		par, impl0, impl1 := id(0, int64(2+2*i)), id(0, int64(3+2*i)), id(1, int64(1+i))
		g.ev(0, trace.ParallelBegin, now, par, init, 2, 0, loc)
		for th, impl := range []int64{impl0, impl1} {
			g.ev(th, trace.ImplicitTaskBegin, now, par, impl, 2, int64(th), ompt.TaskImplicit)
		}
		// Thread 1 arrives 10 ns after thread 0, twice (an explicit
		// barrier, then the implicit one).
		g.sync(0, ompt.SyncBarrierExplicit, now, now+10, par, impl0)
		g.sync(1, ompt.SyncBarrierExplicit, now+10, now+10, par, impl1)
		g.sync(0, ompt.SyncBarrierImplicitParallel, now+10, now+20, par, impl0)
		g.sync(1, ompt.SyncBarrierImplicitParallel, now+20, now+20, par, impl1)
		for th, impl := range []int64{impl0, impl1} {
			g.ev(th, trace.ImplicitTaskEnd, now+20, par, impl, 2, int64(th), ompt.TaskImplicit)
		}
		g.ev(0, trace.ParallelEnd, now+20, par, init, 0, 0)
		now += 30
	}
	g.ev(0, trace.ImplicitTaskEnd, now, 0, init, 1, 0, ompt.TaskInitial)
	g.ev(0, trace.ThreadEnd, now)
	g.ev(1, trace.ThreadEnd, now)
	tables := trace.Tables{Locations: []trace.Location{{ID: 0, File: "t.c", Line: 1}, {ID: 1, File: "a.c", Line: 10}, {ID: 2, File: "b.c", Line: 20}}}
	p, err := trace.NewProcess(trace.Header{NRanks: 1}, tables, g.events, g.deps)
	if err != nil {
		t.Fatal(err)
	}
	s := sim.New(p, nil, true)
	pass := NewOMPPass(0, p.NumThreads())
	if err := s.Run(ompt.NewModel(), pass); err != nil {
		t.Fatal(err)
	}
	type key struct {
		sync   Sync
		region string
	}
	got := map[key]int64{}
	waited := map[key]int64{}
	for _, r := range pass.Rows {
		got[key{r.Sync, r.Region}] += r.Count
		for _, ns := range r.NS {
			waited[key{r.Sync, r.Region}] += ns
		}
	}
	// a.c:10 opened 2 regions, b.c:20 three: each barrier entered by both
	// threads, thread 0 waiting 10 ns at each.
	for _, c := range []struct {
		region      string
		count, wait int64
	}{{"a.c:10", 4, 20}, {"b.c:20", 6, 30}} {
		for _, sy := range []Sync{SyncExplicitBarrier, SyncImplicitBarrier} {
			if k := (key{sy, c.region}); got[k] != c.count || waited[k] != c.wait {
				t.Errorf("%v in %s: entered %d times, waited %d ns; want %d, %d (rows %+v)", sy, c.region, got[k], waited[k], c.count, c.wait, pass.Rows)
			}
		}
	}
}

// A region's location is kept for at least keepRegions newer regions, and
// the map stays bounded.
func TestRegionLocsKeep(t *testing.T) {
	var m regionLocs
	const n = 3*keepRegions + 17
	for id := int64(0); id < n; id++ {
		m.put(id, id*10)
	}
	for id := int64(n - keepRegions); id < n; id++ {
		if loc, ok := m.get(id); !ok || loc != id*10 {
			t.Fatalf("region %d of %d: (%d, %v), want (%d, true)", id, n, loc, ok, id*10)
		}
	}
	if m.cur.n+m.old.n > 2*keepRegions {
		t.Fatalf("%d regions kept, want at most %d", m.cur.n+m.old.n, 2*keepRegions)
	}
}

// TestRegionLocsAsMaps: regionLocs answers as two generations of Go maps
// do (the current one swapped out once it holds keepRegions ids), under
// random puts, repeated ids and lookups of ids recent, old and never put,
// negative and zero ones too, across many generations (so the tables'
// stamps move on and their slots are reused).
func TestRegionLocsAsMaps(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var m regionLocs
	cur, old := map[int64]int64{}, map[int64]int64{}
	next := int64(-50)
	for op := range 200_000 {
		if r.IntN(3) > 0 {
			id := next
			if r.IntN(8) == 0 {
				id = next - r.Int64N(3*keepRegions) // an id put before, or never
			} else {
				next++
			}
			loc := r.Int64()
			m.put(id, loc)
			if len(cur) >= keepRegions {
				old, cur = cur, map[int64]int64{}
			}
			cur[id] = loc
		}
		id := next - r.Int64N(3*keepRegions)
		if r.IntN(4) == 0 {
			id = next - 1
		}
		want, wok := cur[id]
		if !wok {
			want, wok = old[id]
		}
		if got, ok := m.get(id); got != want || ok != wok {
			t.Fatalf("op %d: get(%d) = %d, %v; want %d, %v", op, id, got, ok, want, wok)
		}
	}
}

// LLVM's libomp reports omp_test_lock's acquire with the kind of a
// blocking lock, and a thread spinning on a held lock's test can make one
// for each failed try (a million under load): acquires of a lock without
// their acquired are no break of OMPT's sequence, and the wait of the
// acquisition runs from the last of them. A critical section's acquire
// always completes: one left without its acquired still breaks it.
func TestMutexFailedTestsLookLikeLocks(t *testing.T) {
	run := func(kind int64) (*OMPPass, error) {
		g := &prog{events: make([][]trace.Event, 1), deps: make([][]trace.Dep, 1)}
		init := id(0, 1)
		g.ev(0, trace.ThreadBegin, 0, 1)
		g.ev(0, trace.ImplicitTaskBegin, 0, 0, init, 1, 0, ompt.TaskInitial)
		for _, at := range []int64{10, 11, 12} {
			g.ev(0, trace.MutexAcquire, at, kind, 0x1000, 0)
		}
		g.ev(0, trace.MutexAcquired, 20, kind, 0x1000, 0)
		g.ev(0, trace.MutexReleased, 30, kind, 0x1000, 0)
		g.ev(0, trace.ImplicitTaskEnd, 40, 0, init, 1, 0, ompt.TaskInitial)
		g.ev(0, trace.ThreadEnd, 40)
		tables := trace.Tables{Locations: []trace.Location{{ID: 0, File: "t.c", Line: 1}}}
		p, err := trace.NewProcess(trace.Header{NRanks: 1}, tables, g.events, g.deps)
		if err != nil {
			t.Fatal(err)
		}
		s := sim.New(p, nil, true) // strict: a warning is an error
		s.SetWindow(0, 40)
		pass := NewOMPPass(0, p.NumThreads())
		return pass, s.Run(ompt.NewModel(), pass)
	}
	pass, err := run(1) // ompt_mutex_lock
	if err != nil {
		t.Fatalf("failed tests of a lock: %v", err)
	}
	want := MutexRow{Kind: "lock", Construct: "t.c:1", Acquisitions: 1, WaitNS: 8, MaxWaitNS: 8, HoldNS: 10}
	if len(pass.Mutexes) != 1 || pass.Mutexes[0] != want {
		t.Errorf("mutexes %+v, want %+v", pass.Mutexes, want)
	}
	if _, err := run(5); err == nil || !strings.Contains(err.Error(), "mutex_acquired missing") { // ompt_mutex_critical
		t.Errorf("a critical section's acquire left without its acquired: %v, want mutex_acquired missing", err)
	}
}

// A POSIX threads mutex (ptrace's mutex kind 256, from Score-P's pthread
// adapter) is a mutex like OMPT's: rows named pthread_mutex, a blocking
// acquire, its contention until the holder's release; not an unknown kind
// (a warning, an error under --strict). Two threads: 0 holds the mutex
// 0..50, 1 asks at 10 and has it at 60 (wait 50, contention 40), holds it
// to 70.
func TestMutexPthread(t *testing.T) {
	run := func(extra bool) (*OMPPass, error) {
		g := &prog{events: make([][]trace.Event, 2), deps: make([][]trace.Dep, 2)}
		init := id(0, 1)
		g.ev(0, trace.ThreadBegin, 0, trace.ThreadInitial)
		g.ev(0, trace.ImplicitTaskBegin, 0, 0, init, 1, 0, ompt.TaskInitial)
		g.ev(0, trace.MutexAcquire, 0, trace.MutexPthread, 1<<32, 0)
		g.ev(0, trace.MutexAcquired, 0, trace.MutexPthread, 1<<32, 0)
		g.ev(0, trace.MutexReleased, 50, trace.MutexPthread, 1<<32, 0)
		g.ev(0, trace.ImplicitTaskEnd, 100, 0, init, 1, 0, ompt.TaskInitial)
		g.ev(0, trace.ThreadEnd, 100)
		g.ev(1, trace.ThreadBegin, 5, trace.ThreadUser)
		g.ev(1, trace.MutexAcquire, 10, trace.MutexPthread, 1<<32, 0)
		if extra {
			// a blocking acquire left without its acquired
			g.ev(1, trace.MutexAcquire, 11, trace.MutexPthread, 1<<32, 0)
		}
		g.ev(1, trace.MutexAcquired, 60, trace.MutexPthread, 1<<32, 0)
		g.ev(1, trace.MutexReleased, 70, trace.MutexPthread, 1<<32, 0)
		g.ev(1, trace.ThreadEnd, 90)
		tables := trace.Tables{Locations: []trace.Location{{ID: 0, Func: "pthread_mutex_lock"}}}
		p, err := trace.NewProcess(trace.Header{NRanks: 1}, tables, g.events, g.deps)
		if err != nil {
			t.Fatal(err)
		}
		s := sim.New(p, nil, true) // strict: a warning is an error
		s.SetWindow(0, 100)
		pass := NewOMPPass(0, p.NumThreads())
		return pass, s.Run(ompt.NewModel(), pass)
	}
	pass, err := run(false)
	if err != nil {
		t.Fatal(err)
	}
	want := MutexRow{Kind: "pthread_mutex", Construct: "pthread_mutex_lock", Acquisitions: 2, WaitNS: 50, MaxWaitNS: 50, HoldNS: 60, ContentionNS: 40}
	if len(pass.Mutexes) != 1 || pass.Mutexes[0] != want {
		t.Errorf("mutexes %+v, want %+v", pass.Mutexes, want)
	}
	if _, err := run(true); err == nil || !strings.Contains(err.Error(), "mutex_acquired missing") {
		t.Errorf("a pthread mutex's acquire left without its acquired: %v, want mutex_acquired missing", err)
	}
}

// Lock contention is Scalasca's: from the acquire to the last release of
// the same mutex before the acquisition, none when the mutex was free at
// the acquire; the rest of the wait is the hand-over after the release.
// Three threads of a region (times in ns), a critical section 0x1000 at
// t.c:1 and locks 0x2000, 0x3000 at t.c:2:
//
//   - thread 0 holds the critical section 0..100; thread 1 asks at 40 and
//     has it at 130 (wait 90, contention 60: the release of 0x3000 at 120
//     by thread 2 is another mutex's); thread 2 asks at 50 and waits
//     through both holders, releases at 100 and 150, to 170 (wait 120,
//     contention 100);
//   - thread 0 asks at 200 when it is free and has it at 205 (wait 5,
//     contention 0), releases it at 210; thread 1's acquired at 209 comes
//     before that release, as OMPT may report it (the runtime lets the
//     lock go before the callback): all of its wait 207..209 is contention;
//   - lock 0x2000: thread 0 holds it 300..400; thread 1's test at 310
//     fails (it counts nothing), it asks again at 350 and has it at 405
//     (wait 55, contention 50); thread 2 asks at 402, has it at 412 (wait
//     10, contention 8: thread 1's release at 410).
func TestMutexContentionScalasca(t *testing.T) {
	const crit, lock = ompt.MutexCritical, ompt.MutexLock
	g := &prog{events: make([][]trace.Event, 3), deps: make([][]trace.Dep, 3)}
	par, init := id(0, 2), id(0, 1)
	impl := []int64{id(0, 3), id(1, 1), id(2, 1)}
	g.ev(0, trace.ThreadBegin, 0, 1)
	g.ev(0, trace.ImplicitTaskBegin, 0, 0, init, 1, 0, ompt.TaskInitial)
	g.ev(0, trace.ParallelBegin, 0, par, init, 3, 0, 0)
	for th := range 3 {
		if th > 0 {
			g.ev(th, trace.ThreadBegin, 0, 2)
		}
		g.ev(th, trace.ImplicitTaskBegin, 0, par, impl[th], 3, int64(th), ompt.TaskImplicit)
	}
	hold := func(th int, kind, mutex, loc, ask, got, rel int64) {
		g.ev(th, trace.MutexAcquire, ask, kind, mutex, loc)
		g.ev(th, trace.MutexAcquired, got, kind, mutex, loc)
		g.ev(th, trace.MutexReleased, rel, kind, mutex, loc)
	}
	hold(0, crit, 0x1000, 0, 0, 0, 100)
	hold(0, crit, 0x1000, 0, 200, 205, 210)
	hold(0, lock, 0x2000, 1, 300, 300, 400)
	hold(1, crit, 0x1000, 0, 40, 130, 150)
	hold(1, crit, 0x1000, 0, 207, 209, 215)
	g.ev(1, trace.MutexAcquire, 310, lock, 0x2000, 1) // a failed test
	hold(1, lock, 0x2000, 1, 350, 405, 410)
	g.ev(2, trace.MutexAcquire, 10, lock, 0x3000, 1)
	g.ev(2, trace.MutexAcquired, 10, lock, 0x3000, 1)
	g.ev(2, trace.MutexAcquire, 50, crit, 0x1000, 0)
	g.ev(2, trace.MutexReleased, 120, lock, 0x3000, 1)
	g.ev(2, trace.MutexAcquired, 170, crit, 0x1000, 0)
	g.ev(2, trace.MutexReleased, 180, crit, 0x1000, 0)
	hold(2, lock, 0x2000, 1, 402, 412, 420)
	for th := range 3 {
		g.ev(th, trace.ImplicitTaskEnd, 500, par, impl[th], 3, int64(th), ompt.TaskImplicit)
	}
	g.ev(0, trace.ParallelEnd, 500, par, init, 0, 0)
	g.ev(0, trace.ImplicitTaskEnd, 500, 0, init, 1, 0, ompt.TaskInitial)
	for th := range 3 {
		g.ev(th, trace.ThreadEnd, 500)
	}
	tables := trace.Tables{Locations: []trace.Location{{ID: 0, File: "t.c", Line: 1}, {ID: 1, File: "t.c", Line: 2}}}
	// The same with every time 1000 ns earlier (a process whose clock
	// correction moves its start before 0): no time is special, 0 no more
	// than another (the first acquisitions, free, were once contention up
	// to 0, more than their wait).
	for _, off := range []int64{0, -1000} {
		evs := make([][]trace.Event, len(g.events))
		for th, es := range g.events {
			evs[th] = slices.Clone(es)
			for i := range evs[th] {
				evs[th][i].Time += off
			}
		}
		p, err := trace.NewProcess(trace.Header{NRanks: 1}, tables, evs, g.deps)
		if err != nil {
			t.Fatal(err)
		}
		mutexContention(t, p, off)
	}
}

func mutexContention(t *testing.T, p *trace.Process, off int64) {
	for _, c := range []struct {
		begin int64
		want  []MutexRow
	}{
		{0, []MutexRow{
			{Kind: "critical", Construct: "t.c:1", Acquisitions: 5, WaitNS: 0 + 90 + 120 + 5 + 2, MaxWaitNS: 120, HoldNS: 100 + 20 + 10 + 5 + 6, ContentionNS: 0 + 60 + 100 + 0 + 2},
			{Kind: "lock", Construct: "t.c:2", Acquisitions: 4, WaitNS: 0 + 55 + 10, MaxWaitNS: 55, HoldNS: 110 + 100 + 5 + 8, ContentionNS: 50 + 8}},
		},
		// A window from 60 cuts the first waits: thread 1's contention
		// 60..100, thread 2's 60..150.
		{60, []MutexRow{
			{Kind: "critical", Construct: "t.c:1", Acquisitions: 4, WaitNS: 70 + 110 + 5 + 2, MaxWaitNS: 110, HoldNS: 40 + 20 + 10 + 5 + 6, ContentionNS: 40 + 90 + 0 + 2},
			{Kind: "lock", Construct: "t.c:2", Acquisitions: 3, WaitNS: 55 + 10, MaxWaitNS: 55, HoldNS: 60 + 100 + 5 + 8, ContentionNS: 50 + 8}},
		},
	} {
		s := sim.New(p, nil, true) // strict: a warning is an error
		s.SetWindow(c.begin+off, 500+off)
		pass := NewOMPPass(0, p.NumThreads())
		if err := s.Run(ompt.NewModel(), pass); err != nil {
			t.Fatal(err)
		}
		got := map[string]MutexRow{}
		for _, r := range pass.Mutexes {
			got[r.Kind] = r
		}
		for _, w := range c.want {
			if got[w.Kind] != w {
				t.Errorf("times %+d, window from %d: %s row %+v, want %+v", off, c.begin, w.Kind, got[w.Kind], w)
			}
		}
		if len(pass.Mutexes) != len(c.want) {
			t.Errorf("times %+d, window from %d: rows %+v", off, c.begin, pass.Mutexes)
		}
		if len(pass.mutex.pending) != 0 {
			t.Errorf("times %+d, window from %d: threads left pending: %v", off, c.begin, pass.mutex.pending)
		}
	}
}

// A join of a thread the program started is a row of its own: the
// initial thread starts thread 1 at 10 and joins it 20..50 (thread 1 runs
// 11..49, ends, the join returns at 50). The join waits for no task: the
// breakdown's idleness, at the join's call site. Thread 1 waits on a
// condition variable 25..35: idleness too, a row of its own. Thread 1's
// time before it began and after it ended is in no construct.
func TestOMPRowsThreadJoin(t *testing.T) {
	g := &prog{events: make([][]trace.Event, 2), deps: make([][]trace.Dep, 2)}
	j := int64(trace.SyncThreadJoin)
	g.ev(0, trace.MPIEnter, 0, 0)
	g.ev(0, trace.MPIExit, 5, 0)
	g.sync(0, j, 20, 50, 0, 2)
	g.ev(0, trace.MPIEnter, 55, 0)
	g.ev(0, trace.MPIExit, 60, 0)
	g.ev(1, trace.ThreadBegin, 11, trace.ThreadUser)
	g.sync(1, trace.SyncCondWait, 25, 35, 0, 0)
	g.ev(1, trace.ThreadEnd, 49)
	tables := trace.Tables{Locations: []trace.Location{{ID: 0, File: "t.c", Line: 1}},
		Threads: []trace.Thread{{Index: 0, Type: trace.ThreadInitial}, {Index: 1, Type: trace.ThreadUser, Creator: 1}}}
	p, err := trace.NewProcess(trace.Header{NRanks: 1}, tables, g.events, g.deps)
	if err != nil {
		t.Fatal(err)
	}
	s := sim.New(p, nil, true)
	s.SetWindow(0, 60)
	pass := NewOMPPass(0, p.NumThreads())
	if err := s.Run(ompt.NewModel(), pass); err != nil {
		t.Fatal(err)
	}
	got := map[Sync][NumReasons]int64{}
	for _, r := range pass.Rows {
		got[r.Sync] = r.NS
		if r.Sync == SyncThreadJoin && (r.Construct != "t.c:1" || r.Count != 1) {
			t.Errorf("join row %+v, want t.c:1 entered once", r)
		}
	}
	if want := ([NumReasons]int64{0, 0, 30}); got[SyncThreadJoin] != want {
		t.Errorf("join row %v, want %v (rows %+v)", got[SyncThreadJoin], want, pass.Rows)
	}
	if want := ([NumReasons]int64{0, 0, 10}); got[SyncCondWait] != want {
		t.Errorf("condition wait row %v, want %v (rows %+v)", got[SyncCondWait], want, pass.Rows)
	}
	if want := ([NumReasons]int64{0, 0, 11 + 11}); got[SyncOutside] != want {
		t.Errorf("outside row %v, want %v (rows %+v)", got[SyncOutside], want, pass.Rows)
	}
	if w := s.Breakdown.Threads[1].Work; w != 38-10 {
		t.Errorf("thread 1 works %d ns, want 28", w)
	}
	var times report.OMPWaitTimes
	for i := range pass.Rows {
		addOMP(&times, &pass.Rows[i])
	}
	if times.ThreadSyncNS != 30+10 || times.OtherSyncNS != 0 {
		t.Errorf("thread sync %d, other sync %d; want 40, 0", times.ThreadSyncNS, times.OtherSyncNS)
	}
}

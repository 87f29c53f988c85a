package sim_test

import (
	"testing"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// A pure MPI process has no OpenMP event: its initial thread runs the
// program, so its time outside MPI is work from its first event on
// (before it nothing is known: idle, as any thread before it begins), and
// the fragment graph holds that code as serial nodes between the calls.
func TestProgramTaskPureMPI(t *testing.T) {
	g := newProg(1)
	g.ev(0, trace.MPIEnter, 10, 0) // MPI_Init
	g.ev(0, trace.MPIExit, 20, 0)
	g.ev(0, trace.MPIEnter, 50, 0) // computes 20..50
	g.ev(0, trace.MPIExit, 60, 0)
	g.ev(0, trace.MPIEnter, 90, 0) // computes 60..90
	g.ev(0, trace.MPIExit, 100, 0)
	s := sim.New(g.proc(), nil, false)
	s.SetWindow(0, 100)
	f := sim.NewFragPass(nil)
	if err := s.Run(ompt.NewModel(), f); err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	// idle 0..10 (before the first event), MPI 10..20, 50..60, 90..100
	wantBreakdown(t, s, 30+30, 30, 0, 10)
	fr := &f.F
	fr.UnpackWeights(nil)
	span, work := longest(t, fr)
	// serial 20..50 and 60..90; the calls weigh their durations
	if work != 60 || span != 90 {
		t.Errorf("fragment graph: span %d, work %d; want 90, 60", span, work)
	}
}

// In a hybrid program libomp reports its initial task at the first OpenMP
// construct; the master's code before it is the program's too: work, and
// one chain of serial fragments into the region.
func TestProgramTaskBeforeLibomp(t *testing.T) {
	g := newProg(2)
	g.ev(0, trace.MPIEnter, 0, 0) // MPI_Init
	g.ev(0, trace.MPIExit, 10, 0)
	// master computes 10..60 before libomp starts
	g.region(2, 60)
	g.barrier(0, 70, 80)
	g.barrier(1, 80, 80)
	g.end(2, 80)
	s := sim.New(g.proc(), nil, false)
	s.SetWindow(10, 80)
	f := sim.NewFragPass(nil)
	if err := s.Run(ompt.NewModel(), f); err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	m := s.Breakdown.Threads[0]
	if m.Work != 50+10 {
		t.Errorf("master: work %d, want 60 (50 before libomp, 10 in the region): %+v", m.Work, m)
	}
	fr := &f.F
	fr.UnpackWeights(nil)
	span, work := longest(t, fr)
	// master 10..60 serial, then the region; the worker runs 60..80
	if span != 70 || work != 50+10+20 {
		t.Errorf("fragment graph: span %d, work %d; want 70, 80", span, work)
	}
}

// A process's own MPI_Init and MPI_Finalize inside the window (it left
// MPI_Init after another process did, entered MPI_Finalize before) are MPI
// time kept apart, and no cost on the critical path: the process waited
// for the others to start and to end.
func TestInitFinalizeInWindow(t *testing.T) {
	g := newProg(1)
	g.tables.Strings = []string{"MPI_Init", "MPI_Finalize", "MPI_Send"}
	g.ev(0, trace.MPIEnter, 0, 0)
	g.ev(0, trace.MPIExit, 30, 0) // the window begins at 10
	g.ev(0, trace.MPIEnter, 40, 2)
	g.ev(0, trace.MPIExit, 45, 2)
	g.ev(0, trace.MPIEnter, 60, 1)
	g.ev(0, trace.MPIExit, 110, 1) // the window ends at 100
	s := sim.New(g.proc(), nil, false)
	s.SetWindow(10, 100)
	f := sim.NewFragPass(nil)
	if err := s.Run(ompt.NewModel(), f); err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	wantBreakdown(t, s, 10+15, 20+5+40, 0, 0)
	if got := s.Breakdown.Threads[0].InitFinalize; got != 20+40 {
		t.Errorf("init/finalize %d, want 60", got)
	}
	fr := &f.F
	fr.UnpackWeights(nil)
	if span, work := longest(t, fr); span != 10+5+15 || work != 25 {
		t.Errorf("fragment graph: span %d, work %d; want 30 (the serial code and MPI_Send), 25", span, work)
	}
}

// A worker whose implicit task begins before its master's parallel_begin
// (its clock a little behind) joins the region the master opens, not a
// second one: one region instance, and the worker's idleness in it.
func TestWorkerBeforeParallelBegin(t *testing.T) {
	g := newProg(2)
	g.ev(0, trace.ThreadBegin, 0, 1)
	g.ev(0, trace.ImplicitTaskBegin, 0, 0, id(0, 1), 1, 0, ompt.TaskInitial)
	g.ev(1, trace.ThreadBegin, 0, 2)
	g.ev(1, trace.ImplicitTaskBegin, 9, id(0, 2), implicit(1), 2, 1, ompt.TaskImplicit)
	g.ev(0, trace.ParallelBegin, 10, id(0, 2), id(0, 1), 2, 0, 0)
	g.ev(0, trace.ImplicitTaskBegin, 10, id(0, 2), implicit(0), 2, 0, ompt.TaskImplicit)
	g.barrier(0, 50, 60)
	g.barrier(1, 20, 60)
	g.end(2, 60)
	s, _, err := g.run(t, false)
	if err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	if len(s.Regions) != 1 {
		t.Errorf("%d region instances, want 1", len(s.Regions))
	}
	// 20..50 waiting for the master, 50..60 in the released barrier
	if w := s.Breakdown.Threads[1]; w.Idle != 30 || w.Overhead != 10 {
		t.Errorf("worker: %+v, want 30 ns idle and 10 of overhead at the region's barrier", w)
	}
}

// Threads the program starts itself (pthread_create, std::thread; type
// user) run its code from their thread_begin to their thread_end: work
// outside MPI, and idle before they begin and after they end. The initial
// thread's join waits for them (sync kind thread_join): idle, not work.
func TestUserThreads(t *testing.T) {
	g := newProg(3)
	g.tables.Threads = []trace.Thread{{Index: 0, Type: trace.ThreadInitial}, {Index: 1, Type: trace.ThreadUser, Creator: 1}, {Index: 2, Type: trace.ThreadUser, Creator: 1}}
	j := int64(trace.SyncThreadJoin)
	g.ev(0, trace.MPIEnter, 0, 0) // MPI_Init_thread
	g.ev(0, trace.MPIExit, 10, 0)
	// the initial thread computes 10..30, creates both and joins them
	g.threadWait(0, j, 30, 71, 2)  // returns 1 ns after thread 1 ended
	g.threadWait(0, j, 73, 91, 3)  // 71..73 work
	g.ev(0, trace.MPIEnter, 95, 0) // MPI_Finalize; 91..95 work
	g.ev(0, trace.MPIExit, 100, 0)
	// thread 1 runs 30..70: computes, sends 50..55, computes
	g.ev(1, trace.ThreadBegin, 30, trace.ThreadUser)
	g.ev(1, trace.MPIEnter, 50, 0)
	g.ev(1, trace.MPIExit, 55, 0)
	g.ev(1, trace.ThreadEnd, 70)
	// thread 2 runs 32..90, no MPI
	g.ev(2, trace.ThreadBegin, 32, trace.ThreadUser)
	g.ev(2, trace.ThreadEnd, 90)
	s := sim.New(g.proc(), nil, false)
	s.SetWindow(0, 100)
	f := sim.NewFragPass(nil)
	if err := s.Run(ompt.NewModel(), f); err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	want := []sim.ThreadTimes{
		{Work: 20 + 2 + 4, MPI: 10 + 5, IdleSerial: 41 + 18},
		{Work: 35, MPI: 5, IdleSerial: 30 + 30},
		{Work: 58, IdleSerial: 32 + 10},
	}
	for th, w := range want {
		got := s.Breakdown.Threads[th]
		got.IdleInMPI, got.IdleInMPISerial = 0, 0 // another thread's MPI: not what this test is about
		if got != w {
			t.Errorf("thread %d: %+v, want %+v", th, got, w)
		}
	}
	fr := &f.F
	fr.UnpackWeights(nil)
	span, work := longest(t, fr)
	// MPI_Init 0..10, the code 10..30 that starts thread 2, thread 2's
	// 58 ns from its begin (its creator's code before it), the join's
	// continuation 91..95 after thread 2's end, MPI_Finalize 95..100.
	if want := int64(10 + 20 + 58 + 4 + 5); span != want || work != 26+35+58 {
		t.Errorf("fragment graph: span %d, work %d; want %d, %d", span, work, want, 26+35+58)
	}
	for th := range want {
		if tt := s.Breakdown.Threads[th]; tt.Total() != s.End-s.Begin {
			t.Errorf("thread %d accounts %d ns of a %d ns window", th, tt.Total(), s.End-s.Begin)
		}
	}
}

// A waiter on a condition variable is woken by the signal: its
// continuation follows the signaller's code up to the signal, which the
// fragment graph splits there. Thread 1 (started by thread 0 at 5)
// computes 5..20, waits on the condition variable 20..41, computes 41..60
// and ends; thread 0 computes 1..40, signals at 40, computes 40..45, joins
// thread 1 45..61 and computes to its MPI_Finalize at 70. The longest path:
// MPI_Init 0..1, thread 0's 1..40, thread 1's 41..60 after the signal,
// thread 0's 61..70 after the join, MPI_Finalize 70..71: 69 ns (55
// without the signal's edge: thread 0's 1..45, 61..71 and MPI_Init).
func TestUserThreadSignal(t *testing.T) {
	for _, c := range []struct {
		name string
		cv   int64 // the waits' and the signal's identity
		span int64
	}{
		{"signalled", 0x7f00, 69},
		{"unknown condition variable", 0, 55},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newProg(2)
			g.tables.Threads = []trace.Thread{{Index: 0, Type: trace.ThreadInitial}, {Index: 1, Type: trace.ThreadUser, Creator: 1}}
			j, w, sg := int64(trace.SyncThreadJoin), int64(trace.SyncCondWait), int64(trace.SyncCondSignal)
			g.ev(0, trace.MPIEnter, 0, 0)
			g.ev(0, trace.MPIExit, 1, 0)
			g.ev(0, trace.SyncBegin, 40, sg, 0, c.cv, 0)
			g.ev(0, trace.SyncEnd, 40, sg, 0, c.cv, 0)
			g.threadWait(0, j, 45, 61, 2)
			g.ev(0, trace.MPIEnter, 70, 0)
			g.ev(0, trace.MPIExit, 71, 0)
			g.ev(1, trace.ThreadBegin, 5, trace.ThreadUser)
			g.threadWait(1, w, 20, 41, c.cv)
			g.ev(1, trace.ThreadEnd, 60)
			s := sim.New(g.proc(), nil, false)
			s.SetWindow(0, 71)
			f := sim.NewFragPass(nil)
			if err := s.Run(ompt.NewModel(), f); err != nil {
				t.Fatal(err)
			}
			noWarnings(t, s)
			if w0, w1 := s.Breakdown.Threads[0].Work, s.Breakdown.Threads[1].Work; w0 != 39+5+9 || w1 != 15+19 {
				t.Errorf("work %d and %d, want 53 and 34: the signal is no wait, the condition wait no work", w0, w1)
			}
			fr := &f.F
			fr.UnpackWeights(nil)
			if span, work := longest(t, fr); span != c.span || work != 53+34 {
				t.Errorf("fragment graph: span %d, work %d; want %d, 87", span, work, c.span)
			}
		})
	}
}

// threadWait records a wait of thread th for other threads of the
// program (sync kind 256–258) from..to, its task argument arg (the thread
// joined + 1, or the condition variable or barrier).
func (g *prog) threadWait(th int, kind, from, to, arg int64) *prog {
	g.ev(th, trace.SyncBegin, from, kind, 0, arg, 0)
	g.ev(th, trace.SyncWaitBegin, from, kind, 0, arg)
	g.ev(th, trace.SyncWaitEnd, to, kind, 0, arg)
	return g.ev(th, trace.SyncEnd, to, kind, 0, arg, 0)
}

// The program's code starts at its initial thread's first event whatever
// that event is: a thread_begin and a region_enter leave a running task's
// category alone, but here they start the program, so 0..40 is work.
func TestProgramTaskQuietFirstEvent(t *testing.T) {
	g := newProg(1)
	g.ev(0, trace.ThreadBegin, 0, trace.ThreadInitial)
	g.ev(0, trace.RegionEnter, 5, 0)
	g.ev(0, trace.MPIEnter, 40, 0)
	g.ev(0, trace.MPIExit, 50, 0)
	s := sim.New(g.proc(), nil, false)
	s.SetWindow(0, 50)
	if err := s.Run(ompt.NewModel()); err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	wantBreakdown(t, s, 40, 10, 0, 0)
}

// The runtime's initial task continues the program task's chain
// (AdoptInitial): its first MPI call that sends (a collective's or a
// message's post node) follows the code before it, as any later call does.
// The post linked to the task's creation instead (none: the initial task
// has no creator) when it was the task's first post, which cut the chain
// there: on a hybrid code whose MPI_Init precedes its first OpenMP
// construct (miniAMR, Quicksilver), the critical path held only the part
// before or the part after that call (62.9 % of miniAMR's window).
func TestProgramTaskPostAfterLibomp(t *testing.T) {
	g := newProg(1)
	g.tables.Strings = []string{"MPI_Init", "MPI_Send"}
	g.ev(0, trace.MPIEnter, 0, 0) // MPI_Init
	g.ev(0, trace.MPIExit, 10, 0)
	// serial 10..60 before libomp starts, a region 60..70, serial 70..100
	g.ev(0, trace.ThreadBegin, 60, 1)
	g.ev(0, trace.ImplicitTaskBegin, 60, 0, id(0, 1), 1, 0, ompt.TaskInitial)
	g.ev(0, trace.ParallelBegin, 60, id(0, 2), id(0, 1), 1, 0, 0)
	g.ev(0, trace.ImplicitTaskBegin, 60, id(0, 2), implicit(0), 1, 0, ompt.TaskImplicit)
	g.ev(0, trace.ImplicitTaskEnd, 70, id(0, 2), implicit(0), 1, 0, ompt.TaskImplicit)
	g.ev(0, trace.ParallelEnd, 70, id(0, 2), id(0, 1), 0, 0)
	// a blocking send 100..110 (its post node), serial 110..150
	g.ev(0, trace.MPIEnter, 100, 1)
	g.ev(0, trace.MPISend, 100, 0, 1, 0, 8, 0)
	g.ev(0, trace.MPIExit, 110, 1)
	g.ev(0, trace.ImplicitTaskEnd, 150, 0, id(0, 1), 1, 0, ompt.TaskInitial)
	g.ev(0, trace.ThreadEnd, 150)
	s := sim.New(g.proc(), nil, false)
	s.SetWindow(10, 150)
	f := sim.NewFragPass(nil)
	if err := s.Run(ompt.NewModel(), f); err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	fr := &f.F
	fr.UnpackWeights(nil)
	// one chain: 50 + 10 + 30 of code, the send's 10, 40 of code
	if span, work := longest(t, fr); span != 140 || work != 130 {
		t.Errorf("fragment graph: span %d, work %d; want 140 (one chain through the send), 130", span, work)
	}
}

package sim

import "github.com/ptrace-dev/ptrace/trace"

// ThreadTimes is one thread's time breakdown (POT Alg. 3 extended with MPI):
// Work + MPI + Overhead + Idle (each split in and outside parallel regions)
// equals the process's time window (Sim.SetWindow): what happens before or
// after it is simulated, so that the state is right, but not accounted.
//
// ForkJoin and the IdleInMPI pair are raw components inside the others, kept
// so that other accounting conventions can be recomputed (docs/report-schema.md).
type ThreadTimes struct {
	Work           int64
	MPI            int64
	Overhead       int64 // not working, some task ready (or forking/joining a team), inside a parallel region
	Idle           int64 // not working, no task ready, inside a parallel region
	OverheadSerial int64 // the same outside any parallel region
	IdleSerial     int64
	// ForkJoin is the part of Overhead (OverheadSerial when the region is
	// unknown) the thread spent creating or ending a team: from
	// parallel_begin to its implicit task's begin and from that task's end
	// to parallel_end. Team creation is work the runtime does for the
	// region, overhead in POT's (Tallent's) sense, not a lack of work.
	ForkJoin int64
	// IdleInMPI is the thread's non-working time (idle or overhead, not
	// ForkJoin) while another thread of its process is inside MPI;
	// IdleInMPISerial the part of it outside any parallel region (workers
	// waiting while the master communicates between regions).
	IdleInMPI       int64
	IdleInMPISerial int64
	// Instrumentation is the recording cost taken out of Work by the
	// instrumentation correction (instrument.go).
	Instrumentation int64
	// SyncRuntime is the part of Overhead (OverheadSerial outside any
	// region) the thread's task spent running the runtime's code of a
	// barrier, taskwait or taskgroup outside its wait (runtime.go).
	SyncRuntime int64
	// InitFinalize is the part of MPI the thread spent in its own
	// MPI_Init(_thread) or MPI_Finalize inside the window: a process
	// whose MPI_Init ends after the first one's, or whose MPI_Finalize
	// begins before the last one's.
	InitFinalize int64
	// Flushes counts the tracer's buffer flushes of the thread that
	// overlap the window, Flush their time inside it; FlushWork is the part
	// that fell in work (in Instrumentation unless Sim.KeepRecordingCost,
	// in Work then), FlushMPI the part inside MPI calls (in MPI),
	// FlushOverhead the part in overhead; the rest is idleness. flush.go.
	Flushes, Flush, FlushWork, FlushMPI, FlushOverhead int64
}

// Total returns the accounted time.
func (t ThreadTimes) Total() int64 {
	return t.Work + t.MPI + t.Overhead + t.Idle + t.OverheadSerial + t.IdleSerial + t.Instrumentation
}

type category uint8

const (
	catNonWork category = iota
	catWork
	catMPI
	catMPISetup // in its own MPI_Init or MPI_Finalize
	catForkJoin // the encountering thread forks or joins a team
	catRuntime  // the running task is inside a sync construct, not its wait
)

// Breakdown integrates POT's δr and δw per thread (Alg. 3). It is lazy: a
// thread's interval is closed only when what the thread does changes, and
// overhead within a non-working interval is read off the running integral
// R(t) = ∫ δr, so the cost per event is O(1) whatever the thread count.
type Breakdown struct {
	Threads []ThreadTimes

	// ∫ δr dt is the simulation's (Sim.ReadyTime). m integrates δm, 1
	// while some thread of the process is in MPI, the same way (the
	// simulation brings it up to date with its own, Sim.integrate), for
	// ThreadTimes.IdleInMPI.
	m     Integral
	inMPI int // threads whose open interval is catMPI
	// th is each thread's open interval, in one record: an event reads and
	// writes several of its fields (one bounds check, one cache line)
	th    []openInterval
	instr instrCorrection
	// flushes is the tracer's buffer flushes' state (flush.go)
	flushes flushState
}

// openInterval is a thread's interval the breakdown has not accounted yet.
type openInterval struct {
	since, rSince, mSince int64    // its start, R(t) and M(t) there
	region, num           int32    // top-level region instance during it, team number in it
	cat                   category // what the thread does
}

// newBreakdown starts the integration at time start, at or before the
// window's begin and the first event.
func newBreakdown(s *Sim, start int64) *Breakdown {
	n := len(s.Threads)
	b := &Breakdown{
		Threads: make([]ThreadTimes, n),
		th:      make([]openInterval, n),
		instr:   newInstrCorrection(s.EventCostNS, n),
	}
	for i := range b.th {
		// Every thread is accounted over the whole process window: a worker
		// created late was a processing unit left idle until then.
		b.th[i].since = start
		b.th[i].region = -1
	}
	return b
}

// Before implements Pass: the integrals step where their rates change
// (Sim.integrate), not at every event, so there is nothing to do.
func (b *Breakdown) Before(s *Sim, e *trace.Event, th int, dt int64) {}

// quiet marks the kinds after which a thread's category cannot change:
// creation and bookkeeping events leave the running task running.
var quiet = func() (q [trace.NumKinds]bool) {
	for _, k := range []trace.Kind{trace.TaskCreate, trace.TaskDeps, trace.TaskDependence, trace.TaskAttr,
		trace.RemoteDepIn, trace.RemoteDepOut, trace.DetachFulfill, trace.MPISend, trace.MPIRecv, trace.MPIRecvPost,
		trace.MPIRequestDone, trace.CollBegin, trace.CollEnd, trace.CollStart, trace.CollComplete, trace.RegionEnter, trace.RegionExit,
		trace.FlushBegin, trace.FlushEnd, trace.WorkBegin, trace.WorkEnd, trace.ThreadBegin, trace.ThreadEnd} {
		q[k] = true
	}
	return
}()

// ompTaskTaskwait mirrors ompt.TaskTaskwait, OMPT's flag of the task a
// taskwait with a depend clause creates.
const ompTaskTaskwait = 0x10

// depWaitCreate reports whether e is the task_create of a taskwait with a
// depend clause: the one task_create that changes a thread's category (its
// creator waits).
func depWaitCreate(e *trace.Event) bool {
	return e.Kind == trace.TaskCreate && e.Args[2]&ompTaskTaskwait != 0
}

// QuietEvent reports whether e leaves every thread's category as it was:
// Quiet(e.Kind), but for a taskwait's task_create (depWaitCreate). Sim.Run
// dispatches that one to every pass.
func QuietEvent(e *trace.Event) bool { return Quiet(e.Kind) && !depWaitCreate(e) }

// After closes the thread's interval if the event changed what it does.
func (b *Breakdown) After(s *Sim, e *trace.Event, th int) {
	if s.QuietOn(e, th) {
		if e.Kind == trace.FlushBegin || e.Kind == trace.FlushEnd {
			b.flush(s, e, th) // its stamps bound its recording cost
			return
		}
		b.instr.event(s, b, th, catWork)
		return
	}
	was := b.th[th].cat
	b.update(s, th)
	b.instr.event(s, b, th, was)
	for _, o := range s.touched {
		b.update(s, o)
	}
}

// QuietOn reports whether event e of thread th leaves every thread's
// category as it was: QuietEvent(e), but for the thread_begin and
// thread_end of a thread the program started itself, which start and end
// its code, and for the initial thread's first event, which starts the
// program's.
func (s *Sim) QuietOn(e *trace.Event, th int) bool {
	return QuietEvent(e) && !s.starting && (s.user == nil || !s.userBoundary(e, th))
}

// userBoundary reports whether e is the thread_begin or thread_end of a
// thread the program started itself (s.user).
func (s *Sim) userBoundary(e *trace.Event, th int) bool {
	return (e.Kind == trace.ThreadBegin || e.Kind == trace.ThreadEnd) && s.UserThread(th)
}

// Quiet reports whether an event of kind k leaves every thread's category
// (working, in MPI, forking or joining, neither) as it was.
func Quiet(k trace.Kind) bool { return k < trace.NumKinds && quiet[k] }

func (b *Breakdown) update(s *Sim, th int) {
	cat, region, num := b.classify(s, th)
	if o := &b.th[th]; cat != o.cat || region != o.region || num != o.num {
		b.close(s, th, s.Now) // which integrates δm up to now: it changes here
		if o.cat == catMPI || o.cat == catMPISetup {
			b.inMPI--
		}
		if cat == catMPI || cat == catMPISetup {
			b.inMPI++
		}
		o.cat, o.region, o.num = cat, region, num
	}
}

// Finish closes every thread at the end of the integration, at or after the
// end of the window.
func (b *Breakdown) Finish(s *Sim) {
	for th := range b.th {
		b.close(s, th, s.Now)
	}
}

func (b *Breakdown) classify(s *Sim, th int) (category, int32, int32) {
	thr := &s.Threads[th]
	region, num := int32(-1), int32(0)
	if len(thr.Teams) > 0 {
		region, num = thr.Teams[0].Region, thr.Teams[0].Num
	}
	if thr.MPI > 0 {
		if thr.Setup {
			return catMPISetup, region, num
		}
		return catMPI, region, num
	}
	if top := thr.Current(); top != NoTask {
		switch tk := &s.Tasks[top]; {
		case tk.State == Running && thr.inSyncRuntime(top):
			return catRuntime, region, num
		case tk.State == Running:
			return catWork, region, num
		case tk.State == Suspended && tk.Wait == WaitParallel:
			// Forking or joining a team: outside any team the time belongs
			// to the region being forked or joined, as its master (0).
			if region < 0 && thr.Fork > 0 {
				region, num = thr.Fork-1, 0
			}
			return catForkJoin, region, num
		}
	}
	return catNonWork, region, num
}

// close accounts thread th's interval from since to now, cut to the window.
func (b *Breakdown) close(s *Sim, th int, now int64) {
	r := s.ReadyTime(now) // and b.m, up to now
	o := &b.th[th]
	from, to := max(o.since, s.Begin), min(now, s.End)
	if to > from {
		b.account(s, th, to-from, r.Over(s, o.since, o.rSince, now), b.m.Over(s, o.since, o.mSince, now))
	}
	o.since = now
	o.rSince = r.Value()
	o.mSince = b.m.Value()
	b.instr.pending[th] = 0
}

// account adds d ns of thread th's current category, ov of them with a task
// ready and im with another thread in MPI, to its times.
func (b *Breakdown) account(s *Sim, th int, d, ov, im int64) {
	t, o := &b.Threads[th], &b.th[th]
	switch o.cat {
	case catWork:
		c := b.instr.take(th, d)
		t.Work += d - c
		t.Instrumentation += c
	case catMPI:
		t.MPI += d
	case catMPISetup:
		t.MPI += d
		t.InitFinalize += d
	case catForkJoin:
		// Not in the region's per-member idleness: TALP's load balance
		// compares the members' waits, and the fork is nobody's wait (TALP
		// books it under scheduling, see Sim.TALP).
		t.ForkJoin += d
		if o.region >= 0 {
			t.Overhead += d
		} else {
			t.OverheadSerial += d
		}
	case catRuntime:
		// Runtime overhead whether or not a task is ready; within the
		// region it is the member's time away from work, as a wait is.
		t.SyncRuntime += d
		ov = d
		fallthrough
	default:
		t.IdleInMPI += im
		if o.region < 0 {
			t.IdleInMPISerial += im
		}
		if r := o.region; r >= 0 {
			t.Overhead += ov
			t.Idle += d - ov
			if reg := &s.Regions[r]; reg.TopLevel && int(o.num) < len(reg.Idle) {
				reg.Idle[o.num] += d
			}
		} else {
			t.OverheadSerial += ov
			t.IdleSerial += d - ov
		}
	}
}

// TALP holds one process's raw TALP components (seed
// talp-pop-hybrid-metrics.txt), summed over its M threads; the per-process
// averages of the seed are these divided by M.
type TALP struct {
	Threads   int   // M
	ElapsedNS int64 // T_i, the process window
	Useful    int64 // Σ_j T^U_{i,j}
	MPI       int64 // Σ_j T^C_{i,j}
	Idle      int64 // Σ_j T^I_{i,j} (idle and runtime overhead)
	Serial    int64 // Σ_j (T^I_{i,j} − Σ_p T^I_{i,j,p})
	// LB is M·T^{I_lb}_i = Σ_p Σ_{j∈team} (T^I_{i,j,p} − min_k T^I_{i,k,p});
	// Sched is M·T^{I_sch}_i = Σ_p |team|·min_k T^I_{i,k,p}. With every
	// thread in every team they are M times the seed's sums.
	LB    int64
	Sched int64
	// Raw components inside Idle, for other conventions: Σ_j ForkJoin (inside
	// Sched: runtime time of a region not caused by imbalance), Σ_j IdleInMPI
	// and Σ_j IdleInMPISerial (the part inside Serial).
	ForkJoin        int64
	IdleInMPI       int64
	IdleInMPISerial int64
}

// regionIdle sums the top-level regions' idle time the way TALP splits it.
type regionIdle struct {
	lb, sched, in int64 // Σ (T^I − min), Σ |team|·min, Σ T^I
}

// add counts region reg (nothing for a nested one, or one without idle
// per member).
func (ri *regionIdle) add(reg *Region) {
	if !reg.TopLevel || len(reg.Idle) == 0 {
		return
	}
	mn := reg.Idle[0]
	for _, v := range reg.Idle {
		mn = min(mn, v)
		ri.in += v
	}
	for _, v := range reg.Idle {
		ri.lb += v - mn
	}
	ri.sched += int64(len(reg.Idle)) * mn
}

// TALP computes the process's TALP components after the simulation.
func (s *Sim) TALP() TALP {
	var t TALP
	t.ElapsedNS = s.End - s.Begin
	var inRegion int64
	for th, tt := range s.Breakdown.Threads {
		if !s.HasEvents(th) {
			continue
		}
		t.Threads++
		t.Useful += tt.Work + tt.Instrumentation // TALP keeps the recorded time
		t.MPI += tt.MPI
		t.Idle += tt.Overhead + tt.Idle + tt.OverheadSerial + tt.IdleSerial
		t.ForkJoin += tt.ForkJoin
		t.IdleInMPI += tt.IdleInMPI
		t.IdleInMPISerial += tt.IdleInMPISerial
	}
	idle := s.retiredIdle // of the regions retired during the simulation
	for i := range s.Regions {
		idle.add(&s.Regions[i])
	}
	t.LB, t.Sched, inRegion = idle.lb, idle.sched, idle.in
	// Team fork and join belong to the region they open or close, and are
	// not load imbalance: scheduling time of the region.
	t.Sched += t.ForkJoin
	t.Serial = t.Idle - inRegion - t.ForkJoin
	return t
}

package gen

import (
	"math"
	"math/rand"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// halo is an MPI + OpenMP iteration: a parallel region (whose team the master
// forks in ForkNS and ends in JoinNS) in which thread j of
// rank i computes ComputeNS scaled by a per-rank and a per-thread imbalance,
// then serial work on the master, then either a neighbour exchange
// (Irecv/Isend to rank±1, Waitall) or an Allreduce; a final Barrier ends the
// run. Message latency is LatencyNS. The schedule is computed exactly, so
// every POP efficiency (TALP formulas, seed talp-pop-hybrid-metrics.txt) and
// the MPI time are known.
type halo struct {
	cfg *Config
	// per rank, per iteration
	regionStart, regionEnd, mpiStart, mpiEnd [][]int64
	// per rank, per iteration, per thread: compute time
	work [][][]int64
	fin  int64 // end of the final barrier (same on every rank)
	bar0 []int64
	// initNS is when MPI_Init returns on every rank; the schedule above
	// runs from there.
	initNS int64
}

// finalizeNS is how long MPI_Finalize takes on rank i.
func (w *halo) finalizeNS(i int) int64 { return int64(i+1) * w.initNS / 4 }

func newHalo(cfg *Config) *halo { return &halo{cfg: cfg} }

const (
	haloTag = 7
)

func (w *halo) plan() error {
	c := w.cfg
	if c.Events > 0 {
		per := int64(c.Ranks) * (6*int64(c.Threads) + 20)
		c.Iterations = int(max(1, c.Events/per))
	}
	R, T, I := c.Ranks, c.Threads, c.Iterations
	rng := rand.New(rand.NewSource(c.Seed))
	alloc := func() [][]int64 {
		a := make([][]int64, R)
		for i := range a {
			a[i] = make([]int64, I)
		}
		return a
	}
	w.regionStart, w.regionEnd, w.mpiStart, w.mpiEnd = alloc(), alloc(), alloc(), alloc()
	w.work = make([][][]int64, R)
	frac := func(i, n int) float64 {
		if n <= 1 {
			return 0
		}
		return float64(i) / float64(n-1)
	}
	for i := 0; i < R; i++ {
		w.work[i] = make([][]int64, I)
		for k := 0; k < I; k++ {
			w.work[i][k] = make([]int64, T)
			for j := 0; j < T; j++ {
				base := float64(c.ComputeNS) * (1 + c.RankImbalance*frac(i, R)) * (1 + c.ThreadImbalance*frac(j, T))
				w.work[i][k][j] = jittered(rng, int64(math.Round(base)), c.Jitter)
			}
		}
	}
	now := make([]int64, R)
	for k := 0; k < I; k++ {
		for i := 0; i < R; i++ {
			w.regionStart[i][k] = now[i]
			var m int64
			for _, d := range w.work[i][k] {
				m = max(m, d)
			}
			w.regionEnd[i][k] = now[i] + c.ForkNS + m + c.JoinNS
			w.mpiStart[i][k] = w.regionEnd[i][k] + c.SerialNS
		}
		for i := 0; i < R; i++ {
			s := w.mpiStart[i][k]
			e := s
			if c.Exchange == "allreduce" {
				for r := 0; r < R; r++ {
					e = max(e, w.mpiStart[r][k]+c.LatencyNS)
				}
				if R == 1 {
					e = s
				}
			} else {
				for _, nb := range []int{i - 1, i + 1} {
					if nb >= 0 && nb < R {
						e = max(e, w.mpiStart[nb][k]+c.LatencyNS)
					}
				}
			}
			w.mpiEnd[i][k] = e
			now[i] = e
		}
	}
	w.bar0 = now
	w.initNS = 2*c.ComputeNS + c.LatencyNS
	w.fin = 0
	for i := 0; i < R; i++ {
		w.fin = max(w.fin, now[i]+c.LatencyNS)
	}
	if R == 1 {
		w.fin = now[0]
	}
	return nil
}

func (w *halo) write(p *proc) {
	c := w.cfg
	i := p.rank
	R, T := c.Ranks, c.Threads
	regionLoc := p.w.AddLocation(trace.Location{File: "halo.c", Line: 40, Col: 1, Func: "iterate"})
	barLoc := p.w.AddLocation(trace.Location{File: "halo.c", Line: 48, Col: 1, Func: "iterate"})
	// The MPI calls' sites: the exchange after the region, the final barrier.
	p.src = "halo.c"
	site := func(line int, fn string) int64 {
		return p.w.AddLocation(trace.Location{File: "halo.c", Line: line, Col: 3, Func: fn})
	}
	allreduceAt, irecvAt, isendAt, waitallAt := site(52, "iterate"), site(55, "exchange"), site(57, "exchange"), site(59, "exchange")
	// MPI_Init runs from 0 to initNS, where the planned schedule begins;
	// after the final barrier MPI_Finalize takes a rank-dependent time.
	// Neither is in the analysis window, so the expected values are the
	// schedule's alone. The clock offsets are taken at thread 0's first and
	// last events.
	end := w.fin + w.finalizeNS(i)
	p.offsets(0, w.initNS+end)
	p.threadBegin(0, 0)
	initial := p.initialTask(0)
	p.mpiEnter(0, 0, "MPI_Init")
	p.shift = w.initNS
	p.mpiExit(0, 0, "MPI_Init")
	for t := 1; t < T; t++ {
		p.threadBegin(t, 0)
	}
	var req int64
	for k := 0; k < c.Iterations; k++ {
		// The team runs from s+ForkNS to b; the master ends the region JoinNS
		// later.
		s, e := w.regionStart[i][k], w.regionEnd[i][k]
		ts, b := s+c.ForkNS, e-c.JoinNS
		par := p.parallelBegin(s, initial, T, regionLoc)
		for t := 0; t < T; t++ {
			it := p.implicitBegin(t, ts, par, T)
			p.syncBegin(t, ts+w.work[i][k][t], ompt.SyncBarrierImplicitParallel, par, it, barLoc)
			p.syncEnd(t, b, ompt.SyncBarrierImplicitParallel, par, it, barLoc)
			p.implicitEnd(t, b, par, it, T)
		}
		p.parallelEnd(e, par, initial, regionLoc)
		ms, me := w.mpiStart[i][k], w.mpiEnd[i][k]
		if c.Exchange == "allreduce" {
			p.mpiEnterAt(0, ms, "MPI_Allreduce", allreduceAt)
			p.emit(0, trace.CollBegin, ms, int64(trace.CollAllreduce), 0, -1, 8, 8)
			p.emit(0, trace.CollEnd, me, int64(trace.CollAllreduce), 0, -1)
			p.mpiExit(0, me, "MPI_Allreduce")
			continue
		}
		var nbs []int
		for _, nb := range []int{i - 1, i + 1} {
			if nb >= 0 && nb < R {
				nbs = append(nbs, nb)
			}
		}
		reqs := make([]int64, 0, 4)
		for _, nb := range nbs {
			req++
			id := trace.MakeID(0, req)
			reqs = append(reqs, id)
			p.mpiEnterAt(0, ms, "MPI_Irecv", irecvAt)
			p.emit(0, trace.MPIRecvPost, ms, int64(nb), haloTag, 0, id)
			p.mpiExit(0, ms, "MPI_Irecv")
		}
		for _, nb := range nbs {
			req++
			id := trace.MakeID(0, req)
			reqs = append(reqs, id)
			p.mpiEnterAt(0, ms, "MPI_Isend", isendAt)
			p.emit(0, trace.MPISend, ms, int64(nb), haloTag, 0, c.Bytes, id)
			p.mpiExit(0, ms, "MPI_Isend")
		}
		p.mpiEnterAt(0, ms, "MPI_Waitall", waitallAt)
		for n, nb := range nbs {
			p.emit(0, trace.MPIRecv, me, int64(nb), haloTag, 0, c.Bytes, reqs[n])
		}
		for n := range nbs {
			p.emit(0, trace.MPIRequestDone, me, reqs[len(nbs)+n])
		}
		p.mpiExit(0, me, "MPI_Waitall")
	}
	b := w.bar0[i]
	p.mpiEnter(0, b, "MPI_Barrier")
	p.emit(0, trace.CollBegin, b, int64(trace.CollBarrier), 0, -1, 0, 0)
	p.emit(0, trace.CollEnd, w.fin, int64(trace.CollBarrier), 0, -1)
	p.mpiExit(0, w.fin, "MPI_Barrier")
	p.mpiEnter(0, w.fin, "MPI_Finalize")
	p.mpiExit(0, end, "MPI_Finalize")
	p.initialTaskEnd(end, initial)
	for t := 0; t < T; t++ {
		p.threadEnd(t, end)
	}
}

// expected computes TALP's metrics from the planned schedule: U is compute
// (region compute and the master's serial work), C the master's MPI time, I
// everything else, split by parallel region. The master's fork and join
// (ForkNS + JoinNS per region) are runtime overhead inside the region it
// opens (docs/report-schema.md): scheduling time for TALP, overhead for
// POT; the workers, outside the team meanwhile, idle serially.
// Workers idle serially through every MPI call of the master.
func (w *halo) expected() Expected {
	c := w.cfg
	R, T, I := c.Ranks, c.Threads, c.Iterations
	M := float64(T)
	var sumT, sumU, sumC, sumI, sumIser, sumIlb, sumIsch float64
	maxTminusC := 0.0
	e := Expected{}
	rowsB := make([]any, R)
	rowsP := make([]any, R)
	var bw, bm, bi, bis, bt, bov, bim int64
	var sumFJ, sumInMPI float64
	for i := 0; i < R; i++ {
		elapsed := w.fin
		var u, cc, idle, idleIn, ov int64 // sums over threads
		var ilb, isch float64             // per process (thread-averaged)
		fj := c.ForkNS + c.JoinNS
		for k := 0; k < I; k++ {
			team := w.regionEnd[i][k] - w.regionStart[i][k] - fj
			minIdle := int64(math.MaxInt64)
			var sumIdle int64
			for j := 0; j < T; j++ {
				d := w.work[i][k][j]
				u += d
				id := team - d
				sumIdle += id
				minIdle = min(minIdle, id)
			}
			idleIn += sumIdle
			ov += fj
			ilb += float64(sumIdle)/M - float64(minIdle)
			isch += float64(minIdle)
			u += c.SerialNS // master's serial work
			cc += w.mpiEnd[i][k] - w.mpiStart[i][k]
		}
		cc += w.fin - w.bar0[i] // final barrier
		total := int64(T) * elapsed
		idle = total - u - cc - ov
		iser := float64(idle-idleIn) / M
		Ti := float64(elapsed)
		Ui, Ci, Ii := float64(u)/M, float64(cc)/M, float64(idle+ov)/M
		isch += float64(ov) / M  // fork/join: region time not caused by imbalance
		inMPI := int64(T-1) * cc // every worker, serially idle, through each MPI call
		sumFJ += float64(ov) / M
		sumInMPI += float64(inMPI) / M
		sumT += Ti
		sumU += Ui
		sumC += Ci
		sumI += Ii
		sumIser += iser
		sumIlb += ilb
		sumIsch += isch
		maxTminusC = math.Max(maxTminusC, Ti-Ci)
		rowsB[i] = map[string]any{"rank": i, "work_ns": u, "mpi_ns": cc, "idleness_ns": idle, "overhead_ns": ov, "thread_time_ns": total, "idleness_serial_ns": idle - idleIn,
			"fork_join_ns": ov, "idle_during_mpi_ns": inMPI, "idle_serial_during_mpi_ns": inMPI}
		bov += ov
		bim += inMPI
		bw += u
		bm += cc
		bi += idle
		bis += idle - idleIn
		bt += total
		rowsP[i] = map[string]any{"rank": i, "elapsed_ns": elapsed,
			"omp_parallel_efficiency":      (Ti - Ii) / Ti,
			"omp_serialization_efficiency": (Ti - iser) / Ti,
			"omp_load_balance":             (Ti - iser - ilb) / (Ti - iser),
			"omp_scheduling_efficiency":    (Ti - iser - ilb - isch) / (Ti - iser - ilb),
		}
	}
	N := float64(R)
	Tt, U, C, Iser, Ilb, Isch, Iall := sumT/N, sumU/N, sumC/N, sumIser/N, sumIlb/N, sumIsch/N, sumI/N
	set := func(k string, v float64) {
		e.set("pop."+k, v)
		e.tol("pop."+k, 1e-6)
	}
	set("omp_serialization_efficiency", (Tt-Iser)/Tt)
	set("omp_load_balance", (Tt-Iser-Ilb)/(Tt-Iser))
	set("omp_scheduling_efficiency", (Tt-Iser-Ilb-Isch)/(Tt-Iser-Ilb))
	set("omp_parallel_efficiency", (Tt-Iall)/Tt)
	set("mpi_parallel_efficiency", (Tt-C)/Tt)
	set("mpi_load_balance", (Tt-C)/maxTminusC)
	set("mpi_communication_efficiency", maxTminusC/Tt)
	set("hybrid_efficiency", U/Tt)
	e.set("pop.elapsed_ns", int64(math.Round(Tt)))
	e.set("pop.useful_ns", int64(math.Round(U)))
	e.set("pop.mpi_ns", int64(math.Round(C)))
	e.set("pop.per_process", rowsP)
	for _, k := range []string{"omp_parallel_efficiency", "omp_serialization_efficiency", "omp_load_balance", "omp_scheduling_efficiency"} {
		e.tol("pop.per_process."+k, 1e-6)
	}
	e.tol("pop.elapsed_ns", 1)
	e.tol("pop.useful_ns", 1)
	e.tol("pop.mpi_ns", 1)
	e.set("breakdown.work_ns", bw)
	e.set("breakdown.mpi_ns", bm)
	e.set("breakdown.idleness_ns", bi)
	e.set("breakdown.idleness_serial_ns", bis)
	e.set("breakdown.overhead_ns", bov)
	e.set("breakdown.fork_join_ns", bov)
	e.set("breakdown.idle_during_mpi_ns", bim)
	e.set("breakdown.idle_serial_during_mpi_ns", bim)
	e.set("pop.fork_join_ns", int64(math.Round(sumFJ/N)))
	e.set("pop.idle_during_mpi_ns", int64(math.Round(sumInMPI/N)))
	e.set("pop.idle_serial_during_mpi_ns", int64(math.Round(sumInMPI/N)))
	e.tol("pop.fork_join_ns", 1)
	e.tol("pop.idle_during_mpi_ns", 1)
	e.tol("pop.idle_serial_during_mpi_ns", 1)
	e.set("breakdown.thread_time_ns", bt)
	e.set("breakdown.per_process", rowsB)
	w.expectWaits(e)
	e.set("trace.duration_ns", w.initNS+w.fin+w.finalizeNS(R-1))
	e.set("trace.window.duration_ns", w.fin)
	e.set("trace.window.bounds", "mpi")
	return e
}

// expectWaits sets the wait states (Scalasca's patterns, package
// waitstate) the schedule implies. Every rank enters its exchange at
// mpiStart: a neighbour exchange's Waitall waits (Late Sender) until the
// later neighbour entered its Isend, an allreduce (Wait at N×N) and the
// final barrier (Wait at Barrier) until the last rank entered. Latency
// only lengthens the calls, so no wait is cut by a call's end.
func (w *halo) expectWaits(e Expected) {
	c := w.cfg
	R, I := c.Ranks, c.Iterations
	var tls, tnxn, tbar, tmpi, tcalls int64
	rows := make([]any, R)
	// The direct cause of a wait is the process waited for: the later
	// neighbour, the last rank into the collective (ties: the lowest).
	caused := make([]int64, R)
	charge := func(cause int, wait int64) { caused[cause] += wait }
	lastBar, lastRank := int64(math.MinInt64), 0
	for i := 0; i < R; i++ {
		if w.bar0[i] > lastBar {
			lastBar, lastRank = w.bar0[i], i
		}
	}
	if R > 1 {
		for i := 0; i < R; i++ {
			caused[lastRank] += lastBar - w.bar0[i]
		}
	}
	for i := 0; i < R; i++ {
		var ls, nxn, bar, mpi, calls int64
		for k := 0; k < I; k++ {
			ms := w.mpiStart[i][k]
			mpi += w.mpiEnd[i][k] - ms
			// Calls count when they begin inside the window, which
			// ends at fin.
			in := int64(0)
			if ms < w.fin {
				in = 1
			}
			if c.Exchange == "allreduce" {
				calls += in
				if R > 1 {
					last, who := int64(math.MinInt64), 0
					for r := 0; r < R; r++ {
						if w.mpiStart[r][k] > last {
							last, who = w.mpiStart[r][k], r
						}
					}
					nxn += last - ms
					charge(who, last-ms)
				}
				continue
			}
			last, who := ms, -1
			nbs := 0
			for _, nb := range []int{i - 1, i + 1} {
				if nb >= 0 && nb < R {
					nbs++
					if t := w.mpiStart[nb][k]; t > last {
						last, who = t, nb
					}
				}
			}
			if who >= 0 {
				charge(who, last-ms)
			}
			calls += in * int64(2*nbs+1) // Irecv and Isend per neighbour, Waitall
			ls += last - ms
		}
		mpi += w.fin - w.bar0[i]
		if w.bar0[i] < w.fin {
			calls++ // the final barrier
		}
		if R > 1 {
			bar = lastBar - w.bar0[i]
		}
		rows[i] = map[string]any{"rank": i, "mpi_ns": mpi, "calls": calls, "late_sender_ns": ls, "wait_nxn_ns": nxn,
			"wait_barrier_ns": bar, "late_receiver_ns": 0, "late_broadcast_ns": 0, "early_reduce_ns": 0,
			"other_ns": mpi - ls - nxn - bar}
		tls += ls
		tnxn += nxn
		tbar += bar
		tmpi += mpi
		tcalls += calls
	}
	short, long := w.delayCosts()
	for i := 0; i < R; i++ {
		rows[i].(map[string]any)["caused_ns"] = caused[i]
		rows[i].(map[string]any)["delay_ns"] = int64(math.Round(short[i]))
		if long := int64(math.Round(long[i])); long != 0 {
			// The report omits a zero long-term cost.
			rows[i].(map[string]any)["long_term_ns"] = long
		}
	}
	e.set("wait_states.mpi_ns", tmpi)
	e.set("wait_states.calls", tcalls)
	e.set("wait_states.late_sender_ns", tls)
	e.set("wait_states.wait_nxn_ns", tnxn)
	e.set("wait_states.wait_barrier_ns", tbar)
	e.set("wait_states.late_receiver_ns", 0)
	e.set("wait_states.late_broadcast_ns", 0)
	e.set("wait_states.early_reduce_ns", 0)
	e.set("wait_states.other_ns", tmpi-tls-tnxn-tbar)
	e.set("wait_states.per_process", rows)
	// Corrected times are exact to the nanosecond per event; allow 1 ns
	// per call charged (skew and drift round once per event).
	tol := float64(tcalls)
	e.tol("wait_states.per_process.caused_ns", tol)
	e.tol("wait_states.per_process.delay_ns", tol)
	e.tol("wait_states.per_process.long_term_ns", tol)
	for _, k := range []string{"mpi_ns", "late_sender_ns", "wait_nxn_ns", "wait_barrier_ns", "other_ns"} {
		e.tol("wait_states."+k, tol)
		e.tol("wait_states.per_process."+k, tol)
	}
}

// delayCosts returns per rank the short-term and long-term delay costs of
// the schedule (delaymodel.go). Each rank's calls: MPI_Init, per iteration
// its exchange (an MPI_Irecv and an MPI_Isend per neighbour, then
// MPI_Waitall) or MPI_Allreduce, the final MPI_Barrier. Before an
// iteration's first call the master ran the parallel region (fork and
// join included) and its serial work; the calls of an exchange follow
// each other at once. A Waitall waits for the later neighbour (the lower
// rank on ties), synchronizing with that neighbour's Isend to it; an
// Allreduce and the barrier synchronize every rank, waiting for the last
// (the lowest rank on ties). Every call of a collective ends at once, so
// no completion time is left but the Waitall's after the Isend it waited
// for.
func (w *halo) delayCosts() (short, long []float64) {
	c := w.cfg
	R, I := c.Ranks, c.Iterations
	if R == 1 {
		return make([]float64, 1), make([]float64, 1)
	}
	calls := make([][]dmCall, R)
	isend := make([][][]int, R) // per rank, iteration, neighbour (0: i−1, 1: i+1): its Isend's call
	coll := make([][]int, R)    // per rank, iteration: its Allreduce's or Waitall's call
	for i := 0; i < R; i++ {
		calls[i] = make([]dmCall, 0, 2+5*I)
		calls[i] = append(calls[i], dmCall{site: "MPI_Init", enter: -w.initNS, exit: 0, syncs: []dmSync{everyone(0)}})
		isend[i], coll[i] = make([][]int, I), make([]int, I)
		prevEnd := int64(0)
		for k := 0; k < I; k++ {
			ms, me := w.mpiStart[i][k], w.mpiEnd[i][k]
			before := []dmCode{{"region", w.regionEnd[i][k] - w.regionStart[i][k]}, {"serial", ms - w.regionEnd[i][k]}}
			if w.regionStart[i][k] != prevEnd {
				panic("gen: halo's region does not follow the previous call")
			}
			prevEnd = me
			if c.Exchange == "allreduce" {
				coll[i][k] = len(calls[i])
				calls[i] = append(calls[i], dmCall{site: "MPI_Allreduce", enter: ms, exit: me, codes: before, syncs: []dmSync{everyone(0)}})
				continue
			}
			isend[i][k] = []int{-1, -1}
			for _, fn := range []string{"MPI_Irecv", "MPI_Isend"} {
				for n, nb := range []int{i - 1, i + 1} {
					if nb < 0 || nb >= R {
						continue
					}
					if fn == "MPI_Isend" {
						isend[i][k][n] = len(calls[i])
					}
					calls[i] = append(calls[i], dmCall{site: fn, enter: ms, exit: ms, codes: before})
					before = nil
				}
			}
			coll[i][k] = len(calls[i])
			calls[i] = append(calls[i], dmCall{site: "MPI_Waitall", enter: ms, exit: me})
		}
		calls[i] = append(calls[i], dmCall{site: "MPI_Barrier", enter: w.bar0[i], exit: w.fin, syncs: []dmSync{everyone(0)}})
	}
	for k := 0; k < I; k++ {
		if c.Exchange == "allreduce" {
			last, who := int64(math.MinInt64), 0
			for r := 0; r < R; r++ {
				if w.mpiStart[r][k] > last {
					last, who = w.mpiStart[r][k], r
				}
			}
			for i := 0; i < R; i++ {
				if wt := last - w.mpiStart[i][k]; wt > 0 {
					s := &calls[i][coll[i][k]].syncs[0]
					s.wait, s.pat, s.cause, s.causeCall, s.coll = wt, "wait_nxn", who, coll[who][k], true
				}
			}
			continue
		}
		for i := 0; i < R; i++ {
			ms := w.mpiStart[i][k]
			last, who := ms, -1
			for _, nb := range []int{i - 1, i + 1} {
				if nb >= 0 && nb < R && w.mpiStart[nb][k] > last {
					last, who = w.mpiStart[nb][k], nb
				}
			}
			if who < 0 {
				continue
			}
			// who's Isend to i: its neighbour i−1 is index 0.
			n := 0
			if i > who {
				n = 1
			}
			sc := isend[who][k][n]
			send := &calls[who][sc]
			send.syncs = append(send.syncs, noWait(max(0, send.exit-w.mpiEnd[i][k]), i))
			wa := &calls[i][coll[i][k]]
			wa.syncs = append(wa.syncs, dmSync{partners: []int{who}, wait: last - ms, pat: "late_sender", cause: who,
				causeCall: sc, causeSync: len(send.syncs) - 1, compl: max(0, w.mpiEnd[i][k]-send.exit)})
		}
	}
	lastBar, lastRank := int64(math.MinInt64), 0
	for i := 0; i < R; i++ {
		if w.bar0[i] > lastBar {
			lastBar, lastRank = w.bar0[i], i
		}
	}
	for i := 0; i < R; i++ {
		if wt := lastBar - w.bar0[i]; wt > 0 {
			s := &calls[i][len(calls[i])-1].syncs[0]
			s.wait, s.pat, s.cause, s.causeCall, s.coll = wt, "wait_barrier", lastRank, len(calls[lastRank])-1, true
		}
	}
	return delayCosts(calls)
}

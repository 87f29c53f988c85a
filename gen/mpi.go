package gen

import (
	"fmt"
	"math"

	"github.com/ptrace-dev/ptrace/trace"
)

// pureMPI is a pure MPI program: one thread per process and no OpenMP
// event at all, as the collector records a program that never starts an
// OpenMP runtime. Iteration k pairs rank 2m (the sender, a) with rank
// 2m+1 (the receiver, b) in one of three protocols, each as real codes
// write it:
//
//   - k%3 == 0, blocking: a computes, MPI_Ssend; b computes, MPI_Recv;
//   - k%3 == 1, a receive posted early (HPCG): b posts MPI_Irecv, computes,
//     MPI_Wait; a computes, MPI_Send;
//   - k%3 == 2, a receive posted late (LULESH): b computes, MPI_Irecv,
//     MPI_Wait; a computes, MPI_Isend, MPI_Wait.
//
// The side that computes ComputeNS·RankImbalance longer alternates every
// three iterations (the sender for k/3 even, the receiver for k/3 odd), so
// each protocol has a Late Sender and a late receiver; the last one makes
// a Late Receiver wait (Scalasca's definition: a blocking send, or the wait
// completing an MPI_Isend, that began before the receive began and ended
// after) in the blocking and late-receive protocols only: an Irecv posted
// early lets the send complete. Then every rank computes ComputeNS scaled
// by its rank (1 + RankImbalance·i/(R−1)) and enters MPI_Allreduce (Wait
// at N×N); after the last iteration a reverse imbalance before
// MPI_Barrier (Wait at Barrier). A message or collective takes LatencyNS
// after its last partner arrives; a rank without a partner (the last of an
// odd number) skips the exchange. The initial thread computes whenever it
// is outside MPI, so work is the window less MPI time, and every value of
// the report follows from the schedule.
type pureMPI struct {
	cfg    *Config
	initNS int64
	fin    int64 // when the final barrier ends: the window's end
	calls  [][]mpiCall
	nbc    bool // the nbc workload (nbc.go)
	// pathMPI bounds nbc's MPI time on the critical path (nbcPath).
	pathMPI [2]int64
}

// mpiCall is one MPI call of a rank's schedule, with the events inside it
// and what the wait states make of it.
type mpiCall struct {
	fn          string
	enter, exit int64
	evs         []mpiEvent
	// The call's wait state and the rank it waited for (−1: none).
	pat   string
	wait  int64
	cause int
	// For a wait: the call of the cause's that the wait is measured
	// against (the delay cost's), by index in its schedule.
	causeCall int
	// nbc is the nonblocking collective an MPI_Wait of nbc completes.
	nbc *nbcColl
}

type mpiEvent struct {
	k    trace.Kind
	t    int64
	args []int64
}

const mpiTag = 11

func newPureMPI(cfg *Config) *pureMPI { return &pureMPI{cfg: cfg} }

// mpiProtocols is how many exchange protocols the iterations cycle through.
const mpiProtocols = 3

func (w *pureMPI) plan() error {
	if w.nbc {
		return w.planNBC()
	}
	c := w.cfg
	R := c.Ranks
	if c.Events > 0 {
		// about 9 events a rank and iteration
		c.Iterations = int(max(1, c.Events/(9*int64(R))))
	}
	I := c.Iterations
	C, L := c.ComputeNS, c.LatencyNS
	delta := int64(math.Round(float64(C) * c.RankImbalance))
	w.calls = make([][]mpiCall, R)
	now := make([]int64, R) // when each rank's next computation begins
	add := func(r int, call mpiCall) int {
		call.cause = -1 // until setWait
		w.calls[r] = append(w.calls[r], call)
		return len(w.calls[r]) - 1
	}
	var req int64
	newReq := func() int64 { req++; return trace.MakeID(0, req) }
	for k := 0; k < I; k++ {
		for a := 0; a+1 < R; a += 2 {
			b := a + 1
			s := now[a] // == now[b]: the iteration begins after a collective
			ca, cb := C, C
			if (k/mpiProtocols)%2 == 0 {
				ca += delta
			} else {
				cb += delta
			}
			ta, tb := s+ca, s+cb
			send := func(t, request int64) mpiEvent {
				return mpiEvent{trace.MPISend, t, []int64{int64(b), mpiTag, 0, c.Bytes, request}}
			}
			recv := func(t, request int64) mpiEvent {
				return mpiEvent{trace.MPIRecv, t, []int64{int64(a), mpiTag, 0, c.Bytes, request}}
			}
			switch k % mpiProtocols {
			case 0: // MPI_Ssend / MPI_Recv
				e := max(ta, tb) + L
				ia := add(a, mpiCall{fn: "MPI_Ssend", enter: ta, exit: e, evs: []mpiEvent{send(ta, 0)}})
				ib := add(b, mpiCall{fn: "MPI_Recv", enter: tb, exit: e, evs: []mpiEvent{recv(e, 0)}})
				w.lateWaits(a, ia, b, ib, ta, tb, ia)
				now[a], now[b] = e, e
			case 1: // MPI_Irecv early, MPI_Send, MPI_Wait
				rq := newReq()
				add(b, mpiCall{fn: "MPI_Irecv", enter: s, exit: s, evs: []mpiEvent{{trace.MPIRecvPost, s, []int64{int64(a), mpiTag, 0, rq}}}})
				ea := ta + L // the receive is posted: the send completes
				eb := max(tb, ea)
				ia := add(a, mpiCall{fn: "MPI_Send", enter: ta, exit: ea, evs: []mpiEvent{send(ta, 0)}})
				if c.PollNS > 0 {
					now[a], now[b] = ea, w.pollLoop(b, tb, ea, rq, recv(0, rq), a, ia, ta)
					break
				}
				ib := add(b, mpiCall{fn: "MPI_Wait", enter: tb, exit: eb, evs: []mpiEvent{recv(eb, rq)}})
				if ta > tb {
					w.setWait(b, ib, "late_sender", ta-tb, a, ia)
				}
				now[a], now[b] = ea, eb
			default: // MPI_Irecv late, MPI_Isend, MPI_Wait
				rq, sq := newReq(), newReq()
				e := max(ta, tb) + L
				ia0 := add(a, mpiCall{fn: "MPI_Isend", enter: ta, exit: ta, evs: []mpiEvent{send(ta, sq)}})
				ib0 := add(b, mpiCall{fn: "MPI_Irecv", enter: tb, exit: tb, evs: []mpiEvent{{trace.MPIRecvPost, tb, []int64{int64(a), mpiTag, 0, rq}}}})
				ia := add(a, mpiCall{fn: "MPI_Wait", enter: ta, exit: e, evs: []mpiEvent{{trace.MPIRequestDone, e, []int64{sq}}}})
				ib := add(b, mpiCall{fn: "MPI_Wait", enter: tb, exit: e, evs: []mpiEvent{recv(e, rq)}})
				w.lateWaits(a, ia, b, ib, ta, tb, ia0)
				// The receiver's wait is measured against its Irecv.
				if w.calls[a][ia].pat == "late_receiver" {
					w.calls[a][ia].causeCall = ib0
				}
				now[a], now[b] = e, e
			}
		}
		// MPI_Allreduce, entered in rank order of imbalance.
		last, who := int64(math.MinInt64), 0
		enter := make([]int64, R)
		for i := range enter {
			enter[i] = now[i] + scaled(C, c.RankImbalance, i, R)
			if enter[i] > last {
				last, who = enter[i], i
			}
		}
		w.collective("MPI_Allreduce", trace.CollAllreduce, "wait_nxn", enter, last, who, now)
	}
	// MPI_Barrier after a reverse imbalance.
	last, who := int64(math.MinInt64), 0
	enter := make([]int64, R)
	for i := range enter {
		enter[i] = now[i] + scaled(C, c.RankImbalance, R-1-i, R)
		if enter[i] > last {
			last, who = enter[i], i
		}
	}
	w.collective("MPI_Barrier", trace.CollBarrier, "wait_barrier", enter, last, who, now)
	w.fin = now[0]
	w.initNS = 2*C + L
	return nil
}

// pollLoop adds rank r's loop of MPI_Test calls (--poll) completing the
// receive of request rq, whose message arrives at arrive, sent by rank
// sender's call sendCall entered at sendEnter: from from on, tests of
// PollNS each PollGapNS apart (computation between them) until the first
// one entered at or after the arrival, which completes the receive (done,
// at its exit, when it returns). The first test that does not complete it
// carries its mpi_polled, as the collector writes it. The Late Sender
// (docs/report-schema.md, "polled waits") is each polling test's time
// before the send's enter, no computation between the tests; the
// completing test entered after the send and waits for nothing itself,
// but holds the instance and the whole wait (cause, delay costs).
func (w *pureMPI) pollLoop(r int, from, arrive, rq int64, done mpiEvent, sender, sendCall int, sendEnter int64) int64 {
	D, G := w.cfg.PollNS, w.cfg.PollGapNS
	var wait int64
	for j := int64(0); ; j++ {
		b := from + j*(D+G)
		e := b + D
		if b >= arrive {
			done.t = e
			w.calls[r] = append(w.calls[r], mpiCall{fn: "MPI_Test", enter: b, exit: e, cause: -1, evs: []mpiEvent{done}})
			if wait > 0 {
				w.setWait(r, len(w.calls[r])-1, "late_sender", wait, sender, sendCall)
			}
			return e
		}
		var evs []mpiEvent
		if j == 0 {
			evs = []mpiEvent{{trace.MPIPolled, b, []int64{rq}}}
		}
		w.calls[r] = append(w.calls[r], mpiCall{fn: "MPI_Test", enter: b, exit: e, cause: -1, evs: evs})
		wait += max(0, min(e, sendEnter)-b)
	}
}

// scaled is ComputeNS scaled for rank i of R by 1 + imb·i/(R−1).
func scaled(C int64, imb float64, i, R int) int64 {
	if R <= 1 {
		return C
	}
	return int64(math.Round(float64(C) * (1 + imb*float64(i)/float64(R-1))))
}

// lateWaits sets the waits of an exchange whose send call (a's ia, its
// send leaving at ta from call sendCall) completes with the receive call
// (b's ib, begun at tb): the later of the two waits for the other. The
// send waited for the receiver only if its call ended after the receive
// began (Scalasca's Late Receiver): with no latency it ends as the
// receive begins, which is no wait.
func (w *pureMPI) lateWaits(a, ia, b, ib int, ta, tb int64, sendCall int) {
	switch {
	case ta > tb:
		w.setWait(b, ib, "late_sender", ta-tb, a, sendCall)
	case tb > ta && w.calls[a][ia].exit > tb:
		w.setWait(a, ia, "late_receiver", tb-ta, b, ib)
	}
}

func (w *pureMPI) setWait(r, k int, pat string, wait int64, cause, causeCall int) {
	cl := &w.calls[r][k]
	cl.pat, cl.wait, cl.cause, cl.causeCall = pat, wait, cause, causeCall
}

// collective adds a collective every rank enters at enter[i]; it ends
// LatencyNS after the last (who, at last) for all, when now becomes that.
func (w *pureMPI) collective(fn string, op trace.CollOp, pat string, enter []int64, last int64, who int, now []int64) {
	R := len(enter)
	e := last + w.cfg.LatencyNS
	if R == 1 {
		e = last
	}
	// The cause's own call in this collective: appended first.
	idx := make([]int, R)
	for i := range enter {
		idx[i] = len(w.calls[i])
		sent := int64(8)
		if op == trace.CollBarrier {
			sent = 0
		}
		w.calls[i] = append(w.calls[i], mpiCall{fn: fn, enter: enter[i], exit: e, cause: -1, evs: []mpiEvent{
			{trace.CollBegin, enter[i], []int64{int64(op), 0, -1, sent, sent}},
			{trace.CollEnd, e, []int64{int64(op), 0, -1}},
		}})
		now[i] = e
	}
	if R == 1 {
		return
	}
	for i := range enter {
		if wt := last - enter[i]; wt > 0 {
			w.setWait(i, idx[i], pat, wt, who, idx[who])
		}
	}
}

func (w *pureMPI) write(p *proc) {
	c := w.cfg
	i := p.rank
	// MPI_Init runs from 0 to initNS; the schedule runs from there. After
	// the final barrier MPI_Finalize takes a rank-dependent time. The
	// clock offsets are taken at the first and last events.
	fine := w.fin + int64(i+1)*c.LatencyNS
	p.offsets(0, w.initNS+fine)
	p.mpiEnter(0, 0, "MPI_Init")
	p.shift = w.initNS
	p.mpiExit(0, 0, "MPI_Init")
	for _, cl := range w.calls[i] {
		p.mpiEnter(0, cl.enter, cl.fn)
		for _, e := range cl.evs {
			p.emit(0, e.k, e.t, e.args...)
		}
		p.mpiExit(0, cl.exit, cl.fn)
	}
	p.mpiEnter(0, w.fin, "MPI_Finalize")
	p.mpiExit(0, fine, "MPI_Finalize")
}

// delayCosts returns per rank the short-term and long-term delay costs of
// the schedule (delaymodel.go). Each rank runs MPI_Init, then its calls,
// computing in serial code whenever it is outside MPI. A Late Sender's
// receive synchronizes with the call that sent (the MPI_Ssend, MPI_Send or
// MPI_Isend), its completion the receive's exit less the send's; a Late
// Receiver's send (the MPI_Ssend, or the MPI_Wait of an MPI_Isend) with
// the call the receive began in (the MPI_Recv, or the MPI_Irecv), its
// completion, as Scalasca counts it, its exit less the receive's when that
// is later (else 0); a collective synchronizes every rank, all leaving at
// once; an MPI_Wait of nbc has the points of nbcSync (nbc.go).
func (w *pureMPI) delayCosts() (short, long []float64) {
	R := len(w.calls)
	calls := make([][]dmCall, R)
	for r := range calls {
		// A call path is the function and its call site: write gives each
		// function of a rank its own line, in the order they first come.
		sites := map[string]string{}
		site := func(fn string) string {
			if s, ok := sites[fn]; ok {
				return s
			}
			sites[fn] = fmt.Sprintf("%s at line %d", fn, len(sites))
			return sites[fn]
		}
		calls[r] = make([]dmCall, 0, 1+len(w.calls[r]))
		calls[r] = append(calls[r], dmCall{site: site("MPI_Init"), enter: -w.initNS, exit: 0, syncs: []dmSync{everyone(0)}})
		prev := int64(0)
		for _, cl := range w.calls[r] {
			calls[r] = append(calls[r], dmCall{site: site(cl.fn), enter: cl.enter, exit: cl.exit, codes: []dmCode{{"serial", cl.enter - prev}}})
			prev = cl.exit
		}
	}
	for r := range w.calls {
		for k := range w.calls[r] {
			cl := &w.calls[r][k]
			me := &calls[r][k+1]
			if cl.nbc != nil {
				w.nbcSync(calls, r, k)
				continue
			}
			if cl.fn == "MPI_Allreduce" || cl.fn == "MPI_Barrier" {
				me.syncs = []dmSync{everyone(0)}
				if cl.pat != "" {
					s := &me.syncs[0]
					s.wait, s.pat, s.cause, s.causeCall, s.coll = cl.wait, cl.pat, cl.cause, cl.causeCall+1, true
				}
				continue
			}
			if cl.pat == "" {
				continue
			}
			peer := &calls[cl.cause][cl.causeCall+1]
			compl := max(0, me.exit-peer.exit)
			if cl.pat == "late_receiver" {
				compl = min(0, me.exit-peer.exit)
			}
			peer.syncs = append(peer.syncs, noWait(max(0, peer.exit-me.exit), r))
			me.syncs = append(me.syncs, dmSync{partners: []int{cl.cause}, wait: cl.wait, pat: cl.pat, cause: cl.cause,
				causeCall: cl.causeCall + 1, causeSync: len(peer.syncs) - 1, compl: compl})
		}
	}
	return delayCosts(calls)
}

// causes sums the schedule's waits by the rank waited for and pattern.
func (w *pureMPI) causes() map[WaitCause]int64 {
	m := map[WaitCause]int64{}
	for r := range w.calls {
		for _, cl := range w.calls[r] {
			if cl.pat != "" {
				m[WaitCause{cl.cause, cl.pat}] += cl.wait
			}
		}
	}
	return m
}

// patterns are the wait states the workload's calls can have.
func (w *pureMPI) patterns() []string {
	if w.nbc {
		return []string{"late_sender", "late_receiver", "wait_nxn", "wait_barrier", "late_broadcast", "wait_for_progress"}
	}
	return []string{"late_sender", "late_receiver", "wait_nxn", "wait_barrier"}
}

func (w *pureMPI) expected() Expected {
	c := w.cfg
	R := c.Ranks
	e := Expected{}
	T := w.fin
	var sumU, sumC float64
	maxTminusC := 0.0
	rowsB, rowsP, rowsW := make([]any, R), make([]any, R), make([]any, R)
	var bw, bm, bt int64
	totals := map[string]int64{}
	var tmpi, tcalls int64
	caused := make([]int64, R)
	for i := 0; i < R; i++ {
		var mpi, calls int64
		waits := map[string]int64{}
		for k := range w.calls[i] {
			cl := &w.calls[i][k]
			mpi += cl.exit - cl.enter
			if cl.enter < T {
				calls++ // a call counts when it begins inside the window
			}
			if cl.pat != "" {
				waits[cl.pat] += cl.wait
				caused[cl.cause] += cl.wait
			}
		}
		work := T - mpi
		rowsB[i] = map[string]any{"rank": i, "work_ns": work, "mpi_ns": mpi, "idleness_ns": 0, "overhead_ns": 0, "thread_time_ns": T}
		rowsP[i] = map[string]any{"rank": i, "elapsed_ns": T}
		row := map[string]any{"rank": i, "mpi_ns": mpi, "calls": calls, "late_broadcast_ns": 0, "early_reduce_ns": 0}
		other := mpi
		for _, pat := range w.patterns() {
			if waits[pat] == 0 && pat == "wait_for_progress" {
				continue // absent when 0
			}
			row[pat+"_ns"] = waits[pat]
			totals[pat] += waits[pat]
			other -= waits[pat]
		}
		row["other_ns"] = other
		rowsW[i] = row
		bw, bm, bt = bw+work, bm+mpi, bt+T
		tmpi += mpi
		tcalls += calls
		sumU += float64(work)
		sumC += float64(mpi)
		maxTminusC = math.Max(maxTminusC, float64(T-mpi))
	}
	short, long := w.delayCosts()
	for i := 0; i < R; i++ {
		rowsW[i].(map[string]any)["caused_ns"] = caused[i]
		rowsW[i].(map[string]any)["delay_ns"] = int64(math.Round(short[i]))
		if long := int64(math.Round(long[i])); long != 0 {
			rowsW[i].(map[string]any)["long_term_ns"] = long // the report omits a zero
		}
	}
	N, Tf := float64(R), float64(T)
	U, Cm := sumU/N, sumC/N
	set := func(k string, v float64) {
		e.set("pop."+k, v)
		e.tol("pop."+k, 1e-9)
	}
	set("mpi_parallel_efficiency", (Tf-Cm)/Tf)
	set("mpi_load_balance", (Tf-Cm)/maxTminusC)
	set("mpi_communication_efficiency", maxTminusC/Tf)
	set("hybrid_efficiency", U/Tf)
	e.set("pop.elapsed_ns", T)
	e.set("pop.useful_ns", int64(math.Round(U)))
	e.set("pop.mpi_ns", int64(math.Round(Cm)))
	e.tol("pop.useful_ns", 1)
	e.tol("pop.mpi_ns", 1)
	e.set("pop.per_process", rowsP)
	e.set("breakdown.work_ns", bw)
	e.set("breakdown.mpi_ns", bm)
	e.set("breakdown.idleness_ns", 0)
	e.set("breakdown.overhead_ns", 0)
	e.set("breakdown.thread_time_ns", bt)
	e.set("breakdown.per_process", rowsB)
	e.set("wait_states.mpi_ns", tmpi)
	e.set("wait_states.calls", tcalls)
	e.set("wait_states.late_broadcast_ns", 0)
	e.set("wait_states.early_reduce_ns", 0)
	other := tmpi
	for _, pat := range w.patterns() {
		if totals[pat] == 0 && pat == "wait_for_progress" {
			continue // absent when 0
		}
		e.set("wait_states."+pat+"_ns", totals[pat])
		other -= totals[pat]
	}
	e.set("wait_states.other_ns", other)
	e.set("wait_states.per_process", rowsW)
	// Corrected times are exact to the nanosecond per event with skewed
	// clocks; allow 1 ns per call.
	tol := float64(tcalls)
	tolKeys := []string{"mpi_ns", "late_sender_ns", "late_receiver_ns", "wait_nxn_ns", "wait_barrier_ns", "other_ns", "caused_ns", "delay_ns", "long_term_ns"}
	if w.nbc {
		tolKeys = append(tolKeys, "late_broadcast_ns", "wait_for_progress_ns")
	}
	for _, k := range tolKeys {
		e.tol("wait_states."+k, tol)
		e.tol("wait_states.per_process."+k, tol)
	}
	// Every rank computes outside MPI and waits for its partners only
	// inside MPI, where the path follows the latest arrival: the longest
	// path is the window, and T1 the work. With --poll too: the polling
	// tests weigh nothing before the send's enter, and the message's edge
	// enters the receiver where the send's enter falls (the gap or test
	// going on then, weighing from that time on: sim.FragPass.Polls).
	e.set("critical_path.length_ns", T)
	e.set("critical_path.parallelism", float64(bw)/float64(T))
	e.tol("critical_path.parallelism", 1e-9)
	e.set("critical_path.work_ns", bw)
	if w.nbc {
		// The path's MPI time is the completions' parts after what they
		// waited for (nbcPath), within the range its ties allow, the rest
		// its computation: where the path ran through a waiter's MPI_Wait
		// instead of the late member's computation, as it did through a
		// wait for progress, MPI time grows by the wait.
		lo, hi := w.pathMPI[0], w.pathMPI[1]
		mid, half := (lo+hi)/2, float64(hi-lo+1)/2
		kinds := []map[string]any{{"name": "serial", "ns": T - mid}}
		if hi > 0 {
			kinds = append(kinds, map[string]any{"name": "mpi", "ns": mid})
		}
		e.set("critical_path.by_kind", kinds)
		e.tol("critical_path.by_kind.ns", half)
	}
	e.set("trace.duration_ns", w.initNS+w.fin+int64(R)*c.LatencyNS)
	e.set("trace.window.duration_ns", T)
	e.set("trace.window.bounds", "mpi")
	return e
}

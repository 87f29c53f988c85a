package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// A receiver that polls its MPI_Irecv with MPI_Test (testdata/poll.c, 2
// ranks): rank 1 waits for rank 0's late sends inside its polling calls,
// each call from the one that first tested the request without completing
// it (the collector's mpi_polled) counting its own time before the send's
// enter (waitstate/poll.go) — the time between the calls (the second
// half's between_polls) is not waiting. The Late Sender at the MPI_Test
// site is that definition applied by hand to the recorded calls, caused by
// rank 0. The critical path gives the polling calls no weight before the
// send, so it spends in MPI_Test at most their time after it. Before,
// the waits were transfer/other and the critical path ran along rank 1's
// polling chain (0 rank crossings).
func TestPollingReceiver(t *testing.T) {
	h := setup(t)
	const iters, lateUS = 20, 2000
	bin := h.buildMPI(t, testdata("poll.c"))
	dir, out := h.mustRecord(t, nil, mpirunN(2, bin, strconv.Itoa(iters), strconv.Itoa(lateUS))...)
	procs := valid(t, dir)
	r := h.report(t, dir)
	noReportWarnings(t, r)
	allMatched(t, r, printed(t, out, "messages="), printed(t, out, "collectives="))
	if it := printed(t, out, "iterations="); it != iters {
		t.Fatalf("the program ran %d iterations, want %d", it, iters)
	}
	// The sends' enters (rank 0) and rank 1's MPI_Test calls, per
	// request in order.
	var sends []int64
	type test struct{ enter, exit int64 }
	var polls [][]test // per completed request: its polling calls, the completing one last
	var open []test
	polling := false
	for _, p := range procs {
		var enter int64
		var fn string
		done := false
		for _, e := range rowsOf(p)[0] {
			switch e.Kind {
			case trace.MPIEnter:
				enter, fn = e.Time, p.String(e.Args[0])
			case trace.MPISend:
				if p.Header.Rank == 0 && e.Args[1] == 3 {
					sends = append(sends, enter)
				}
			case trace.MPIPolled:
				polling = true
			case trace.MPIRecv:
				done = p.Header.Rank == 1 && fn == "MPI_Test"
			case trace.MPIExit:
				if p.Header.Rank != 1 || fn != "MPI_Test" {
					continue
				}
				if polling || done {
					open = append(open, test{enter, e.Time})
				}
				if done {
					polls = append(polls, open)
					open, polling, done = nil, false, false
				}
			}
		}
	}
	if len(sends) != iters || len(polls) != iters {
		t.Fatalf("%d sends and %d receives completed by MPI_Test, want %d each", len(sends), len(polls), iters)
	}
	var byHand, pathBound int64
	for k, calls := range polls {
		for _, c := range calls {
			byHand += max(0, min(c.exit, sends[k])-c.enter)
			pathBound += max(0, c.exit-max(c.enter, sends[k]))
		}
	}
	var ls int64
	var sites int
	for _, s := range r.WaitStates.CallSites {
		if s.Func == "MPI_Test" {
			ls += s.LateSenderNS
			sites++
		}
	}
	var caused int64
	for _, c := range r.WaitStates.Causes {
		if c.Pattern == "late_sender" && c.Rank == 0 {
			caused += c.NS
		}
	}
	// The design's floor: the first half's loops only test, for about
	// three quarters of LATE_US each; a test's own time is at least an
	// eighth of its loop's.
	floor := int64(iters/2) * lateUS * 3 / 4 * 1000 / 8
	t.Logf("MPI_Test: late sender %d ns (by hand %d, floor %d), caused by rank 0 %d ns", ls, byHand, floor, caused)
	if sites != 1 || abs(ls-byHand) > 100_000 || ls < floor {
		t.Errorf("MPI_Test late sender %d ns at %d sites, want %d by hand at one, over %d", ls, sites, byHand, floor)
	}
	if abs(caused-ls) > 100_000 {
		t.Errorf("rank 0 causes %d ns of late sender, want the %d ns of MPI_Test", caused, ls)
	}
	inTest, byRank := onPath(t, r, "MPI_Test")
	t.Logf("critical path: %d ns in MPI_Test (at most %d by hand), by process %v, %d rank crossings", inTest, pathBound, byRank, r.CriticalPath.RankCrossings)
	if inTest > pathBound+100_000 {
		t.Errorf("the critical path spends %d ns in MPI_Test, at most %d by the definitions", inTest, pathBound)
	}
}

// Polled requests that end without a completion (testdata/poll_free.c, 2
// ranks): rank 0's MPI_Issend, tested once and freed, and rank 1's
// MPI_Irecv, tested once, cancelled and waited for. The collector writes
// the freed request's mpi_polled again inside MPI_Request_free (its
// polling ends there, docs/trace-format.md) and completes the cancelled
// receive as a request (mpi_request_done, no mpi_recv); neither polling
// call is a Late Sender or Late Receiver (the cancelled receive waits for
// no message, the freed send's completion is observed by no call), no
// warning, and the one message, received by rank 1's MPI_Recv, matches.
func TestFreedCancelledPolledRequests(t *testing.T) {
	h := setup(t)
	bin := h.buildMPI(t, testdata("poll_free.c"))
	dir, out := h.mustRecord(t, nil, mpirunN(2, bin)...)
	procs := valid(t, dir)
	r := h.report(t, dir)
	noReportWarnings(t, r)
	allMatched(t, r, printed(t, out, "messages="), printed(t, out, "collectives="))
	// Per process: the functions each request's mpi_polled events are in,
	// and how each request ended.
	for _, p := range procs {
		rank := p.Header.Rank
		in := map[int64][]string{}
		ended := map[int64]trace.Kind{}
		var fn string
		for _, e := range rowsOf(p)[0] {
			switch e.Kind {
			case trace.MPIEnter:
				fn = p.String(e.Args[0])
			case trace.MPIPolled:
				in[e.Args[0]] = append(in[e.Args[0]], fn)
			case trace.MPIRequestDone:
				ended[e.Args[0]] = e.Kind
			case trace.MPIRecv:
				ended[e.Args[4]] = e.Kind
			}
		}
		if len(in) != 1 {
			t.Fatalf("process %d: polled requests %v, want one", rank, in)
		}
		for req, fns := range in {
			switch {
			case rank == 0 && !slices.Equal(fns, []string{"MPI_Test", "MPI_Request_free"}):
				t.Errorf("process 0: the Issend's mpi_polled in %v, want MPI_Test then MPI_Request_free", fns)
			case rank == 0 && ended[req] != 0:
				t.Errorf("process 0: the freed Issend completes by %s", ended[req])
			case rank == 1 && (!slices.Equal(fns, []string{"MPI_Test"}) || ended[req] != trace.MPIRequestDone):
				t.Errorf("process 1: the cancelled Irecv's mpi_polled in %v, ended by %s; want MPI_Test, mpi_request_done", fns, ended[req])
			}
		}
	}
	for _, s := range r.WaitStates.CallSites {
		if s.Func == "MPI_Test" && (s.LateSenderNS != 0 || s.LateReceiverNS != 0) {
			t.Errorf("MPI_Test at %s: late sender %d ns, late receiver %d ns, want none", s.Site, s.LateSenderNS, s.LateReceiverNS)
		}
	}
}

// Requests that end without their operation (testdata/cancel_free.c, 2
// ranks), under Open MPI and MPICH: rank 0 cancels an MPI_Isend (which
// neither MPI here cancels: MPI_Test_cancelled false, the message goes;
// one that did would record mpi_cancelled, which withdraws the send,
// driver's TestCancelledSendFreedReceive), and rank 1 frees an active
// MPI_Irecv of tag 8. The collector writes mpi_recv_freed with the post's
// envelope inside MPI_Request_free; the analysis lets it take the first
// tag-8 message, so rank 1's MPI_Recv of tag 8 pairs with the second and
// every message matches (before, the freed receive wrote nothing: its
// message paired with the MPI_Recv, the second tag-8 send was left over),
// with one warning naming the freed receive's event and file.
func TestCancelledAndFreedRequests(t *testing.T) {
	check := func(t *testing.T, h *harness, bin string, cmd []string) {
		dir, out := h.mustRecord(t, nil, cmd...)
		procs := valid(t, dir)
		r := h.report(t, dir)
		allMatched(t, r, printed(t, out, "messages="), printed(t, out, "collectives="))
		var freed []string
		for _, p := range procs {
			var fn string
			for i, e := range rowsOf(p)[0] {
				switch e.Kind {
				case trace.MPIEnter:
					fn = p.String(e.Args[0])
				case trace.MPIRecvFreed:
					if p.Header.Rank != 1 || fn != "MPI_Request_free" || e.Args[0] != 0 || e.Args[1] != 8 {
						t.Errorf("process %d: mpi_recv_freed %v in %s, want process 1's (0, tag 8) in MPI_Request_free", p.Header.Rank, e.Args, fn)
					}
					freed = append(freed, fmt.Sprintf("process 1 (rank-00001.ptrace) thread 0 event %d (mpi_recv_freed): a receive from process 0, tag 8", i))
				case trace.MPICancelled:
					if printed(t, out, "cancelled=") == 0 {
						t.Errorf("process %d: mpi_cancelled of a send MPI did not cancel", p.Header.Rank)
					}
				}
			}
		}
		w := r.Trace.Warnings
		if len(freed) != 1 || w == nil || w.Count != 1 || !strings.HasPrefix(w.First[0], freed[0]) {
			t.Errorf("freed receives %q; warnings %+v", freed, w)
		}
	}
	t.Run("Open MPI", func(t *testing.T) {
		h := setup(t)
		bin := h.buildMPI(t, testdata("cancel_free.c"))
		check(t, h, bin, mpirunN(2, bin))
	})
	t.Run("MPICH", func(t *testing.T) {
		h := setupMPICH(t)
		bin := h.buildWith(t, mpich(), testdata("cancel_free.c"))
		check(t, h, bin, mpiexecMPICH(2, bin))
	})
}

// A receive cancelled and freed without a wait (testdata/cancel_timeout.c,
// 2 ranks: a timeout's pattern): the collector completes it inside
// MPI_Request_free when MPI already resolved the cancellation, as a
// cancelled receive (mpi_request_done, no mpi_recv), not as a receive
// freed while active. The later message pairs with the MPI_Recv, all
// match, no warning. Before, its mpi_recv_freed took that message, and
// the MPI_Recv was a receive no send matched.
func TestCancelledThenFreedReceive(t *testing.T) {
	check := func(t *testing.T, h *harness, cmd []string) {
		dir, out := h.mustRecord(t, nil, cmd...)
		procs := valid(t, dir)
		r := h.report(t, dir)
		noReportWarnings(t, r)
		allMatched(t, r, printed(t, out, "messages="), printed(t, out, "collectives="))
		done := 0
		for _, p := range procs {
			var fn string
			for _, e := range rowsOf(p)[0] {
				switch e.Kind {
				case trace.MPIEnter:
					fn = p.String(e.Args[0])
				case trace.MPIRecvFreed:
					t.Errorf("process %d: mpi_recv_freed %v in %s, want none: the receive was cancelled", p.Header.Rank, e.Args, fn)
				case trace.MPIRequestDone:
					if p.Header.Rank == 1 && fn == "MPI_Request_free" {
						done++
					}
				}
			}
		}
		if done != 1 {
			t.Errorf("%d requests completed in process 1's MPI_Request_free, want the cancelled receive", done)
		}
	}
	t.Run("Open MPI", func(t *testing.T) {
		h := setup(t)
		bin := h.buildMPI(t, testdata("cancel_timeout.c"))
		check(t, h, mpirunN(2, bin))
	})
	t.Run("MPICH", func(t *testing.T) {
		h := setupMPICH(t)
		bin := h.buildWith(t, mpich(), testdata("cancel_timeout.c"))
		check(t, h, mpiexecMPICH(2, bin))
	})
}

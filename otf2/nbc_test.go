package otf2_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// TestScorepNonblockingCollectives: a Score-P 8.4 trace of nbc_late.c (4
// ranks, 8 iterations, testdata/scorep-8.4-nbc-late) holds a
// NonBlockingCollectiveRequest in each MPI_I* call and its
// NonBlockingCollectiveComplete, which alone names the operation,
// communicator and root, in the MPI_Wait or MPI_Test that completes it.
// The converter once left them unused: the waits in MPI_Wait for the late
// starts were transfer/other. Now each request is a coll_start and its
// completion a coll_complete, matched with the blocking barriers around
// them, and the waits are the definitions applied by hand to the
// converted events (the completing call's enter until the latest
// relevant start's call enter, at most until the completion), near the
// program's own lateness: rank 0's 2 ms before each MPI_Iallreduce (wait
// at N×N), root 1's 1 ms before each MPI_Ibcast (late broadcast), rank
// 2's 0.5 ms before each MPI_Ibarrier (wait at the barrier in the others'
// MPI_Wait, none in the last rank's MPI_Test loop). Same report on 1 and
// 2 analysis ranks.
func TestScorepNonblockingCollectives(t *testing.T) {
	const ranks, iters, lateNS, overlapNS = 4, 8, 2_000_000, 100_000
	dir := filepath.Join("testdata", "scorep-8.4-nbc-late")
	anchor := filepath.Join(dir, "traces.otf2")
	rep, _ := analyzeOn1And2(t, anchor)
	if w := rep.Trace.Warnings; w != nil && w.Count > 0 {
		t.Errorf("warnings: %+v", w)
	}
	for _, n := range rep.Trace.Notes {
		if strings.Contains(n, "NON_BLOCKING") {
			t.Errorf("note: %s", n)
		}
	}
	// Per iteration 3 blocking barriers and 3 nonblocking collectives,
	// the final MPI_Reduce, and MPI_Init's and MPI_Finalize's handle
	// creation and destruction; the handshakes' 3 × 3 messages.
	if cs := rep.ClockSync; cs == nil || cs.Collectives != iters*6+3 || cs.Messages != iters*9 ||
		cs.UnmatchedCollectives+cs.UnmatchedSends+cs.UnmatchedReceives != 0 {
		t.Errorf("clock section %+v: want %d collectives and %d messages matched", cs, iters*6+3, iters*9)
	}

	// The waits by hand, from the converted events: per process its
	// nonblocking collectives in order (the same instances on every
	// process), each with its start's call enter and its completing
	// call's enter and completion.
	type nbc struct {
		op, root                  int64
		startEnter, waitEnter, at int64
		fn                        string
	}
	var procs [ranks][]nbc
	for r := range ranks {
		evs, tb := convertProcess(t, anchor, r)
		var enter int64
		var fn string
		byReq := map[int64]int{}
		for _, e := range evs {
			switch e.Kind {
			case trace.MPIEnter:
				enter, fn = e.Time, tb.String(e.Args[0])
			case trace.CollStart:
				byReq[e.Args[4]] = len(procs[r])
				procs[r] = append(procs[r], nbc{op: e.Args[0], root: e.Args[2], startEnter: enter})
			case trace.CollComplete:
				k, ok := byReq[e.Args[4]]
				if !ok {
					t.Fatalf("rank %d: %v completes no start", r, e)
				}
				n := &procs[r][k]
				n.waitEnter, n.at, n.fn = enter, e.Time, fn
			}
		}
		if len(procs[r]) != 3*iters {
			t.Fatalf("rank %d: %d nonblocking collectives, want %d", r, len(procs[r]), 3*iters)
		}
	}
	hand := map[string]int64{}    // pattern → ns
	byCause := map[string]int64{} // "rank pattern" → ns: the waits for the latest start's rank
	inTest := int64(0)
	for k := range 3 * iters {
		op, root := trace.CollOp(procs[0][k].op), procs[0][k].root
		lv, latest := int64(-1<<62), -1
		for r := range ranks {
			n := procs[r][k]
			if trace.CollOp(n.op) != op || n.root != root || n.waitEnter == 0 {
				t.Fatalf("instance %d: rank %d has %+v, rank 0 %s root %d", k, r, n, op, root)
			}
			if (op != trace.CollBcast || int64(r) == root) && n.startEnter > lv {
				lv, latest = n.startEnter, r
			}
		}
		pattern := map[trace.CollOp]string{trace.CollAllreduce: "wait_nxn", trace.CollBcast: "late_broadcast", trace.CollBarrier: "wait_barrier"}[op]
		for r := range ranks {
			n := procs[r][k]
			if op == trace.CollBcast && int64(r) == root {
				continue
			}
			w := max(0, min(lv, n.at)-n.waitEnter)
			hand[pattern] += w
			byCause[fmt.Sprintf("%d %s", latest, pattern)] += w
			if n.fn == "MPI_Test" {
				inTest += w
			}
		}
	}
	got := map[string]int64{}
	var testWait int64
	for _, s := range rep.WaitStates.CallSites {
		switch s.Func {
		case "MPI_Wait":
			got["wait_nxn"] += s.WaitNxNNS
			got["late_broadcast"] += s.LateBroadcastNS
			got["wait_barrier"] += s.WaitBarrierNS
		case "MPI_Test":
			got["wait_barrier"] += s.WaitBarrierNS
			testWait += s.WaitBarrierNS
		}
	}
	planned := map[string]int64{
		"wait_nxn":       (ranks - 1) * iters * (lateNS - overlapNS),
		"late_broadcast": (ranks - 1) * iters * lateNS / 2,
		"wait_barrier":   2 * iters * lateNS / 4,
	}
	for p, want := range planned {
		t.Logf("%s: %d ns, by hand %d, planned %d", p, got[p], hand[p], want)
		if d := got[p] - hand[p]; d < -hand[p]/100-1000 || d > hand[p]/100+1000 || got[p] < want/2 {
			t.Errorf("%s: %d ns, want the %d ns by hand, at least half the planned %d", p, got[p], hand[p], want)
		}
	}
	if testWait > 100_000 || inTest > 100_000 {
		t.Errorf("the last rank's MPI_Test loop waits %d ns (by hand %d), want about none: only the completing call, which begins after the start, has the completion", testWait, inTest)
	}
	// The direct cause of each: the late rank.
	cause := map[string]report.WaitCause{}
	for _, c := range rep.WaitStates.Causes {
		if (c.Func == "MPI_Wait" || c.Func == "MPI_Test") && c.NS > cause[c.Pattern].NS {
			cause[c.Pattern] = c
		}
	}
	for p, r := range map[string]int{"wait_nxn": 0, "late_broadcast": 1, "wait_barrier": 2} {
		if cause[p].Rank != r {
			t.Errorf("%s: caused most by %+v, want rank %d", p, cause[p], r)
		}
	}
	// The delay costs (the root causes): the late rank's excess time
	// before its start, MPI_I* (its late_* function, which no other rank
	// calls, the most of it), is charged about all the waits it caused,
	// by hand. They were all propagated, charged to nothing, for the
	// MPI_Iallreduce and the MPI_Ibarrier: the cause's synchronization
	// point was looked for at its start and was at its completion.
	for _, c := range []struct {
		rank           int
		pattern, start string
	}{{0, "wait_nxn", "MPI_Iallreduce"}, {1, "late_broadcast", "MPI_Ibcast"}, {2, "wait_barrier", "MPI_Ibarrier"}} {
		var ns int64
		var top report.WaitDelay
		for _, d := range rep.WaitStates.Delays {
			if d.Rank == c.rank && d.Pattern == c.pattern && d.Site == c.start {
				ns += d.NS
				if d.NS > top.NS {
					top = d
				}
			}
		}
		byHand := byCause[fmt.Sprintf("%d %s", c.rank, c.pattern)]
		t.Logf("rank %d's delay before %s: %d ns of %s (the most in %s), by hand it caused %d ns", c.rank, c.start, ns, c.pattern, top.Code, byHand)
		if ns < byHand*9/10 || ns > byHand+byHand/100+1000 {
			t.Errorf("rank %d's delay costs before %s: %d ns of %s, want about the %d ns it caused (90%% or more)", c.rank, c.start, ns, c.pattern, byHand)
		}
		if want := "late_" + strings.ToLower(strings.TrimPrefix(c.start, "MPI_I")); top.Code != want {
			t.Errorf("rank %d's delay costs before %s: the most in %+v, want %s", c.rank, c.start, top, want)
		}
	}
}

// TestScorepNonblockingCollectiveOtherLocation: a nonblocking collective
// whose NonBlockingCollectiveComplete is on another location of the
// process than its NonBlockingCollectiveRequest (MPI_THREAD_MULTIPLE: a
// thread waits for another's request). The converter once found a
// request's completion on its own location only and left both records
// out: that process then numbered its later collectives on the
// communicator one less than the others (its MPI_Allreduce matched the
// other's MPI_Ibarrier: both unmatched). Now the start is converted on
// its location and the completion on the other, paired by request, and
// the waits are those of the timeline (otf2.CrossThreadNBCArchive).
func TestScorepNonblockingCollectiveOtherLocation(t *testing.T) {
	anchor := otf2.CrossThreadNBCArchive(t, t.TempDir())
	rep, _ := analyzeOn1And2(t, anchor)
	if w := rep.Trace.Warnings; w != nil && w.Count > 0 {
		t.Errorf("warnings: %+v", w)
	}
	for _, n := range rep.Trace.Notes {
		if strings.Contains(n, "NON_BLOCKING") {
			t.Errorf("note: %s", n)
		}
	}
	if cs := rep.ClockSync; cs == nil || cs.Collectives != 2 || cs.UnmatchedCollectives != 0 {
		t.Fatalf("clock section %+v: want the MPI_Ibarrier and the MPI_Allreduce matched", cs)
	}
	got := map[string][2]int64{}
	for _, s := range rep.WaitStates.CallSites {
		g := got[s.Func]
		got[s.Func] = [2]int64{g[0] + s.WaitBarrierNS, g[1] + s.WaitNxNNS}
	}
	if got["MPI_Wait"] != [2]int64{700, 0} || got["MPI_Allreduce"] != [2]int64{0, 1000} {
		t.Errorf("waits (barrier, N×N) by call %v, want MPI_Wait [700 0] and MPI_Allreduce [0 1000]", got)
	}
}

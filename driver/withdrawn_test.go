package driver

import (
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// A send cancelled (mpi_cancelled) never left and a receive freed while
// active (mpi_recv_freed) takes its channel's next message: rank 0's
// first tag-7 send is cancelled, so rank 1's tag-7 receive is its second;
// rank 1 frees a tag-8 receive, so its MPI_Recv of tag 8 takes rank 0's
// second tag-8 message. Taken as they came, the tag-7 receive paired with
// the cancelled send and the tag-8 receive with the freed receive's
// message, each channel's last send left over (2 unmatched sends). The
// freed receive is a warning naming its event and file; a tag-9 send no
// one receives is an unmatched send naming rank 0's file, also when
// another analysis rank lists it.
func TestCancelledSendFreedReceive(t *testing.T) {
	const r1, r2 = 1<<40 | 1, 1<<40 | 2
	dir := writeTrace(t, twoProcs(func(r int, peer int64) []trace.Event {
		if r == 0 {
			return []trace.Event{ev(10, trace.ThreadBegin, 1),
				ev(20, trace.MPISend, peer, 7, 0, 8, r1), ev(30, trace.MPICancelled, r1), ev(31, trace.MPIRequestDone, r1),
				ev(40, trace.MPISend, peer, 7, 0, 8, 0), ev(50, trace.MPISend, peer, 8, 0, 8, 0),
				ev(60, trace.MPISend, peer, 8, 0, 8, 0), ev(70, trace.MPISend, peer, 9, 0, 8, 0), ev(80, trace.ThreadEnd)}
		}
		return []trace.Event{ev(10, trace.ThreadBegin, 1),
			ev(20, trace.MPIRecvPost, peer, 8, 0, r2), ev(25, trace.MPIRecvFreed, peer, 8, 0, r2),
			ev(100, trace.MPIRecv, peer, 7, 0, 8, 0), ev(110, trace.MPIRecv, peer, 8, 0, 8, 0), ev(120, trace.ThreadEnd)}
	}))
	for k := 1; k <= 2; k++ {
		rep, _, err := analyze(t, Options{Dir: dir}, k)
		if err != nil {
			t.Fatal(err)
		}
		cs := rep.ClockSync
		if cs.Messages != 3 || cs.UnmatchedSends != 1 || cs.UnmatchedReceives != 0 {
			t.Errorf("k=%d: %d messages, %d / %d unmatched sends / receives; want 3 (the freed receive's too), 1 (tag 9), 0",
				k, cs.Messages, cs.UnmatchedSends, cs.UnmatchedReceives)
		}
		w := rep.Trace.Warnings
		all := strings.Join(w.First, "\n")
		if w.Count != 2 || !strings.Contains(all, "process 1 (rank-00001.ptrace) thread 0 event 2 (mpi_recv_freed): a receive from process 0, tag 8") ||
			!strings.Contains(all, "unmatched mpi_send: process 0 → 1, tag 9") || !strings.Contains(all, "of process 0, in rank-00000.ptrace)") {
			t.Errorf("k=%d: warnings %d:\n%s", k, w.Count, all)
		}
	}
}

// A receive freed with a wildcard takes a message of no known channel:
// a warning says so, and the pairing is left as the events give it.
func TestFreedWildcardReceive(t *testing.T) {
	dir := writeTrace(t, twoProcs(func(r int, peer int64) []trace.Event {
		if r == 0 {
			return []trace.Event{ev(10, trace.ThreadBegin, 1), ev(40, trace.MPISend, peer, 7, 0, 8, 0), ev(80, trace.ThreadEnd)}
		}
		return []trace.Event{ev(10, trace.ThreadBegin, 1), ev(20, trace.MPIRecvPost, -1, 7, 0, 5), ev(25, trace.MPIRecvFreed, -1, 7, 0, 5),
			ev(120, trace.ThreadEnd)}
	}))
	rep, _, err := analyze(t, Options{Dir: dir}, 1)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(rep.Trace.Warnings.First, "\n")
	if rep.ClockSync.UnmatchedSends != 1 || !strings.Contains(all, "process 1 (rank-00001.ptrace) thread 0 event 2 (mpi_recv_freed): a receive from any source, tag 7") {
		t.Errorf("unmatched sends %d, warnings:\n%s", rep.ClockSync.UnmatchedSends, all)
	}
}

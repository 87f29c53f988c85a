package otf2_test

import (
	"path/filepath"
	"testing"
)

// TestScorepP2POtherLocation: point-to-point requests completed on another
// thread of the process (testdata/scorep-8.4-xthread-p2p: rank 0's thread 0
// posts each MPI_Irecv and its thread 1 waits for it, rank 1's thread 0
// starts each MPI_Issend and its thread 1 waits for it). The converter
// once paired a request's start and completion on one location only: the
// MPI_Irecv's post was dropped (its message received as by a blocking
// receive in the other thread's MPI_Wait) and the MPI_Issend's completion
// too, so the late receiver of round 2 (posted 20 ms after the send) was
// no wait state; with the sends' completions alone converted it would
// have been 71.7 ms, measured to the receiver's MPI_Wait instead of its
// post. Now the wait states are those of the timeline: late sender 40.0
// ms in rank 0's MPI_Wait (round 1), late receiver 20.0 ms in rank 1's
// (round 2, from its MPI_Wait's enter to the MPI_Irecv's).
func TestScorepP2POtherLocation(t *testing.T) {
	anchor := filepath.Join("testdata", "scorep-8.4-xthread-p2p", "traces.otf2")
	rep, _ := analyzeOn1And2(t, anchor)
	if w := rep.Trace.Warnings; w != nil && w.Count > 0 {
		t.Errorf("warnings: %+v", w)
	}
	if cs := rep.ClockSync; cs == nil || cs.Messages != 3 || cs.UnmatchedSends+cs.UnmatchedReceives != 0 {
		t.Errorf("clock section %+v: want the 3 messages matched", cs)
	}
	var ls, lr int64
	for _, s := range rep.WaitStates.CallSites {
		if s.Func == "MPI_Wait" {
			ls += s.LateSenderNS
			lr += s.LateReceiverNS
		}
	}
	// from the enters' times in otf2-print.txt.gz
	if ls != 39_990_314 || lr != 19_999_466 {
		t.Errorf("MPI_Wait: late sender %d ns, late receiver %d ns; want 39990314 and 19999466", ls, lr)
	}
}

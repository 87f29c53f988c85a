package waitstate

import "testing"

// Report sums rows per call site and process, sorts sites by waiting and
// charges causes and delays to their processes; no rows, no section.
func TestReport(t *testing.T) {
	if Report(nil, nil, nil) != nil {
		t.Fatal("a section without MPI calls")
	}
	var ls, nxn [NumPatterns]int64
	ls[LateSender] = 30
	nxn[WaitNxN] = 50
	rows := []Row{
		{Rank: 0, Func: "MPI_Recv", MPINS: 40, Calls: 2, Wait: ls, Count: [NumPatterns]int64{LateSender: 1}},
		{Rank: 0, Func: "MPI_Allreduce", MPINS: 10, Calls: 1},
		{Rank: 1, Func: "MPI_Allreduce", MPINS: 60, Calls: 1, Wait: nxn, Count: [NumPatterns]int64{WaitNxN: 1}},
		{Rank: 1, Func: "MPI_Send", MPINS: 5, Calls: 1},
	}
	if o := rows[0].Other(); o != 10 {
		t.Errorf("other of row 0: %d, want 10", o)
	}
	causes := []Cause{{Rank: 1, Func: "MPI_Recv", Pattern: LateSender, NS: 30, Calls: 1}, {Rank: 0, Func: "MPI_Allreduce", Pattern: WaitNxN, NS: 50, Calls: 1}}
	delays := []Delay{{Rank: 1, Label: "slow", NS: 20, LongTerm: 40, Propagated: 6, Waits: 1}, {Rank: 0, Label: "imbalanced", NS: 46, LongTerm: 4, Waits: 1},
		{Rank: 0, Label: "imbalanced", NS: 4, LongTerm: 0}}
	ws := Report(rows, causes, delays)
	if ws.MPINS != 115 || ws.Calls != 5 || ws.LateSenderNS != 30 || ws.WaitNxNNS != 50 || ws.OtherNS != 35 || ws.WaitingCalls != 2 {
		t.Errorf("totals %+v", ws.WaitTimes)
	}
	if len(ws.CallSites) != 3 || ws.CallSites[0].Func != "MPI_Allreduce" || ws.CallSites[0].MPINS != 70 || ws.CallSites[1].Func != "MPI_Recv" || ws.CallSites[2].Func != "MPI_Send" {
		t.Errorf("call sites %+v, want Allreduce (50 ns waiting), Recv (30), Send", ws.CallSites)
	}
	p := ws.PerProcess
	if len(p) != 2 || p[0].Rank != 0 || p[0].MPINS != 50 || p[0].CausedNS != 50 || p[0].DelayNS != 50 || p[0].LongTermNS != 4 || p[1].LongTermNS != 40 || p[1].CausedNS != 30 || p[1].DelayNS != 20 {
		t.Errorf("per process %+v", p)
	}
	if c := ws.Causes; len(c) != 2 || c[0].Rank != 0 || c[0].Pattern != "wait_nxn" || c[0].Share != 50.0/80 {
		t.Errorf("causes %+v", c)
	}
	// slow's total cost (20 + 40) is above imbalanced's (50 + 4).
	if d := ws.Delays; len(d) != 2 || d[1].Code != "imbalanced" || d[1].NS != 50 || d[1].LongTermNS != 4 || d[0].PropagatedNS != 6 || d[0].Share != 20.0/80 {
		t.Errorf("delays %+v", d)
	}
}

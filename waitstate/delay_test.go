package waitstate_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// mpiCall is an MPI call of a test program: function, enter, exit and the
// events inside (kind, time, arguments).
type mpiCall struct {
	fn          string
	enter, exit int64
	evs         []mpiEvent
}

type mpiEvent struct {
	k    trace.Kind
	t    int64
	args []int64
}

// writeProgram writes one trace per rank of calls (one thread, one clock,
// MPI_Init over [0, 10] and MPI_Finalize from end) into dir.
func writeProgram(t *testing.T, dir string, calls [][]mpiCall, end int64) {
	t.Helper()
	ends := make([]int64, len(calls))
	for r := range ends {
		ends[r] = end
	}
	writeProgramEnds(t, dir, calls, ends)
}

// writeProgramEnds is writeProgram with each rank's MPI_Finalize at its
// own end.
func writeProgramEnds(t *testing.T, dir string, calls [][]mpiCall, ends []int64) {
	t.Helper()
	n := len(calls)
	members := make([]int, n)
	for i := range members {
		members[i] = i
	}
	for r, prog := range calls {
		end := ends[r]
		w, err := trace.Create(filepath.Join(dir, trace.FileName(r)), trace.Header{Rank: r, NRanks: n, Host: "node", ClockSrc: "synthetic"})
		if err != nil {
			t.Fatal(err)
		}
		w.AddComm(trace.Communicator{Index: 0, ID: 0, Name: "MPI_COMM_WORLD", Members: members})
		emit := func(k trace.Kind, tm int64, args ...int64) {
			if err := w.E(0, k, tm, args...); err != nil {
				t.Fatal(err)
			}
		}
		emit(trace.ThreadBegin, 0, trace.ThreadInitial)
		emit(trace.ImplicitTaskBegin, 0, 0, trace.MakeID(0, 1), 1, 0, 1)
		all := append(append([]mpiCall{{fn: "MPI_Init", enter: 0, exit: 10}}, prog...), mpiCall{fn: "MPI_Finalize", enter: end, exit: end + 10})
		for _, c := range all {
			emit(trace.MPIEnter, c.enter, w.String(c.fn), -1)
			for _, e := range c.evs {
				emit(e.k, e.t, e.args...)
			}
			emit(trace.MPIExit, c.exit, w.String(c.fn))
		}
		emit(trace.ImplicitTaskEnd, end+10, 0, trace.MakeID(0, 1), 1, 0, 1)
		emit(trace.ThreadEnd, end+10)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// analyze analyses dir on k in-process ranks, one clock, and returns the
// report and its JSON.
func analyze(t *testing.T, dir string, k int) (*report.Report, []byte) {
	t.Helper()
	var rep *report.Report
	err := inproc.Run(k, func(c comm.Comm) error {
		r, err := driver.Run(c, driver.Options{Dir: dir, NoClockSync: true})
		if c.Rank() == 0 {
			rep = r
		}
		return err
	})
	if err != nil {
		t.Fatalf("k=%d: %v", k, err)
	}
	var js bytes.Buffer
	if err := report.WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	return rep, js.Bytes()
}

// The delay costs of a root whose members last synchronized with it at
// different points (times in ns; every call ends when its partner
// arrives, so no completion time). Rank 0 sends to rank 1 at E1 = 100
// (rank 1 waits 50 there), waits 60 for rank 2's send at X = 200, sends to
// rank 2 at E2 = 300 (rank 2 waits 20), and enters an MPI_Allreduce last,
// at 500, where ranks 1, 2 and 3 wait 100, 50 and 150. Serial code all
// along. Short-term, each cause's excess over its waiter since their last
// synchronization: rank 0's 50 (to E1), 20 (X to E2), and at the
// Allreduce 40 of rank 1's 100 (rank 0's 340 since E1, its wait 60 at X
// left out, against rank 1's 300), 50 of rank 2's 50 and 90 of rank 3's
// 150 (430 since MPI_Init against 340); rank 2's 60 for X. The rest of
// rank 3's wait (60) passes to rank 0's wait at X, whose cause, rank 2,
// takes it as long-term cost (of wait_nxn). Rank 1's 60 would too, but
// Scalasca hands a member's share only to the waits from the next later
// member's last synchronization point on (rank 2's, E2): none, so it stays
// propagated.
func TestDelayCostsGroup(t *testing.T) { delayCostsGroup(t, 1) }

// The same in units of 0.1 s: waits and times between synchronization
// points of seconds, wider than the 32 bits a point holds them in.
func TestDelayCostsGroupWide(t *testing.T) { delayCostsGroup(t, 100_000_000) }

// delayCostsGroup is TestDelayCostsGroup with every time after MPI_Init's
// end times u ns.
func delayCostsGroup(t *testing.T, u int64) {
	dir := t.TempDir()
	ar := int64(trace.CollAllreduce)
	send := func(fn string, at, to int64) mpiCall {
		at *= u
		return mpiCall{fn, at, at, []mpiEvent{{trace.MPISend, at, []int64{to, 1, 0, 8, 0}}}}
	}
	recv := func(enter, exit, from int64) mpiCall {
		enter, exit = enter*u, exit*u
		return mpiCall{"MPI_Recv", enter, exit, []mpiEvent{{trace.MPIRecv, exit, []int64{from, 1, 0, 8, 0}}}}
	}
	allreduce := func(enter int64) mpiCall {
		enter *= u
		return mpiCall{"MPI_Allreduce", enter, 500 * u, []mpiEvent{{trace.CollBegin, enter, []int64{ar, 0, -1, 8, 8}}, {trace.CollEnd, 500 * u, []int64{ar, 0, -1}}}}
	}
	writeProgram(t, dir, [][]mpiCall{
		{send("MPI_Send", 100, 1), recv(200, 260, 2), send("MPI_Send", 300, 2), allreduce(500)},
		{recv(50, 100, 0), allreduce(400)},
		{send("MPI_Send", 260, 0), recv(280, 300, 0), allreduce(450)},
		{allreduce(350)},
	}, 600*u)
	type cost struct{ short, long int64 }
	want := map[string]cost{"0 late_sender": {70 * u, 0}, "0 wait_nxn": {180 * u, 0}, "2 late_sender": {60 * u, 0}, "2 wait_nxn": {0, 60 * u}}
	var first []byte
	for k := 1; k <= 3; k++ {
		rep, js := analyze(t, dir, k)
		if first == nil {
			first = js
		} else if !bytes.Equal(js, first) {
			t.Errorf("k=%d: the report differs from 1 rank's", k)
		}
		got := map[string]cost{}
		var prop int64
		for _, d := range rep.WaitStates.Delays {
			key := fmt.Sprintf("%d %s", d.Rank, d.Pattern)
			c := got[key]
			c.short += d.NS
			c.long += d.LongTermNS
			got[key] = c
			prop += d.PropagatedNS
			if d.Code != "serial code" && d.NS+d.LongTermNS > 0 {
				t.Errorf("k=%d: delay %+v in %q, want serial code", k, d, d.Code)
			}
		}
		for key, c := range got {
			if c != want[key] {
				t.Errorf("k=%d: rank and pattern %s: short-term %d, long-term %d; want %+v", k, key, c.short, c.long, want[key])
			}
		}
		for key, c := range want {
			if got[key] != c {
				t.Errorf("k=%d: no delay costs for %s, want %+v", k, key, c)
			}
		}
		if prop != 60*u {
			t.Errorf("k=%d: %d ns propagated, want %d", k, prop, 60*u)
		}
		for _, p := range rep.WaitStates.PerProcess {
			w := map[int]cost{0: {250 * u, 0}, 2: {60 * u, 60 * u}}[p.Rank]
			if p.DelayNS != w.short || p.LongTermNS != w.long {
				t.Errorf("k=%d: rank %d: delay costs %d, %d; want %+v", k, p.Rank, p.DelayNS, p.LongTermNS, w)
			}
		}
	}
}

// The delay costs of the waits in nonblocking collectives (times in ns;
// serial code all along). Rank 0 starts an MPI_Iallreduce last, at 300;
// ranks 1 and 2 started at 100 and 200 and wait for it in their MPI_Wait
// from 150 and 250: 150 and 50 (wait at N×N). Then rank 2 starts an
// MPI_Ibarrier last, at 590; ranks 0 and 1 wait for it in MPI_Wait from
// 420 and 470: 170 and 120 (wait at the barrier). Each wait's
// synchronization point is the MPI_Wait where it waited, its cause's the
// start (MPI_I*), since the cause's time before its start is what
// delayed the others. Short-term: at the MPI_Iallreduce rank 0's serial
// code since MPI_Init (290) over rank 1's (130) and rank 2's (230): all
// 150 and 50 of the waits (no waits in rank 0's interval). At the
// MPI_Ibarrier, rank 2's interval is from its previous point with the
// waiters, its MPI_Wait of the MPI_Iallreduce, of which it counts the
// completion (30, after rank 0's start), then 260 of serial code; rank
// 1's from its MPI_Wait (completion 30), 130 of serial code and its
// MPI_Ibarrier (10): rank 2's excess 130 of serial code takes all of 120.
// Rank 0's from its MPI_Wait, which did not wait (10: its completion is
// the whole call, not from rank 0's own start at 300 on), 80 of serial
// code and its MPI_Ibarrier: excess 180 of serial code and 20 of MPI_Wait,
// which share 170 as 153 and 17. Then root 0 of an MPI_Ireduce waits
// in its MPI_Wait from 770 for rank 1's start at 850 (early reduce, 80):
// rank 1's serial code since its MPI_Wait of the MPI_Ibarrier (150; both
// count that call's completion, 110, after rank 2's start) over rank
// 0's (60) takes all of it. Nothing propagated. The delays once
// charged nothing of an MPI_Iallreduce's or an MPI_Ibarrier's waits (all
// propagated: the cause's point looked for at its start call, which had
// none), and a nonblocking collective's MPI_Wait that did not wait once
// counted from the latest start on (30 of its 10 ns here).
func TestDelayCostsNonblockingCollectives(t *testing.T) {
	dir := t.TempDir()
	ar, bar, red := int64(trace.CollAllreduce), int64(trace.CollBarrier), int64(trace.CollReduce)
	rootOf := func(op int64) int64 {
		if op == red {
			return 0
		}
		return -1
	}
	start := func(fn string, op, at, req int64) mpiCall {
		return mpiCall{fn, at, at + 10, []mpiEvent{{trace.CollStart, at, []int64{op, 0, rootOf(op), 8, req}}}}
	}
	wait := func(op, enter, exit, req int64) mpiCall {
		return mpiCall{"MPI_Wait", enter, exit, []mpiEvent{{trace.CollComplete, exit, []int64{op, 0, rootOf(op), 8, req}}}}
	}
	writeProgram(t, dir, [][]mpiCall{
		{start("MPI_Iallreduce", ar, 300, 1), wait(ar, 320, 330, 1), start("MPI_Ibarrier", bar, 400, 2), wait(bar, 420, 700, 2),
			start("MPI_Ireduce", red, 750, 3), wait(red, 770, 900, 3)},
		{start("MPI_Iallreduce", ar, 100, 1), wait(ar, 150, 330, 1), start("MPI_Ibarrier", bar, 450, 2), wait(bar, 470, 700, 2),
			start("MPI_Ireduce", red, 850, 3), wait(red, 870, 900, 3)},
		{start("MPI_Iallreduce", ar, 200, 1), wait(ar, 250, 330, 1), start("MPI_Ibarrier", bar, 590, 2), wait(bar, 690, 700, 2),
			start("MPI_Ireduce", red, 760, 3), wait(red, 780, 900, 3)},
	}, 1000)
	want := map[string]int64{
		"0 serial code MPI_Iallreduce wait_nxn":   200,
		"2 serial code MPI_Ibarrier wait_barrier": 273,
		"2 MPI_Wait MPI_Ibarrier wait_barrier":    17,
		"1 serial code MPI_Ireduce early_reduce":  80,
	}
	var first []byte
	for k := 1; k <= 3; k++ {
		rep, js := analyze(t, dir, k)
		if first == nil {
			first = js
		} else if !bytes.Equal(js, first) {
			t.Errorf("k=%d: the report differs from 1 rank's", k)
		}
		ws := rep.WaitStates
		if ws.WaitNxNNS != 200 || ws.WaitBarrierNS != 290 || ws.EarlyReduceNS != 80 {
			t.Fatalf("k=%d: waits at N×N %d, at the barrier %d, early reduce %d; want 200, 290 and 80", k, ws.WaitNxNNS, ws.WaitBarrierNS, ws.EarlyReduceNS)
		}
		got := map[string]int64{}
		var sum int64
		for _, d := range ws.Delays {
			sum += d.NS + d.LongTermNS + d.PropagatedNS
			if d.LongTermNS != 0 || d.PropagatedNS != 0 {
				t.Errorf("k=%d: delay %+v: want no long-term or propagated costs", k, d)
			}
			if d.NS != 0 {
				got[fmt.Sprintf("%d %s %s %s", d.Rank, d.Code, d.Site, d.Pattern)] += d.NS
			}
		}
		if sum != 570 {
			t.Errorf("k=%d: the delay costs add up to %d ns, want the 570 of the waits", k, sum)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("k=%d: short-term costs %v, want %v", k, got, want)
		}
	}
}

// The delay costs of waits for progress (times in ns; serial code all
// along, start calls of 1 ns). All start an MPI_Iallreduce at 100; rank 2
// computes until its MPI_Wait at 300, ranks 0 and 1 wait in theirs from
// 120 and 150 for its progress: 180 and 150, its excess serial code up to
// its MPI_Wait's enter (its progress point, its synchronization point),
// over theirs up to theirs, all of each. Their MPI_Wait's completion is
// from the wait's end (300) on: 30, not the 210 and 180 before it. Rank
// 0 then waits 100 in MPI_Recv (from 400) for rank 1's MPI_Send at 500
// (Late Sender): both intervals from their MPI_Wait (a point with every
// member, the waiter's too), rank 1's excess serial code 100. Then all
// start an MPI_Ibcast of root 0 at 600; the root computes until its
// MPI_Wait at 800, ranks 1 and 2 wait in theirs from 620 and 650 for its
// progress: 180 and 150. The root has no point of its own at its MPI_Wait
// and is notified: one point with both. With rank 1 since the MPI_Recv
// (its completion 10): the root's serial code 289 and MPI_Recv 10 over
// rank 1's 119 since its MPI_Send: all of 180 (170 and 10). With rank 2
// since the MPI_Iallreduce's MPI_Wait: serial code 359, MPI_Recv 10 (its
// wait of 100 left out) over 319: D = 50, W = 100, so 40 and 10 short-term
// and 100 to the MPI_Recv's wait, which its cause, rank 1, takes as
// long-term cost (of wait_for_progress). Nothing propagated. Until 2026-12
// a wait for progress had no delay costs.
func TestDelayCostsProgressWaits(t *testing.T) {
	dir := t.TempDir()
	ar, bc := int64(trace.CollAllreduce), int64(trace.CollBcast)
	start := func(fn string, op, root, req int64) func(at int64) mpiCall {
		return func(at int64) mpiCall {
			return mpiCall{fn, at, at + 1, []mpiEvent{{trace.CollStart, at, []int64{op, 0, root, 8, req}}}}
		}
	}
	wait := func(op, root, req int64) func(enter, exit int64) mpiCall {
		return func(enter, exit int64) mpiCall {
			return mpiCall{"MPI_Wait", enter, exit, []mpiEvent{{trace.CollComplete, exit, []int64{op, 0, root, 8, req}}}}
		}
	}
	iar, war := start("MPI_Iallreduce", ar, -1, 1), wait(ar, -1, 1)
	ibc, wbc := start("MPI_Ibcast", bc, 0, 2), wait(bc, 0, 2)
	writeProgram(t, dir, [][]mpiCall{
		{iar(100), war(120, 330), {"MPI_Recv", 400, 510, []mpiEvent{{trace.MPIRecv, 510, []int64{1, 1, 0, 8, 0}}}}, ibc(600), wbc(800, 830)},
		{iar(100), war(150, 330), {"MPI_Send", 500, 500, []mpiEvent{{trace.MPISend, 500, []int64{0, 1, 0, 8, 0}}}}, ibc(600), wbc(620, 830)},
		{iar(100), war(300, 330), ibc(600), wbc(650, 830)},
	}, 900)
	type cost struct{ short, long int64 }
	want := map[string]cost{
		"2 serial code MPI_Wait wait_for_progress": {330, 0},
		"1 serial code MPI_Send late_sender":       {100, 0},
		"0 serial code MPI_Wait wait_for_progress": {210, 0},
		"0 MPI_Recv MPI_Wait wait_for_progress":    {20, 0},
		"1 serial code MPI_Send wait_for_progress": {0, 100},
	}
	var first []byte
	for k := 1; k <= 3; k++ {
		rep, js := analyze(t, dir, k)
		if first == nil {
			first = js
		} else if !bytes.Equal(js, first) {
			t.Errorf("k=%d: the report differs from 1 rank's", k)
		}
		ws := rep.WaitStates
		if ws.WaitForProgressNS != 660 || ws.LateSenderNS != 100 {
			t.Fatalf("k=%d: waits for progress %d, Late Sender %d; want 660 and 100", k, ws.WaitForProgressNS, ws.LateSenderNS)
		}
		got := map[string]cost{}
		for _, d := range ws.Delays {
			if d.PropagatedNS != 0 {
				t.Errorf("k=%d: delay %+v: want nothing propagated", k, d)
			}
			key := fmt.Sprintf("%d %s %s %s", d.Rank, d.Code, d.Site, d.Pattern)
			c := got[key]
			c.short += d.NS
			c.long += d.LongTermNS
			got[key] = c
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("k=%d: delay costs %v, want %v", k, got, want)
		}
	}
}

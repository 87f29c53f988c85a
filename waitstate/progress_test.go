package waitstate_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// A rank's part in one MPI_Iallreduce of 3 ranks (times in ns): its
// start's call at start, then the calls at tests (enter, exit) that do
// not complete it, then the call that does: fn over [wait, done], the
// completion at done (none when wait < 0: the rank never completes it).
type nbcPart struct {
	start int64
	tests [][2]int64
	fn    string
	wait  int64
	done  int64
}

func (p nbcPart) calls() []mpiCall {
	ar, req := int64(trace.CollAllreduce), trace.MakeID(0, 1)
	cs := []mpiCall{{"MPI_Iallreduce", p.start, p.start + 1, []mpiEvent{{trace.CollStart, p.start, []int64{ar, 0, -1, 8, req}}}}}
	for _, tc := range p.tests {
		cs = append(cs, mpiCall{"MPI_Test", tc[0], tc[1], nil})
	}
	if p.wait >= 0 {
		cs = append(cs, mpiCall{p.fn, p.wait, p.done, []mpiEvent{{trace.CollComplete, p.done, []int64{ar, 0, -1, 8, req}}}})
	}
	return cs
}

// The waits of a nonblocking collective (waitstate/progress.go) on
// hand-made traces: in its completing call a member waits for the latest
// start (wait at N×N, caused by the late starter) and after it for the
// latest other member to enter the call completing its part (wait for
// progress, caused by that member); the call keeps the longer, the late
// start on a tie. Per case, each rank's wait at N×N and for progress and
// who causes how much of each; the same at 1, 2 and 3 analysis ranks.
func TestNonblockingProgressWaits(t *testing.T) {
	wait := func(start, wait int64) nbcPart { return nbcPart{start: start, fn: "MPI_Wait", wait: wait, done: 330} }
	type want struct {
		nxn, prog [3]int64
		cause     map[string]int64 // "pattern rank" → ns
		delay     map[string]int64 // of the waits for progress: "rank code site" → short-term ns
	}
	for _, tc := range []struct {
		name  string
		parts [3]nbcPart
		want  want
	}{
		// Rank 2 starts 200 late and progresses at once: ranks 0 and 1
		// wait 180 for its start; the 5 after it (its MPI_Wait's enter)
		// is the shorter part, transfer/other.
		{"late start", [3]nbcPart{wait(100, 120), wait(100, 120), wait(300, 305)},
			want{nxn: [3]int64{180, 180, 0}, cause: map[string]int64{"wait_nxn 2": 360}}},
		// Everyone starts at 100, rank 2 computes until 300 after its
		// start: ranks 0 and 1 wait 180 for its progress.
		// Its delay: its serial code up to its MPI_Wait (300) against
		// theirs up to theirs (120), 180 over each, all of the waits.
		{"late progress", [3]nbcPart{wait(100, 120), wait(100, 120), wait(100, 300)},
			want{prog: [3]int64{180, 180, 0}, cause: map[string]int64{"wait_for_progress 2": 360},
				delay: map[string]int64{"2 serial code MPI_Wait": 360}}},
		// Rank 2 starts at 200 and progresses at 300: 80 for its start,
		// 100 for its progress; the longer wins.
		// Rank 2's excess serial code, 100 before its start and 80
		// after, takes each wait of 100 (collective: no cap).
		{"both, progress longer", [3]nbcPart{wait(100, 120), wait(100, 120), wait(200, 300)},
			want{prog: [3]int64{100, 100, 0}, cause: map[string]int64{"wait_for_progress 2": 200},
				delay: map[string]int64{"2 serial code MPI_Wait": 200}}},
		// Starting at 250: 130 for its start, 50 for its progress.
		{"both, start longer", [3]nbcPart{wait(100, 120), wait(100, 120), wait(250, 300)},
			want{nxn: [3]int64{130, 130, 0}, cause: map[string]int64{"wait_nxn 2": 260}}},
		// Starting at 210: 90 and 90, a tie: the late start.
		{"both, a tie", [3]nbcPart{wait(100, 120), wait(100, 120), wait(210, 300)},
			want{nxn: [3]int64{90, 90, 0}, cause: map[string]int64{"wait_nxn 2": 180}}},
		// Rank 1 polls with MPI_Test from 120 on and completes in the
		// call it enters at 320, after rank 2's progress point (300):
		// its progress point is 320, the latest, so rank 0 waits from 120
		// until 320 and rank 2 from 300, both for rank 1 (the limit of
		// the definition: a polling member's earlier calls are no
		// progress point). Rank 1's earlier MPI_Test calls are no wait,
		// and its completing one, begun after every other progress
		// point, waits none. Its delay, up to its completing MPI_Test
		// (320): 316 of serial code and 3 of MPI_Test, over rank 0's 119
		// of serial code (197 and 3: all of 200) and rank 2's 299 (17 and
		// 3: all of 20).
		{"test loop", [3]nbcPart{wait(100, 120), {start: 100, tests: [][2]int64{{120, 121}, {200, 201}, {280, 281}}, fn: "MPI_Test", wait: 320, done: 321}, wait(100, 300)},
			want{prog: [3]int64{200, 0, 20}, cause: map[string]int64{"wait_for_progress 1": 220},
				delay: map[string]int64{"1 serial code MPI_Test": 214, "1 MPI_Test MPI_Test": 6}}},
		// The late member completes by MPI_Test loop: its first test at
		// 300 completes it, its progress point.
		{"late test", [3]nbcPart{wait(100, 120), wait(100, 120), {start: 100, fn: "MPI_Test", wait: 300, done: 301}},
			want{prog: [3]int64{180, 180, 0}, cause: map[string]int64{"wait_for_progress 2": 360},
				delay: map[string]int64{"2 serial code MPI_Test": 360}}},
		// Rank 2 starts at 300 and never completes: no progress point,
		// so only the late start is waited for.
		{"never completes", [3]nbcPart{wait(100, 120), wait(100, 120), {start: 300, wait: -1}},
			want{nxn: [3]int64{180, 180, 0}, cause: map[string]int64{"wait_nxn 2": 360}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			calls := make([][]mpiCall, 3)
			for r, p := range tc.parts {
				calls[r] = p.calls()
			}
			writeProgram(t, dir, calls, 400)
			var first []byte
			for k := 1; k <= 3; k++ {
				rep, js := analyze(t, dir, k)
				if first == nil {
					first = js
				} else if !bytes.Equal(js, first) {
					t.Errorf("k=%d: the report differs from 1 rank's", k)
				}
				ws := rep.WaitStates
				for _, p := range ws.PerProcess {
					if p.WaitNxNNS != tc.want.nxn[p.Rank] || p.WaitForProgressNS != tc.want.prog[p.Rank] {
						t.Errorf("k=%d: rank %d waits %d at N×N and %d for progress, want %d and %d", k, p.Rank, p.WaitNxNNS, p.WaitForProgressNS, tc.want.nxn[p.Rank], tc.want.prog[p.Rank])
					}
				}
				cause := map[string]int64{}
				for _, c := range ws.Causes {
					cause[c.Pattern+" "+string(rune('0'+c.Rank))] += c.NS
				}
				if len(cause) != len(tc.want.cause) {
					t.Errorf("k=%d: causes %v, want %v", k, cause, tc.want.cause)
				}
				for key, ns := range tc.want.cause {
					if cause[key] != ns {
						t.Errorf("k=%d: causes %v, want %v", k, cause, tc.want.cause)
						break
					}
				}
				// A wait for progress is charged to its cause's delay up
				// to its progress point (progress.go); until 2026-12 it
				// had no delay costs.
				delay := map[string]int64{}
				for _, d := range ws.Delays {
					if d.Pattern != "wait_for_progress" {
						continue
					}
					if d.LongTermNS != 0 || d.PropagatedNS != 0 {
						t.Errorf("k=%d: delay %+v: want no long-term or propagated costs", k, d)
					}
					delay[fmt.Sprintf("%d %s %s", d.Rank, d.Code, d.Site)] += d.NS
				}
				if fmt.Sprint(delay) != fmt.Sprint(tc.want.delay) {
					t.Errorf("k=%d: short-term costs of the waits for progress %v, want %v", k, delay, tc.want.delay)
				}
				checkProgressColumns(t, rep)
			}
		})
	}
}

// checkProgressColumns: the per-call-site rows add up to the per-process
// ones, and the progress waits to the total.
func checkProgressColumns(t *testing.T, rep *report.Report) {
	t.Helper()
	ws := rep.WaitStates
	var sites, procs int64
	for _, s := range ws.CallSites {
		sites += s.WaitForProgressNS
	}
	for _, p := range ws.PerProcess {
		procs += p.WaitForProgressNS
	}
	if sites != procs || procs != ws.WaitForProgressNS {
		t.Errorf("wait for progress: %d ns over call sites, %d over processes, %d in total", sites, procs, ws.WaitForProgressNS)
	}
}

// Hostile nonblocking collectives: rank 0 completes its MPI_Iallreduce
// (started at 300 on its thread 0) in an MPI_Wait its thread 1 entered at
// 50, before the start: that progress point is clipped to the start's
// 300, which no one waits past (rank 1 waits 180 at N×N for the start
// only); rank 2 completes its part outside any MPI call (no call, no
// progress point). No panic, no wait for progress, the same report at 1
// to 3 analysis ranks.
func TestNonblockingProgressHostile(t *testing.T) {
	dir := t.TempDir()
	ar, req := int64(trace.CollAllreduce), trace.MakeID(0, 1)
	members := []int{0, 1, 2}
	for r := range 3 {
		w, err := trace.Create(filepath.Join(dir, trace.FileName(r)), trace.Header{Rank: r, NRanks: 3, Host: "node", ClockSrc: "synthetic"})
		if err != nil {
			t.Fatal(err)
		}
		w.AddComm(trace.Communicator{Index: 0, ID: 0, Name: "MPI_COMM_WORLD", Members: members})
		emit := func(th int, k trace.Kind, tm int64, args ...int64) {
			if err := w.E(th, k, tm, args...); err != nil {
				t.Fatal(err)
			}
		}
		call := func(th int, fn string, enter, exit int64, evs ...mpiEvent) {
			emit(th, trace.MPIEnter, enter, w.String(fn), -1)
			for _, e := range evs {
				emit(th, e.k, e.t, e.args...)
			}
			emit(th, trace.MPIExit, exit, w.String(fn))
		}
		emit(0, trace.ThreadBegin, 0, trace.ThreadInitial)
		emit(0, trace.ImplicitTaskBegin, 0, 0, trace.MakeID(0, 1), 1, 0, 1)
		call(0, "MPI_Init", 0, 10)
		start := mpiEvent{trace.CollStart, 0, []int64{ar, 0, -1, 8, req}}
		done := mpiEvent{trace.CollComplete, 330, []int64{ar, 0, -1, 8, req}}
		switch r {
		case 0:
			emit(1, trace.ThreadBegin, 40, trace.ThreadOther)
			call(1, "MPI_Wait", 50, 330, done)
			emit(1, trace.ThreadEnd, 340)
			start.t = 300
			call(0, "MPI_Iallreduce", 300, 301, start)
		case 1:
			start.t = 100
			call(0, "MPI_Iallreduce", 100, 101, start)
			call(0, "MPI_Wait", 120, 330, done)
		case 2:
			start.t = 100
			call(0, "MPI_Iallreduce", 100, 101, start)
			emit(0, done.k, done.t, done.args...)
		}
		call(0, "MPI_Finalize", 400, 410)
		emit(0, trace.ImplicitTaskEnd, 410, 0, trace.MakeID(0, 1), 1, 0, 1)
		emit(0, trace.ThreadEnd, 410)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
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
		if ws.WaitForProgressNS != 0 {
			t.Errorf("k=%d: %d ns of wait for progress, want none", k, ws.WaitForProgressNS)
		}
		for _, p := range ws.PerProcess {
			if p.Rank == 1 && p.WaitNxNNS != 180 {
				t.Errorf("k=%d: rank 1 waits %d ns at N×N, want 180", k, p.WaitNxNNS)
			}
		}
	}
}

// A call completing two nonblocking collectives keeps the longer of a
// late-start wait and a progress wait: everyone starts an MPI_Ibarrier at
// 100, then an MPI_Iallreduce (rank 2 at 290), and completes both in one
// MPI_Waitall (rank 2's at 300). Ranks 0 and 1 wait 170 at N×N for rank
// 2's MPI_Iallreduce (the first completion in their call) and 180 for its
// progress of the MPI_Ibarrier: the call is a wait for progress of 180.
func TestNonblockingProgressWaitall(t *testing.T) {
	dir := t.TempDir()
	ar, bar := int64(trace.CollAllreduce), int64(trace.CollBarrier)
	r1, r2 := trace.MakeID(0, 1), trace.MakeID(0, 2)
	prog := func(ibar, iar, waitall int64) []mpiCall {
		return []mpiCall{
			{"MPI_Ibarrier", ibar, ibar + 1, []mpiEvent{{trace.CollStart, ibar, []int64{bar, 0, -1, 0, r1}}}},
			{"MPI_Iallreduce", iar, iar + 1, []mpiEvent{{trace.CollStart, iar, []int64{ar, 0, -1, 8, r2}}}},
			{"MPI_Waitall", waitall, 330, []mpiEvent{{trace.CollComplete, 329, []int64{ar, 0, -1, 8, r2}}, {trace.CollComplete, 330, []int64{bar, 0, -1, 0, r1}}}},
		}
	}
	writeProgram(t, dir, [][]mpiCall{prog(100, 101, 120), prog(100, 101, 120), prog(100, 290, 300)}, 400)
	for k := 1; k <= 2; k++ {
		rep, _ := analyze(t, dir, k)
		for _, p := range rep.WaitStates.PerProcess {
			want := map[int]int64{0: 180, 1: 180}[p.Rank]
			if p.WaitNxNNS != 0 || p.WaitBarrierNS != 0 || p.WaitForProgressNS != want {
				t.Errorf("k=%d: rank %d: %+v, want only a wait for progress of %d", k, p.Rank, p.WaitTimes, want)
			}
		}
	}
}

package otf2_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// programCalls reads recording_off.c's own output (program.out): per rank,
// the program's timestamps (CLOCK_MONOTONIC ns) of each call and compute
// in order, and of its recording switches.
type programRun struct {
	calls    [2]map[string][][2]int64 // rank → function → [enter, exit] in order
	computes [2][][2]int64
	offs     [2][]int64
}

func readProgram(t *testing.T, path string) *programRun {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := &programRun{}
	for r := range p.calls {
		p.calls[r] = map[string][][2]int64{}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		kv := map[string]int64{}
		fn := ""
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			if k == "fn" {
				fn = v
				continue
			}
			var n int64
			for _, c := range v {
				n = n*10 + int64(c-'0')
			}
			kv[k] = n
		}
		r := kv["rank"]
		switch fields[0] {
		case "call":
			p.calls[r][fn] = append(p.calls[r][fn], [2]int64{kv["enter"], kv["exit"]})
		case "compute":
			p.computes[r] = append(p.computes[r], [2]int64{kv["begin"], kv["end"]})
		case "off":
			p.offs[r] = append(p.offs[r], kv["at"])
		}
	}
	return p
}

// TestScorepRecordingOff: Score-P's recording switched off and on with its
// user API (recording_off.c, mode skew: rank 0 off in iteration 1, rank 1
// in iteration 2, so that each of those iterations' messages and
// collectives has one side recorded). The gaps are no process's work,
// and nothing pairs across them:
//   - by default the window is the longest stretch both ranks recorded
//     (iteration 0, up to the first switch off): each process's work and
//     MPI fill it, its work that of iteration 0 as the program timed it
//     (before: the window ran to MPI_Finalize and each gap was work);
//   - over the whole run (--whole-run), no clock violation (before: three
//     false ones, and the CLC moved events by up to 105 ms) and the wait
//     states those of iterations 0 and 3 as the program's own timestamps
//     give them (before: rank 1's allreduce of iteration 1 paired with
//     rank 0's of iteration 2, 63 ms of wait at N×N instead of 40, as
//     scout still computes it).
func TestScorepRecordingOff(t *testing.T) {
	dir := "testdata/scorep-8.4-recording-off-skew"
	anchor := filepath.Join(dir, "traces.otf2")
	prog := readProgram(t, filepath.Join(dir, "program.out"))
	a, err := otf2.Open(anchor)
	if err != nil {
		t.Fatal(err)
	}
	var gaps []otf2.Gap
	for i := 0; i < a.NumProcesses(); i++ {
		st, err := a.Convert(i, discard{})
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Gaps) != 1 {
			t.Fatalf("process %d: gaps %v, want 1", i, st.Gaps)
		}
		gaps = append(gaps, st.Gaps...)
	}
	cut := otf2.MergeGaps(gaps)
	if len(cut) != 1 {
		t.Fatalf("union of the gaps %v", cut)
	}
	// Rank 0's iteration 2 (after its ON, while rank 1 is off) is dropped;
	// rank 1's iteration 1 (before its own OFF, while rank 0 is off) is
	// kept, a prefix of what rank 1 did: its records pair with nothing
	// (unmatched, warned), and nothing after them pairs wrongly.
	var dropped, kept [2]int64
	for i := 0; i < a.NumProcesses(); i++ {
		st, err := a.ConvertCut(i, discard{}, cut)
		if err != nil {
			t.Fatal(err)
		}
		dropped[i], kept[i] = st.CutRecords, st.KeptRecords
	}
	if dropped[0] == 0 || kept[1] == 0 || dropped[1] != 0 || kept[0] != 0 {
		t.Fatalf("records inside the gaps dropped %v, kept %v: want rank 0's dropped, rank 1's kept", dropped, kept)
	}
	note := fmt.Sprintf("%d message and collective records of 1 processes fall inside the recording gaps", dropped[0])

	for _, k := range []int{1, 2} {
		var rep report.Report
		if err := json.Unmarshal(analyzeWith(t, driver.Options{Dir: anchor}, k), &rep); err != nil {
			t.Fatal(err)
		}
		w := rep.Trace.Window
		if w == nil || w.Bounds != "recorded" || w.EndNS != cut[0].Off {
			t.Fatalf("%d ranks: window %+v, want the stretch before the first switch off (%d)", k, w, cut[0].Off)
		}
		if ws := rep.Trace.Warnings; ws == nil || !strings.Contains(ws.First[0], "recording was switched off") {
			t.Errorf("%d ranks: first warning %v", k, ws)
		}
		if !slices.ContainsFunc(rep.Trace.Notes, func(n string) bool { return strings.HasPrefix(n, note) }) {
			t.Errorf("%d ranks: notes %q lack %q", k, rep.Trace.Notes, note)
		}
		for r, b := range rep.Breakdown.PerProcess {
			if got := b.WorkNS + b.MPINS; math.Abs(float64(got-w.DurationNS)) > 1e3 {
				t.Errorf("%d ranks: rank %d: work + MPI %d ns, window %d ns", k, r, got, w.DurationNS)
			}
			// iteration 0's computes: rank 0's two (wait at N×N, barrier),
			// rank 1's four
			var want int64
			for _, c := range prog.computes[r][:2+2*r] {
				want += c[1] - c[0]
			}
			if math.Abs(float64(b.WorkNS-want)) > 0.01*float64(want) {
				t.Errorf("%d ranks: rank %d: work %.3f ms, the program computed %.3f ms in iteration 0", k, r, float64(b.WorkNS)/1e6, float64(want)/1e6)
			}
		}
	}

	var rep report.Report
	if err := json.Unmarshal(analyzeWith(t, driver.Options{Dir: anchor, WholeRun: true}, 1), &rep); err != nil {
		t.Fatal(err)
	}
	if cs := rep.ClockSync; cs == nil || cs.ViolationsBefore != 0 || cs.MaxCorrectionNS != 0 {
		t.Errorf("clock violations: %+v", cs)
	}
	// The program's own waits in iterations 0 and 3 (both ranks recorded
	// them): rank 0's late sender (rank 1's MPI_Send entry − its MPI_Recv
	// entry), late receiver (rank 1's MPI_Recv − its MPI_Ssend) and wait
	// at barrier, rank 1's wait at N×N.
	wait := func(late, early int, fl, fe string, it int) int64 {
		return prog.calls[late][fl][it][0] - prog.calls[early][fe][it][0]
	}
	var ls, lr, nxn, bar int64
	for _, it := range []int{0, 3} {
		ls += wait(1, 0, "MPI_Send", "MPI_Recv", it)
		lr += wait(1, 0, "MPI_Recv", "MPI_Ssend", it)
		nxn += wait(0, 1, "MPI_Allreduce", "MPI_Allreduce", it)
		bar += wait(1, 0, "MPI_Barrier", "MPI_Barrier", it)
	}
	got := map[int]report.WaitProcess{}
	for _, p := range rep.WaitStates.PerProcess {
		got[p.Rank] = p
	}
	for _, c := range []struct {
		what      string
		ns, truth int64
	}{
		{"rank 0 late sender", got[0].LateSenderNS, ls},
		{"rank 0 late receiver", got[0].LateReceiverNS, lr},
		{"rank 1 wait at N×N", got[1].WaitNxNNS, nxn},
		{"rank 0 wait at barrier", got[0].WaitBarrierNS, bar},
		{"rank 1 late sender", got[1].LateSenderNS, 0},
		{"rank 0 wait at N×N", got[0].WaitNxNNS, 0},
	} {
		if math.Abs(float64(c.ns-c.truth)) > 0.01*float64(c.truth)+1e5 {
			t.Errorf("%s %.3f ms, the program's %.3f ms", c.what, float64(c.ns)/1e6, float64(c.truth)/1e6)
		}
	}
}

// TestScorepRecordingOffLeave: recording_off.c, mode leave: the user
// region "phase" around iteration 1 ends while recording is off, so the
// archive has its Enter and not its Leave. The region is left where
// recording stopped, with a warning: only iteration 1's calls are in it
// (before: every later call, MPI_Finalize's too).
func TestScorepRecordingOffLeave(t *testing.T) {
	anchor := "testdata/scorep-8.4-recording-off-leave/traces.otf2"
	var rep report.Report
	if err := json.Unmarshal(analyzeWith(t, driver.Options{Dir: anchor, WholeRun: true}, 1), &rep); err != nil {
		t.Fatal(err)
	}
	in := map[string]int64{}
	for _, cs := range rep.WaitStates.CallSites {
		if cs.Region == "phase" {
			in[cs.Func] += cs.Calls
		}
	}
	want := map[string]int64{"MPI_Recv": 2, "MPI_Send": 1, "MPI_Ssend": 1, "MPI_Allreduce": 2}
	for f, n := range want {
		if in[f] != n {
			t.Errorf("%s in phase: %d calls, want %d (iteration 1's)", f, in[f], n)
		}
	}
	if len(in) != len(want) {
		t.Errorf("calls in phase: %v, want %v", in, want)
	}
	found := false
	for _, w := range rep.Trace.Warnings.First {
		found = found || strings.Contains(w, `region "phase", entered before recording was switched off, is never left`)
	}
	if !found {
		t.Errorf("no warning on the region never left: %v", rep.Trace.Warnings.First)
	}
}

// The report of the leave archive's default window reads back (ptrace
// compare), and its off-path account has no negative part: the critical
// path's first node, the region "phase" left while recording was off,
// begins 30.3 ms before the recorded stretch; it is on the path from the
// window's start (its weight is its part in the window), where from its
// recorded start before_first_ns was −30.3 ms and the gaps after it held
// +30.3 ms of MPI.
func TestScorepRecordingOffLeaveReadsBack(t *testing.T) {
	for ranks := 1; ranks <= 2; ranks++ {
		js := analyze(t, "testdata/scorep-8.4-recording-off-leave/traces.otf2", ranks)
		rep, err := report.ReadJSON(bytes.NewReader(js))
		if err != nil {
			t.Fatalf("the report analyze wrote does not read back: %v", err)
		}
		op := rep.CriticalPath.OffPath
		if op == nil {
			t.Fatal("no off_path")
		}
		for _, v := range []int64{op.NS, op.Before, op.Between, op.After, op.WakeUp, op.Fork, op.Tasks, op.Threads, op.Processes, op.MPI, op.StartSkew} {
			if v < 0 {
				t.Errorf("%d ranks: off_path %+v has a negative part", ranks, op)
				break
			}
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestScorepRecordingOffTeamOfOne: rec_hyb.c, mode par1 (2 ranks × 2
// threads, OPARI2): each master switches recording off inside a parallel
// region of one thread, which Score-P allows, so the region's team end and
// join fall into the gap and the archive never joins it. The region is
// ended where recording stopped, with a warning per process: every later
// parallel region is a region of its own, not nested in it, and nothing is
// missing from the recorded stretches (before: each later region nested in
// the one never joined, a "parallel_end missing" warning per process at
// the end of the run and the report marked partial, even for the stretch
// before the gap).
func TestScorepRecordingOffTeamOfOne(t *testing.T) {
	dir := "testdata/scorep-8.4-recording-off-team1"
	anchor := filepath.Join(dir, "traces.otf2")
	for rank := 0; rank < 2; rank++ {
		evs, _ := convertProcess(t, anchor, rank)
		open := map[int][]int64{} // thread → its parallel regions not ended
		begun := 0
		for _, e := range evs {
			switch e.Kind {
			case trace.ParallelBegin:
				if o := open[e.thread]; len(o) > 0 {
					t.Errorf("rank %d: parallel region %#x begins inside %#x at %d ns (the program nests none)", rank, e.Args[0], o[len(o)-1], e.Time)
				}
				open[e.thread] = append(open[e.thread], e.Args[0])
				begun++
			case trace.ParallelEnd:
				if o := open[e.thread]; len(o) > 0 {
					open[e.thread] = o[:len(o)-1]
				}
			}
		}
		for th, o := range open {
			if len(o) > 0 {
				t.Errorf("rank %d thread %d: parallel regions %#x never end", rank, th, o)
			}
		}
		if begun == 0 {
			t.Fatalf("rank %d: no parallel region", rank)
		}
	}
	var js [2][]byte
	for i, k := range []int{1, 2} {
		js[i] = analyzeWith(t, driver.Options{Dir: anchor}, k)
		var rep report.Report
		if err := json.Unmarshal(js[i], &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Trace.Partial {
			t.Errorf("%d ranks: report marked partial", k)
		}
		n := 0
		for _, w := range rep.Trace.Warnings.First {
			if strings.Contains(w, "parallel_end missing") {
				t.Errorf("%d ranks: warning %q", k, w)
			}
			if strings.Contains(w, "parallel region forked before recording was switched off is never joined") {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%d ranks: %d warnings on the region never joined, want one per process: %q", k, n, rep.Trace.Warnings.First)
		}
	}
	if !bytes.Equal(js[0], js[1]) {
		t.Error("the reports at 1 and 2 analysis ranks differ")
	}
}

// TestScorepRecordingOffEdge: rec_hyb.c, mode serial (2 ranks × 2 threads,
// OPARI2): both ranks switch recording off at the same point of the
// program, rank 1 8 µs before rank 0, and rank 0 received the last message
// in between. A record inside the union of the gaps but before its own
// process's switch off is kept (beforeOwnOff): the message pairs, without
// a warning, and its late sender counts, over the whole run rank 0's
// 11.814 ms as scout's (before: the receive dropped, "unmatched mpi_send
// … was never received", 9.009 ms).
func TestScorepRecordingOffEdge(t *testing.T) {
	anchor := "testdata/scorep-8.4-recording-off-hybrid/traces.otf2"
	var js [2][]byte
	for i, k := range []int{1, 2} {
		js[i] = analyzeWith(t, driver.Options{Dir: anchor, WholeRun: true}, k)
		var rep report.Report
		if err := json.Unmarshal(js[i], &rep); err != nil {
			t.Fatal(err)
		}
		for _, w := range rep.Trace.Warnings.First {
			if strings.Contains(w, "unmatched") {
				t.Errorf("%d ranks: warning %q", k, w)
			}
		}
		if !slices.ContainsFunc(rep.Trace.Notes, func(n string) bool {
			return strings.HasPrefix(n, "1 message and collective records of 1 processes fall inside the recording gaps but before their own process switched recording off")
		}) {
			t.Errorf("%d ranks: notes %q", k, rep.Trace.Notes)
		}
		// scout --no-time-correct: late sender 11.8143 ms on rank 0, wait
		// at N×N 7.22034 and 4.82133 ms
		want := map[int][2]float64{0: {11.8143, 7.22034}, 1: {0, 4.82133}}
		for _, p := range rep.WaitStates.PerProcess {
			w := want[p.Rank]
			if math.Abs(float64(p.LateSenderNS)/1e6-w[0]) > 1e-3 || math.Abs(float64(p.WaitNxNNS)/1e6-w[1]) > 1e-3 {
				t.Errorf("%d ranks: rank %d: late sender %.6f ms, wait at N×N %.6f ms; scout's %.4f, %.5f ms", k, p.Rank,
					float64(p.LateSenderNS)/1e6, float64(p.WaitNxNNS)/1e6, w[0], w[1])
			}
		}
	}
	if !bytes.Equal(js[0], js[1]) {
		t.Error("the reports at 1 and 2 analysis ranks differ")
	}
}

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func text(r *Report, o TextOptions) string {
	var b bytes.Buffer
	WriteText(&b, r, o)
	return b.String()
}

// The summary shows the key figures of every section, computed from the
// report's values (not from a stored snapshot).
func TestTextShowsKeyFigures(t *testing.T) {
	r := sampleReport()
	out := text(r, TextOptions{})
	want := []string{
		r.Trace.Dir,
		fmt.Sprintf("%d processes on %d hosts, %d threads, %d events", r.Trace.Processes, r.Trace.Hosts, r.Trace.Threads, r.Trace.Events),
		Dur(r.Trace.DurationNS),
		"warnings   2",
		// clock sync
		r.ClockSync.Method, "violations 17 recorded → 2 after the offset interpolation → 0 after the CLC",
		"the CLC then moved events forward by up to " + Dur(r.ClockSync.MaxCorrectionNS),
		// breakdown: ratios and Tallent's class with its reading
		"work " + Pct(r.Breakdown.WorkRatio), "MPI " + Pct(r.Breakdown.MPIRatio), "overhead " + Pct(r.Breakdown.OverheadRatio), "idleness " + Pct(r.Breakdown.IdlenessRatio),
		"class HL", TallentReading["HL"], r.Breakdown.Advice.Text,
		// critical path line
		Dur(r.CriticalPath.LengthNS) + " = " + Pct(r.CriticalPath.ShareOfRunTime) + " of run time",
		"parallelism 8", "42 nodes", "3 rank crossings", "task 83.3%",
		// constructs, findings, anomalies
		"stencil.c:42:9", "640×", Dur(70_000),
		"problem", r.Tasks.Findings[0].Message,
		"3 of 640 tasks", "2 groups", "group 1: 2 tasks on rank 1 thread 2",
		// anomaly times are relative to the trace start (4 ms − 1 ms)
		"at 3 ms",
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("summary lacks %q", w)
		}
	}
	if strings.Contains(out, "\033[") {
		t.Error("colour codes without TextOptions.Color")
	}
	if n := strings.Count(out, "\n"); n > 60 {
		t.Errorf("summary is %d lines, not one screen", n)
	}
	t.Log("\n" + out)
}

// The POP tree is in TALP's order and nesting, each efficiency printed
// with two decimals.
func TestTextPOPTree(t *testing.T) {
	r := sampleReport()
	out := text(r, TextOptions{})
	var pos []int
	for _, row := range popRows(r.POP, true) {
		line := fmt.Sprintf("%-36s %.2f", strings.Repeat("  ", row.Depth)+row.Name, row.Value)
		i := strings.Index(out, line)
		if i < 0 {
			t.Errorf("no line %q", line)
			continue
		}
		pos = append(pos, i)
	}
	for i := 1; i < len(pos); i++ {
		if pos[i] < pos[i-1] {
			t.Errorf("POP rows out of order")
		}
	}
	if !strings.Contains(out, "OpenMP load balance") || !strings.Contains(out, "0.55") {
		t.Error("OpenMP load balance 0.55 missing")
	}
}

// Colour appears only when asked, and efficiencies are coloured by value.
func TestTextColor(t *testing.T) {
	out := text(sampleReport(), TextOptions{Color: true})
	if !strings.Contains(out, ansiRed+"0.55"+ansiReset) {
		t.Error("a poor efficiency (0.55) is not red")
	}
	if !strings.Contains(out, ansiGreen+"0.90"+ansiReset) {
		t.Error("a good efficiency (0.90) is not green")
	}
}

// Every section is optional: a report with only the trace facts prints
// them and no empty headings.
func TestTextOptionalSections(t *testing.T) {
	full := sampleReport()
	r := &Report{Schema: SchemaVersion, Trace: full.Trace}
	r.Trace.Warnings = nil
	out := text(r, TextOptions{})
	for _, absent := range []string{"POP", "critical path", "breakdown", "anomalies", "constructs", "clocks", "warnings"} {
		if strings.Contains(out, absent) {
			t.Errorf("trace-only summary mentions %q:\n%s", absent, out)
		}
	}
	// Each section alone renders without the others.
	for _, set := range []func(*Report){
		func(x *Report) { x.ClockSync = full.ClockSync },
		func(x *Report) { x.Breakdown = full.Breakdown },
		func(x *Report) { x.POP = full.POP },
		func(x *Report) { x.CriticalPath = full.CriticalPath },
		func(x *Report) { x.Graph = full.Graph },
		func(x *Report) { x.Tasks = full.Tasks },
		func(x *Report) { x.Anomalies = full.Anomalies },
		func(x *Report) { x.Anomalies = &Anomalies{Alpha: 0.05} },
		func(x *Report) { x.Tasks = &Tasks{} },
	} {
		x := &Report{Schema: SchemaVersion, Trace: full.Trace}
		set(x)
		if s := text(x, TextOptions{}); len(s) <= len(out)-20 {
			t.Errorf("section renders nothing: %s", s)
		}
	}
}

// The clock line says which step removed the violations and what the CLC
// changed, also when it changed nothing.
func TestClockSummaryWords(t *testing.T) {
	for _, c := range []struct {
		cs   ClockSync
		want string
	}{
		{ClockSync{Method: "interpolation+clc", Messages: 80, ViolationsBefore: 91},
			"interpolation+clc, 80 messages, violations 91 recorded → 0 after the offset interpolation → 0 after the CLC; the CLC then moved no event"},
		{ClockSync{Method: "alignment+clc", Messages: 5, ViolationsBefore: 4, ViolationsInterpolated: 3, MaxCorrectionNS: 1500, MeanCorrectionNS: 20},
			"alignment+clc, 5 messages, violations 4 recorded → 3 after the first-event alignment → 0 after the CLC; the CLC then moved events forward by up to 1.5 µs (mean 20 ns over all events)"},
		{ClockSync{Method: "none", Messages: 5, ViolationsBefore: 4, ViolationsAfter: 4}, "none, 5 messages, violations 4 recorded"},
	} {
		if got := ClockSummary(&c.cs); got != c.want {
			t.Errorf("ClockSummary(%+v)\n got %q\nwant %q", c.cs, got, c.want)
		}
	}
}

// The mutex rows say how much of each wait another thread held the mutex
// (Scalasca's contention; the rest is the hand-over), in text and HTML.
func TestMutexContentionShown(t *testing.T) {
	r := sampleReport()
	r.WaitStates = &WaitStates{OpenMP: &OMPWaits{OMPWaitTimes: OMPWaitTimes{MutexWaitNS: 463_000_000}, Mutexes: []OMPMutex{
		{Kind: "critical", Construct: "mutex.c:50", Acquisitions: 40, WaitNS: 463_000_000, MaxWaitNS: 57_500_000, HoldNS: 144_000_000, ContentionNS: 451_000_000}}}}
	if out := text(r, TextOptions{}); !strings.Contains(out, "463 ms waiting in 40 acquisitions (longest 57.5 ms; 451 ms while another thread held it), held 144 ms") {
		t.Errorf("text report lacks the critical section's contention:\n%s", out)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if h := b.String(); !strings.Contains(h, "while held by another</th>") || !strings.Contains(h, "<td>463 ms</td><td>451 ms</td>") {
		t.Error("HTML report lacks the contention column")
	}
}

// A program of its own threads without OpenMP: the POP thread rows are
// shown with a line saying what they measure, the wait states are its
// threads', and the thread sync place is listed; with OpenMP they keep
// OpenMP's title.
func TestTextUserThreads(t *testing.T) {
	r := sampleReport()
	if r.POP == nil {
		t.Fatal("the sample report has no POP")
	}
	r.WaitStates = &WaitStates{OpenMP: &OMPWaits{OMPWaitTimes: OMPWaitTimes{WaitingNS: 3000, OutsideSyncNS: 2000, ThreadSyncNS: 1000, NoTaskNS: 3000}}}
	r.Trace.NoOpenMP, r.Trace.UserThreads = true, true
	out := text(r, TextOptions{})
	for _, s := range []string{"Thread wait states (", "thread sync", "OpenMP parallel efficiency", "the OpenMP efficiencies are those of the threads the program started itself"} {
		if !strings.Contains(out, s) {
			t.Errorf("user threads, no OpenMP: no %q in\n%s", s, out)
		}
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil || !strings.Contains(b.String(), "<h2>Thread wait states</h2>") {
		t.Errorf("HTML: %v, thread wait states title: %v", err, strings.Contains(b.String(), "<h2>Thread wait states</h2>"))
	}
	r.Trace.NoOpenMP = false
	if out := text(r, TextOptions{}); !strings.Contains(out, "OpenMP wait states (") || strings.Contains(out, "those of the threads the program started") {
		t.Errorf("with OpenMP: wait states not OpenMP's, or the threads' line shown")
	}
}

// A report with buffer flushes says how many, how long and where, in the
// text and in the HTML page; the rank that flushed longest only when
// several did, and the setting to raise only when it is known.
func TestTextBufferFlushes(t *testing.T) {
	r := sampleReport()
	if r.Breakdown == nil || len(r.Breakdown.PerProcess) < 2 {
		t.Fatal("the sample report has no breakdown of several processes")
	}
	r.Breakdown.ThreadTimeNS = 1_000_000_000
	r.Breakdown.BufferFlushes = &BufferFlushes{Count: 16, NS: 28_600_000, WorkNS: 600_000, MPINS: 28_000_000,
		Processes: 2, MaxRank: 1, MaxNS: 11_600_000, Setting: "SCOREP_TOTAL_MEMORY"}
	procs := len(r.Breakdown.PerProcess)
	want := fmt.Sprintf("trace buffer flushes: 16 on 2 of %d processes, 28.6 ms = 2.9%% of thread time: 600 µs in work (taken out of it, as instrumentation), 28 ms inside MPI calls, 0 ns in overhead, 0 ns idle; rank 1 flushed longest, 11.6 ms. "+
		"That is the tracer's time, not the program's, and so are the waits of other threads behind it; a larger SCOREP_TOTAL_MEMORY avoids them", procs)
	if out := text(r, TextOptions{}); !strings.Contains(out, "  "+want+"\n") {
		t.Errorf("no line\n%s\nin\n%s", want, out)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil || !strings.Contains(b.String(), `id="buffer-flushes">trace buffer flushes: 16 on 2 of`) {
		t.Errorf("HTML: %v, no buffer flushes line", err)
	}
	f := r.Breakdown.BufferFlushes
	f.Processes, f.Setting, f.KeptInWork = 1, "", true
	out := text(r, TextOptions{})
	if !strings.Contains(out, "(kept in it: --no-instrumentation-correction)") || !strings.Contains(out, "a larger trace buffer avoids them") ||
		strings.Contains(out, "flushed longest") {
		t.Errorf("one process, setting unknown, kept in work: wrong line in\n%s", out)
	}
	r.Breakdown.BufferFlushes = nil
	if out := text(r, TextOptions{}); strings.Contains(out, "buffer flushes") {
		t.Errorf("no flushes, yet a line")
	}
}

// A share of thread time that rounds to 0.0 % is said to be below 0.1 %.
func TestFlushLineSmallShare(t *testing.T) {
	f := &BufferFlushes{Count: 1, NS: 1000, Processes: 1}
	if got := FlushLine(f, 1e9, 1); !strings.Contains(got, "1 µs = < 0.1% of thread time") {
		t.Errorf("%s", got)
	}
	if got := FlushLine(f, 1e6, 1); !strings.Contains(got, "1 µs = 0.1% of thread time") {
		t.Errorf("%s", got)
	}
}

// The one-sided patterns (Wait at Fence, Create, Free) are reported as the
// others: in the text's pattern line and its causes, the HTML's columns,
// the CSV's columns and the JSON's keys, which are left out when 0 (every
// report of a program without MPI windows stays as it was).
func TestRMAWaitPatternsShown(t *testing.T) {
	r := sampleReport()
	rma := WaitTimes{MPINS: 400_000_000, Calls: 30, WaitAtFenceNS: 200_000_000, WaitAtWinCreateNS: 30_000_000, WaitAtWinFreeNS: 40_000_000, OtherNS: 130_000_000, WaitingCalls: 13}
	r.WaitStates = &WaitStates{WaitTimes: rma,
		CallSites:  []WaitSite{{Func: "MPI_Win_fence", Site: "rma_fence.c:71:3", WaitTimes: rma}},
		PerProcess: []WaitProcess{{Rank: 3, WaitTimes: rma}},
		Causes:     []WaitCause{{Rank: 1, Func: "MPI_Win_fence", Site: "rma_fence.c:71:3", Pattern: "wait_at_win_free", NS: 40_000_000, Share: 0.15, Calls: 1}}}
	out := text(r, TextOptions{})
	for _, s := range []string{"wait at fence 50.0%   wait at window create 7.5%   wait at window free 10.0%   transfer/other 32.5%",
		"waited for rank 1: 15.0% of all waiting (wait at window free at MPI_Win_fence"} {
		if !strings.Contains(out, s) {
			t.Errorf("text report lacks %q:\n%s", s, out)
		}
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if h := b.String(); !strings.Contains(h, "<th>wait at fence</th><th>wait at window create</th><th>wait at window free</th>") ||
		!strings.Contains(h, "<td>200 ms</td><td>30 ms</td><td>40 ms</td><td>130 ms</td>") {
		t.Error("HTML report lacks the one-sided columns")
	}
	dir := t.TempDir()
	if _, err := WriteCSV(dir, r); err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, filepath.Join(dir, CSVWaitProcesses))
	col := map[string]string{}
	for i, h := range recs[0] {
		col[h] = recs[1][i]
	}
	if col["wait_at_fence_ns"] != "200000000" || col["wait_at_win_create_ns"] != "30000000" || col["wait_at_win_free_ns"] != "40000000" {
		t.Errorf("CSV per process: %v", recs)
	}
	js, err := json.Marshal(&r.WaitStates.WaitTimes)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"wait_at_fence_ns":200000000,"wait_at_win_create_ns":30000000,"wait_at_win_free_ns":40000000`) {
		t.Errorf("JSON %s", js)
	}
	if js, _ := json.Marshal(&WaitTimes{MPINS: 5}); strings.Contains(string(js), "wait_at") {
		t.Errorf("JSON without one-sided waits %s names them", js)
	}
	// A program without windows: the page has no columns for them.
	plain := WaitTimes{MPINS: 400_000_000, Calls: 30, LateSenderNS: 100_000_000, OtherNS: 300_000_000, WaitingCalls: 3}
	r.WaitStates = &WaitStates{WaitTimes: plain,
		CallSites:  []WaitSite{{Func: "MPI_Recv", WaitTimes: plain}},
		PerProcess: []WaitProcess{{Rank: 3, WaitTimes: plain}}}
	b.Reset()
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if h := b.String(); strings.Contains(h, "wait at fence") || !strings.Contains(h, "<th>early reduce</th><th>transfer/other</th>") ||
		!strings.Contains(h, "<td>0 ns</td><td>300 ms</td></tr>") {
		t.Error("HTML report of a program without windows shows their columns")
	}
}

// The nonblocking collectives' wait for progress is reported as the
// other patterns: in the text's pattern line and its causes, an HTML
// column (only when some process waited so), the CSV's column and the
// JSON's key, left out when 0.
func TestProgressWaitShown(t *testing.T) {
	r := sampleReport()
	w := WaitTimes{MPINS: 400_000_000, Calls: 40, WaitNxNNS: 20_000_000, WaitForProgressNS: 300_000_000, OtherNS: 80_000_000, WaitingCalls: 30}
	r.WaitStates = &WaitStates{WaitTimes: w,
		CallSites:  []WaitSite{{Func: "MPI_Wait", Site: "nbc_progress.c:48:3", WaitTimes: w}},
		PerProcess: []WaitProcess{{Rank: 1, WaitTimes: w}},
		Causes:     []WaitCause{{Rank: 0, Func: "MPI_Wait", Site: "nbc_progress.c:48:3", Pattern: "wait_for_progress", NS: 300_000_000, Share: 0.9375, Calls: 30}}}
	out := text(r, TextOptions{})
	for _, s := range []string{"wait at N×N 5.0%   wait for progress 75.0%   transfer/other 20.0%",
		"waited for rank 0: 93.8% of all waiting (wait for progress at MPI_Wait",
		"wait for progress: 300 ms (75.0% of MPI time) in calls completing nonblocking collectives that every member had started"} {
		if !strings.Contains(out, s) {
			t.Errorf("text report lacks %q:\n%s", s, out)
		}
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if h := b.String(); !strings.Contains(h, "<th>early reduce</th><th>wait for progress</th><th>transfer/other</th>") ||
		!strings.Contains(h, "<td>300 ms</td><td>80 ms</td></tr>") || strings.Contains(h, "wait at fence") ||
		!strings.Contains(h, "<p>wait for progress: 300 ms (75.0% of MPI time)") {
		t.Error("HTML report lacks the wait for progress column, or shows the one-sided ones")
	}
	dir := t.TempDir()
	if _, err := WriteCSV(dir, r); err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, filepath.Join(dir, CSVWaitProcesses))
	col := map[string]string{}
	for i, h := range recs[0] {
		col[h] = recs[1][i]
	}
	if col["wait_for_progress_ns"] != "300000000" {
		t.Errorf("CSV per process: %v", recs)
	}
	if js, _ := json.Marshal(&r.WaitStates.WaitTimes); !strings.Contains(string(js), `"wait_for_progress_ns":300000000`) {
		t.Errorf("JSON %s", js)
	}
	if js, _ := json.Marshal(&WaitTimes{MPINS: 5}); strings.Contains(string(js), "progress") {
		t.Errorf("JSON without waits for progress %s names them", js)
	}
	// None: no column.
	plain := WaitTimes{MPINS: 400_000_000, Calls: 30, LateSenderNS: 100_000_000, OtherNS: 300_000_000, WaitingCalls: 3}
	r.WaitStates = &WaitStates{WaitTimes: plain,
		CallSites:  []WaitSite{{Func: "MPI_Recv", WaitTimes: plain}},
		PerProcess: []WaitProcess{{Rank: 3, WaitTimes: plain}}}
	b.Reset()
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "wait for progress") {
		t.Error("HTML report of a program without waits for progress shows their column")
	}
	// A little (under a twentieth of the MPI time): the pattern, no hint.
	little := WaitTimes{MPINS: 400_000_000, Calls: 30, WaitForProgressNS: 19_000_000, OtherNS: 381_000_000, WaitingCalls: 3}
	r.WaitStates = &WaitStates{WaitTimes: little, PerProcess: []WaitProcess{{Rank: 3, WaitTimes: little}}}
	if out := text(r, TextOptions{}); !strings.Contains(out, "wait for progress 4.8%") || strings.Contains(out, "wait for progress:") {
		t.Errorf("text report of a little wait for progress:\n%s", out)
	}
}

// General active target synchronisation's patterns (Late Post, Early
// Wait) are reported as the others: in the text's pattern line and its
// causes, HTML columns (only when some process waited so), the CSV's
// columns and the JSON's keys, left out when 0.
func TestRMAEpochWaitsShown(t *testing.T) {
	r := sampleReport()
	w := WaitTimes{MPINS: 400_000_000, Calls: 40, LatePostNS: 100_000_000, EarlyWaitNS: 200_000_000, OtherNS: 100_000_000, WaitingCalls: 30}
	r.WaitStates = &WaitStates{WaitTimes: w,
		CallSites:  []WaitSite{{Func: "MPI_Win_start", Site: "rma_pscw.c:80:4", WaitTimes: w}},
		PerProcess: []WaitProcess{{Rank: 2, WaitTimes: w}},
		Causes:     []WaitCause{{Rank: 1, Func: "MPI_Win_start", Site: "rma_pscw.c:80:4", Pattern: "late_post", NS: 100_000_000, Share: 1.0 / 3, Calls: 10}}}
	out := text(r, TextOptions{})
	for _, s := range []string{"late post 25.0%   early wait 50.0%   transfer/other 25.0%",
		"waited for rank 1: 33.3% of all waiting (late post at MPI_Win_start"} {
		if !strings.Contains(out, s) {
			t.Errorf("text report lacks %q:\n%s", s, out)
		}
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if h := b.String(); !strings.Contains(h, "<th>early reduce</th><th>late post</th><th>early wait</th><th>transfer/other</th>") ||
		!strings.Contains(h, "<td>100 ms</td><td>200 ms</td><td>100 ms</td></tr>") || strings.Contains(h, "wait at fence") {
		t.Error("HTML report lacks the late post and early wait columns, or shows the window collectives'")
	}
	dir := t.TempDir()
	if _, err := WriteCSV(dir, r); err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, filepath.Join(dir, CSVWaitProcesses))
	col := map[string]string{}
	for i, h := range recs[0] {
		col[h] = recs[1][i]
	}
	if col["late_post_ns"] != "100000000" || col["early_wait_ns"] != "200000000" {
		t.Errorf("CSV per process: %v", recs)
	}
	if js, _ := json.Marshal(&r.WaitStates.WaitTimes); !strings.Contains(string(js), `"late_post_ns":100000000,"early_wait_ns":200000000`) {
		t.Errorf("JSON %s", js)
	}
	if js, _ := json.Marshal(&WaitTimes{MPINS: 5}); strings.Contains(string(js), "late_post") || strings.Contains(string(js), "early_wait") {
		t.Errorf("JSON without epoch waits %s names them", js)
	}
	plain := WaitTimes{MPINS: 400_000_000, Calls: 30, LateSenderNS: 100_000_000, OtherNS: 300_000_000, WaitingCalls: 3}
	r.WaitStates = &WaitStates{WaitTimes: plain,
		CallSites:  []WaitSite{{Func: "MPI_Recv", WaitTimes: plain}},
		PerProcess: []WaitProcess{{Rank: 3, WaitTimes: plain}}}
	b.Reset()
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "late post") || strings.Contains(b.String(), "early wait") {
		t.Error("HTML report of a program without epoch waits shows their columns")
	}
}

// The wait-state CSV tables have the same columns in every report, lock
// contention's included (after early_wait_ns), so that a positional
// consumer reads a report without lock epochs and one with them alike.
func TestWaitCSVColumnsStable(t *testing.T) {
	for _, lock := range []int64{0, 7_000_000} {
		r := sampleReport()
		w := WaitTimes{MPINS: 400_000_000, Calls: 30, LateSenderNS: 100_000_000, LockContentionNS: lock, OtherNS: 300_000_000 - lock, WaitingCalls: 3}
		r.WaitStates = &WaitStates{WaitTimes: w,
			CallSites:  []WaitSite{{Func: "MPI_Recv", WaitTimes: w}},
			PerProcess: []WaitProcess{{Rank: 3, WaitTimes: w}}}
		dir := t.TempDir()
		if _, err := WriteCSV(dir, r); err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct {
			name  string
			lead  []string
			trail []string
		}{{CSVWaitSites, []string{"func", "site", "region"}, nil}, {CSVWaitProcesses, []string{"rank"}, []string{"caused_ns", "delay_ns"}}} {
			recs := readCSV(t, filepath.Join(dir, f.name))
			h := recs[0][len(f.lead) : len(recs[0])-len(f.trail)]
			if n := len(h); n < 2 || h[n-2] != "early_wait_ns" || h[n-1] != "lock_contention_ns" {
				t.Errorf("lock contention %d: %s header %v, want its wait columns to end early_wait_ns, lock_contention_ns", lock, f.name, recs[0])
				continue
			}
			if got := recs[1][len(f.lead)+len(h)-1]; got != strconv.FormatInt(lock, 10) {
				t.Errorf("lock contention %d: %s has %s in lock_contention_ns", lock, f.name, got)
			}
		}
	}
}

// A polling loop whose waits all end in calls at another site (MPI_Test
// loops ended by an MPI_Wait) has wait time but no wait instance of its
// own: the text says so instead of "late sender 678 ms (…, 0 of 49032
// calls)".
func TestPolledWaitsEndingElsewhereWorded(t *testing.T) {
	r := sampleReport()
	test := WaitTimes{MPINS: 700_000_000, Calls: 49032, LateSenderNS: 678_000_000, OtherNS: 22_000_000}
	wait := WaitTimes{MPINS: 100_000_000, Calls: 10, LateSenderNS: 90_000_000, OtherNS: 10_000_000, WaitingCalls: 10}
	all := WaitTimes{MPINS: 800_000_000, Calls: 49042, LateSenderNS: 768_000_000, OtherNS: 32_000_000, WaitingCalls: 10}
	r.WaitStates = &WaitStates{WaitTimes: all,
		CallSites:  []WaitSite{{Func: "MPI_Test", Site: "sweep.f90:120", WaitTimes: test}, {Func: "MPI_Waitall", Site: "sweep.f90:140", WaitTimes: wait}},
		PerProcess: []WaitProcess{{Rank: 1, WaitTimes: all}},
		Causes: []WaitCause{{Rank: 0, Func: "MPI_Test", Site: "sweep.f90:120", Pattern: "late_sender", NS: 678_000_000, Share: 0.88},
			{Rank: 2, Func: "MPI_Waitall", Site: "sweep.f90:140", Pattern: "late_sender", NS: 90_000_000, Share: 0.12, Calls: 1}}}
	out := text(r, TextOptions{})
	for _, s := range []string{
		"MPI_Test at sweep.f90:120: late sender 678 ms (96.9% of its 700 ms, polled in 49032 calls, the waits ending in other calls)",
		"MPI_Waitall at sweep.f90:140: late sender 90 ms (90.0% of its 100 ms, 10 of 10 calls)",
		"(late sender at MPI_Test at sweep.f90:120, polling for waits that ended in other calls)",
		"(late sender at MPI_Waitall at sweep.f90:140, 1 call)"} {
		if !strings.Contains(out, s) {
			t.Errorf("text report lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "0 of 49032 calls") || strings.Contains(out, ", 0 calls)") {
		t.Errorf("text report still counts the polls as calls without waits:\n%s", out)
	}
}

// Tallent's class is decided on the time inside parallel regions, so its
// line names those shares: a hybrid run whose idleness is mostly serial
// (MiniFE, CloverLeaf: 30 % idle in all, 6 % inside regions) is "low
// idleness" under a total above the threshold, which without them reads
// as a contradiction.
func TestClassLineShowsInsideRegions(t *testing.T) {
	r := sampleReport()
	b := r.Breakdown
	b.Thresholds = Thresholds{Idleness: 0.2, Overhead: 0.1}
	// 80 ms of thread time: 24 ms idle (30 %), 4.8 ms of it inside
	// regions (6 %); overhead 4 ms (5 %), all inside regions.
	b.IdlenessNS, b.IdlenessSerialNS, b.IdlenessParallelNS = 24_000_000, 19_200_000, 4_800_000
	b.IdlenessRatio = 0.3
	b.Class = "LL"
	want := "class LL (inside parallel regions: idleness 6.0%, overhead 5.0% of thread time; idleness > 20.0%, overhead > 10.0% count as high): " + TallentReading["LL"]
	if out := text(r, TextOptions{}); !strings.Contains(out, want) {
		t.Errorf("text lacks %q:\n%s", want, out)
	}
	if page := htmlOf(t, r); !strings.Contains(page, "Tallent class <b>LL</b> (inside parallel regions: idleness 6.0%, overhead 5.0% of thread time; idleness &gt; 20.0%, overhead &gt; 10.0% count as high)") {
		t.Error("HTML class line lacks the shares inside parallel regions")
	}
	// A report without advice (written before it existed) has no overhead
	// inside regions: the idleness alone.
	b.Advice = nil
	if out := text(r, TextOptions{}); !strings.Contains(out, "(inside parallel regions: idleness 6.0% of thread time; idleness > 20.0%") {
		t.Errorf("text without advice:\n%s", out)
	}
}

// The instrumentation correction's line is shown when it took time out of
// work or is off, and left out when it took nothing (a pure MPI program
// recorded by the collector: no event fell inside work).
func TestTextInstrumentationLine(t *testing.T) {
	for _, c := range []struct {
		corr *InstrumentationCorrection
		want string // "" = no line
	}{
		{&InstrumentationCorrection{Applied: true, EventCostNS: 34}, ""},
		{&InstrumentationCorrection{Applied: true, EventCostNS: 34, Events: 10, CorrectedNS: 340}, "instrumentation correction: 340 ns taken out of work (10 events × 34 ns"},
		{&InstrumentationCorrection{EventCostNS: 34}, "instrumentation correction off"},
		{nil, ""},
	} {
		r := sampleReport()
		r.Breakdown.InstrumentationCorrection = c.corr
		got := text(r, TextOptions{})
		if c.want == "" {
			if strings.Contains(got, "instrumentation correction") {
				t.Errorf("%+v: a line where none is due:\n%s", c.corr, got)
			}
		} else if !strings.Contains(got, c.want) {
			t.Errorf("%+v: no %q in\n%s", c.corr, c.want, got)
		}
	}
}

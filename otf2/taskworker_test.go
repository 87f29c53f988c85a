package otf2_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// TestTaskRuntimeWorkers analyses the hand-encoded archive of APEX's
// record pattern (encode_test.go, apexArchive: an empty main thread, two
// HPX workers whose tasks are TASK-role regions, two tasks renamed while
// they ran) to the figures its timeline gives by hand:
//
//	worker 1 (1000–11000): tasks 2000 + 2000 + 1000 = 5000 ns of work,
//	  waiting for work 3000–4000 and 6000–10000 (5000 ns)
//	worker 2 (2000–12000): tasks 500 + 4000 + 2500 = 7000 ns,
//	  waiting 2500–5000 and 9000–9500 (3000 ns)
//
// over the window 1000–12000 (2 × 11000 ns of thread time, 2000 ns of it
// the workers before their first record or after their last); no
// dependence ties the workers, so the critical path is the longer
// worker's work, 7000 ns.
func TestTaskRuntimeWorkers(t *testing.T) {
	anchor := otf2.ApexArchive(t, t.TempDir(), false)
	if tool := needTool(t, "otf2-print"); tool != "" {
		sameRecords(t, printRecords(t, tool, anchor), decodeRecords(t, anchor))
	}
	a, err := otf2.Open(anchor)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Notes) != 1 || !strings.Contains(a.Notes[0], "APEX's location event counts are the number of its regions (3)") {
		t.Errorf("archive notes %q, want one on APEX's event counts", a.Notes)
	}
	var buf bytes.Buffer
	st, err := a.Convert(0, &buf)
	if err != nil {
		t.Fatal(err)
	}
	// The renamed tasks' Leaves end them: no warning (before: 2 Leaves
	// skipped as out of nesting, every later task nested in them, and 3
	// warnings on the event counts).
	if st.Workers != 2 || st.Unmodelled != 0 || st.UserThreads != 0 || st.Renamed != 2 || len(st.Warnings) != 0 {
		t.Errorf("%d workers, %d unmodelled, %d user threads, %d renamed Leaves, warnings %q; want 2 workers, 2 renamed, no warning",
			st.Workers, st.Unmodelled, st.UserThreads, st.Renamed, st.Warnings)
	}
	evs, tb := convertProcess(t, anchor, 0)
	for _, th := range tb.Threads {
		want := trace.ThreadUser
		if th.Index == 0 {
			want = trace.ThreadInitial
		}
		if th.Type != want {
			t.Errorf("thread %d (%s) of type %d, want %d", th.Index, th.Name, th.Type, want)
		}
	}
	// each worker's waits for work, as [begin, end] pairs
	waits := map[int][][2]int64{}
	for _, e := range evs {
		if (e.Kind == trace.SyncWaitBegin || e.Kind == trace.SyncWaitEnd) && e.Args[0] == trace.SyncWorkerIdle {
			if e.Kind == trace.SyncWaitBegin {
				waits[e.thread] = append(waits[e.thread], [2]int64{e.Time, -1})
			} else if w := waits[e.thread]; len(w) > 0 {
				w[len(w)-1][1] = e.Time
			}
		}
	}
	want := map[int][][2]int64{1: {{3000, 4000}, {6000, 10000}}, 2: {{2500, 5000}, {9000, 9500}}}
	for th, w := range want {
		if got := waits[th]; len(got) != len(w) || got[0] != w[0] || got[1] != w[1] {
			t.Errorf("thread %d waits for work %v, want %v", th, got, w)
		}
	}

	var rep report.Report
	if err := json.Unmarshal(analyze(t, anchor, 1), &rep); err != nil {
		t.Fatal(err)
	}
	b := rep.Breakdown
	if b.ThreadTimeNS != 22000 || b.WorkNS != 12000 || b.IdlenessNS != 10000 || b.MPINS != 0 || b.OverheadNS != 0 {
		t.Errorf("breakdown: thread time %d, work %d, idleness %d, MPI %d, overhead %d; want 22000, 12000, 10000, 0, 0",
			b.ThreadTimeNS, b.WorkNS, b.IdlenessNS, b.MPINS, b.OverheadNS)
	}
	if b.Advice == nil || b.Advice.Dominant != "serial" || !strings.Contains(b.Advice.Text, "worker threads wait for work between their tasks") {
		t.Errorf("advice %+v, want the workers waiting for work", b.Advice)
	}
	o := rep.WaitStates.OpenMP
	var idle, outside int64
	for _, c := range o.Constructs {
		switch c.Kind {
		case "worker_idle":
			if c.Construct != "(waiting for work)" || c.Count != 4 {
				t.Errorf("worker_idle row %+v, want 4 waits at (waiting for work)", c)
			}
			idle += c.WaitingNS
		case "outside_sync":
			outside += c.WaitingNS
		default:
			t.Errorf("unexpected wait row %+v", c)
		}
	}
	if idle != 8000 || outside != 2000 || o.ThreadSyncNS != 8000 {
		t.Errorf("waiting for work %d ns, outside %d ns, thread sync %d ns; want 8000, 2000, 8000", idle, outside, o.ThreadSyncNS)
	}
	if cp := rep.CriticalPath; cp == nil || cp.LengthNS != 7000 || cp.WorkNS != 12000 {
		t.Errorf("critical path %+v, want 7000 ns of 12000 ns of work", cp)
	}
	if !rep.Trace.TaskWorkers || rep.Trace.Warnings != nil && rep.Trace.Warnings.Count != 0 {
		t.Errorf("task workers %v, warnings %+v; want task workers, no warning", rep.Trace.TaskWorkers, rep.Trace.Warnings)
	}
	notes := strings.Join(rep.Trace.Notes, "\n")
	if !strings.Contains(notes, "2 threads in 1 processes run a task runtime's tasks") || !strings.Contains(notes, "2 of their Leaves name another region") {
		t.Errorf("notes %q, want the workers and their renamed tasks", notes)
	}
}

// TestNoThreadModelled: the same archive with regions of role FUNCTION has
// no thread the model accounts (the main thread records nothing, the others
// are runtime helpers). The report says so, where it printed a breakdown of
// 0 ns, a hybrid parallel efficiency of 0.00, "effectively parallel" and a
// critical path of 0 ns.
func TestNoThreadModelled(t *testing.T) {
	anchor := otf2.ApexArchive(t, t.TempDir(), true)
	var rep report.Report
	if err := json.Unmarshal(analyze(t, anchor, 1), &rep); err != nil {
		t.Fatal(err)
	}
	b := rep.Breakdown
	if b.ThreadTimeNS != 0 || b.Advice == nil || b.Advice.Dominant != "none" || !strings.Contains(b.Advice.Text, "no thread modelled") {
		t.Errorf("thread time %d, advice %+v; want 0 and no verdict", b.ThreadTimeNS, b.Advice)
	}
	var text bytes.Buffer
	report.WriteText(&text, &rep, report.TextOptions{})
	s := text.String()
	if !strings.Contains(s, "no thread modelled") {
		t.Errorf("text report says nothing of no thread modelled:\n%s", s)
	}
	for _, bad := range []string{"effectively parallel", "Hybrid parallel efficiency", "time breakdown (", "critical path 0 ns", "critical path  0 ns"} {
		if strings.Contains(s, bad) {
			t.Errorf("text report prints %q of no thread:\n%s", bad, s)
		}
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, &rep, report.HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	if !strings.Contains(h, `id="no-thread"`) {
		t.Error("HTML report says nothing of no thread modelled")
	}
	for _, bad := range []string{"<h2>Time breakdown</h2>", "<h2>POP efficiencies</h2>", "<h2>Critical path</h2>", `id="pop-tree"`} {
		if strings.Contains(h, bad) {
			t.Errorf("HTML report prints %q of no thread", bad)
		}
	}
}

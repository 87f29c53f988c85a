package otf2_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// TestOldRecordLayouts: definitions as OTF2 1.0 to 2.3 wrote them (no
// Comm flags, no location group creator, no realtime timestamp, pre-1.2
// groups, a 1.0 region) read as otf2-print reads them, convert, and analyse
// to the wait states the timestamps put there.
func TestOldRecordLayouts(t *testing.T) {
	dir := t.TempDir()
	if d := os.Getenv("PTRACE_KEEP_OLD"); d != "" {
		dir = d
	}
	anchor := otf2.OldArchive(t, dir)
	if _, err := otf2.Open(anchor); err != nil {
		t.Fatal(err)
	}
	if tool := needTool(t, "otf2-print"); tool != "" {
		want := printRecords(t, tool, anchor)
		got := decodeRecords(t, anchor)
		for loc, w := range want {
			if len(w) != len(got[loc]) {
				t.Fatalf("location %d: otf2-print %d records, decoder %d", loc, len(w), len(got[loc]))
			}
			for i := range w {
				if w[i] != got[loc][i] {
					t.Errorf("location %d record %d: otf2-print %v, decoder %v", loc, i, w[i], got[loc][i])
				}
			}
		}
	}
	evs, tb := convertFirst(t, anchor)
	var got []string
	for _, e := range evs {
		s := e.Kind.String()
		switch e.Kind {
		case trace.MPIEnter, trace.RegionEnter:
			s += " " + tb.String(e.Args[0])
		case trace.CollBegin:
			// the operation, communicator and root the End recorded
			s += " " + trace.CollOp(e.Args[0]).String()
			if e.Args[1] < 0 || e.Args[1] >= int64(len(tb.Comms)) || tb.Comms[e.Args[1]].ID != 0 || e.Args[2] != -1 {
				s += " wrong comm or root"
			}
		case trace.MPISend:
			if e.Args[0] != 1 || e.Args[1] != 7 || e.Args[3] != 42 {
				s += " wrong"
			}
		}
		got = append(got, s)
	}
	want := "thread_begin implicit_task_begin mpi_enter MPI_Init mpi_exit region_enter solve mpi_enter MPI_Send mpi_send mpi_exit " +
		"mpi_enter MPI_Allreduce coll_begin MPI_Allreduce coll_end mpi_exit region_exit mpi_enter MPI_Finalize mpi_exit implicit_task_end thread_end"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("rank 0 converted:\n got %s\nwant %s", g, want)
	}

	// Rank 1 receives at 3300 what rank 0 sent inside MPI_Send from 3000:
	// 500 ns of late sender (from its MPI_Recv at 2500); rank 0 enters
	// MPI_Allreduce at 4000, rank 1 at 5000: 1000 ns of wait at N×N. Both
	// in the compiler-instrumented "solve", which the call sites name.
	var rep report.Report
	if err := json.Unmarshal(analyze(t, anchor, 2), &rep); err != nil {
		t.Fatal(err)
	}
	ws := rep.WaitStates
	if ws == nil {
		t.Fatal("no wait states")
	}
	if ws.LateSenderNS != 500 || ws.WaitNxNNS != 1000 {
		t.Errorf("late sender %d ns, wait at N×N %d ns; want 500 and 1000", ws.LateSenderNS, ws.WaitNxNNS)
	}
	for _, s := range ws.CallSites {
		if s.Region != "solve" {
			t.Errorf("call site %s is in region %q, want solve", s.Func, s.Region)
		}
	}
	if rep.Trace.Window == nil || rep.Trace.Window.DurationNS != 6000 {
		t.Errorf("window %+v, want MPI_Init's end (1000) to MPI_Finalize's start (7000)", rep.Trace.Window)
	}
}

// TestLegacyOpenMP: OpenMP as OTF2 1.x recorded it (OmpFork/OmpJoin, the
// parallel region's Enter/Leave as each thread's implicit task, OmpTask*)
// analyses as the same timeline recorded with OTF2 1.2's records
// (ThreadFork, ThreadTeamBegin, ThreadTask*): the same breakdown, POP and
// task sections, with the work the timestamps hold.
func TestLegacyOpenMP(t *testing.T) {
	var reps [2]report.Report
	var raw [2]map[string]any
	for i, modern := range []bool{false, true} {
		anchor := otf2.LegacyOpenMPArchive(t, t.TempDir(), modern)
		if tool := needTool(t, "otf2-print"); tool != "" {
			sameRecords(t, printRecords(t, tool, anchor), decodeRecords(t, anchor))
		}
		js := analyze(t, anchor, 1)
		if err := json.Unmarshal(js, &reps[i]); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(js, &raw[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"breakdown", "pop", "tasks", "critical_path"} {
		for _, d := range jsonDiff(s, raw[1][s], raw[0][s]) {
			t.Errorf("OTF2 1.x records analyse differently from 1.2's: %s", d)
		}
	}
	b := reps[0].Breakdown
	if b == nil {
		t.Fatal("no breakdown")
	}
	// The window is the trace (no MPI): 1000 to 9100 on both threads.
	// Work: master 1000–5000, worker 1100–8900 (its task 2000–4000
	// included).
	if b.ThreadTimeNS != 2*8100 || b.WorkNS != 4000+7800 {
		t.Errorf("thread time %d, work %d; want %d and %d", b.ThreadTimeNS, b.WorkNS, 2*8100, 4000+7800)
	}
	if tk := reps[0].Tasks; tk == nil || tk.Count != 1 || len(tk.Constructs) != 1 || tk.Constructs[0].Name != "omp.c:7" || tk.Constructs[0].SumNS != 2000 {
		t.Errorf("tasks: %+v, want 1 of the construct at omp.c:7, 2000 ns", tk)
	}
}

// TestThreadOfNoOpenMPLeftOut: a pthread beside the MPI master is not an
// idle OpenMP worker: the breakdown and POP account the master only, the
// report's notes say why, and the analysis is that of the archive without
// it.
func TestThreadOfNoOpenMPLeftOut(t *testing.T) {
	var with, without map[string]any
	if err := json.Unmarshal(analyze(t, otf2.PthreadArchive(t, t.TempDir()), 1), &with); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(analyze(t, otf2.OldArchive(t, t.TempDir()), 1), &without); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"breakdown", "pop", "wait_states"} {
		for _, d := range jsonDiff(s, without[s], with[s]) {
			t.Errorf("with a pthread: %s", d)
		}
	}
	tr, _ := with["trace"].(map[string]any)
	notes, _ := json.Marshal(tr["notes"])
	if !strings.Contains(string(notes), "1 threads in 1 processes are no OpenMP threads") {
		t.Errorf("notes: %s", notes)
	}
}

// convertFirst converts the archive's first process into ptrace's format
// and returns its events and tables (complete after the last frame).
func convertFirst(t *testing.T, anchor string) ([]trace.Event, *trace.Tables) {
	t.Helper()
	a, err := otf2.Open(anchor)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := a.Convert(0, &buf); err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(&buf, "converted")
	if err != nil {
		t.Fatal(err)
	}
	var evs []trace.Event
	for c, err := range r.Chunks() {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, c.Events...)
	}
	return evs, r.Tables()
}

// TestCallingContexts: Score-P with unwinding records regions as
// CallingContextEnter/Leave of calling-context nodes (OTF2 2.0), not as
// Enter/Leave; ptrace once ignored them, lost every MPI and OpenMP region,
// and refused such archives ("happened-before cycle"). OldArchive's
// timeline recorded so converts to the regions on each node's path (the
// unwound frames main and solve are code regions around the MPI calls) and
// analyses to the same wait states, at call sites in solve; a sample is
// noted, undefined nodes and parent loops are counted warnings.
func TestCallingContexts(t *testing.T) {
	anchor := otf2.ContextArchive(t, t.TempDir(), false)
	if tool := needTool(t, "otf2-print"); tool != "" {
		sameRecords(t, printRecords(t, tool, anchor), decodeRecords(t, anchor))
	}
	evs, tb := convertFirst(t, anchor)
	var got []string
	for _, e := range evs {
		s := e.Kind.String()
		switch e.Kind {
		case trace.MPIEnter, trace.RegionEnter, trace.RegionExit:
			s += " " + tb.String(e.Args[0])
		}
		got = append(got, fmt.Sprintf("%s@%d", s, e.Time))
	}
	want := "thread_begin@0 implicit_task_begin@0 region_enter main@0 mpi_enter MPI_Init@0 mpi_exit@1000 " +
		"region_enter solve@3000 mpi_enter MPI_Send@3000 mpi_send@3100 mpi_exit@3200 " +
		"mpi_enter MPI_Allreduce@4000 coll_begin@4000 coll_end@5500 mpi_exit@5600 region_exit solve@7000 " +
		"mpi_enter MPI_Finalize@7000 mpi_exit@8000 region_exit main@8000 implicit_task_end@8000 thread_end@8000"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("rank 0 converted:\n got %s\nwant %s", g, want)
	}
	for _, bad := range []bool{false, true} {
		var rep report.Report
		if err := json.Unmarshal(analyze(t, otf2.ContextArchive(t, t.TempDir(), bad), 2), &rep); err != nil {
			t.Fatal(err)
		}
		ws := rep.WaitStates
		if ws == nil || ws.LateSenderNS != 500 || ws.WaitNxNNS != 1000 {
			t.Fatalf("bad %v: wait states %+v; want 500 ns of late sender, 1000 of wait at N×N", bad, ws)
		}
		for _, s := range ws.CallSites {
			if s.Region != "solve" {
				t.Errorf("bad %v: call site %s is in region %q, want solve", bad, s.Func, s.Region)
			}
		}
		notes := strings.Join(rep.Trace.Notes, "; ")
		if !strings.Contains(notes, "CALLING_CONTEXT_SAMPLE 1") || strings.Contains(notes, "CALLING_CONTEXT ") ||
			strings.Contains(notes, "CALLING_CONTEXT_ENTER") {
			t.Errorf("bad %v: notes %q", bad, notes)
		}
		var warns []string
		if rep.Trace.Warnings != nil {
			warns = rep.Trace.Warnings.First
		}
		w := strings.Join(warns, "; ")
		if !bad && w != "" || bad && (len(warns) != 2 || !strings.Contains(w, "undefined calling context 42") ||
			!strings.Contains(w, "calling context 10 has a parent chain of more than")) {
			t.Errorf("bad %v: warnings %q", bad, w)
		}
	}
}

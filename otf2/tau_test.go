package otf2_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/report"
)

// tauReport analyses a committed TAU archive on 1 and 2 analysis ranks,
// checks that both reports are the same, and returns it.
func tauReport(t *testing.T, anchor string) *report.Report {
	t.Helper()
	one := analyzeWith(t, driver.Options{Dir: anchor}, 1)
	if two := analyzeWith(t, driver.Options{Dir: anchor}, 2); !bytes.Equal(one, two) {
		t.Errorf("the reports on 1 and 2 analysis ranks differ")
	}
	var rep report.Report
	if err := json.Unmarshal(one, &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

func waitProcess(rep *report.Report, rank int) report.WaitProcess {
	if rep.WaitStates != nil {
		for _, p := range rep.WaitStates.PerProcess {
			if p.Rank == rank {
				return p
			}
		}
	}
	return report.WaitProcess{}
}

// TestTAUWaitsPure: TAU 2.35's own OTF2 trace of waits_pure.c
// (testdata/tau-2.35-waits-pure, tau_exec -T mpi) names its MPI regions
// "MPI_Send()" and nests an "MPI Collective Sync" region (the barrier TAU
// adds) in each collective but MPI_Barrier. Its MPI calls are the MPI
// functions they name: MPI_Init and MPI_Finalize bound the window, the
// late receivers of the blocking MPI_Send and MPI_Ssend are found, the
// sync region is no call of its own; the late sender and late receiver
// waits and each rank's MPI time are those of the program's own
// timestamps of every call (out.txt) within TAU's µs timer and its
// wrappers' cost. TAU writes no collective records: the collectives'
// wait states are not computed, which a warning per process says.
func TestTAUWaitsPure(t *testing.T) {
	dir := "testdata/tau-2.35-waits-pure"
	rep := tauReport(t, filepath.Join(dir, "traces.otf2"))
	if rep.Trace.Window == nil || rep.Trace.Window.Bounds != "mpi" {
		t.Fatalf("window %+v: MPI_Init() and MPI_Finalize() do not bound it", rep.Trace.Window)
	}
	// The program's own timestamps: per rank, its calls in order, 5 per
	// iteration (rank 0 MPI_Recv, MPI_Send, MPI_Ssend; rank 1 MPI_Send,
	// MPI_Recv, MPI_Recv; then MPI_Allreduce, MPI_Barrier).
	type call struct {
		fn          string
		enter, exit int64
	}
	calls := map[int][]call{}
	f, err := os.Open(filepath.Join(dir, "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	re := regexp.MustCompile(`^call rank=(\d) fn=(\S+) enter=(\d+) exit=(\d+)$`)
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			r, _ := strconv.Atoi(m[1])
			en, _ := strconv.ParseInt(m[3], 10, 64)
			ex, _ := strconv.ParseInt(m[4], 10, 64)
			calls[r] = append(calls[r], call{m[2], en, ex})
		}
	}
	if len(calls[0]) != 20 || len(calls[1]) != 20 {
		t.Fatalf("out.txt: %d and %d calls", len(calls[0]), len(calls[1]))
	}
	var lateSender, lateReceiver int64
	mpi := [2]int64{}
	for r := range 2 {
		for _, c := range calls[r] {
			mpi[r] += c.exit - c.enter
		}
	}
	for it := 0; it < 4; it++ {
		a, b := calls[0][it*5:], calls[1][it*5:]
		lateSender += max(0, b[0].enter-a[0].enter)                                   // rank 1's send after rank 0's receive
		lateReceiver += max(0, b[1].enter-a[1].enter) + max(0, b[2].enter-a[2].enter) // rank 1's receives after rank 0's sends
	}
	const tol = 500_000 // ns: TAU's µs timer, its wrappers' cost
	check := func(what string, got, want int64) {
		t.Helper()
		if d := got - want; d < -tol || d > tol {
			t.Errorf("%s: %.3f ms, the program's timestamps %.3f ms", what, float64(got)/1e6, float64(want)/1e6)
		}
	}
	w0, w1 := waitProcess(rep, 0), waitProcess(rep, 1)
	check("rank 0 late sender", w0.LateSenderNS, lateSender)
	check("rank 0 late receiver", w0.LateReceiverNS, lateReceiver)
	check("rank 1 late sender + receiver", w1.LateSenderNS+w1.LateReceiverNS, 0)
	// MPI time: the program's calls and MPI_Comm_rank and MPI_Comm_size
	// (a few µs); MPI_Init and MPI_Finalize are outside the window but
	// for the processes' skew (within tol here)
	check("rank 0 MPI time", rep.Breakdown.PerProcess[0].MPINS, mpi[0])
	check("rank 1 MPI time", rep.Breakdown.PerProcess[1].MPINS, mpi[1])
	for r, w := range []report.WaitProcess{w0, w1} {
		if w.Calls != 22 { // 20 timed, MPI_Comm_rank, MPI_Comm_size
			t.Errorf("rank %d: %d MPI calls in the window, the program makes 22", r, w.Calls)
		}
		if w.WaitNxNNS != 0 || w.WaitBarrierNS != 0 {
			t.Errorf("rank %d: collective wait states %d, %d ns from no collective record", r, w.WaitNxNNS, w.WaitBarrierNS)
		}
	}
	want := "8 MPI collective calls (MPI_Allreduce 4, MPI_Barrier 4) hold no collective record"
	n := 0
	for _, w := range rep.Trace.Warnings.First {
		if strings.Contains(w, want) && strings.Contains(w, "TAU") && strings.Contains(w, "not computed") {
			n++
		}
	}
	if n != 2 || rep.Trace.Warnings.Count != 2 {
		t.Errorf("%d warnings %q of %d, want one per process and no other (TAU's location event counts are off: a note); warnings %q", n, want, rep.Trace.Warnings.Count, rep.Trace.Warnings.First)
	}
	if len(rep.Trace.Notes) == 0 || !strings.Contains(rep.Trace.Notes[0], "TAU's location event counts are not checked") {
		t.Errorf("notes %q, want the event counts' first", rep.Trace.Notes)
	}
}

// TestTAUCompilerInstrumented: TAU puts every region whose name holds
// "mpi" in the MPI paradigm; with its compiler instrumentation
// (testdata/tau-2.35-waits-mpi-compinst: waits_mpi.c, tau_cc.sh
// -optCompInst) a function's name holds its source file, so main and the
// compute functions of waits_mpi.c were MPI calls (the whole run MPI time,
// 2 calls). They are code: each rank's MPI time is its MPI_* calls' in
// the window, computed from otf2-print's listing of the records, to the
// ns (TAU's timer counts µs), and its calls are named in main.
func TestTAUCompilerInstrumented(t *testing.T) {
	dir := "testdata/tau-2.35-waits-mpi-compinst"
	anchor := filepath.Join(dir, "traces.otf2")
	rep := tauReport(t, anchor)
	a, err := otf2.Open(anchor)
	if err != nil {
		t.Fatal(err)
	}
	rankOf := map[uint64]int{}
	for i := 0; i < a.NumProcesses(); i++ {
		rankOf[a.Locations(i)[0]] = i
	}
	// Intervals of the MPI_* calls per rank from the listing (µs ticks).
	type iv struct {
		name       string
		start, end int64
	}
	var ivs [2][]iv
	var open [2][]iv
	re := regexp.MustCompile(`^(ENTER|LEAVE)\s+(\d+)\s+(\d+)\s+Region: "(.*)" <\d+>$`)
	for _, line := range strings.Split(string(readListing(t, dir)), "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		loc, _ := strconv.ParseUint(m[2], 10, 64)
		ts, _ := strconv.ParseInt(m[3], 10, 64)
		r := rankOf[loc]
		if m[1] == "ENTER" {
			open[r] = append(open[r], iv{m[4], ts, 0})
			continue
		}
		c := open[r][len(open[r])-1]
		open[r] = open[r][:len(open[r])-1]
		c.end = ts
		if strings.HasPrefix(c.name, "MPI_") {
			ivs[r] = append(ivs[r], c)
		}
	}
	// The window: the first exit from MPI_Init_thread to the last entry
	// into MPI_Finalize.
	w0, w1 := int64(1<<62), int64(0)
	for r := range 2 {
		for _, c := range ivs[r] {
			switch c.name {
			case "MPI_Init_thread()":
				w0 = min(w0, c.end)
			case "MPI_Finalize()":
				w1 = max(w1, c.start)
			}
		}
	}
	ticks := int64(a.Defs.TimerResolution)
	if ticks != 1_000_000 {
		t.Fatalf("timer %d Hz, TAU's counts µs", ticks)
	}
	for r := range 2 {
		var want int64
		calls := 0
		for _, c := range ivs[r] {
			if s, e := max(c.start, w0), min(c.end, w1); e > s {
				want += (e - s) * 1000
				calls++
			}
		}
		if got := rep.Breakdown.PerProcess[r].MPINS; got != want {
			t.Errorf("rank %d: MPI time %d ns, its MPI_* calls in the window %d ns", r, got, want)
		}
		if rep.Breakdown.PerProcess[r].WorkNS < 100_000_000 {
			t.Errorf("rank %d: work %d ns: the program's functions are not work", r, rep.Breakdown.PerProcess[r].WorkNS)
		}
		if w := waitProcess(rep, r); w.Calls < 10 {
			t.Errorf("rank %d: %d MPI calls", r, w.Calls)
		}
	}
	found := false
	for _, s := range rep.WaitStates.CallSites {
		found = found || (s.Func == "MPI_Recv" && strings.HasPrefix(s.Region, "main [{"))
	}
	if !found {
		t.Errorf("no MPI_Recv call site in main: %s", fmt.Sprint(rep.WaitStates.CallSites))
	}
}

// TestTAUOpenMPTimers: TAU's OMPT support (testdata/tau-2.35-halo-ompt,
// halo_mpi.c, 2 ranks × 2 threads) records OpenMP as timers, without
// OTF2's OpenMP records: the report said "no OpenMP in the trace" and
// analysed one thread per process, silently. A warning per process says
// that the OpenMP structure is not analysed; the messages of the tasks'
// MPI calls still all match (80 Isend per rank and an MPI_Sendrecv pair,
// out.txt: messages_per_rank=80).
func TestTAUOpenMPTimers(t *testing.T) {
	rep := tauReport(t, "testdata/tau-2.35-halo-ompt/traces.otf2")
	n := 0
	for _, w := range rep.Trace.Warnings.First {
		if strings.Contains(w, "Enter records of OpenMP regions, but no OpenMP event records") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d OpenMP warnings, want one per process: %q", n, rep.Trace.Warnings.First)
	}
	if m := rep.ClockSync.Messages; m != 162 {
		t.Errorf("%d messages matched, want 162", m)
	}
}

// TestTAU2OTF2: TAU's converter of its own trace format (tau2otf2) gives
// every region the paradigm UNKNOWN and names MPI calls "MPI_Send()  ",
// and defines its region groups' ids again for the communicators' groups
// (testdata/tau2otf2-2.35-waits-pure). Read, its MPI calls are calls:
// MPI_Init and MPI_Finalize bound the window, the 6 messages match, and
// rank 0's late sender and late receiver are the archive's own (otf2-print:
// the receives' and sends' entries, in µs), with no warning but the
// collectives' and the duplicate groups a note.
func TestTAU2OTF2(t *testing.T) {
	rep := tauReport(t, filepath.Join("testdata", "tau2otf2-2.35-waits-pure", "traces.otf2"))
	if w := rep.Trace.Window; w == nil || w.Bounds != "mpi" {
		t.Errorf("window %+v, want MPI_Init → MPI_Finalize", w)
	}
	if c := rep.ClockSync; c == nil || c.Messages != 6 || c.UnmatchedSends != 0 || c.UnmatchedReceives != 0 {
		t.Errorf("clock sync %+v, want 6 messages matched", c)
	}
	// late sender: 413635 → 441554 and 521562 → 526605; late receiver:
	// 445611 → 457581, 465701 → 470306, 529586 → 539649, 546865 → 567024
	w := waitProcess(rep, 0)
	if w.LateSenderNS != (27919+5043)*1000 || w.LateReceiverNS != (11970+4605+10063+20159)*1000 {
		t.Errorf("rank 0: late sender %d, late receiver %d ns; want %d, %d", w.LateSenderNS, w.LateReceiverNS, (27919+5043)*1000, (11970+4605+10063+20159)*1000)
	}
	if n := rep.Trace.Warnings; n == nil || n.Count != 2 {
		t.Errorf("warnings %+v, want the 2 processes' collectives only", n)
	}
	dup := false
	for _, n := range rep.Trace.Notes {
		dup = dup || strings.Contains(n, "2 group ids defined twice")
	}
	if !dup {
		t.Errorf("notes %q lack the duplicate groups", rep.Trace.Notes)
	}
}

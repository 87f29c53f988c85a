package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// taskCall is one MPI call task_mpi.c timed: the thread that made it, its
// enter and exit.
type taskCall struct {
	thread      int
	enter, exit int64
}

var taskMPICall = regexp.MustCompile(`(?m)^call rank=(\d) fn=(\S+) thread=(\d+) enter=(\d+) exit=(\d+)$`)

// MPI from an OpenMP worker thread and from inside tasks (task_mpi.c):
// every message matched, no warning, the calls on the threads that made
// them, rank 0's Late Sender equal to what the program's own stamps give,
// and the delay that caused it charged to the parallel region rank 1's
// sending thread ran in, also when that thread is a worker of the team
// (which has no parallel_begin of its own): it was "serial code".
func TestMPIInTasks(t *testing.T) {
	h := setup(t)
	const iters, d = 4, 20 // d: the designed delay, ms
	bin := h.buildMPI(t, testdata("task_mpi.c"), "-fopenmp")
	t.Setenv("OMPI_MCA_mpi_yield_when_idle", "1")
	src, err := os.ReadFile(filepath.Join(h.root, testdata("task_mpi.c")))
	if err != nil {
		t.Fatal(err)
	}
	// the line of the communication thread's region
	var commLine int
	for i, l := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#pragma omp parallel") {
			commLine = i + 1
			break
		}
	}
	var bad []string
	for attempt := 1; attempt <= 3; attempt++ {
		dir, code, out := h.record(t, nil, mpirunN(2, bin, strconv.Itoa(iters), strconv.Itoa(d))...)
		if strings.Contains(out, "with MPI_THREAD_MULTIPLE") {
			t.Skip("this MPI does not provide MPI_THREAD_MULTIPLE")
		}
		if code != 0 {
			t.Fatalf("exit status %d\n%s", code, out)
		}
		procs := valid(t, dir)
		r := h.report(t, dir)
		noReportWarnings(t, r)
		allMatched(t, r, 2*iters, 0)
		var calls [2][]taskCall
		for _, m := range taskMPICall.FindAllStringSubmatch(out, -1) {
			num := func(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }
			calls[num(m[1])] = append(calls[num(m[1])], taskCall{int(num(m[3])), num(m[4]), num(m[5])})
		}
		if len(calls[0]) != 2*iters || len(calls[1]) != 2*iters {
			t.Fatalf("the program printed %d and %d calls, want %d each:\n%s", len(calls[0]), len(calls[1]), 2*iters, out)
		}
		if bad = taskMPIMismatches(t, r, procs, calls, iters, commLine); len(bad) == 0 {
			return
		}
		t.Logf("run %d: %d values off: %s", attempt, len(bad), strings.Join(bad, "; "))
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// taskMPIMismatches returns how the report of a run of task_mpi.c differs
// from the values the program's stamps give.
func taskMPIMismatches(t *testing.T, r *report.Report, procs []*trace.Process, calls [2][]taskCall, iters, commLine int) []string {
	t.Helper()
	var bad []string
	// The recorded calls, per thread in order, against the program's.
	var slack int64
	for rank, p := range procs {
		fn := map[int]string{0: "MPI_Recv", 1: "MPI_Send"}[rank]
		rec := map[int][][2]int64{}
		for th := range p.NumThreads() {
			var enter int64
			inCall := false
			for sc := p.Scan(th, nil); sc.Next(); {
				e := sc.Event()
				switch e.Kind {
				case trace.MPIEnter:
					inCall, enter = p.String(e.Args[0]) == fn, e.Time
				case trace.MPIExit:
					if inCall {
						rec[th] = append(rec[th], [2]int64{enter, e.Time})
					}
					inCall = false
				}
			}
		}
		seen := map[int]int{}
		for k, c := range calls[rank] {
			if k < iters && c.thread != 1 {
				t.Fatalf("rank %d: call %d on thread %d, the program makes it on thread 1", rank, k, c.thread)
			}
			j := seen[c.thread]
			seen[c.thread]++
			if j >= len(rec[c.thread]) {
				t.Fatalf("rank %d thread %d: %d %s calls recorded, the program made more", rank, c.thread, len(rec[c.thread]), fn)
			}
			got := rec[c.thread][j]
			slack += abs(got[0]-c.enter) + abs(c.exit-got[1])
		}
		for th, cs := range rec {
			if len(cs) != seen[th] {
				t.Errorf("rank %d thread %d: %d %s calls recorded, the program made %d", rank, th, len(cs), fn, seen[th])
			}
		}
	}
	// Rank 0 receives what rank 1 sends, in order: Scalasca's Late Sender.
	var want, wantComm int64
	for k, rc := range calls[0] {
		w := max(0, min(calls[1][k].enter-rc.enter, rc.exit-rc.enter))
		want += w
		if k < iters {
			wantComm += w
		}
	}
	ws := r.WaitStates
	if ws == nil || len(ws.PerProcess) != 2 {
		t.Fatalf("wait states %+v, want 2 processes", ws)
	}
	got := ws.PerProcess[0].WaitTimes.LateSenderNS
	t.Logf("rank 0: late sender %d ns, the program's stamps give %d (%d with the communication thread); slack %d ns", got, want, wantComm, slack)
	if tol := max(500_000, want*3/200) + slack; abs(got-want) > tol {
		bad = append(bad, fmt.Sprintf("rank 0: late sender %d ns, the program's stamps give %d ns (tolerance %d)", got, want, tol))
	}
	// The waits of the communication thread's section are rank 1's
	// thread 1 computing in the first parallel region before its sends.
	region := fmt.Sprintf("task_mpi.c:%d:", commLine)
	var inRegion, serial int64
	for _, dl := range ws.Delays {
		t.Logf("delay: rank %d %q before %q: %d ns (+%d long-term, %d propagated)", dl.Rank, dl.Code, dl.Site, dl.NS, dl.LongTermNS, dl.PropagatedNS)
		switch {
		case dl.Rank != 1:
			bad = append(bad, fmt.Sprintf("a delay charged to rank %d, which never delays rank 1", dl.Rank))
		case strings.Contains(dl.Code, region):
			inRegion += dl.NS
		case dl.Code == "serial code":
			serial += dl.NS
		}
	}
	// Part of a wait is propagated (rank 1 waited in turn) rather than
	// delay: at least half is rank 1's computing.
	if inRegion < wantComm/2 {
		bad = append(bad, fmt.Sprintf("rank 1's delay in the region at %s: %d ns, want about the %d ns rank 0 waited for it", region, inRegion, wantComm))
	}
	if serial > 1_000_000 {
		bad = append(bad, fmt.Sprintf("rank 1's delay in serial code: %d ns, but it sends from parallel regions only", serial))
	}
	return bad
}

package e2e

// These tests build the collector and the example programs (make collector
// examples), trace the examples with "ptrace record", validate the traces and
// check facts that must hold in them. They need clang, LLVM's libomp
// (libomp-dev), make and Open MPI (mpicc, mpirun); without them the tests are
// skipped, unless CI=true, where a missing tool is a failure.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

type harness struct {
	root   string // repository
	work   string // scratch directory of the test binary
	ptrace string // ptrace binary built for the tests
	libs   string // build/collector
	ex     string // build/examples
}

var (
	once     sync.Once
	shared   *harness
	skipWhy  string
	setupErr error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		os.RemoveAll(shared.work)
	}
	os.Exit(code)
}

// setup builds everything once per test binary.
func setup(t *testing.T) *harness {
	t.Helper()
	once.Do(func() { shared, skipWhy, setupErr = build() })
	if skipWhy != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %s", skipWhy)
		}
		t.Skip(skipWhy)
	}
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return shared
}

func build() (*harness, string, error) {
	// Each tool with the Debian package that provides it, so that a missing
	// piece is named exactly (bash .ci/run installs them all).
	for _, tp := range [][2]string{{"make", "make"}, {"clang", "clang"}, {"mpicc", "libopenmpi-dev"}, {"mpirun", "openmpi-bin"}} {
		if _, err := exec.LookPath(tp[0]); err != nil {
			return nil, fmt.Sprintf("%s is not installed (Debian package %s: apt-get install -y %s)", tp[0], tp[1], tp[1]), nil
		}
	}
	if hdr, _ := filepath.Glob("/usr/lib/llvm-*/lib/clang/*/include/omp-tools.h"); len(hdr) == 0 {
		if _, err := os.Stat("/usr/include/omp-tools.h"); err != nil {
			return nil, "LLVM's OpenMP runtime (omp-tools.h) is not installed (Debian package libomp-dev: apt-get install -y libomp-dev)", nil
		}
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		return nil, "", err
	}
	h := &harness{root: root, libs: filepath.Join(root, "build", "collector"), ex: filepath.Join(root, "build", "examples")}
	if h.work, err = os.MkdirTemp("", "ptrace-collector-test-"); err != nil {
		return nil, "", err
	}
	steps := [][]string{
		{"make", "-s", "-C", root, "collector", "examples"},
		{goTool(), "build", "-o", filepath.Join(h.work, "ptrace"), "./cmd/ptrace"},
		{"clang", "-O1", "-g", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fopenmp", "-o", filepath.Join(h.work, "crash"), "ompt/collector/e2e/testdata/crash.c"},
		{"mpicc", "-O1", "-g", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fopenmp", "-o", filepath.Join(h.work, "nofinalize"), "ompt/collector/e2e/testdata/nofinalize.c"},
		{"clang", "-O1", "-g", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fopenmp", "-o", filepath.Join(h.work, "detach"), "ompt/collector/e2e/testdata/detach.c"},
		{"clang", "-O1", "-g", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fopenmp", "-o", filepath.Join(h.work, "exitpar"), "ompt/collector/e2e/testdata/exitpar.c"},
		{"mpicc", "-O1", "-g", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fopenmp", "-o", filepath.Join(h.work, "mt_mpi"), "ompt/collector/e2e/testdata/mt_mpi.c"},
		{"mpicc", "-O1", "-g", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fopenmp", "-o", filepath.Join(h.work, "mpi_abort"), "ompt/collector/e2e/testdata/mpi_abort.c"},
		{"mpicc", "-O1", "-g", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", filepath.Join(h.work, "mpi_fpe"), "ompt/collector/e2e/testdata/mpi_fpe.c"},
	}
	for _, s := range steps {
		c := exec.Command(s[0], s[1:]...)
		c.Dir = root
		c.Env = append(os.Environ(), "OMPI_CC=clang")
		if out, err := c.CombinedOutput(); err != nil {
			return nil, "", fmt.Errorf("%s: %v\n%s", strings.Join(s, " "), err, out)
		}
	}
	h.ptrace = filepath.Join(h.work, "ptrace")
	return h, "", nil
}

func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func (h *harness) example(name string) string { return filepath.Join(h.ex, name) }

// mpirun returns the launcher command for a 2-rank run followed by args.
func mpirun(args ...string) []string {
	return append([]string{"mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "2"}, args...)
}

// record runs "ptrace record -o DIR opts -- cmd" with two OpenMP threads and
// returns DIR, the exit status and the output. A run that does not end within
// 90 s is a failure: the collector must never hang the program.
func (h *harness) record(t *testing.T, opts []string, cmd ...string) (string, int, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	args := append(append([]string{"record", "-o", dir}, opts...), "--")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, h.ptrace, append(args, cmd...)...)
	c.Env = append(os.Environ(), "OMP_NUM_THREADS=2", "PTRACE_COLLECTOR_DIR="+h.libs,
		"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_rmaps_base_oversubscribe=1")
	out, err := c.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%v did not finish in 90 s (hang?)\n%s", cmd, out)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ptrace record %v: %v\n%s", cmd, err, out)
	}
	return dir, code, string(out)
}

// designed runs a recorded program up to three times until run finds
// nothing off the program's design, and fails t with the last run's
// findings: a run the machine's load disturbed (a rank descheduled for
// the order of a designed lateness) is recorded again. What must hold in
// every run (the ground truth) run checks itself, failing t.
func designed(t *testing.T, run func() []string) {
	t.Helper()
	var bad []string
	for attempt := 1; attempt <= 3; attempt++ {
		if bad = run(); len(bad) == 0 {
			return
		}
		t.Logf("run %d: %d off: %s", attempt, len(bad), strings.Join(bad, "; "))
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// valid checks that the trace has no problem and loads every process.
func valid(t *testing.T, dir string) []*trace.Process {
	t.Helper()
	problems, st, err := trace.ValidateDir(dir, nil)
	if err != nil {
		t.Fatalf("validate %s: %v", dir, err)
	}
	for _, p := range problems {
		t.Errorf("validate: %s", p)
	}
	if st.Events == 0 {
		t.Errorf("%s: no events", dir)
	}
	return load(t, dir)
}

// analyze runs "ptrace analyze --json" on the trace: it must load every event.
func (h *harness) analyze(t *testing.T, dir string, procs []*trace.Process) {
	t.Helper()
	r := h.report(t, dir)
	var events int64
	for _, p := range procs {
		events += p.NumEvents()
	}
	if r.Trace.Events != events || r.Trace.Processes != len(procs) {
		t.Errorf("analyze saw %d events in %d processes, the trace has %d in %d", r.Trace.Events, r.Trace.Processes, events, len(procs))
	}
}

func load(t *testing.T, dir string) []*trace.Process {
	t.Helper()
	d, err := trace.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var procs []*trace.Process
	for i := range d.Files {
		p, err := trace.LoadProcess(d.FilePath(i), trace.LoadOptions{})
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		procs = append(procs, p)
	}
	return procs
}

// count returns how many events of kind k the process holds, per thread.
func count(p *trace.Process, k trace.Kind, keep func(e *trace.Event) bool) []int {
	n := make([]int, p.NumThreads())
	for th := range n {
		for sc := p.Scan(th, nil); sc.Next(); {
			if e := sc.Event(); e.Kind == k && (keep == nil || keep(e)) {
				n[th]++
			}
		}
	}
	return n
}

func sum(a []int) int {
	s := 0
	for _, v := range a {
		s += v
	}
	return s
}

// checkThreads: n threads, each from thread_begin to thread_end, thread 0
// the initial thread starting the initial task.
func checkThreads(t *testing.T, p *trace.Process, n int) {
	t.Helper()
	if len(rowsOf(p)) != n || len(p.Threads) != n {
		t.Fatalf("%s: %d threads with events, %d in the table, want %d", p.File, len(rowsOf(p)), len(p.Threads), n)
	}
	for th, evs := range rowsOf(p) {
		if len(evs) < 2 || evs[0].Kind != trace.ThreadBegin || evs[len(evs)-1].Kind != trace.ThreadEnd {
			t.Errorf("thread %d does not run from thread_begin to thread_end", th)
		}
	}
	for _, th := range p.Threads {
		want := trace.ThreadWorker
		if th.Index == 0 {
			want = trace.ThreadInitial
		}
		if th.Type != want {
			t.Errorf("thread %d has type %d, want %d", th.Index, th.Type, want)
		}
	}
	var initial *trace.Event
	for i := range rowsOf(p)[0] {
		if e := &rowsOf(p)[0][i]; e.Kind == trace.ImplicitTaskBegin {
			initial = e
			break
		}
	}
	if initial == nil || initial.Args[4]&ompt.TaskInitial == 0 || initial.Args[0] != 0 {
		t.Errorf("thread 0's first implicit task is not the initial task (flags initial, parallel 0): %+v", initial)
	}
}

// pragmaLines returns the lines of src that hold a pragma starting with prefix.
func pragmaLines(t *testing.T, src, prefix string) map[int]bool {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := map[int]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.HasPrefix(strings.TrimSpace(sc.Text()), prefix) {
			lines[n] = true
		}
	}
	return lines
}

// fibCalls is the number of fib(k) calls with k ≥ 2 of fib(n): F(n+1) − 1.
func fibCalls(n int) int {
	a, b := 0, 1
	for i := 0; i < n+1; i++ {
		a, b = b, a+b
	}
	return a - 1
}

func TestFib(t *testing.T) {
	h := setup(t)
	const n = 16
	dir, code, out := h.record(t, nil, h.example("fib"), strconv.Itoa(n))
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, out)
	}
	procs := valid(t, dir)
	h.analyze(t, dir, procs)
	p := procs[0]
	checkThreads(t, p, 2)
	tasks := 2 * fibCalls(n)
	created := map[int64]int{}
	for _, evs := range rowsOf(p) {
		for _, e := range evs {
			if e.Kind == trace.TaskCreate {
				created[e.Args[0]]++
				if e.Args[2]&ompt.TaskExplicit == 0 {
					t.Errorf("task %#x: flags %#x lack explicit", e.Args[0], e.Args[2])
				}
			}
		}
	}
	if len(created) != tasks {
		t.Errorf("%d tasks created, fib(%d) creates %d", len(created), n, tasks)
	}
	// a tied task runs from a switch to it to its completion
	in := count(p, trace.TaskSchedule, func(e *trace.Event) bool { return e.Args[1] == ompt.StatusSwitch && created[e.Args[2]] == 1 })
	done := count(p, trace.TaskSchedule, func(e *trace.Event) bool { return e.Args[1] == ompt.StatusComplete && created[e.Args[0]] == 1 })
	if sum(in) != tasks || sum(done) != tasks {
		t.Errorf("%d switches to and %d completions of explicit tasks, want %d each", sum(in), sum(done), tasks)
	}
	tw := count(p, trace.SyncBegin, func(e *trace.Event) bool { return e.Args[0] == ompt.SyncTaskwait })
	if sum(tw) != fibCalls(n) {
		t.Errorf("%d taskwaits, want %d", sum(tw), fibCalls(n))
	}
	// task constructs resolve to the two task pragmas of fib.c
	lines := pragmaLines(t, filepath.Join(h.root, "examples", "fib.c"), "#pragma omp task ")
	seen := map[int]bool{}
	for _, evs := range rowsOf(p) {
		for _, e := range evs {
			if e.Kind != trace.TaskCreate {
				continue
			}
			l := p.Locations[e.Args[3]]
			if filepath.Base(l.File) != "fib.c" || !lines[l.Line] || l.Func == "" {
				t.Fatalf("task_create location %+v is not a task pragma of fib.c (lines %v)", l, lines)
			}
			seen[l.Line] = true
		}
	}
	if len(seen) != 2 {
		t.Errorf("task constructs at lines %v, want both task pragmas %v", seen, lines)
	}
	if m, err := trace.ReadManifest(filepath.Join(dir, trace.ManifestName)); err != nil || m.Ranks != 1 || m.Files[0].Events != p.NumEvents() {
		t.Errorf("manifest %+v (%v), want 1 rank with %d events", m, err, p.NumEvents())
	}
}

func TestImbalance(t *testing.T) {
	h := setup(t)
	// once with the collector's default stamps (the TSC where usable), once
	// with clock_gettime
	for _, clock := range []string{"default", "monotonic"} {
		t.Run(clock, func(t *testing.T) {
			if clock == "monotonic" {
				t.Setenv("PTRACE_CLOCK", "monotonic")
			}
			testImbalance(t, h, clock)
		})
	}
}

func testImbalance(t *testing.T, h *harness, clock string) {
	const g, iters = 20, 30 // µs, iterations
	dir, code, out := h.record(t, nil, h.example("imbalance"), strconv.Itoa(g), strconv.Itoa(iters))
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, out)
	}
	p := valid(t, dir)[0]
	hd := p.Header
	if hd.EventCostNS <= 0 || (hd.TimestampCounter != "tsc" && hd.TimestampCounter != "clock_gettime") ||
		(clock == "monotonic") != (hd.TimestampCounter == "clock_gettime") || (hd.TimestampCounter == "tsc") != (hd.TSCHz > 0) {
		t.Errorf("header: timestamp_counter %q, tsc_hz %d, event_cost_ns %d", hd.TimestampCounter, hd.TSCHz, hd.EventCostNS)
	}
	// The program read CLOCK_MONOTONIC just before and after its benchmark
	// region: the trace's times, converted from TSC stamps or not, are on
	// that clock, so the region's parallel_begin and parallel_end lie
	// between the two reads (within 1 µs for the conversion).
	var t0, t1 int64
	if _, err := fmt.Sscanf(out[strings.Index(out, "region_ns="):], "region_ns=%d,%d", &t0, &t1); err != nil {
		t.Fatalf("no region_ns in the output: %v\n%s", err, out)
	}
	var regions [][2]int64
	for sc := p.Scan(0, nil); sc.Next(); {
		switch e := sc.Event(); e.Kind {
		case trace.ParallelBegin:
			regions = append(regions, [2]int64{e.Time, 0})
		case trace.ParallelEnd:
			regions[len(regions)-1][1] = e.Time
		}
	}
	const eps = 1000
	if len(regions) != 2 || regions[1][0] < t0-eps || regions[1][1] > t1+eps || regions[1][1]-regions[1][0] < (t1-t0)/2 {
		t.Errorf("benchmark region in the trace %v, the program measured it from %d to %d ns", regions, t0, t1)
	}
	const n = 2
	checkThreads(t, p, n)
	for th := 0; th < n; th++ {
		if c := count(p, trace.TaskCreate, nil)[th]; c != iters {
			t.Errorf("thread %d created %d tasks, want %d", th, c, iters)
		}
		if c := count(p, trace.SyncBegin, func(e *trace.Event) bool { return e.Args[0] == ompt.SyncTaskwait })[th]; c != iters {
			t.Errorf("thread %d: %d taskwaits, want %d", th, c, iters)
		}
		if c := count(p, trace.SyncBegin, func(e *trace.Event) bool { return e.Args[0] == ompt.SyncBarrierExplicit })[th]; c != iters {
			t.Errorf("thread %d: %d explicit barriers, want %d", th, c, iters)
		}
	}
	// Thread t (number t−1 in the team) creates tasks that spin t·g: every
	// task's recorded run is at least that long (a lower bound by
	// construction: the task polls the same clock).
	num := map[int64]int64{}    // implicit task -> thread number
	parent := map[int64]int64{} // task -> creating implicit task
	for _, evs := range rowsOf(p) {
		for _, e := range evs {
			switch e.Kind {
			case trace.ImplicitTaskBegin:
				num[e.Args[1]] = e.Args[3]
			case trace.TaskCreate:
				parent[e.Args[0]] = e.Args[1]
			}
		}
	}
	// a task may run on another thread than its creator
	start := map[int64]int64{}
	runs := 0
	for _, evs := range rowsOf(p) {
		for _, e := range evs {
			switch {
			case e.Kind == trace.TaskSchedule && e.Args[1] == ompt.StatusSwitch:
				start[e.Args[2]] = e.Time
			case e.Kind == trace.TaskSchedule && e.Args[1] == ompt.StatusComplete:
				task := e.Args[0]
				pt, ok := parent[task]
				if !ok {
					continue
				}
				runs++
				min := (num[pt] + 1) * g * 1000
				if d := e.Time - start[task]; d < min {
					t.Errorf("task %#x of thread number %d ran %d ns, less than %d", task, num[pt], d, min)
				}
			}
		}
	}
	if runs != n*iters {
		t.Errorf("%d task runs, want %d", runs, n*iters)
	}
}

func TestCholesky(t *testing.T) {
	h := setup(t)
	const nt = 8
	dir, code, out := h.record(t, nil, h.example("cholesky"), strconv.Itoa(nt), "32")
	if code != 0 || !strings.Contains(out, " ok") {
		t.Fatalf("exit status %d\n%s", code, out)
	}
	p := valid(t, dir)[0]
	tasks := nt + nt*(nt-1) + nt*(nt-1)*(nt-2)/6
	// dependences per task: potrf 1, trsm 2, syrk 2, gemm 3
	entries := nt + 2*nt*(nt-1) + 3*nt*(nt-1)*(nt-2)/6
	createdAt := map[int64]int64{}
	var deps, list int
	addrs := map[uint64]bool{}
	for th := 0; th < p.NumThreads(); th++ {
		evs, thDeps := p.Decode(th, nil)
		for i, e := range evs {
			switch e.Kind {
			case trace.TaskCreate:
				createdAt[e.Args[0]] = e.Time
				if i+1 >= len(evs) || evs[i+1].Kind != trace.TaskDeps || evs[i+1].Args[0] != e.Args[0] {
					t.Fatalf("task_create of %#x is not followed by its task_dependences", e.Args[0])
				}
			case trace.TaskDeps:
				deps++
				for _, d := range e.Deps(thDeps) {
					list++
					addrs[d.Addr] = true
					if d.Type != trace.DepIn && d.Type != trace.DepInout {
						t.Errorf("dependence type %d, want in (1) or inout (3)", d.Type)
					}
				}
			}
		}
	}
	if len(createdAt) != tasks || deps != tasks || list != entries {
		t.Errorf("%d tasks, %d dependence lists, %d entries; want %d, %d, %d", len(createdAt), deps, list, tasks, tasks, entries)
	}
	if len(addrs) != nt*(nt+1)/2 {
		t.Errorf("%d distinct dependence addresses, want the %d tiles of the lower triangle", len(addrs), nt*(nt+1)/2)
	}
	edges := 0
	for _, evs := range rowsOf(p) {
		for _, e := range evs {
			if e.Kind == trace.TaskDependence {
				edges++
				if createdAt[e.Args[0]] > createdAt[e.Args[1]] {
					t.Errorf("edge %#x -> %#x: the predecessor is created after its successor", e.Args[0], e.Args[1])
				}
			}
		}
	}
	if edges == 0 {
		t.Error("no task_dependence edges")
	}
}

// TestHaloMPIFlushes: a hybrid MPI program recorded with the smallest
// buffer flushes on both ranks, inside work, MPI calls and overhead alike;
// the report's flushes add up, per process and in all, and are the same at
// one analysis rank and two.
func TestHaloMPIFlushes(t *testing.T) {
	h := setup(t)
	cmd := mpirun(h.example("halo_mpi"), "1024", "200", "16")
	dir, code, out := h.record(t, []string{"--buffer-mb", "0.0625"}, cmd...)
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, out)
	}
	// Where the flushes fall is the run's timing: how many began inside
	// an MPI call is read from the recorded events, and the report books
	// time in MPI exactly when some did.
	pairs, inMPI := int64(0), 0
	for _, p := range valid(t, dir) {
		pairs += int64(sum(count(p, trace.FlushEnd, nil)))
		for _, evs := range rowsOf(p) {
			depth, fn := 0, ""
			for _, e := range evs {
				switch e.Kind {
				case trace.MPIEnter:
					if depth == 0 {
						fn = p.String(e.Args[0])
					}
					depth++
				case trace.MPIExit:
					depth--
				case trace.FlushBegin:
					// MPI_Init and MPI_Finalize lie outside the window.
					if depth > 0 && fn != "MPI_Init" && fn != "MPI_Init_thread" && fn != "MPI_Finalize" {
						inMPI++
					}
				}
			}
		}
	}
	one, two := h.report(t, dir).Breakdown, h.reportArgs(t, dir, "--ranks", "2").Breakdown
	f := one.BufferFlushes
	t.Logf("%d flushes recorded, %d of them begun inside an MPI call: %+v", pairs, inMPI, f)
	if f == nil || f.Count == 0 || f.Count > pairs || f.Processes != 2 || (f.MPINS > 0) != (inMPI > 0) || f.WorkNS <= 0 ||
		f.WorkNS+f.MPINS+f.OverheadNS+f.IdleNS != f.NS || f.Setting != "PTRACE_BUFFER_MB" {
		t.Fatalf("buffer flushes %+v, want some of the %d recorded, on both ranks, in work, in MPI calls when some of them (%d) began there, adding up", f, pairs, inMPI)
	}
	var n, ns int64
	for _, p := range one.PerProcess {
		n, ns = n+p.BufferFlushes, ns+p.BufferFlushNS
	}
	if n != f.Count || ns != f.NS {
		t.Errorf("per process %d flushes, %d ns; in all %d, %d", n, ns, f.Count, f.NS)
	}
	if two.BufferFlushes == nil || *two.BufferFlushes != *f {
		t.Errorf("at two analysis ranks %+v, at one %+v", two.BufferFlushes, f)
	}
}

func TestHaloMPI(t *testing.T) {
	h := setup(t)
	const iters = 20
	cmd := mpirun(h.example("halo_mpi"), "4096", strconv.Itoa(iters), "4")
	dir, code, out := h.record(t, nil, cmd...)
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, out)
	}
	procs := valid(t, dir)
	if len(procs) != 2 {
		t.Fatalf("%d processes, want 2", len(procs))
	}
	h.analyze(t, dir, procs)
	m, err := trace.ReadManifest(filepath.Join(dir, trace.ManifestName))
	if err != nil || m.Ranks != 2 || len(m.Files) != 2 {
		t.Errorf("manifest %+v (%v), want 2 ranks", m, err)
	}
	commIDs := make([]map[string]int64, 2)
	for r, p := range procs {
		if p.Header.Rank != r || p.Header.NRanks != 2 {
			t.Errorf("rank %d: header says rank %d of %d", r, p.Header.Rank, p.Header.NRanks)
		}
		// one run identity, drawn by rank 0 at MPI_Init, in every header
		// and the manifest (format version 2 on); the collector writes
		// the version this ptrace writes
		if len(p.Header.RunID) != 32 || p.Header.RunID != procs[0].Header.RunID || m == nil || m.RunID != p.Header.RunID || p.Header.Version != trace.Version || m.Version != trace.Version {
			t.Errorf("rank %d: run id %q (rank 0: %q, manifest %+v), version %d", r, p.Header.RunID, procs[0].Header.RunID, m, p.Header.Version)
		}
		checkThreads(t, p, 2)
		// communicators
		commIDs[r] = map[string]int64{}
		for _, c := range p.Comms {
			kind, _, _ := strings.Cut(c.Name, "#")
			commIDs[r][kind] = c.ID
			want := []int{0, 1}
			if kind == "MPI_COMM_SELF" || kind == "MPI_Comm_split" {
				want = []int{r}
			}
			if fmt.Sprint(c.MemberList()) != fmt.Sprint(want) {
				t.Errorf("rank %d: %s has members %v, want %v", r, c.Name, c.MemberList(), want)
			}
		}
		if w, ok := p.CommByIndex(0); !ok || w.Name != "MPI_COMM_WORLD" || w.ID != 0 {
			t.Errorf("rank %d: communicator 0 is %+v, want MPI_COMM_WORLD with id 0", r, w)
		}
		// clock offsets at init and finalize; on one host the clocks agree
		// within the measurement's error (the offset is read between the two
		// ends of the round trip on the same clock)
		if len(p.ClockOffsets) != 2 || p.ClockOffsets[0].When != "init" || p.ClockOffsets[1].When != "finalize" {
			t.Errorf("rank %d: clock offsets %+v, want init and finalize", r, p.ClockOffsets)
		}
		for _, o := range p.ClockOffsets {
			if (r == 0 && (o.OffsetNS != 0 || o.ErrorNS != 0)) || (r > 0 && (o.ErrorNS <= 0 || abs(o.OffsetNS) > o.ErrorNS)) {
				t.Errorf("rank %d: clock offset %+v", r, o)
			}
		}
		posted := map[int64]bool{} // a request may complete on another thread
		for _, evs := range rowsOf(p) {
			for _, e := range evs {
				if e.Kind == trace.MPIRecvPost {
					posted[e.Args[3]] = true
				}
			}
		}
		sendReqs := map[int64]int{}
		colls := map[trace.CollOp]int{}
		for th, evs := range rowsOf(p) {
			open := int64(-1)
			for _, e := range evs {
				switch e.Kind {
				case trace.MPIEnter:
					if open >= 0 {
						t.Fatalf("rank %d thread %d: %s entered inside %s", r, th, p.String(e.Args[0]), p.String(open))
					}
					open = e.Args[0]
				case trace.MPIExit:
					if open != e.Args[0] {
						t.Fatalf("rank %d thread %d: exit of %s, but %d is open", r, th, p.String(e.Args[0]), open)
					}
					open = -1
				case trace.MPISend, trace.MPIRecv, trace.MPIRecvPost, trace.MPIRequestDone, trace.CollBegin, trace.CollEnd:
					if open < 0 {
						t.Fatalf("rank %d thread %d: %s outside an MPI call", r, th, e.Kind)
					}
				}
				switch e.Kind {
				case trace.MPISend:
					if e.Args[4] != 0 {
						sendReqs[e.Args[4]]++
					}
				case trace.MPIRecv:
					if e.Args[4] != 0 && !posted[e.Args[4]] {
						t.Errorf("rank %d: receive completes request %#x that was never posted", r, e.Args[4])
					}
				case trace.MPIRequestDone:
					sendReqs[e.Args[0]]--
				case trace.CollBegin:
					colls[trace.CollOp(e.Args[0])]++
					if op := trace.CollOp(e.Args[0]); (op == trace.CollReduce || op == trace.CollBcast) && e.Args[2] != 0 {
						t.Errorf("rank %d: %s with root %d, want 0", r, op, e.Args[2])
					}
				}
			}
		}
		for req, n := range sendReqs {
			if n != 0 {
				t.Errorf("rank %d: send request %#x: %d more sends than completions", r, req, n)
			}
		}
		want := map[trace.CollOp]int{trace.CollAllreduce: 2 * (iters / 10), trace.CollReduce: 1, trace.CollBcast: 1, trace.CollBarrier: 2}
		if fmt.Sprint(colls) != fmt.Sprint(want) {
			t.Errorf("rank %d: collectives %v, want %v", r, colls, want)
		}
	}
	if commIDs[0]["MPI_Comm_dup"] == 0 || commIDs[0]["MPI_Comm_dup"] != commIDs[1]["MPI_Comm_dup"] {
		t.Errorf("the duplicated communicator has ids %d and %d, want one agreed id", commIDs[0]["MPI_Comm_dup"], commIDs[1]["MPI_Comm_dup"])
	}
	if commIDs[0]["MPI_Comm_split"] == commIDs[1]["MPI_Comm_split"] {
		t.Error("the two split communicators (one rank each) share an id")
	}
	// 2 halo messages per iteration and rank, plus one Sendrecv
	if n := matchMessages(t, procs); n != 2*(2*iters+1) {
		t.Errorf("%d messages, want %d", n, 2*(2*iters+1))
	}
}

// matchMessages checks that every message is recorded on both sides, as a
// send and as a receive with the same ranks, tag, communicator and size, and
// returns how many there are.
func matchMessages(t *testing.T, procs []*trace.Process) int {
	t.Helper()
	var sent, recvd []string
	key := func(from, to, tag, comm, bytes int64) string {
		return fmt.Sprintf("%d->%d tag %d comm %d %dB", from, to, tag, comm, bytes)
	}
	for r, p := range procs {
		for _, evs := range rowsOf(p) {
			for _, e := range evs {
				c, _ := p.CommByIndex(e.Args[2])
				switch e.Kind {
				case trace.MPISend:
					sent = append(sent, key(int64(r), e.Args[0], e.Args[1], c.ID, e.Args[3]))
				case trace.MPIRecv:
					recvd = append(recvd, key(e.Args[0], int64(r), e.Args[1], c.ID, e.Args[3]))
				}
			}
		}
	}
	sort.Strings(sent)
	sort.Strings(recvd)
	if strings.Join(sent, "\n") != strings.Join(recvd, "\n") {
		t.Errorf("%d sends and %d receives do not match", len(sent), len(recvd))
	}
	return len(sent)
}

// TestMPIThreadMultiple: both OpenMP threads of each rank call MPI at the
// same time (Isend/Irecv completed by Waitany, Testsome, Waitall; Probe and
// blocking Send/Recv); every message is recorded on both sides, on the thread
// that made the call.
func TestMPIThreadMultiple(t *testing.T) {
	h := setup(t)
	cmd := mpirun(filepath.Join(h.work, "mt_mpi"))
	dir, code, out := h.record(t, nil, cmd...)
	if strings.Contains(out, "not provided") {
		t.Skip("this Open MPI does not provide MPI_THREAD_MULTIPLE")
	}
	if code != 0 || !strings.Contains(out, "errors=0") {
		t.Fatalf("exit status %d\n%s", code, out)
	}
	procs := valid(t, dir)
	const rounds = 50 // per thread: one Isend and one Send
	if n := matchMessages(t, procs); n != 2*2*2*rounds {
		t.Errorf("%d messages, want %d", n, 2*2*2*rounds)
	}
	for _, p := range procs {
		for th, n := range count(p, trace.MPISend, nil) {
			if n != 2*rounds {
				t.Errorf("%s thread %d: %d sends, want %d", p.File, th, n, 2*rounds)
			}
		}
	}
}

// TestDetach: omp_fulfill_event is recorded as detach_fulfill; a task whose
// body ends first finishes with status detach and completes at the fulfill,
// one fulfilled early completes normally after it.
func TestDetach(t *testing.T) {
	h := setup(t)
	dir, code, out := h.record(t, nil, filepath.Join(h.work, "detach"))
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, out)
	}
	p := valid(t, dir)[0]
	type ev struct {
		time   int64
		status int64 // of the task's last schedule away from it
	}
	fulfill := map[int64]int64{}
	last := map[int64]ev{}
	for _, evs := range rowsOf(p) {
		for _, e := range evs {
			switch {
			case e.Kind == trace.DetachFulfill:
				if _, dup := fulfill[e.Args[0]]; dup {
					t.Errorf("task %#x fulfilled twice", e.Args[0])
				}
				fulfill[e.Args[0]] = e.Time
			case e.Kind == trace.TaskSchedule && e.Args[1] != ompt.StatusSwitch:
				last[e.Args[0]] = ev{e.Time, e.Args[1]}
			}
		}
	}
	if len(fulfill) != 2 {
		t.Fatalf("%d detach_fulfill events, want 2", len(fulfill))
	}
	for task, ft := range fulfill {
		end, ok := last[task]
		switch {
		case !ok:
			t.Errorf("detached task %#x never ran", task)
		case end.status == ompt.StatusDetach && ft < end.time:
			t.Errorf("task %#x: fulfilled at %d before its body ended (status detach) at %d", task, ft, end.time)
		case end.status == ompt.StatusComplete && ft > end.time:
			t.Errorf("task %#x: completed at %d before its fulfill at %d", task, end.time, ft)
		case end.status != ompt.StatusDetach && end.status != ompt.StatusComplete:
			t.Errorf("task %#x ends with status %d", task, end.status)
		}
	}
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// TestRobustness: programs that crash, exit early, skip MPI_Finalize or
// overflow a tiny buffer leave traces that validate, or that validate
// reports precisely; none hangs.
func TestRobustness(t *testing.T) {
	h := setup(t)
	for _, c := range []struct{ how, signal string }{{"abort", "SIGABRT"}, {"segv", "SIGSEGV"}, {"fpe", "SIGFPE"}, {"term", "SIGTERM"}} {
		t.Run(c.how, func(t *testing.T) {
			dir, code, out := h.record(t, nil, filepath.Join(h.work, "crash"), c.how)
			if code < 128 || !strings.Contains(out, "was killed by "+c.signal) {
				t.Errorf("exit status %d, want death by %s, named\n%s", code, c.signal, out)
			}
			problems, _, err := trace.ValidateDir(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != 1 || !strings.Contains(problems[0].Message, "no end frame") {
				t.Errorf("problems %v, want exactly the missing end frame", problems)
			}
			p := load(t, dir)[0]
			if n := sum(count(p, trace.TaskCreate, nil)); n != 100 || len(p.Warnings) == 0 {
				t.Errorf("%d tasks (want 100), warnings %v", n, p.Warnings)
			}
		})
	}
	// Killed before the OpenMP runtime starts: no trace, and record says
	// why, naming the signal, without advice about linking libomp.
	t.Run("fpe-first", func(t *testing.T) {
		dir, code, out := h.record(t, nil, filepath.Join(h.work, "crash"), "fpe-first")
		if code != 128+8 {
			t.Errorf("exit status %d, want 136 (SIGFPE)\n%s", code, out)
		}
		if !strings.Contains(out, "no trace was written") || !strings.Contains(out, "killed by SIGFPE (floating point exception) before it started") ||
			strings.Contains(out, "-lomp") || strings.Contains(out, "linked with LLVM") {
			t.Errorf("record's message does not name the signal, or gives linking advice:\n%s", out)
		}
		if files, _ := filepath.Glob(filepath.Join(dir, "rank-*")); len(files) != 0 {
			t.Errorf("rank files %v, want none", files)
		}
	})
	// A command that cannot start (a mistyped name, a directory): record
	// says so, not that the program ran without OpenMP or MPI.
	t.Run("cannot-run", func(t *testing.T) {
		for _, c := range []struct{ cmd, want string }{
			{filepath.Join(h.work, "no-such-program"), "no such file or directory"},
			{h.work, "permission denied"},
			{"no-such-program-in-path", "executable file not found in $PATH"},
		} {
			_, code, out := h.record(t, nil, c.cmd)
			if code == 0 || !strings.Contains(out, "record: cannot run "+c.cmd+": ") || !strings.Contains(out, c.want) ||
				strings.Contains(out, "started neither") {
				t.Errorf("%s: exit status %d, output:\n%s", c.cmd, code, out)
			}
		}
	})
	// A pure MPI rank killed by SIGFPE after MPI_Init: every rank keeps
	// its events (rank 1 up to the signal, rank 0 until mpirun ends it).
	t.Run("mpi-fpe", func(t *testing.T) {
		dir, code, out := h.record(t, nil, mpirun(filepath.Join(h.work, "mpi_fpe"))...)
		if code != 128+8 || !strings.Contains(out, "128 + 8: a process killed by SIGFPE") {
			t.Errorf("exit status %d, want 136 named as SIGFPE\n%s", code, out)
		}
		problems, _, err := trace.ValidateDir(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			if !strings.Contains(p.Message, "no end frame") {
				t.Errorf("problem %s, want only missing end frames", p)
			}
		}
		procs := load(t, dir)
		if len(procs) != 2 {
			t.Fatalf("%d processes, want 2", len(procs))
		}
		if n := sum(count(procs[1], trace.CollEnd, nil)); n != 1 {
			t.Errorf("rank 1 holds %d collective ends, want its barrier before the signal", n)
		}
	})
	t.Run("handled", func(t *testing.T) {
		dir, code, out := h.record(t, nil, filepath.Join(h.work, "crash"), "handled")
		if code != 0 {
			t.Errorf("exit status %d, want 0 (the program handles SIGTERM)\n%s", code, out)
		}
		if p := valid(t, dir)[0]; p.End == nil || sum(count(p, trace.TaskCreate, nil)) != 200 {
			t.Errorf("incomplete trace after a handled signal: end %+v, %d tasks", p.End, sum(count(p, trace.TaskCreate, nil)))
		}
	})
	t.Run("exit", func(t *testing.T) {
		dir, code, out := h.record(t, nil, filepath.Join(h.work, "crash"), "exit")
		if code != 3 {
			t.Errorf("exit status %d, want 3\n%s", code, out)
		}
		if p := valid(t, dir)[0]; p.End == nil || sum(count(p, trace.TaskCreate, nil)) != 100 {
			t.Errorf("incomplete trace: end %+v", p.End)
		}
	})
	// exit() inside a parallel region: libomp delivers no ompt_finalize,
	// and every event recorded before the exit must still be written, with
	// the end frame (the trace validates without problems). It analyses
	// without a warning: in a task of the initial thread outside any
	// region ("serial"), libomp's exit handler ends the initial task
	// naming the exiting task, which read as an implicit task that never
	// began and an initial task never ended (TestExitInInitialThreadTask).
	for _, how := range []string{"worker", "master", "task", "serial"} {
		t.Run("exit-"+how, func(t *testing.T) {
			dir, code, out := h.record(t, nil, filepath.Join(h.work, "exitpar"), how)
			if code != 5 {
				t.Errorf("exit status %d, want 5\n%s", code, out)
			}
			p := valid(t, dir)[0]
			want := 100
			if how == "task" || how == "serial" {
				want = 101
			}
			if n := sum(count(p, trace.TaskCreate, nil)); p.End == nil || n != want {
				t.Errorf("end %+v, %d tasks created, want an end frame and %d", p.End, n, want)
			}
			if done := sum(count(p, trace.TaskSchedule, func(e *trace.Event) bool { return e.Args[1] == 1 })); done < 100 {
				t.Errorf("%d task completions, want at least the 100 before the exit", done)
			}
			noReportWarnings(t, h.report(t, dir))
		})
	}
	t.Run("nofinalize", func(t *testing.T) {
		cmd := mpirun(filepath.Join(h.work, "nofinalize"))
		dir, _, out := h.record(t, nil, cmd...)
		procs := valid(t, dir)
		if len(procs) != 2 {
			t.Fatalf("%d processes, want 2\n%s", len(procs), out)
		}
		for _, p := range procs {
			if p.End == nil || len(p.ClockOffsets) != 1 || p.ClockOffsets[0].When != "init" {
				t.Errorf("%s: end %+v, clock offsets %+v (want init only)", p.File, p.End, p.ClockOffsets)
			}
		}
	})
	t.Run("mpi_abort", func(t *testing.T) {
		// rank 1 aborts, mpirun terminates rank 0 (SIGTERM): both keep
		// their events; validate names the missing end frames
		cmd := mpirun(filepath.Join(h.work, "mpi_abort"))
		dir, code, out := h.record(t, nil, cmd...)
		if code == 0 {
			t.Errorf("exit status 0 after MPI_Abort\n%s", out)
		}
		problems, _, err := trace.ValidateDir(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			if !strings.Contains(p.Message, "no end frame") {
				t.Errorf("problem %s, want only missing end frames", p)
			}
		}
		for _, p := range load(t, dir) {
			if n := sum(count(p, trace.TaskCreate, nil)); n != 100 {
				t.Errorf("%s: %d tasks, want 100", p.File, n)
			}
		}
	})
	t.Run("tiny-buffer", func(t *testing.T) {
		const n = 16
		dir, code, out := h.record(t, []string{"--buffer-mb", "0.0625"}, h.example("fib"), strconv.Itoa(n))
		if code != 0 {
			t.Fatalf("exit status %d\n%s", code, out)
		}
		p := valid(t, dir)[0]
		if got := sum(count(p, trace.TaskCreate, nil)); got != 2*fibCalls(n) {
			t.Errorf("%d tasks, want %d", got, 2*fibCalls(n))
		}
		flushes, flushNS := int64(0), int64(0)
		for th, evs := range rowsOf(p) {
			for i, e := range evs {
				if e.Kind == trace.FlushBegin {
					flushes++
					if i+1 >= len(evs) || evs[i+1].Kind != trace.FlushEnd {
						t.Fatalf("thread %d: flush_begin not followed by flush_end", th)
					}
					flushNS += evs[i+1].Time - e.Time
				}
			}
		}
		if flushes < 2 || p.End.Dropped != 0 || p.End.Truncated {
			t.Errorf("%d flushes, end %+v: want several flushes, nothing dropped", flushes, p.End)
		}
		// The report counts every flush (the window is the whole run) and
		// takes the part in work out of it, which the correction's switch
		// leaves in.
		r, kept := h.report(t, dir).Breakdown, h.reportArgs(t, dir, "--no-instrumentation-correction").Breakdown
		f := r.BufferFlushes
		if f == nil || f.Count != flushes || f.NS != flushNS || f.WorkNS <= 0 || f.WorkNS+f.MPINS+f.OverheadNS+f.IdleNS != f.NS ||
			f.KeptInWork || f.Setting != "PTRACE_BUFFER_MB" || kept.BufferFlushes == nil || !kept.BufferFlushes.KeptInWork {
			t.Errorf("buffer flushes %+v (kept: %+v), want %d flushes of %d ns, some in work", f, kept.BufferFlushes, flushes, flushNS)
		} else if c := r.InstrumentationCorrection; c == nil || c.CorrectedNS+f.WorkNS != r.InstrumentationNS ||
			kept.WorkNS != r.WorkNS+r.InstrumentationNS || kept.InstrumentationNS != 0 {
			t.Errorf("work %d, instrumentation %d (%+v); with the correction off work %d, instrumentation %d: want the flushes' %d ns in work out of it",
				r.WorkNS, r.InstrumentationNS, c, kept.WorkNS, kept.InstrumentationNS, f.WorkNS)
		}
	})
}

// requireTSan skips (fails under CI=true) when clang cannot link a
// ThreadSanitizer program or TSan has no symbolizer, naming the package that
// holds the missing piece: clang's runtime libraries and LLVM's tools are
// only recommendations of Debian's clang package, so an install with
// --no-install-recommends lacks libclang_rt.tsan and llvm-symbolizer. Without
// the symbolizer TSan reports frames as <null> and testdata/tsan.supp, which
// matches function names, suppresses nothing.
func requireTSan(t *testing.T, h *harness) {
	t.Helper()
	if tsanSymbolizer() == "" {
		pkg := "llvm-" + clangMajor()
		why := fmt.Sprintf("llvm-symbolizer is not installed (Debian package %s: apt-get install -y %s); "+
			"ThreadSanitizer needs it to match testdata/tsan.supp", pkg, pkg)
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %s", why)
		}
		t.Skip(why)
	}
	src := filepath.Join(h.work, "tsan-probe.c")
	if err := os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("clang", "-fsanitize=thread", "-o", filepath.Join(h.work, "tsan-probe"), src).CombinedOutput()
	if err == nil {
		return
	}
	why := fmt.Sprintf("clang cannot link a ThreadSanitizer program: the runtime (libclang_rt.tsan) is missing; "+
		"Debian package %s: apt-get install -y %s\n%s", tsanPackage(), tsanPackage(), out)
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %s", why)
	}
	t.Skip(why)
}

// clangMajor is the installed clang's major version ("N" if unknown).
func clangMajor() string {
	v, err := exec.Command("clang", "-dumpversion").Output()
	if err != nil {
		return "N"
	}
	major, _, _ := strings.Cut(strings.TrimSpace(string(v)), ".")
	return major
}

// tsanPackage names the Debian package with the ThreadSanitizer runtime of
// the installed clang: libclang-rt-N-dev from LLVM 14 on.
func tsanPackage() string {
	major := clangMajor()
	if n, err := strconv.Atoi(major); err == nil && n < 14 {
		return "libclang-common-" + major + "-dev"
	}
	return "libclang-rt-" + major + "-dev"
}

// tsanSymbolizer returns the llvm-symbolizer TSan is to use: on PATH (Debian's
// unversioned llvm package) or in the LLVM of the installed clang; "" none.
func tsanSymbolizer() string {
	if p, err := exec.LookPath("llvm-symbolizer"); err == nil {
		return p
	}
	if p := "/usr/lib/llvm-" + clangMajor() + "/bin/llvm-symbolizer"; fileExists(p) {
		return p
	}
	return ""
}

// tsanEnv returns the environment for a ThreadSanitizer run.
func tsanEnv(h *harness, dir string, extra ...string) []string {
	return append(append(os.Environ(), "PTRACE_DIR="+dir, "PTRACE_BUFFER_MB=0.0625", "OMP_NUM_THREADS=2",
		"TSAN_OPTIONS=halt_on_error=1 exitcode=66 external_symbolizer_path="+tsanSymbolizer()+
			" suppressions="+filepath.Join(h.root, "ompt/collector/e2e/testdata/tsan.supp")), extra...)
}

func (h *harness) run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, name, args...)
	c.Dir = h.root
	c.Env = env
	out, err := c.CombinedOutput()
	if err != nil || strings.Contains(string(out), "ThreadSanitizer") {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// TestStressTSan drives the collector core from pthreads under
// ThreadSanitizer: tiny buffers (flushes under the file lock), shared code
// addresses met for the first time concurrently, buffers drained by another
// thread while their owners record, user threads handing their buffers on
// as they end, and a thread recording while the trace is finished.
func TestStressTSan(t *testing.T) {
	h := setup(t)
	requireTSan(t, h)
	bin := filepath.Join(h.work, "stress-tsan")
	inc := filepath.Join(h.libs, "include")
	h.run(t, os.Environ(), "clang", "-fsanitize=thread", "-g", "-O1", "-std=c11", "-Wall", "-Wextra", "-Werror",
		"-Iompt/collector", "-I"+inc, "-o", bin, "ompt/collector/e2e/testdata/stress.c", "ompt/collector/core.c",
		"ompt/collector/ompt_tool.c", "-ldl", "-lpthread")
	// users: more than the 16 user threads that keep their buffers
	const threads, events, users, userEvents = 4, 20000, 24, 2 * 3000
	dir := filepath.Join(t.TempDir(), "trace")
	h.run(t, tsanEnv(h, dir), bin, strconv.Itoa(threads), strconv.Itoa(events), strconv.Itoa(users))
	p := valid(t, dir)[0]
	creates := count(p, trace.TaskCreate, nil)
	deps := count(p, trace.TaskDeps, nil)
	regions := count(p, trace.RegionEnter, nil)
	fb, fe := count(p, trace.FlushBegin, nil), count(p, trace.FlushEnd, nil)
	workers, userThreads := 0, 0
	for th, evs := range rowsOf(p) {
		if p.Threads[th].Type == trace.ThreadUser {
			userThreads++
			if evs[0].Kind != trace.ThreadBegin || evs[0].Args[0] != trace.ThreadUser || evs[len(evs)-1].Kind != trace.ThreadEnd ||
				2*regions[th] != userEvents {
				t.Errorf("user thread %d: from %s to %s, %d region events; want thread_begin(5) … thread_end, %d", th, evs[0].Kind, evs[len(evs)-1].Kind, 2*regions[th], userEvents)
			}
			continue
		}
		if creates[th] == 0 {
			continue // the late thread
		}
		workers++
		if creates[th] != events || deps[th] != events/5 || fb[th] != fe[th] || fb[th] == 0 {
			t.Errorf("thread %d: %d creates, %d dependence lists, %d/%d flushes; want %d, %d, equal and > 0",
				th, creates[th], deps[th], fb[th], fe[th], events, events/5)
		}
		if evs[len(evs)-1].Kind != trace.ThreadEnd {
			t.Errorf("thread %d ends with %s, want thread_end (recorded at thread exit)", th, evs[len(evs)-1].Kind)
		}
	}
	if workers != threads || userThreads != users {
		t.Errorf("%d worker threads and %d user threads, want %d and %d", workers, userThreads, threads, users)
	}
}

// TestTasksTSan runs a task program on libomp with a ThreadSanitizer build
// of the collector; testdata/tsan.supp explains the two suppressions libomp
// needs.
func TestTasksTSan(t *testing.T) {
	h := setup(t)
	requireTSan(t, h)
	lib := filepath.Join(h.work, "libptrace-tsan.so")
	bin := filepath.Join(h.work, "tasks-tsan")
	inc := filepath.Join(h.libs, "include")
	h.run(t, os.Environ(), "clang", "-fsanitize=thread", "-g", "-O1", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared",
		"-I"+inc, "-o", lib, "ompt/collector/core.c", "ompt/collector/ompt_tool.c", "-ldl", "-lpthread")
	h.run(t, os.Environ(), "clang", "-fsanitize=thread", "-g", "-O1", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fopenmp",
		"-o", bin, "ompt/collector/e2e/testdata/tasks.c")
	for i := 0; i < 3; i++ {
		dir := filepath.Join(t.TempDir(), "trace")
		h.run(t, tsanEnv(h, dir, "OMP_TOOL_LIBRARIES="+lib), bin)
		p := valid(t, dir)[0]
		if n := sum(count(p, trace.TaskCreate, nil)); n != 420 {
			t.Errorf("%d tasks, want 420", n)
		}
	}
}

// rowsOf decodes every thread of p as recorded.
func rowsOf(p *trace.Process) [][]trace.Event {
	out := make([][]trace.Event, p.NumThreads())
	for th := range out {
		out[th], _ = p.Decode(th, nil)
	}
	return out
}

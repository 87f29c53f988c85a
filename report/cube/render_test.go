package cube_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/report/cube"
)

// mutexReport is an OpenMP-only report of `procs` processes of 2 threads
// each, with mutex waits (which no gen workload has): per process
// thread time 100, work 60 of which 10 waiting for mutexes (critical 6
// at a.c:5:1, 4 of it contention; a lock 4 at a.c:9:3, 3 of it
// contention), overhead 15 (fork/join 5, sync runtime 3), idleness 25 (10
// serial, 15 in parallel).
func mutexReport(procs int) *report.Report {
	r := &report.Report{Schema: report.SchemaVersion, Trace: report.TraceInfo{Dir: "synthetic", Processes: procs, Threads: 2 * procs}}
	r.Breakdown = &report.Breakdown{}
	r.WaitStates = &report.WaitStates{OpenMP: &report.OMPWaits{}}
	for p := 0; p < procs; p++ {
		r.Breakdown.PerProcess = append(r.Breakdown.PerProcess, report.ProcessTimes{Rank: p, Host: "h", Threads: 2,
			ThreadTimeNS: 100, WorkNS: 60, OverheadNS: 15, ForkJoinNS: 5, SyncRuntimeNS: 3,
			IdlenessNS: 25, IdlenessSerialNS: 10, IdlenessParallelNS: 15})
		r.WaitStates.OpenMP.PerProcess = append(r.WaitStates.OpenMP.PerProcess, report.OMPWaitProcess{Rank: p,
			OMPWaitTimes: report.OMPWaitTimes{WaitingNS: 32, BarrierImplicitNS: 20, OutsideSyncNS: 12, TaskReadyNS: 7, NoTaskNS: 25, MutexWaitNS: 10}})
	}
	n := int64(procs)
	r.WaitStates.OpenMP.Mutexes = []report.OMPMutex{
		{Kind: "critical", Construct: "a.c:5:1", Acquisitions: 3 * n, WaitNS: 6 * n, MaxWaitNS: 4, HoldNS: 9 * n, ContentionNS: 4 * n},
		{Kind: "lock", Construct: "a.c:9:3", Acquisitions: 2 * n, WaitNS: 4 * n, MaxWaitNS: 3, HoldNS: 5 * n, ContentionNS: 3 * n},
	}
	r.WaitStates.OpenMP.Constructs = []report.OMPWaitConstruct{
		{Kind: "barrier_implicit", Construct: "a.c:20:1", Region: "a.c:3:1", Count: 4 * n, WaitingNS: 20 * n, TaskReadyNS: 7 * n, NoTaskNS: 13 * n},
		{Kind: "outside_sync", WaitingNS: 12 * n, NoTaskNS: 12 * n},
	}
	return r
}

func pathValue(t *testing.T, d *decoded, metric, path string, rank int) float64 {
	t.Helper()
	for c := range d.cnodes {
		if d.path(c) == path {
			for l, loc := range d.locs {
				if loc.rank == rank && loc.thread == 0 {
					return d.value(metric, c, l)
				}
			}
		}
	}
	t.Fatalf("no call path %q", path)
	return 0
}

// TestMutexPlacement: in a single-process report the mutex waits go to
// their constructs, inside work and time there, with their contention
// (Scalasca's definition: until the previous holder's release) in
// Scalasca's contention metrics and the hand-over after the release in
// omp_mutex_wait's own value; with two processes the report has no
// per-process split by kind, so they stay in omp_mutex_wait's own value on
// the program.
func TestMutexPlacement(t *testing.T) {
	for _, procs := range []int{1, 2} {
		r := mutexReport(procs)
		f, err := cube.FromReport(r, cube.Options{})
		if err != nil {
			t.Fatal(err)
		}
		d := mustDecode(t, writeCube(t, f))
		checkValues(t, r, d, d, 0)
		checkExclusive(t, d)
		crit, lock := "program / !$omp critical @a.c:5:1", "program / omp_set_lock @a.c:9:3"
		if procs == 1 {
			for _, c := range []struct {
				metric, path string
				ns           float64
			}{
				{"omp_lock_contention_critical", crit, 4}, {"omp_mutex_wait", crit, 6}, {"work", crit, 6}, {"time", crit, 6},
				{"omp_lock_contention_api", lock, 3}, {"omp_mutex_wait", lock, 4}, {"work", lock, 4},
				{"work", "program", 50}, {"time", "program", 90}, {"omp_mutex_wait", "program", 0},
				{"omp_wait_barrier_implicit", "program / !$omp parallel @a.c:3:1 / !$omp implicit barrier @a.c:20:1", 20},
				{"omp_sync_entries", "program / !$omp parallel @a.c:3:1 / !$omp implicit barrier @a.c:20:1", 4},
				{"omp_wait_outside_sync", "program", 12},
			} {
				want := c.ns / 1e9
				if c.metric == "omp_sync_entries" {
					want = c.ns
				}
				if got := pathValue(t, d, c.metric, c.path, 0); got != want {
					t.Errorf("1 process: %s at %s: %v, want %v", c.metric, c.path, got, want)
				}
			}
			continue
		}
		for rank := range procs {
			if got := pathValue(t, d, "omp_mutex_wait", "program", rank); got != 10e-9 {
				t.Errorf("rank %d: omp_mutex_wait on the program %v, want 10 ns", rank, got)
			}
			for _, p := range []string{crit, lock} {
				for _, m := range []string{"omp_mutex_wait", "omp_lock_contention_critical", "omp_lock_contention_api"} {
					if got := pathValue(t, d, m, p, rank); got != 0 {
						t.Errorf("rank %d: %s at %s: %v, want none (not resolved by the report)", rank, m, p, got)
					}
				}
			}
		}
	}
}

// TestPthreadMutexPlacement: a POSIX threads mutex (kind pthread_mutex, of
// Score-P's pthread adapter) in a single-process report goes to its call,
// a pthread region named by it, its contention in Scalasca's
// pthread_lock_contention_mutex_lock and the hand-over in omp_mutex_wait's
// own value; a condition wait's reacquisition (no wait) adds nothing.
// Before, the kind was unknown to the file: the whole wait stayed in
// omp_mutex_wait at an "omp mutex pthread_mutex" region.
func TestPthreadMutexPlacement(t *testing.T) {
	r := mutexReport(1)
	r.WaitStates.OpenMP.Mutexes = append(r.WaitStates.OpenMP.Mutexes,
		report.OMPMutex{Kind: "pthread_mutex", Construct: "pthread_mutex_lock", Acquisitions: 5, WaitNS: 3, MaxWaitNS: 2, HoldNS: 7, ContentionNS: 2},
		report.OMPMutex{Kind: "pthread_mutex", Construct: "pthread_cond_wait", Acquisitions: 2, HoldNS: 1})
	r.Breakdown.PerProcess[0].WorkNS += 3
	r.Breakdown.PerProcess[0].ThreadTimeNS += 3
	r.WaitStates.OpenMP.PerProcess[0].MutexWaitNS += 3
	f, err := cube.FromReport(r, cube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := mustDecode(t, writeCube(t, f))
	checkValues(t, r, d, d, 0)
	checkExclusive(t, d)
	lock := "program / pthread_mutex_lock"
	for _, c := range []struct {
		metric, path string
		ns           float64
	}{
		{"pthread_lock_contention_mutex_lock", lock, 2}, {"omp_mutex_wait", lock, 3}, {"work", lock, 3}, {"time", lock, 3},
		{"pthread_lock_contention_mutex_lock", "program / pthread_cond_wait", 0}, {"omp_mutex_wait", "program / pthread_cond_wait", 0},
		{"omp_lock_contention_api", lock, 0},
	} {
		if got := pathValue(t, d, c.metric, c.path, 0); got != c.ns/1e9 {
			t.Errorf("%s at %s: %v, want %v", c.metric, c.path, got, c.ns/1e9)
		}
	}
	for c := range d.cnodes {
		if reg := d.regions[d.cnodes[c].callee]; reg.name == "pthread_mutex_lock" && reg.paradigm != "pthread" {
			t.Errorf("region %+v, want paradigm pthread", reg)
		}
	}
}

// TestBadReports: a report whose numbers contradict each other, or name
// processes it does not have, gives an error naming what is wrong; never
// a panic or a file.
func TestBadReports(t *testing.T) {
	cases := map[string]func(r *report.Report){
		"parts exceed whole": func(r *report.Report) { r.Breakdown.PerProcess[0].ForkJoinNS = 1000 },
		"unknown rank":       func(r *report.Report) { r.WaitStates.OpenMP.PerProcess[0].Rank = 7 },
		"rank twice":         func(r *report.Report) { r.Breakdown.PerProcess[1].Rank = 0 },
		"negative rank":      func(r *report.Report) { r.Breakdown.PerProcess[0].Rank = -1 },
		"threads":            func(r *report.Report) { r.Breakdown.PerProcess[0].Threads = 1 << 30 },
		"cause pattern": func(r *report.Report) {
			r.WaitStates.Causes = []report.WaitCause{{Rank: 0, Func: "MPI_Recv", Pattern: "late_everything", NS: 1}}
		},
		"path process": func(r *report.Report) {
			r.CriticalPath = &report.CriticalPath{ByProcess: []report.PathShare{{Name: "process zero", NS: 1}}}
		},
		"no processes": func(r *report.Report) { r.Breakdown = nil },
		"too many threads": func(r *report.Report) {
			for p := 2; p < 40; p++ {
				r.Breakdown.PerProcess = append(r.Breakdown.PerProcess, report.ProcessTimes{Rank: p, Threads: 1 << 16})
			}
		},
	}
	for name, spoil := range cases {
		r := mutexReport(2)
		spoil(r)
		if _, err := cube.FromReport(r, cube.Options{}); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.HasPrefix(err.Error(), "cube: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A mutex's contention is part of its wait (where the report resolves
	// mutexes to a process: one process).
	for _, c := range []int64{-1, 7} {
		r := mutexReport(1)
		r.WaitStates.OpenMP.Mutexes[0].ContentionNS = c
		if _, err := cube.FromReport(r, cube.Options{}); err == nil || !strings.Contains(err.Error(), "inconsistent report") {
			t.Errorf("contention %d of a wait of 6: %v, want an inconsistent report", c, err)
		}
	}
}

// TestWriteFile: only a name ending in .cubex (CubeLib opens no other),
// and nothing left behind when the write fails.
func TestWriteFile(t *testing.T) {
	f, err := cube.FromReport(mutexReport(1), cube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := f.WriteFile(filepath.Join(dir, "x.cube")); err == nil {
		t.Error("x.cube accepted")
	}
	if err := f.WriteFile(filepath.Join(dir, "missing", "x.cubex")); err == nil {
		t.Error("a file in a missing directory written")
	}
	p := filepath.Join(dir, "x.cubex")
	if err := f.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, writeCube(t, f)) {
		t.Error("WriteFile and Write differ")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d files in the directory, want 1", len(ents))
	}
}

// FuzzFromReport: any report JSON that report.ReadJSON accepts renders or
// gives an error, and whatever renders decodes.
func FuzzFromReport(f *testing.F) {
	var b bytes.Buffer
	if err := report.WriteJSON(&b, mutexReport(2)); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	// A real analysis, which the reader accepts whole: the fuzzer starts
	// inside every check, the critical path's off_path account included.
	rep, _ := analyzeGen(f, gen.Config{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 2, ForkNS: 10_000, JoinNS: 5_000})
	if rep.CriticalPath == nil || rep.CriticalPath.OffPath == nil {
		f.Fatal("the halo report has no off_path")
	}
	var real bytes.Buffer
	if err := report.WriteJSON(&real, rep); err != nil {
		f.Fatal(err)
	}
	f.Add(real.Bytes())
	f.Add([]byte(`{"schema":"ptrace.report/v1","trace":{"processes":2},"wait_states":{"per_process":[{"rank":1,"mpi_ns":5,"late_sender_ns":9}],"call_sites":[],"causes":[],"delays":[{"rank":1,"code":"f (a.c:1:2)","ns":3}]}}`))
	f.Fuzz(func(t *testing.T, js []byte) {
		r, err := report.ReadJSON(bytes.NewReader(js))
		if err != nil || r == nil {
			return
		}
		if b := r.Breakdown; b != nil {
			// The scale bounds are tested apart; here, robustness.
			n := 0
			for _, q := range b.PerProcess {
				n += max(1, q.Threads)
			}
			if n > 1<<12 {
				return
			}
		}
		cf, err := cube.FromReport(r, cube.Options{})
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := cf.Write(&out); err != nil {
			return
		}
		if _, err := decode(out.Bytes()); err != nil {
			t.Fatalf("written but not decodable: %v", err)
		}
	})
}

// BenchmarkLargeReport renders and writes the CUBE of a report of 16 384
// processes of 2 threads (the scale issue 44 names), with per-process
// rows in every section the renderer reads.
func BenchmarkLargeReport(b *testing.B) {
	const procs = 16384
	r := mutexReport(procs)
	r.WaitStates.PerProcess = make([]report.WaitProcess, procs)
	r.CriticalPath = &report.CriticalPath{RunTimeNS: 1000, LengthNS: procs}
	for p := range procs {
		r.WaitStates.PerProcess[p] = report.WaitProcess{Rank: p, CausedNS: 3}
		r.WaitStates.Delays = append(r.WaitStates.Delays, report.WaitDelay{Rank: p, Code: "f (a.c:3:1)", NS: 2, PropagatedNS: 1})
		r.WaitStates.Causes = append(r.WaitStates.Causes, report.WaitCause{Rank: p, Func: "MPI_Allreduce", Pattern: "wait_nxn", NS: 3})
		r.CriticalPath.ByProcess = append(r.CriticalPath.ByProcess, report.PathShare{Name: "rank " + strconv.Itoa(p), NS: 1})
	}
	b.ReportAllocs()
	for b.Loop() {
		f, err := cube.FromReport(r, cube.Options{})
		if err != nil {
			b.Fatal(err)
		}
		var n countingWriter
		if err := f.Write(&n); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n), "file-bytes")
	}
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

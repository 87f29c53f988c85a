package cube_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/clocksync"
	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/report/cube"
)

// analyzeGen writes a synthetic trace and analyses it on two in-process
// ranks; the report is read back from its JSON, so that the CUBE is
// compared with what the JSON report says.
func analyzeGen(t testing.TB, cfg gen.Config) (*report.Report, map[string]any) {
	t.Helper()
	if cfg.LatencyNS == 0 {
		cfg.LatencyNS = 2000 // ptrace gen's default
	}
	dir := filepath.Join(t.TempDir(), cfg.Workload)
	res, err := gen.Generate(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var rep *report.Report
	err = inproc.Run(min(2, cfg.Ranks), func(c comm.Comm) error {
		r, err := driver.Run(c, driver.Options{Dir: dir, Clock: clocksync.DefaultOptions()})
		if c.Rank() == 0 {
			rep = r
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := report.WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	back, err := report.ReadJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	// The expected values as JSON reads them (numbers as float64).
	eb, err := json.Marshal(res.Expected)
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]any
	if err := json.Unmarshal(eb, &e); err != nil {
		t.Fatal(err)
	}
	return back, e
}

func writeCube(t testing.TB, f *cube.File) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func mustDecode(t testing.TB, b []byte) *decoded {
	t.Helper()
	d, err := decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// want is one value the report says the CUBE holds: metric at call path
// path (region names from the root's child down, " / " joined; "*" for
// the sum over every call path) of process rank, in ns (times) or counts.
type want struct {
	metric string
	rank   int
	path   string
	v      float64
}

var patternMetric = map[string]string{
	"late_sender": "mpi_latesender", "late_receiver": "mpi_latereceiver", "wait_nxn": "mpi_wait_nxn",
	"wait_barrier": "mpi_barrier_wait", "late_broadcast": "mpi_latebroadcast", "early_reduce": "mpi_earlyreduce",
	"wait_at_fence": "mpi_rma_wait_at_fence", "wait_at_win_create": "mpi_rma_wait_at_create", "wait_at_win_free": "mpi_rma_wait_at_free",
	"wait_for_progress": "mpi_nbc_wait_for_progress",
	"late_post":         "mpi_rma_sync_late_post", "early_wait": "mpi_rma_early_wait",
}

func patternValues(w *report.WaitTimes) map[string]int64 {
	return map[string]int64{
		"late_sender": w.LateSenderNS, "late_receiver": w.LateReceiverNS, "wait_nxn": w.WaitNxNNS,
		"wait_barrier": w.WaitBarrierNS, "late_broadcast": w.LateBroadcastNS, "early_reduce": w.EarlyReduceNS,
		"wait_at_fence": w.WaitAtFenceNS, "wait_at_win_create": w.WaitAtWinCreateNS, "wait_at_win_free": w.WaitAtWinFreeNS,
		"wait_for_progress": w.WaitForProgressNS,
		"late_post":         w.LatePostNS, "early_wait": w.EarlyWaitNS,
	}
}

// Call-path names as docs/cube.md gives them.
func sitePathName(fn, region string) string {
	if region != "" {
		return region + " / " + fn
	}
	return fn
}

func delayPathName(code string) string {
	if code == "serial code" {
		return code
	}
	// An MPI call site's time outside waits: the MPI function's node.
	if fn, _, _ := strings.Cut(code, " at "); strings.HasPrefix(fn, "MPI_") && !strings.ContainsAny(fn, " :()") {
		return fn
	}
	if i := strings.LastIndex(code, " ("); i > 0 {
		return "!$omp parallel @" + code[i+2:len(code)-1]
	}
	return "!$omp parallel @" + code
}

var syncNames = map[string]string{
	"barrier_implicit": "implicit barrier", "barrier_explicit": "barrier", "taskwait": "taskwait",
	"taskgroup": "taskgroup", "other_sync": "sync region",
}

var syncMetrics = map[string]string{
	"barrier_implicit": "omp_wait_barrier_implicit", "barrier_explicit": "omp_wait_barrier_explicit",
	"taskwait": "omp_wait_taskwait", "taskgroup": "omp_wait_taskgroup", "other_sync": "omp_wait_other_sync",
	"outside_sync": "omp_wait_outside_sync",
}

// expectations lists what the CUBE of r must hold, read off the report by
// the rules of docs/cube.md, independently of the renderer: per process
// the sum over all call paths of every metric (0 where the report gives
// none), and the values the report places on call paths.
func expectations(r *report.Report) []want {
	sum := map[string]map[int]float64{}
	var ranks []int
	addf := func(m string, rank int, v float64) {
		if sum[m] == nil {
			sum[m] = map[int]float64{}
		}
		sum[m][rank] += v
	}
	add := func(m string, rank int, v int64) { addf(m, rank, float64(v)) }
	var ws []want
	// Rows of the report that share a call path (delays of one code
	// before several call sites) add up on it.
	type key struct {
		m    string
		rank int
		path string
	}
	onPath := map[key]float64{}
	var pathOrder []key
	at := func(m string, rank int, path string, v int64) {
		if v == 0 {
			return
		}
		k := key{m, rank, path}
		if _, ok := onPath[k]; !ok {
			pathOrder = append(pathOrder, k)
		}
		onPath[k] += float64(v)
	}
	for _, q := range r.Breakdown.PerProcess {
		ranks = append(ranks, q.Rank)
		add("time", q.Rank, q.ThreadTimeNS)
		add("work", q.Rank, q.WorkNS)
		add("mpi", q.Rank, q.MPINS)
		add("mpi_init_finalize", q.Rank, q.InitFinalizeNS)
		add("runtime_overhead", q.Rank, q.OverheadNS)
		add("fork_join", q.Rank, q.ForkJoinNS)
		add("sync_runtime", q.Rank, q.SyncRuntimeNS)
		add("idleness", q.Rank, q.IdlenessNS)
		add("idleness_serial", q.Rank, q.IdlenessSerialNS)
		add("idleness_parallel", q.Rank, q.IdlenessParallelNS)
		add("instrumentation", q.Rank, q.InstrumentationNS)
	}
	single := len(ranks) == 1
	if w := r.WaitStates; w != nil {
		for _, q := range w.PerProcess {
			for p, v := range patternValues(&q.WaitTimes) {
				add(patternMetric[p], q.Rank, v)
			}
			add("mpi_calls", q.Rank, q.Calls)
			add("mpi_waiting_calls", q.Rank, q.WaitingCalls)
			add("mpi_caused", q.Rank, q.CausedNS)
		}
		for _, c := range w.Causes {
			add("mpi_caused_"+c.Pattern, c.Rank, c.NS)
			at("mpi_caused_"+c.Pattern, c.Rank, sitePathName(c.Func, c.Region), c.NS)
		}
		for _, d := range w.Delays {
			add("mpi_delay", d.Rank, d.NS+d.LongTermNS+d.PropagatedNS)
			add("mpi_delay_short_term", d.Rank, d.NS)
			add("mpi_delay_long_term", d.Rank, d.LongTermNS)
			add("mpi_delay_propagated", d.Rank, d.PropagatedNS)
			at("mpi_delay_short_term", d.Rank, delayPathName(d.Code), d.NS)
			at("mpi_delay_long_term", d.Rank, delayPathName(d.Code), d.LongTermNS)
		}
		if single {
			rank := ranks[0]
			for _, s := range w.CallSites {
				p := sitePathName(s.Func, s.Region)
				at("time", rank, p, s.MPINS)
				at("mpi", rank, p, s.MPINS)
				for pt, v := range patternValues(&s.WaitTimes) {
					at(patternMetric[pt], rank, p, v)
				}
				at("mpi_calls", rank, p, s.Calls)
			}
		}
		if o := w.OpenMP; o != nil {
			for _, q := range o.PerProcess {
				add("omp_waiting", q.Rank, q.WaitingNS)
				add("omp_wait_barrier_implicit", q.Rank, q.BarrierImplicitNS)
				add("omp_wait_barrier_explicit", q.Rank, q.BarrierExplicitNS)
				add("omp_wait_taskwait", q.Rank, q.TaskwaitNS)
				add("omp_wait_taskgroup", q.Rank, q.TaskgroupNS)
				add("omp_wait_other_sync", q.Rank, q.OtherSyncNS)
				add("omp_wait_outside_sync", q.Rank, q.OutsideSyncNS)
				add("omp_waiting_reason", q.Rank, q.WaitingNS)
				add("omp_task_ready", q.Rank, q.TaskReadyNS)
				add("omp_dependences", q.Rank, q.DependencesNS)
				add("omp_no_task", q.Rank, q.NoTaskNS)
				add("omp_mutex_wait", q.Rank, q.MutexWaitNS)
			}
			if single {
				rank := ranks[0]
				for _, k := range o.Constructs {
					if k.Kind == "outside_sync" {
						continue
					}
					add("omp_sync_entries", rank, k.Count)
					p := "!$omp " + syncNames[k.Kind] + " @" + k.Construct
					if k.Region != "" {
						p = "!$omp parallel @" + k.Region + " / " + p
					}
					at(syncMetrics[k.Kind], rank, p, k.WaitingNS)
					at("omp_task_ready", rank, p, k.TaskReadyNS)
					at("omp_dependences", rank, p, k.DependencesNS)
					at("omp_no_task", rank, p, k.NoTaskNS)
					at("omp_sync_entries", rank, p, k.Count)
				}
				for _, m := range o.Mutexes {
					// Scalasca's contention metrics take the wait until
					// the previous holder's release; ordered and atomic,
					// ptrace's own, the whole wait.
					switch m.Kind {
					case "critical":
						add("omp_lock_contention_critical", rank, m.ContentionNS)
					case "lock", "test_lock", "nest_lock", "test_nest_lock":
						add("omp_lock_contention_api", rank, m.ContentionNS)
					case "ordered":
						add("omp_ordered_wait", rank, m.WaitNS)
					case "atomic":
						add("omp_atomic_wait", rank, m.WaitNS)
					case "pthread_mutex":
						add("pthread_lock_contention_mutex_lock", rank, m.ContentionNS)
					}
				}
			}
		}
	}
	if cp := r.CriticalPath; cp != nil {
		for _, s := range cp.ByProcess {
			var rank int
			fmt.Sscanf(s.Name, "rank %d", &rank)
			add("critical_path", rank, s.NS)
			addf("critical_path_share", rank, float64(s.NS)/float64(cp.RunTimeNS))
		}
		if single {
			for _, k := range cp.ByKind {
				add("critical_path_"+k.Name, ranks[0], k.NS)
			}
		}
	}
	if t := r.Tasks; t != nil && single {
		for _, k := range t.Constructs {
			p := "!$omp " + k.Kind + " @" + k.Name
			add("tasks_created", ranks[0], k.Count)
			add("tasks_executed", ranks[0], k.Executed)
			add("task_execution", ranks[0], k.SumNS)
			at("tasks_created", ranks[0], p, k.Count)
			at("task_execution", ranks[0], p, k.SumNS)
		}
	}
	for _, k := range pathOrder {
		ws = append(ws, want{k.m, k.rank, k.path, onPath[k]})
	}
	// Every stored metric, every process: the sum over call paths.
	for _, m := range storedMetrics {
		for _, rank := range ranks {
			ws = append(ws, want{m, rank, "*", sum[m][rank]})
		}
	}
	return ws
}

// storedMetrics are the file's metrics, in its order.
var storedMetrics = []string{
	"time", "work", "omp_mutex_wait", "omp_lock_contention_critical", "omp_lock_contention_api", "omp_ordered_wait", "omp_atomic_wait",
	"pthread_lock_contention_mutex_lock",
	"mpi", "mpi_latesender", "mpi_latereceiver", "mpi_wait_nxn", "mpi_barrier_wait", "mpi_latebroadcast", "mpi_earlyreduce", "mpi_init_finalize",
	"runtime_overhead", "fork_join", "sync_runtime", "idleness", "idleness_serial", "idleness_parallel", "instrumentation",
	"omp_waiting", "omp_wait_barrier_implicit", "omp_wait_barrier_explicit", "omp_wait_taskwait", "omp_wait_taskgroup", "omp_wait_other_sync", "omp_wait_outside_sync",
	"omp_waiting_reason", "omp_task_ready", "omp_dependences", "omp_no_task",
	"mpi_delay", "mpi_delay_short_term", "mpi_delay_long_term", "mpi_delay_propagated",
	"mpi_caused", "mpi_caused_late_sender", "mpi_caused_late_receiver", "mpi_caused_wait_nxn", "mpi_caused_wait_barrier", "mpi_caused_late_broadcast", "mpi_caused_early_reduce",
	"critical_path", "critical_path_task", "critical_path_region", "critical_path_serial", "critical_path_mpi", "critical_path_latency", "critical_path_join",
	"critical_path_share", "mpi_calls", "mpi_waiting_calls", "tasks_created", "tasks_executed", "task_execution", "omp_sync_entries",
}

// reader is what a check reads values through: the pure-Go decoder, or
// cube_dump's output (cubelib_test.go).
type reader interface {
	// at is the stored value of metric at call path c and location l
	// (seconds for times).
	at(metric string, c, l int) float64
}

func (d *decoded) at(metric string, c, l int) float64 { return d.value(metric, c, l) }

// checkValues compares the file d describes, read through rd, with the
// report's values; tol is the relative error rd's numbers carry.
func checkValues(t *testing.T, r *report.Report, d *decoded, rd reader, tol float64) {
	t.Helper()
	first := map[int]int{} // rank → its first thread's location
	for i, l := range d.locs {
		if l.thread == 0 {
			first[l.rank] = i
		}
	}
	// A call path by its regions' names: calls of one MPI function at
	// several call sites (lines) are several call paths of one name.
	pathOf := map[string][]int{}
	for c := range d.cnodes {
		p := d.path(c)
		if _, root, ok := strings.Cut(p, " / "); ok {
			pathOf[root] = append(pathOf[root], c)
		}
	}
	scale := func(m string) float64 {
		if d.metrics[d.byName[m]].unit == "sec" {
			return 1e9
		}
		return 1
	}
	// Sums over call paths add rounding of a few ulps.
	close := func(got, want float64) bool {
		return math.Abs(got-want) <= max(tol, 1e-14)*math.Abs(want)
	}
	bad := 0
	for _, w := range expectations(r) {
		l, ok := first[w.rank]
		if !ok {
			t.Fatalf("rank %d not in the system tree", w.rank)
		}
		var got float64
		if w.path == "*" {
			for c := range d.cnodes {
				got += rd.at(w.metric, c, l)
			}
		} else {
			cs, ok := pathOf[w.path]
			if !ok {
				t.Errorf("no call path %q", w.path)
				continue
			}
			for _, c := range cs {
				got += rd.at(w.metric, c, l)
			}
		}
		if want := w.v / scale(w.metric); !close(got, want) {
			if bad++; bad <= 20 {
				t.Errorf("%s at rank %d, %s: %v, the report says %v", w.metric, w.rank, w.path, got, want)
			}
		}
	}
	// Nothing on the other threads: the report has no per-thread values.
	for l, loc := range d.locs {
		if loc.thread == 0 {
			continue
		}
		for _, m := range storedMetrics {
			for c := range d.cnodes {
				if v := rd.at(m, c, l); v != 0 {
					t.Fatalf("%s on thread %d of rank %d: %v", m, loc.thread, loc.rank, v)
				}
			}
		}
	}
}

// checkExclusive checks that along the metric tree no metric's own value
// (its stored value minus its children's) is negative anywhere: the
// report's parts never exceed their whole.
func checkExclusive(t *testing.T, d *decoded) {
	t.Helper()
	for id, m := range d.metrics {
		if m.expr != "" {
			continue
		}
		kids := d.children(id)
		for c := range d.cnodes {
			for l := range d.locs {
				own := d.value(m.name, c, l)
				for _, k := range kids {
					own -= d.value(d.metrics[k].name, c, l)
				}
				if own < -1e-12 {
					t.Errorf("%s at %s, location %d: own value %v", m.name, d.path(c), l, own)
				}
			}
		}
	}
}

// A value round-trips to the report's nanoseconds exactly.
func checkExactNS(t *testing.T, d *decoded) {
	t.Helper()
	for id, vals := range d.values {
		if d.metrics[id].unit != "sec" {
			continue
		}
		for _, row := range vals {
			for _, v := range row {
				if ns := v * 1e9; math.Abs(ns-math.Round(ns)) > 1e-6*math.Max(1, math.Abs(ns)) {
					t.Fatalf("%s: %v s is no whole number of nanoseconds", d.metrics[id].name, v)
				}
			}
		}
	}
}

var workloads = []gen.Config{
	{Workload: "mpi", Ranks: 4, Threads: 1},
	{Workload: "halo", Ranks: 3, Threads: 2, Iterations: 3, Exchange: "allreduce", RankImbalance: 0.5, ThreadImbalance: 0.3},
	{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 3, RankImbalance: 0.4, ForkNS: 10_000, JoinNS: 5_000, SerialNS: 200_000},
	{Workload: "forkjoin", Ranks: 1, Threads: 3, Width: 6, Steps: 4},
	{Workload: "forkjoin", Ranks: 1, Threads: 2, Width: 5, Steps: 3, Taskgroup: true},
	{Workload: "imbalance", Ranks: 1, Threads: 4, Iterations: 3, SyncRuntimeNS: 2_000},
	{Workload: "stencil", Ranks: 2, Threads: 2, Width: 8, Steps: 6},
	{Workload: "mpi", Ranks: 1, Threads: 1},
}

func name(cfg gen.Config) string {
	return fmt.Sprintf("%s-%dx%d", cfg.Workload, cfg.Ranks, cfg.Threads)
}

// TestReportValues renders real analyses of synthetic traces and reads the
// files back with the independent decoder: the structure is what CubeLib
// reads, every value equals the report's, no metric's own value is
// negative.
func TestReportValues(t *testing.T) {
	for _, cfg := range workloads {
		t.Run(name(cfg), func(t *testing.T) {
			r, _ := analyzeGen(t, cfg)
			f, err := cube.FromReport(r, cube.Options{Creator: "ptrace test"})
			if err != nil {
				t.Fatal(err)
			}
			d := mustDecode(t, writeCube(t, f))
			checkValues(t, r, d, d, 0)
			checkExclusive(t, d)
			checkExactNS(t, d)
			checkOffPath(t, r, d)
			threads := 0
			for _, q := range r.Breakdown.PerProcess {
				threads += q.Threads
			}
			if len(d.locs) != threads {
				t.Errorf("%d locations, the report has %d threads", len(d.locs), threads)
			}
		})
	}
}

// TestGroundTruth checks the CUBE of gen's pure MPI workload against the
// values the generator computed from its schedule (expected.json), per
// rank, within expected.json's tolerance.
func TestGroundTruth(t *testing.T) {
	r, e := analyzeGen(t, gen.Config{Workload: "mpi", Ranks: 4, Threads: 1})
	f, err := cube.FromReport(r, cube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := mustDecode(t, writeCube(t, f))
	ws, ok := e["wait_states"].(map[string]any)
	if !ok {
		t.Fatal("expected.json has no wait_states")
	}
	rows, _ := ws["per_process"].([]any)
	if len(rows) != 4 {
		t.Fatalf("expected.json: %d per-process wait-state rows", len(rows))
	}
	metrics := map[string]string{"late_sender_ns": "mpi_latesender", "late_receiver_ns": "mpi_latereceiver",
		"wait_nxn_ns": "mpi_wait_nxn", "wait_barrier_ns": "mpi_barrier_wait", "mpi_ns": "mpi"}
	checked := 0
	for _, row := range rows {
		m := row.(map[string]any)
		rank := int(m["rank"].(float64))
		loc := slices.IndexFunc(d.locs, func(l dLoc) bool { return l.rank == rank && l.thread == 0 })
		for key, metric := range metrics {
			want, ok := m[key].(float64)
			if !ok {
				continue
			}
			var got float64
			for c := range d.cnodes {
				got += d.value(metric, c, loc)
			}
			if math.Abs(got*1e9-want) > 64 {
				t.Errorf("rank %d %s: %.0f ns in the CUBE, %.0f ns by construction", rank, metric, got*1e9, want)
			}
			checked++
		}
	}
	if checked < 16 {
		t.Fatalf("only %d values checked", checked)
	}
}

// TestSeries renders runs of one program at 2 and 3 processes together:
// the metric and call trees are the same in both files (cube_diff and
// Extra-P need that), each system tree is its run's.
func TestSeries(t *testing.T) {
	a, _ := analyzeGen(t, gen.Config{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 3, Exchange: "allreduce", RankImbalance: 0.5})
	b, _ := analyzeGen(t, gen.Config{Workload: "halo", Ranks: 3, Threads: 2, Iterations: 3, RankImbalance: 0.5})
	fs, err := cube.FromReports([]*report.Report{a, b}, cube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	da, db := mustDecode(t, writeCube(t, fs[0])), mustDecode(t, writeCube(t, fs[1]))
	trees := func(d *decoded) (ms, cs []string) {
		for _, m := range d.metrics {
			ms = append(ms, fmt.Sprintf("%s<%d", m.name, m.parent))
		}
		for c := range d.cnodes {
			cs = append(cs, fmt.Sprintf("%s<%d", d.path(c), d.cnodes[c].parent))
		}
		return
	}
	ma, ca := trees(da)
	mb, cb := trees(db)
	if !slices.Equal(ma, mb) || !slices.Equal(ca, cb) {
		t.Fatalf("trees differ:\n%v\n%v\n%v\n%v", ma, mb, ca, cb)
	}
	// The union holds both runs' call sites: the allreduce and the halo
	// exchange's calls.
	for _, fn := range []string{"MPI_Allreduce", "MPI_Waitall"} {
		if !slices.ContainsFunc(ca, func(s string) bool { return strings.Contains(s, fn) }) {
			t.Errorf("no call path of %s in %v", fn, ca)
		}
	}
	if len(da.locs) != 4 || len(db.locs) != 6 {
		t.Errorf("%d and %d locations, want 4 and 6", len(da.locs), len(db.locs))
	}
	checkValues(t, a, da, da, 0)
	checkValues(t, b, db, db, 0)
}

// The one-sided patterns are Scalasca's metrics mpi_rma_wait_at_fence,
// mpi_rma_wait_at_create and mpi_rma_wait_at_free (the names
// scripts/cube-vs-scout.py compares), inside mpi as ptrace's other
// patterns: a report whose processes waited there (part of their MPI time
// outside the other patterns moved to them) holds them per process, and
// mpi's own value keeps the rest.
func TestRMAWaitMetrics(t *testing.T) {
	r, _ := analyzeGen(t, gen.Config{Workload: "mpi", Ranks: 4, Threads: 1})
	for i := range r.WaitStates.PerProcess {
		q := &r.WaitStates.PerProcess[i]
		q.WaitAtFenceNS, q.WaitAtWinCreateNS, q.WaitAtWinFreeNS = q.OtherNS/2, q.OtherNS/8, q.OtherNS/16
		q.OtherNS -= q.WaitAtFenceNS + q.WaitAtWinCreateNS + q.WaitAtWinFreeNS
	}
	f, err := cube.FromReport(r, cube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := mustDecode(t, writeCube(t, f))
	checkValues(t, r, d, d, 0)
	checkExclusive(t, d)
	for _, m := range []string{"mpi_rma_wait_at_fence", "mpi_rma_wait_at_create", "mpi_rma_wait_at_free"} {
		i, ok := d.byName[m]
		if !ok {
			t.Fatalf("no metric %s", m)
		}
		if p := d.metrics[i].parent; p < 0 || d.metrics[p].name != "mpi" {
			t.Errorf("%s: parent %d, want mpi", m, p)
		}
	}
	loc := slices.IndexFunc(d.locs, func(l dLoc) bool { return l.rank == 2 && l.thread == 0 })
	var got float64
	for c := range d.cnodes {
		got += d.value("mpi_rma_wait_at_fence", c, loc)
	}
	if want := r.WaitStates.PerProcess[2].WaitAtFenceNS; want <= 0 || math.Abs(got*1e9-float64(want)) > 64 {
		t.Errorf("rank 2: wait at fence %.0f ns in the CUBE, %d in the report", got*1e9, want)
	}
}

// The nonblocking collectives' wait for progress is ptrace's metric
// mpi_nbc_wait_for_progress inside mpi, as the other patterns: a report
// whose processes waited for progress (part of their MPI time outside
// the other patterns moved there) holds it per process, and mpi's own
// value keeps the rest.
func TestNBCProgressMetric(t *testing.T) {
	r, _ := analyzeGen(t, gen.Config{Workload: "mpi", Ranks: 4, Threads: 1})
	for i := range r.WaitStates.PerProcess {
		q := &r.WaitStates.PerProcess[i]
		q.WaitForProgressNS = q.OtherNS / 3
		q.OtherNS -= q.WaitForProgressNS
	}
	f, err := cube.FromReport(r, cube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := mustDecode(t, writeCube(t, f))
	checkValues(t, r, d, d, 0)
	checkExclusive(t, d)
	i, ok := d.byName["mpi_nbc_wait_for_progress"]
	if !ok {
		t.Fatal("no metric mpi_nbc_wait_for_progress")
	}
	if p := d.metrics[i].parent; p < 0 || d.metrics[p].name != "mpi" {
		t.Errorf("mpi_nbc_wait_for_progress: parent %d, want mpi", p)
	}
	loc := slices.IndexFunc(d.locs, func(l dLoc) bool { return l.rank == 2 && l.thread == 0 })
	var got float64
	for c := range d.cnodes {
		got += d.value("mpi_nbc_wait_for_progress", c, loc)
	}
	if want := r.WaitStates.PerProcess[2].WaitForProgressNS; want <= 0 || math.Abs(got*1e9-float64(want)) > 64 {
		t.Errorf("rank 2: wait for progress %.0f ns in the CUBE, %d in the report", got*1e9, want)
	}
}

// General active target synchronisation's patterns are Scalasca's metrics
// mpi_rma_sync_late_post (Late Post in synchronisation: the origin waits
// in MPI_Win_start) and mpi_rma_early_wait, inside mpi as ptrace's other
// patterns: a report whose processes waited there holds them per process,
// and mpi's own value keeps the rest.
func TestRMAEpochMetrics(t *testing.T) {
	r, _ := analyzeGen(t, gen.Config{Workload: "mpi", Ranks: 4, Threads: 1})
	for i := range r.WaitStates.PerProcess {
		q := &r.WaitStates.PerProcess[i]
		q.LatePostNS, q.EarlyWaitNS = q.OtherNS/3, q.OtherNS/5
		q.OtherNS -= q.LatePostNS + q.EarlyWaitNS
	}
	f, err := cube.FromReport(r, cube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := mustDecode(t, writeCube(t, f))
	checkValues(t, r, d, d, 0)
	checkExclusive(t, d)
	loc := slices.IndexFunc(d.locs, func(l dLoc) bool { return l.rank == 2 && l.thread == 0 })
	for _, m := range []struct {
		name string
		want int64
	}{
		{"mpi_rma_sync_late_post", r.WaitStates.PerProcess[2].LatePostNS},
		{"mpi_rma_early_wait", r.WaitStates.PerProcess[2].EarlyWaitNS},
	} {
		i, ok := d.byName[m.name]
		if !ok {
			t.Fatalf("no metric %s", m.name)
		}
		if p := d.metrics[i].parent; p < 0 || d.metrics[p].name != "mpi" {
			t.Errorf("%s: parent %d, want mpi", m.name, p)
		}
		var got float64
		for c := range d.cnodes {
			got += d.value(m.name, c, loc)
		}
		if m.want <= 0 || math.Abs(got*1e9-float64(m.want)) > 64 {
			t.Errorf("rank 2: %s %.0f ns in the CUBE, %d in the report", m.name, got*1e9, m.want)
		}
	}
}

// checkOffPath: the attribute ptrace::critical_path_off_path holds every
// key of the report's critical_path.off_path with its value.
func checkOffPath(t *testing.T, r *report.Report, d *decoded) {
	t.Helper()
	op := r.CriticalPath.OffPath
	if op == nil {
		t.Fatal("the report has no off_path")
	}
	b, err := json.Marshal(op)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]float64
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	attr, ok := d.attrs["ptrace::critical_path_off_path"]
	if !ok {
		t.Fatal("no attribute ptrace::critical_path_off_path")
	}
	got := map[string]float64{}
	for _, kv := range strings.Fields(attr) {
		k, v, _ := strings.Cut(kv, "=")
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("%q: %v", kv, err)
		}
		got[k] = f
	}
	if !maps.Equal(got, want) {
		t.Errorf("ptrace::critical_path_off_path %q, the report's off_path %v", attr, want)
	}
}

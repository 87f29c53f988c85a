// Package gen writes synthetic traces whose analysis results are known
// analytically, with an expected.json beside them that holds those results
// under the report's own keys (docs/report-schema.md). The traces look like
// what the collector records from a real run (same events, same OMPT
// arguments), so every analysis pass can be tested against ground truth:
// POT's load-imbalance microbenchmark, Task-Bench-like dependence patterns,
// MPI + OpenMP halo iterations, with optional clock skew and drift.
package gen

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"github.com/ptrace-dev/ptrace/trace"
)

// Config selects a workload and its parameters. Zero values take the
// workload's defaults (see Defaults).
type Config struct {
	Workload string
	Ranks    int
	Threads  int
	Seed     int64

	// imbalance
	GrainNS    int64 // g: thread t's task runs t·g
	Iterations int   // I (also halo iterations)
	// SyncRuntimeNS is, for imbalance, the runtime's code inside each
	// taskwait and barrier before and after its wait (sync_region begin to
	// sync_region_wait begin, wait end to region end), R ns each: booked as
	// overhead (sim/runtime.go), 4·R per thread and iteration.
	SyncRuntimeNS int64

	// Taskgroup makes forkjoin wait for each step's tasks at the end of a
	// taskgroup instead of a taskwait.
	Taskgroup bool

	// stencil, nearest, spread, forkjoin
	Width    int     // tasks per step (over all ranks; per rank for forkjoin)
	Steps    int     // steps of the pattern
	Radix    int     // dependences per task (nearest, spread)
	Period   int     // the random pattern repeats every Period steps
	Fraction float64 // share of candidate dependences kept (1 = all)
	TaskNS   int64   // task duration
	Jitter   float64 // durations uniform in TaskNS·[1-Jitter, 1+Jitter]
	// Inflation makes every task of a pattern run InflationFactor =
	// 1 + Inflation·(Threads−1) times longer (stencil, nearest, spread):
	// work-time inflation, so a family of runs at several thread counts
	// has a known computation scalability (GenerateFamily).
	Inflation float64

	// halo
	Exchange        string  // "halo" (neighbour Isend/Irecv) or "allreduce"
	ComputeNS       int64   // per-thread compute per iteration, before imbalance
	RankImbalance   float64 // the last rank computes (1+RankImbalance)× the first
	ThreadImbalance float64 // the last thread computes (1+ThreadImbalance)× the first
	// SerialNS is, for halo, the master's serial compute between region
	// and MPI; for stencil, nearest and spread, one serial task on rank 0
	// that every first-step task depends on (Amdahl's serial part).
	SerialNS int64
	ForkNS   int64 // halo: team creation, parallel_begin to the implicit tasks' begin
	JoinNS   int64 // halo: team end, the implicit tasks' end to parallel_end
	Bytes    int64 // message size

	LatencyNS int64 // message and remote-dependence latency

	// PollNS makes mpi's receivers whose MPI_Irecv was posted early
	// complete it in a loop of MPI_Test calls of PollNS each, PollGapNS
	// of computation apart (default 4·PollNS), instead of an MPI_Wait:
	// polled waits (docs/report-schema.md). 0: no polling.
	PollNS    int64
	PollGapNS int64

	// clocks
	SkewNS   int64   // each process's clock offset is drawn from [-SkewNS, SkewNS]
	DriftPPM float64 // and its drift from [-DriftPPM, DriftPPM] ppm

	Events   int64 // scale the workload to about this many events (0: as given)
	Outliers int   // tasks made anomalously long (task patterns)
	// Lean writes the task patterns as LLVM libomp records a program whose
	// tasks carry no cost attribute: no task_attr, and no task_dependence
	// (the runtime reports an edge only for a predecessor unfinished at
	// creation, 0 on most real traces; the dependences are resolved from
	// the addresses): about 4 events a task, the shape of real task
	// traces (Task Bench, BOTS), where the default carries 8.
	Lean bool

	ChunkEvents int // events per chunk (0: the writer's default)
}

// ThreadsFor returns n, or 1 for a workload of single-threaded processes
// (mpi), which takes no other thread count.
func ThreadsFor(workload string, n int) int {
	if workload == "mpi" || workload == "nbc" {
		return 1
	}
	return n
}

// Workloads lists the workload names Generate accepts.
var Workloads = []string{"imbalance", "stencil", "nearest", "spread", "forkjoin", "pipeline", "halo", "untied", "mpi", "nbc", "tree"}

// Defaults returns cfg with every unset parameter at its workload default.
func Defaults(cfg Config) Config {
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	set64 := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	set(&cfg.Ranks, 1)
	if cfg.Workload == "mpi" || cfg.Workload == "nbc" {
		set(&cfg.Threads, 1) // a pure MPI program
	}
	set(&cfg.Threads, 4)
	set64(&cfg.Seed, 1)
	switch cfg.Workload {
	case "imbalance":
		set64(&cfg.GrainNS, 100_000)
		set(&cfg.Iterations, 100)
	case "pipeline":
		set(&cfg.Width, cfg.Ranks)
		set(&cfg.Steps, 4)
		set64(&cfg.TaskNS, 20_000)
		if cfg.Fraction == 0 {
			cfg.Fraction = 1
		}
		set(&cfg.Radix, 1)
		set(&cfg.Period, 1)
	case "stencil", "nearest", "spread", "forkjoin":
		set(&cfg.Width, 4*cfg.Ranks*cfg.Threads)
		set(&cfg.Steps, 50)
		set(&cfg.Radix, 3)
		set(&cfg.Period, 3)
		if cfg.Fraction == 0 {
			cfg.Fraction = 1
		}
		set64(&cfg.TaskNS, 50_000)
	case "untied":
		set(&cfg.Steps, 50)
		set64(&cfg.TaskNS, 50_000)
	case "tree":
		set(&cfg.Radix, 2)
		set(&cfg.Steps, 8)
		set64(&cfg.TaskNS, 50_000)
	case "mpi":
		set(&cfg.Iterations, 2*mpiProtocols)
		set64(&cfg.ComputeNS, 1_000_000)
		set64(&cfg.Bytes, 1<<20)
		if cfg.RankImbalance == 0 {
			cfg.RankImbalance = 0.5
		}
		if cfg.PollNS > 0 {
			set64(&cfg.PollGapNS, 4*cfg.PollNS)
		}
	case "nbc":
		set(&cfg.Iterations, 2*nbcKinds)
		set64(&cfg.ComputeNS, 1_000_000)
		set64(&cfg.Bytes, 1<<20)
		if cfg.RankImbalance == 0 {
			cfg.RankImbalance = 0.5
		}
	case "halo":
		set(&cfg.Iterations, 50)
		set64(&cfg.ComputeNS, 1_000_000)
		set64(&cfg.SerialNS, 50_000)
		set64(&cfg.Bytes, 1<<16)
		if cfg.Exchange == "" {
			cfg.Exchange = "halo"
		}
	}
	return cfg
}

func (c *Config) check() error {
	switch {
	case c.Ranks < 1 || c.Ranks > 1<<20:
		return fmt.Errorf("--ranks %d: need 1..%d", c.Ranks, 1<<20)
	case c.Threads < 1 || c.Threads > 4096:
		return fmt.Errorf("--threads %d: need 1..4096", c.Threads)
	case c.Jitter < 0 || c.Jitter >= 1:
		return fmt.Errorf("--jitter %g: need 0 <= jitter < 1", c.Jitter)
	case c.Fraction < 0 || c.Fraction > 1:
		return fmt.Errorf("--fraction %g: need 0..1", c.Fraction)
	case c.SkewNS < 0 || c.DriftPPM < 0 || c.DriftPPM > 1e5:
		return fmt.Errorf("--skew and --drift must be non-negative (drift below 1e5 ppm)")
	case c.LatencyNS < 0:
		return fmt.Errorf("--latency must be non-negative")
	case c.Inflation != 0 && !isPattern(c.Workload):
		return fmt.Errorf("--inflation applies to the task patterns (stencil, nearest, spread), not %s", c.Workload)
	case InflationFactor(*c) <= 0:
		return fmt.Errorf("--inflation %g: the factor 1 + inflation·(threads−1) must be positive", c.Inflation)
	case c.SerialNS < 0 || c.SerialNS > 0 && !isPattern(c.Workload) && c.Workload != "halo":
		return fmt.Errorf("--serial applies to halo and the task patterns (stencil, nearest, spread), not %s", c.Workload)
	case c.SyncRuntimeNS < 0 || c.SyncRuntimeNS > 0 && c.Workload != "imbalance":
		return fmt.Errorf("--sync-runtime applies to imbalance and must be non-negative")
	case c.Taskgroup && c.Workload != "forkjoin":
		return fmt.Errorf("--taskgroup applies to forkjoin, not %s", c.Workload)
	case (c.Workload == "mpi" || c.Workload == "nbc") && c.Threads != 1:
		return fmt.Errorf("--threads %d: the %s workload is a pure MPI program, one thread per process", c.Threads, c.Workload)
	case c.Lean && !isPattern(c.Workload):
		return fmt.Errorf("--lean applies to the task patterns (stencil, nearest, spread), not %s", c.Workload)
	case c.Workload == "tree" && (c.Radix < 1 || c.Steps < 1):
		return fmt.Errorf("tree: --radix %d and --steps %d: need at least 1 child a node and 1 level", c.Radix, c.Steps)
	case c.PollNS < 0 || c.PollGapNS < 0:
		return fmt.Errorf("--poll and --poll-gap must be non-negative")
	case (c.PollNS > 0 || c.PollGapNS > 0) && c.Workload != "mpi":
		return fmt.Errorf("--poll and --poll-gap apply to mpi, not %s", c.Workload)
	case c.PollGapNS > 0 && c.PollNS == 0:
		return fmt.Errorf("--poll-gap needs --poll")
	case c.Outliers < 0:
		return fmt.Errorf("--outliers must be non-negative")
	case c.Outliers > 0 && !isPattern(c.Workload):
		return fmt.Errorf("--outliers applies to the task patterns (stencil, nearest, spread), not %s", c.Workload)
	}
	return nil
}

// isPattern tells the Task-Bench patterns with a width and a step count
// (pipeline is a chain and takes no per-task options).
func isPattern(workload string) bool {
	return workload == "stencil" || workload == "nearest" || workload == "spread"
}

// Result summarises what Generate wrote.
type Result struct {
	Dir      string
	Events   int64
	Bytes    int64
	Expected Expected
	// Causes is, for the pure MPI workloads (mpi, nbc), the waiting each
	// rank caused by pattern: the report's wait_states.causes[] summed by
	// rank and pattern. Nil for the others.
	Causes map[WaitCause]int64
}

// WaitCause is a rank waited for and the pattern of the waits.
type WaitCause struct {
	Rank    int
	Pattern string
}

// Generate writes the workload's trace into dir (created if needed) with a
// manifest and expected.json.
func Generate(dir string, cfg Config) (*Result, error) {
	cfg = Defaults(cfg)
	if err := cfg.check(); err != nil {
		return nil, err
	}
	var w workload
	switch cfg.Workload {
	case "imbalance":
		w = newImbalance(&cfg)
	case "stencil", "nearest", "spread", "pipeline":
		w = newPattern(&cfg)
	case "forkjoin":
		w = newForkJoin(&cfg)
	case "halo":
		w = newHalo(&cfg)
	case "untied":
		w = newUntied(&cfg)
	case "mpi":
		w = newPureMPI(&cfg)
	case "nbc":
		w = &pureMPI{cfg: &cfg, nbc: true}
	case "tree":
		w = newTree(&cfg)
	default:
		return nil, fmt.Errorf("unknown workload %q (have %v)", cfg.Workload, Workloads)
	}
	if err := w.plan(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	clocks := makeClocks(&cfg)
	// A fresh identity per generated trace, as the collector draws one per
	// run: files of two gen runs never mix silently in one directory.
	runID := trace.NewRunID()
	files := make([]trace.FileInfo, cfg.Ranks)
	errs := make([]error, cfg.Ranks)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for r := 0; r < cfg.Ranks; r++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(r int) {
			defer wg.Done()
			defer func() { <-sem }()
			files[r], errs[r] = writeRank(dir, r, &cfg, w, clocks[r], runID)
		}(r)
	}
	wg.Wait()
	res := &Result{Dir: dir}
	for r, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		res.Events += files[r].Events
		res.Bytes += files[r].Bytes
	}
	m := &trace.Manifest{Ranks: cfg.Ranks, RunID: runID, Producer: "ptrace gen", Command: cfg.command(), Files: files}
	if err := trace.WriteManifest(filepath.Join(dir, trace.ManifestName), m); err != nil {
		return nil, err
	}
	res.Expected = w.expected()
	if c, ok := w.(interface{ causes() map[WaitCause]int64 }); ok {
		res.Causes = c.causes()
	}
	res.Expected.set("trace.processes", cfg.Ranks)
	res.Expected.set("trace.threads", cfg.Ranks*cfg.Threads)
	res.Expected.set("trace.events", res.Events)
	if err := res.Expected.write(filepath.Join(dir, "expected.json")); err != nil {
		return nil, err
	}
	return res, nil
}

func writeRank(dir string, r int, cfg *Config, w workload, clk clock, runID string) (trace.FileInfo, error) {
	path := filepath.Join(dir, trace.FileName(r))
	tw, err := trace.Create(path, trace.Header{
		Rank: r, NRanks: cfg.Ranks, Host: fmt.Sprintf("node%03d", r/4), PID: 10000 + r,
		Command: cfg.command(), ClockSrc: "synthetic", Producer: "ptrace gen",
		Runtime: "synthetic OMPT", RunID: runID,
	})
	if err != nil {
		return trace.FileInfo{}, err
	}
	if cfg.ChunkEvents > 0 {
		tw.SetChunkEvents(cfg.ChunkEvents)
	}
	worldComm(tw, cfg.Ranks)
	p := newProc(tw, r, cfg.Threads, clk)
	w.write(p)
	if p.err != nil {
		tw.Close()
		return trace.FileInfo{}, p.err
	}
	n := tw.Events()
	if err := tw.Close(); err != nil {
		return trace.FileInfo{}, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return trace.FileInfo{}, err
	}
	return trace.FileInfo{Rank: r, File: trace.FileName(r), Events: n, Bytes: st.Size()}, nil
}

// makeClocks draws each process's clock offset and drift; rank 0 is the
// reference clock.
func makeClocks(cfg *Config) []clock {
	cl := make([]clock, cfg.Ranks)
	rng := rand.New(rand.NewSource(cfg.Seed ^ 0x5eed))
	for r := 1; r < cfg.Ranks; r++ {
		if cfg.SkewNS > 0 {
			cl[r].offset = rng.Int63n(2*cfg.SkewNS+1) - cfg.SkewNS
		}
		if cfg.DriftPPM > 0 {
			cl[r].ppm = (2*rng.Float64() - 1) * cfg.DriftPPM
		}
	}
	return cl
}

func (c *Config) command() []string {
	return []string{"ptrace", "gen", "--workload", c.Workload, "--ranks", fmt.Sprint(c.Ranks), "--threads", fmt.Sprint(c.Threads), "--seed", fmt.Sprint(c.Seed)}
}

// workload plans a run (global schedule, expected values) and writes each
// rank's events.
type workload interface {
	plan() error
	write(p *proc)
	expected() Expected
}

// Expected holds expected report values under report-JSON paths.
type Expected map[string]any

func (e Expected) set(path string, v any) {
	m := map[string]any(e)
	keys := splitPath(path)
	for _, k := range keys[:len(keys)-1] {
		sub, ok := m[k].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[k] = sub
		}
		m = sub
	}
	m[keys[len(keys)-1]] = v
}

// tol records an absolute tolerance for the value at path.
func (e Expected) tol(path string, abs float64) {
	t, ok := e["tolerance"].(map[string]any)
	if !ok {
		t = map[string]any{}
		e["tolerance"] = t
	}
	t[path] = map[string]any{"abs": abs}
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}

func (e Expected) write(path string) error {
	if _, ok := e["schema"]; !ok {
		e["schema"] = "ptrace.report/v1"
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// durations draws n task durations around d with relative jitter j.
func jittered(rng *rand.Rand, d int64, j float64) int64 {
	if j == 0 {
		return d
	}
	v := float64(d) * (1 + j*(2*rng.Float64()-1))
	return int64(math.Max(1, math.Round(v)))
}

// setConstruct records the task statistics of a workload whose explicit
// tasks all come from one construct.
// setTaskRun records the breakdown and the critical path of a task
// workload without MPI: the threads' life, of which work and overhead and
// the rest idleness, the per-process rows, the span and the run's
// duration.
func setTaskRun(e Expected, work, overhead, life int64, rows []any, span, runTime int64) {
	e.set("breakdown.work_ns", work)
	e.set("breakdown.idleness_ns", life-work-overhead)
	e.set("breakdown.overhead_ns", overhead)
	e.set("breakdown.mpi_ns", 0)
	e.set("breakdown.thread_time_ns", life)
	e.set("breakdown.per_process", rows)
	e.set("critical_path.length_ns", span)
	e.set("critical_path.work_ns", work)
	e.set("critical_path.parallelism", float64(work)/float64(span))
	e.tol("critical_path.parallelism", 1e-9)
	e.set("trace.duration_ns", runTime)
}

func setConstruct(e Expected, name string, durs func(yield func(int64))) {
	var n, sum int64
	mn, mx := int64(math.MaxInt64), int64(0)
	durs(func(d int64) {
		n++
		sum += d
		mn, mx = min(mn, d), max(mx, d)
	})
	if n == 0 {
		return
	}
	e.set("tasks.constructs", []any{map[string]any{
		"name": name, "kind": "task", "count": n, "executed": n,
		"sum_ns": sum, "min_ns": mn, "max_ns": mx, "mean_ns": sum / n, "share": 1.0,
	}})
}

// constructDurs is one construct's task durations, for setConstructs.
type constructDurs struct {
	name string
	durs []int64
}

// setConstructs records the task statistics of several constructs in the
// report's order: by total duration, largest first, then by name.
func setConstructs(e Expected, cs []constructDurs) {
	var total int64
	sums := make([]int64, len(cs))
	for i, c := range cs {
		for _, d := range c.durs {
			sums[i] += d
		}
		total += sums[i]
	}
	idx := make([]int, len(cs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		if sums[i] != sums[j] {
			return sums[i] > sums[j]
		}
		return cs[i].name < cs[j].name
	})
	var rows []any
	for _, i := range idx {
		c := cs[i]
		n := int64(len(c.durs))
		if n == 0 {
			continue
		}
		mn, mx := int64(math.MaxInt64), int64(0)
		for _, d := range c.durs {
			mn, mx = min(mn, d), max(mx, d)
		}
		rows = append(rows, map[string]any{
			"name": c.name, "kind": "task", "count": n, "executed": n,
			"sum_ns": sums[i], "min_ns": mn, "max_ns": mx, "mean_ns": sums[i] / n,
			"share": float64(sums[i]) / float64(total),
		})
	}
	e.set("tasks.constructs", rows)
}

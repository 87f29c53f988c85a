package critpath_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/commtest"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/critpath"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/internal/fuzzbound"
	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/partition"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

func TestMain(m *testing.M) {
	fuzzbound.Apply()
	goleak.VerifyTestMain(m)
}

// simulate runs the simulation of process file path with the passes the
// critical path reads, as the driver sets them, and keeps its Proc.
func simulate(t testing.TB, path string) (*critpath.Proc, int64, int64) {
	t.Helper()
	p, err := trace.LoadProcess(path, trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first, last := p.TimeRange(nil)
	s := sim.New(p, nil, false)
	s.RecordDeps = true
	m := ompt.NewModel()
	m.KeepDependences()
	frags := sim.NewFragPass(nil)
	frags.DepsApart = true
	rd := critpath.NewRemoteDeps(m)
	if err := s.Run(m, frags, rd); err != nil {
		t.Fatal(err)
	}
	if n := s.Warn.Total(); n != 0 {
		t.Fatalf("%s: %d simulation warnings: %v", path, n, s.Warn.Examples)
	}
	return critpath.NewProc(p, s, frags.Take(), rd), first, last
}

// analyze runs Analyze over the processes of the trace in dir, without
// cross-process edges, on k in-process ranks, and returns rank 0's result.
func analyze(t *testing.T, dir string, procs, k int) critpath.Result {
	t.Helper()
	all := make([]*critpath.Proc, procs)
	first, last := int64(1<<62), int64(-1<<62)
	weights := make([]int64, procs)
	for i := range all {
		var a, b int64
		all[i], a, b = simulate(t, filepath.Join(dir, trace.FileName(i)))
		first, last = min(first, a), max(last, b)
		weights[i] = 1
	}
	plan, err := partition.Assign(weights, k)
	if err != nil {
		t.Fatal(err)
	}
	var res critpath.Result
	err = inproc.Run(k, func(c comm.Comm) error {
		lo, hi := plan.Range(c.Rank())
		in := &critpath.Input{Comm: c, Owners: plan, First: lo, Procs: all[lo:hi], RunTimeNS: last - first, Path: true}
		r, err := critpath.Analyze(in)
		if c.Rank() == 0 {
			res = r
		} else if r.CriticalPath != nil || r.Graph != nil || r.Path != nil {
			return fmt.Errorf("rank %d got a result", c.Rank())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The phase on its own, fed as the driver feeds it: on task patterns
// whose processes do not communicate, the span, the work, the
// parallelism and the task graph's per-root metrics equal gen's
// analytic values exactly, the whole path weighs the span, and the
// sections are the same on 1 to 3 ranks.
func TestAnalyzeGroundTruth(t *testing.T) {
	cfgs := []gen.Config{
		{Workload: "stencil", Ranks: 1, Threads: 4, Jitter: 0.3},
		{Workload: "stencil", Ranks: 1, Threads: 3, Jitter: 0.3, Lean: true},
		{Workload: "nearest", Ranks: 1, Threads: 3, Radix: 5, Fraction: 0.4, Period: 4, Jitter: 0.3},
		{Workload: "spread", Ranks: 1, Threads: 2, Radix: 4, Jitter: 0.2},
		{Workload: "forkjoin", Ranks: 3, Threads: 4, Width: 9, Steps: 12, Jitter: 0.5},
		{Workload: "untied", Ranks: 2, Threads: 3, Steps: 20},
	}
	for _, cfg := range cfgs {
		dir := filepath.Join(t.TempDir(), "trace")
		g, err := gen.Generate(dir, cfg)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%s/%d×%d", cfg.Workload, cfg.Ranks, cfg.Threads)
		exp := gen.Expected{}
		for _, k := range []string{"critical_path", "graph", "tolerance"} {
			if v, ok := g.Expected[k]; ok {
				exp[k] = v
			}
		}
		if _, ok := exp["critical_path"]; !ok {
			t.Fatalf("%s: gen expects no critical path: the test proves nothing", name)
		}
		var firstJS []byte
		for k := 1; k <= cfg.Ranks; k++ {
			res := analyze(t, dir, cfg.Ranks, k)
			if res.CriticalPath == nil || res.Graph == nil {
				t.Fatalf("%s k=%d: sections missing: %+v", name, k, res)
			}
			js, err := json.Marshal(report.Report{CriticalPath: res.CriticalPath, Graph: res.Graph})
			if err != nil {
				t.Fatal(err)
			}
			diffs, err := gen.Compare(js, exp)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range diffs {
				t.Errorf("%s k=%d: %s", name, k, d)
			}
			var sum, n int64
			if err := res.Path(func(pn report.PathNode) { sum, n = sum+pn.DurNS, n+1 }); err != nil {
				t.Fatalf("%s k=%d: reading the path: %v", name, k, err)
			}
			if cp := res.CriticalPath; sum != cp.LengthNS || n != cp.Nodes || cp.LengthNS <= 0 {
				t.Errorf("%s k=%d: path of %d nodes weighs %d, span %d over %d nodes", name, k, n, sum, cp.LengthNS, cp.Nodes)
			}
			if res.Warnings.Count != 0 {
				t.Errorf("%s k=%d: warnings %v", name, k, res.Warnings)
			}
			if firstJS == nil {
				firstJS = js
			} else if !bytes.Equal(js, firstJS) {
				t.Errorf("%s: sections on %d ranks differ from 1 rank:\n%s\n%s", name, k, js, firstJS)
			}
		}
	}
}

// chainTrace generates a chain of untied tasks on one process of threads
// threads, and returns its simulation's Proc as the driver keeps it.
func chainTrace(t testing.TB, steps int) (dir string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "trace")
	if _, err := gen.Generate(dir, gen.Config{Workload: "untied", Ranks: 1, Threads: 4, Steps: steps}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// analyzeAllocs runs Analyze over the one process of dir on one rank
// (with the whole path when path is set) and returns the bytes it
// allocated and the nodes on the critical path.
func analyzeAllocs(t testing.TB, dir string, path bool) (uint64, int64) {
	t.Helper()
	pg, first, last := simulate(t, filepath.Join(dir, trace.FileName(0)))
	plan, err := partition.Assign([]int64{1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	var nodes int64
	runtime.ReadMemStats(&before)
	err = inproc.Run(1, func(c comm.Comm) error {
		res, err := critpath.Analyze(&critpath.Input{Comm: c, Owners: plan, Procs: []*critpath.Proc{pg}, RunTimeNS: last - first, Path: path})
		if err == nil {
			nodes = res.CriticalPath.Nodes
		}
		return err
	})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	return after.TotalAlloc - before.TotalAlloc, nodes
}

// TestLongPathAllocs: on a chain of untied tasks, whose critical path
// holds every task (as a pipeline through ranks or an MPI ping-pong hold
// millions of nodes), the phase allocates a bounded number of bytes a
// path node, with the whole path asked for or not. The path's nodes and
// segments were 64-byte report.PathNodes, copied into the gather,
// decoded, appended, merged and cloned on rank 0 and stable-sorted, and
// the walk's steps 24 bytes each: 1 130 bytes a node (1 690 with the
// whole path) on this chain of 40 000, 442 MiB at the phase's peak on
// one of 1.67 M. Packed into lists that rank 0 merges as they stream by,
// it is 250 (330), the DAG and its replays' arrays included.
func TestLongPathAllocs(t *testing.T) {
	dir := chainTrace(t, 40000)
	for _, c := range []struct {
		path bool
		max  uint64
	}{{false, 500}, {true, 700}} {
		bytes, nodes := analyzeAllocs(t, dir, c.path)
		if nodes < 40000 {
			t.Fatalf("a chain of 40 000 untied tasks has a path of %d nodes", nodes)
		}
		t.Logf("path %v: %d nodes, %d bytes a node", c.path, nodes, bytes/uint64(nodes))
		if per := bytes / uint64(nodes); per > c.max {
			t.Errorf("path %v: %d bytes allocated for a path of %d nodes: %d a node, above %d", c.path, bytes, nodes, per, c.max)
		}
	}
}

// BenchmarkLongPath is the phase on a chain of 100 000 untied tasks, a
// path node a task (b.N runs; the simulation is outside the timing).
func BenchmarkLongPath(b *testing.B) {
	dir := chainTrace(b, 100000)
	for range b.N {
		b.StopTimer()
		pg, first, last := simulate(b, filepath.Join(dir, trace.FileName(0)))
		plan, err := partition.Assign([]int64{1}, 1)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		err = inproc.Run(1, func(c comm.Comm) error {
			_, err := critpath.Analyze(&critpath.Input{Comm: c, Owners: plan, Procs: []*critpath.Proc{pg}, RunTimeNS: last - first})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// Input.Check is called at the same points on every rank (one before the
// task graph, twenty-five in it: eight along its remote dependences and
// nine in its DAG's build, whatever their number on a rank, then five on
// a fragment DAG across ranks, or, where each process's DAG is apart (a
// rank of several processes and no Edges, as here), one before them and
// eight along their loop, on ranks of 1 and 2, 3 and 2, or 2, 2 and 1
// processes), and a check's error stops the phase there on every rank:
// under a memory limit it is the heap guard's, collective. Both without
// remote dependences (forkjoin) and with them (nearest, whose ranks hold
// different numbers of them).
func TestAnalyzeChecksStopEveryRank(t *testing.T) {
	for _, c := range []struct {
		cfg       gen.Config
		k, points int
	}{
		{gen.Config{Workload: "forkjoin", Ranks: 3, Threads: 2, Width: 4, Steps: 3}, 3, 31},
		{gen.Config{Workload: "forkjoin", Ranks: 3, Threads: 2, Width: 4, Steps: 3}, 2, 27 + 8},
		{gen.Config{Workload: "forkjoin", Ranks: 5, Threads: 2, Width: 4, Steps: 3}, 2, 27 + 8},
		{gen.Config{Workload: "forkjoin", Ranks: 5, Threads: 2, Width: 4, Steps: 3}, 3, 27 + 8},
		{gen.Config{Workload: "nearest", Ranks: 3, Threads: 2, Width: 6, Steps: 4, Radix: 3}, 3, 31},
		{gen.Config{Workload: "nearest", Ranks: 3, Threads: 2, Width: 6, Steps: 4, Radix: 3}, 2, 27 + 8},
	} {
		dir := filepath.Join(t.TempDir(), "trace")
		if _, err := gen.Generate(dir, c.cfg); err != nil {
			t.Fatal(err)
		}
		for stopAt := 0; stopAt <= c.points; stopAt++ {
			all := make([]*critpath.Proc, c.cfg.Ranks)
			first, last := int64(1<<62), int64(-1<<62)
			for i := range all {
				var a, b int64
				all[i], a, b = simulate(t, filepath.Join(dir, trace.FileName(i)))
				first, last = min(first, a), max(last, b)
			}
			plan, err := partition.Assign(slices.Repeat([]int64{1}, c.cfg.Ranks), c.k)
			if err != nil {
				t.Fatal(err)
			}
			stops := commtest.NewStops(c.k, stopAt)
			err = inproc.Run(c.k, func(cm comm.Comm) error {
				lo, hi := plan.Range(cm.Rank())
				in := &critpath.Input{Comm: cm, Owners: plan, First: lo, Procs: all[lo:hi], RunTimeNS: last - first, Check: stops.Check(cm.Rank())}
				_, stops.Errs[cm.Rank()] = critpath.Analyze(in)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			stops.Verify(t, fmt.Sprintf("%s, %d ranks", c.cfg.Workload, c.k), c.points)
		}
	}
}

// The forward replay's store filled from the processes' packed weights
// (the path's summary reading its nodes' there too) gives the sections
// and the whole path the rank's column of weights gives, on one
// process's task patterns, where Analyze takes it.
func TestDirectWeights(t *testing.T) {
	cfgs := []gen.Config{
		{Workload: "stencil", Ranks: 1, Threads: 3, Jitter: 0.3, Lean: true},
		{Workload: "stencil", Ranks: 1, Threads: 4},
		{Workload: "forkjoin", Ranks: 1, Threads: 4, Width: 9, Steps: 12, Jitter: 0.5},
		{Workload: "nearest", Ranks: 1, Threads: 3, Radix: 5, Fraction: 0.4, Period: 4, Jitter: 0.3},
	}
	for _, cfg := range cfgs {
		dir := filepath.Join(t.TempDir(), "trace")
		if _, err := gen.Generate(dir, cfg); err != nil {
			t.Fatal(err)
		}
		var out [2][]byte
		for i, column := range []bool{false, true} {
			pg, first, last := simulate(t, filepath.Join(dir, trace.FileName(0)))
			if !critpath.NarrowWeights(pg) {
				t.Fatalf("%s: weights not known narrow: the test proves nothing", cfg.Workload)
			}
			plan, err := partition.Assign([]int64{1}, 1)
			if err != nil {
				t.Fatal(err)
			}
			err = inproc.Run(1, func(c comm.Comm) error {
				in := &critpath.Input{Comm: c, Owners: plan, Procs: []*critpath.Proc{pg}, RunTimeNS: last - first, Path: true}
				if column {
					critpath.ColumnWeights(in)
				}
				res, err := critpath.Analyze(in)
				if err != nil {
					return err
				}
				nodes, err := pathNodes(res)
				if err != nil {
					return err
				}
				out[i], err = sectionsAndPath(res, nodes)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(out[0], out[1]) {
			t.Errorf("%s: the direct store's sections and path differ from the column's:\n%s\n%s", cfg.Workload, out[0], out[1])
		}
	}
}

// The same on an allreduce of more processes than weightsAt keeps
// cursors (its path, the slowest process of each of 200 jittered
// iterations, crosses most of them, some sharing a cursor), with the
// cross-process edges matched, on 1 and 2 ranks.
func TestDirectWeightsManyProcesses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	cfg := gen.Config{Workload: "halo", Ranks: 70, Threads: 2, Iterations: 200, Jitter: 0.5, Exchange: "allreduce"}
	if _, err := gen.Generate(dir, cfg); err != nil {
		t.Fatal(err)
	}
	d, err := trace.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]*trace.Process, cfg.Ranks)
	for i := range raw {
		if raw[i], err = trace.LoadProcess(d.FilePath(i), trace.LoadOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []int{1, 2} {
		var out [2][]byte
		for i, column := range []bool{false, true} {
			procs := make([]*critpath.Proc, cfg.Ranks)
			ones := make([]int64, cfg.Ranks)
			first, last := int64(1<<62), int64(-1<<62)
			for p := range procs {
				var a, b int64
				procs[p], a, b = simulate(t, d.FilePath(p))
				first, last = min(first, a), max(last, b)
				ones[p] = 1
				if !column && !critpath.NarrowWeights(procs[p]) {
					t.Fatalf("process %d: weights not known narrow: the test proves nothing", p)
				}
			}
			plan, err := partition.Assign(ones, k)
			if err != nil {
				t.Fatal(err)
			}
			err = inproc.Run(k, func(c comm.Comm) error {
				lo, hi := plan.Range(c.Rank())
				in := &critpath.Input{Comm: c, Owners: plan, First: lo, Procs: procs[lo:hi], RunTimeNS: last - first, Path: true}
				m, err := graph.Match(c, plan, raw[lo:hi], graph.MatchOptions{})
				if err != nil {
					return err
				}
				if in.Edges, err = graph.ExchangeEdges(c, m, nil); err != nil {
					return err
				}
				if column {
					critpath.ColumnWeights(in)
				}
				res, err := critpath.Analyze(in)
				if err != nil || c.Rank() != 0 {
					return err
				}
				nodes, err := pathNodes(res)
				if err != nil {
					return err
				}
				// weightsAt keeps process p's cursor in slot p%64: the
				// path must cross two processes of one slot.
				procsOnPath, slots := map[int]bool{}, map[int]bool{}
				for _, pn := range nodes {
					procsOnPath[pn.Rank], slots[pn.Rank%64] = true, true
				}
				if len(slots) == len(procsOnPath) {
					t.Errorf("%d ranks: the path crosses %d processes, no two sharing a cursor", k, len(procsOnPath))
				}
				out[i], err = sectionsAndPath(res, nodes)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(out[0], out[1]) {
			t.Errorf("%d ranks: the direct store's sections and path differ from the column's", k)
		}
	}
}

// pathNodes reads res's whole path (Input.Path).
func pathNodes(res critpath.Result) ([]report.PathNode, error) {
	var nodes []report.PathNode
	err := res.Path(func(pn report.PathNode) { nodes = append(nodes, pn) })
	return nodes, err
}

// sectionsAndPath encodes res's report sections and its whole path
// (nodes), for the comparison of two ways to the same result.
func sectionsAndPath(res critpath.Result, nodes []report.PathNode) ([]byte, error) {
	return json.Marshal(struct {
		R report.Report
		P []report.PathNode
	}{report.Report{CriticalPath: res.CriticalPath, Graph: res.Graph}, nodes})
}

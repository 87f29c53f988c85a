package critpath_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/critpath"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/internal/spill/spilltest"
	"github.com/ptrace-dev/ptrace/partition"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// TestAnalyzeSpilled: the phase with a spill file (the fragment weights'
// column parked from its drain to the path's summary, the tasks' run
// times through the replays, the forward replay's order) gives the
// sections of the phase without one, on one rank and two; a read failing
// on the last rank, at any point, alone or with every read after it, is
// an error on every rank naming it, never a hang or a panic.
func TestAnalyzeSpilled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	cfg := gen.Config{Workload: "stencil", Ranks: 2, Threads: 4, Width: 64, Steps: 400, Jitter: 0.3}
	if _, err := gen.Generate(dir, cfg); err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(dir, trace.FileName(0)), filepath.Join(dir, trace.FileName(1))}
	for _, k := range []int{1, 2} {
		run := func(fail int, all bool) ([]byte, []error, []int) { return runSpilled(t, files, nil, k, fail, all) }
		weights := checkSpilled(t, k, run, "fragment weights")
		if k == 2 && !weights { // one rank's processes are apart: no such column
			t.Errorf("%d ranks: no failed read back of the fragment weights", k)
		}
	}
}

// TestAnalyzeSpilledRemoteDeps: with the cross-process edges of remote
// dependences (latency nodes, whose receives' weights the task graph
// gathers from the parked column), the phase with a spill file gives the
// sections of the phase without one on 1–3 ranks (several processes with
// latency nodes on a rank); a read failing on the last rank, at any point,
// alone or with every read after it, is an error on every rank naming it,
// never a hang or a panic, and some failure is the task graph's gather.
func TestAnalyzeSpilledRemoteDeps(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	cfg := gen.Config{Workload: "spread", Ranks: 3, Threads: 2, Width: 48, Steps: 250, Radix: 3, Jitter: 0.3, LatencyNS: 500}
	if _, err := gen.Generate(dir, cfg); err != nil {
		t.Fatal(err)
	}
	d, err := trace.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]*trace.Process, cfg.Ranks)
	files := make([]string, cfg.Ranks)
	for i := range raw {
		files[i] = d.FilePath(i)
		if raw[i], err = trace.LoadProcess(files[i], trace.LoadOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []int{1, 2, 3} {
		run := func(fail int, all bool) ([]byte, []error, []int) { return runSpilled(t, files, raw, k, fail, all) }
		// The latency nodes' weights gathered from the parked column are
		// the processes' own.
		own, _, _ := run(-3, false)
		col, _, _ := run(-4, false)
		if !bytes.Equal(own, col) {
			t.Fatalf("%d ranks: the task graph with the weights gathered from their column differs:\n%s\n%s", k, col, own)
		}
		if !checkSpilled(t, k, run, "task graph: fragment weights") {
			t.Errorf("%d ranks: no failed read of the task graph's gather", k)
		}
	}
}

// runSpilled analyzes the processes of files on k in-process ranks, with
// spill files unless fail is −2 (−3: the task graph alone, its latency
// nodes weighed from the processes' own weights; −4: from the column,
// parked), the last rank's read fail (from 0) failing, and with all every
// read after it; raw, when given, are the processes loaded, whose
// cross-process edges are matched and exchanged. It returns rank 0's
// sections, each rank's error and reads.
func runSpilled(t *testing.T, files []string, raw []*trace.Process, k, fail int, all bool) ([]byte, []error, []int) {
	t.Helper()
	procs := make([]*critpath.Proc, len(files))
	ones := make([]int64, len(files))
	first, last := int64(1<<62), int64(-1<<62)
	for i := range procs {
		var a, b int64
		procs[i], a, b = simulate(t, files[i])
		first, last = min(first, a), max(last, b)
		ones[i] = 1
	}
	plan, err := partition.Assign(ones, k)
	if err != nil {
		t.Fatal(err)
	}
	var js []byte
	errs, reads := make([]error, k), make([]int, k)
	err = inproc.Run(k, func(c comm.Comm) error {
		lo, hi := plan.Range(c.Rank())
		in := &critpath.Input{Comm: c, Owners: plan, First: lo, Procs: procs[lo:hi], RunTimeNS: last - first, Path: true}
		// The rank's column of weights, parked and read back, as the
		// processes' weights here are in memory (TestDirectWeights: the
		// store filled from them gives the same sections).
		critpath.ColumnWeights(in)
		if raw != nil {
			m, err := graph.Match(c, plan, raw[lo:hi], graph.MatchOptions{})
			if err != nil {
				return err
			}
			if in.Edges, err = graph.ExchangeEdges(c, m, nil); err != nil {
				return err
			}
		}
		var f *spilltest.Mem
		if fail != -2 && fail != -3 {
			f = &spilltest.Mem{}
			if c.Rank() == k-1 && fail >= 0 {
				f.FailAt, f.Once = fail+1, !all
			}
			in.Spill = f
		}
		if fail <= -3 {
			g, err := critpath.TaskGraphOf(in, fail == -4)
			errs[c.Rank()] = err
			if c.Rank() == 0 && err == nil {
				js, err = json.Marshal(g)
			}
			return err
		}
		res, err := critpath.Analyze(in)
		errs[c.Rank()] = err
		if f != nil {
			reads[c.Rank()] = f.Reads
		}
		if c.Rank() == 0 && err == nil {
			js, err = json.Marshal(report.Report{CriticalPath: res.CriticalPath, Graph: res.Graph})
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return js, errs, reads
}

// checkSpilled checks that run on k ranks gives with spill files the
// sections it gives without, and that each of the last rank's reads
// failing, alone or with every read after it, is an error on every rank,
// never a panic; it reports whether some failure's error on the last rank
// names what.
func checkSpilled(t *testing.T, k int, run func(fail int, all bool) ([]byte, []error, []int), what string) bool {
	t.Helper()
	want, errs, _ := run(-2, false)
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	got, errs, reads := run(-1, false)
	for r, err := range errs {
		if err != nil {
			t.Fatalf("%d ranks, spilled: rank %d: %v", k, r, err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%d ranks: the sections with a spill file differ:\n%s\n%s", k, got, want)
	}
	n, named := reads[k-1], false
	for fail := range n {
		for _, all := range []bool{false, true} {
			_, errs, _ := run(fail, all)
			for r, err := range errs {
				if err == nil || !strings.Contains(err.Error(), "I/O error") || strings.Contains(err.Error(), "panic") {
					t.Errorf("%d ranks, the last's read %d of %d failing (all after %v): rank %d: err = %v", k, fail, n, all, r, err)
				}
			}
			named = named || errs[k-1] != nil && strings.Contains(errs[k-1].Error(), what)
		}
	}
	return named
}

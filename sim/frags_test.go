package sim_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// longest computes the longest path of one process's fragment graph
// sequentially (Kahn's order), with T1, the sum of task and serial work.
func longest(t *testing.T, f *sim.Frags) (span, work int64) {
	t.Helper()
	n := f.Len()
	indeg := make([]int, n)
	out := make([][]int32, n)
	for i := range f.Src {
		out[f.Src[i]] = append(out[f.Src[i]], f.Dst[i])
		indeg[f.Dst[i]]++
	}
	ef := make([]int64, n)
	var q []int32
	for i := 0; i < n; i++ {
		if indeg[i] == 0 {
			q = append(q, int32(i))
		}
	}
	seen := 0
	for len(q) > 0 {
		v := q[0]
		q = q[1:]
		seen++
		ef[v] += f.Weight[v]
		span = max(span, ef[v])
		if k := f.Kind[v]; k == sim.FragTask || k == sim.FragImplicit || k == sim.FragSerial {
			work += f.Weight[v]
		}
		for _, w := range out[v] {
			ef[w] = max(ef[w], ef[v])
			if indeg[w]--; indeg[w] == 0 {
				q = append(q, w)
			}
		}
	}
	if seen != n {
		t.Fatalf("fragment graph has a cycle: %d of %d nodes ordered", seen, n)
	}
	return span, work
}

func fragsOf(t *testing.T, path string) *sim.Frags {
	t.Helper()
	p, err := trace.LoadProcess(path, trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := sim.New(p, nil, false)
	s.RecordDeps = true
	m := ompt.NewModel()
	m.KeepDependences()
	fp := sim.NewFragPass(nil)
	if err := s.Run(m, fp); err != nil {
		t.Fatal(err)
	}
	if s.Warn.Total() > 0 {
		t.Fatalf("warnings: %v", s.Warn.Examples)
	}
	return &fp.F
}

// On one process the fragment graph's longest path is the pattern's span
// and its work is T1, exactly.
func TestFragsSingleProcessSpan(t *testing.T) {
	for _, cfg := range []gen.Config{
		{Workload: "stencil", Threads: 4, Width: 16, Steps: 20, Jitter: 0.4},
		{Workload: "nearest", Threads: 3, Width: 12, Steps: 30, Radix: 4, Fraction: 0.5, Jitter: 0.2},
		{Workload: "spread", Threads: 2, Width: 10, Steps: 25, Radix: 3, Jitter: 0.3},
		{Workload: "forkjoin", Threads: 3, Width: 7, Steps: 15, Jitter: 0.5},
		{Workload: "imbalance", Threads: 4, Iterations: 5},
	} {
		dir := t.TempDir()
		res, err := gen.Generate(dir, cfg)
		if err != nil {
			t.Fatal(err)
		}
		f := fragsOf(t, filepath.Join(dir, trace.FileName(0)))
		span, work := longest(t, f)
		name := fmt.Sprintf("%s", cfg.Workload)
		cp, _ := res.Expected["critical_path"].(map[string]any)
		if cp == nil {
			continue
		}
		if want := cp["length_ns"].(int64); span != want {
			t.Errorf("%s: span %d, want %d", name, span, want)
		}
		if want := cp["work_ns"].(int64); work != want {
			t.Errorf("%s: work %d, want %d", name, work, want)
		}
	}
}

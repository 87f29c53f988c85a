package sim_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/internal/narrow"
	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// kahn computes the longest paths of one process's fragment graph
// sequentially in Kahn's order: the order, each node's EF (the heaviest
// path ending with it, its weight included) and the first input that gave
// it (−1 for none). A cycle fails the test.
func kahn(t *testing.T, f *sim.Frags) (order []int32, ef []int64, from []int32) {
	t.Helper()
	n := f.Len()
	indeg := make([]int, n)
	out := make([][]int32, n)
	for _, e := range fragEdges(f) {
		out[e[0]] = append(out[e[0]], e[1])
		indeg[e[1]]++
	}
	ef, from = make([]int64, n), make([]int32, n)
	for i := 0; i < n; i++ {
		from[i] = -1
		if indeg[i] == 0 {
			order = append(order, int32(i))
		}
	}
	for k := 0; k < len(order); k++ {
		v := order[k]
		ef[v] += f.Weight[v]
		for _, w := range out[v] {
			if from[w] < 0 || ef[v] > ef[w] {
				ef[w], from[w] = ef[v], v
			}
			if indeg[w]--; indeg[w] == 0 {
				order = append(order, w)
			}
		}
	}
	if len(order) != n {
		t.Fatalf("fragment graph has a cycle: %d of %d nodes ordered", len(order), n)
	}
	return order, ef, from
}

// longest returns the length of a process's fragment graph's longest path
// and T1, the sum of task, region and serial work.
func longest(t *testing.T, f *sim.Frags) (span, work int64) {
	t.Helper()
	_, ef, _ := kahn(t, f)
	for v := range ef {
		span = max(span, ef[v])
		if k := f.Attr(int32(v)).Kind; k == sim.FragTask || k == sim.FragImplicit || k == sim.FragSerial {
			work += f.Weight[v]
		}
	}
	return span, work
}

func fragsOf(t *testing.T, path string) *sim.Frags {
	t.Helper()
	p, err := trace.LoadProcess(path, trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, _, f := simFrags(t, p)
	if s.Warn.Total() > 0 {
		t.Fatalf("warnings: %v", s.Warn.Examples)
	}
	return f
}

// On one process the fragment graph's longest path is the pattern's span
// and its work is T1, exactly.
func TestFragsSingleProcessSpan(t *testing.T) {
	for _, cfg := range []gen.Config{
		{Workload: "stencil", Threads: 4, Width: 16, Steps: 20, Jitter: 0.4},
		{Workload: "nearest", Threads: 3, Width: 12, Steps: 30, Radix: 4, Fraction: 0.5, Jitter: 0.2},
		{Workload: "spread", Threads: 2, Width: 10, Steps: 25, Radix: 3, Jitter: 0.3},
		{Workload: "forkjoin", Threads: 3, Width: 7, Steps: 15, Jitter: 0.5},
		// More children complete in a row, out of order, than a list of
		// cells holds before they are packed (kidStack): the taskwait
		// joins them from there.
		{Workload: "forkjoin", Threads: 8, Width: 3000, Steps: 3, Jitter: 0.9},
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

// fragEdges lists the graph's edges, its chains (n−1 → n) included.
func fragEdges(f *sim.Frags) [][2]int32 {
	var es [][2]int32
	for n := range int32(f.Len()) {
		if f.Chained(n) {
			es = append(es, [2]int32{n - 1, n})
		}
	}
	f.Edges.Each(func(a, b int32) {
		es = append(es, [2]int32{a, b})
	})
	return es
}

// packedFrags simulates the first process of dir with a fragment pass and
// returns its fragment graph as the pass leaves it, weights packed.
func packedFrags(t *testing.T, dir string) *sim.Frags {
	t.Helper()
	p, err := trace.LoadProcess(filepath.Join(dir, trace.FileName(0)), trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := sim.New(p, nil, false)
	fp := sim.NewFragPass(nil)
	if err := s.Run(ompt.NewModel(), fp); err != nil {
		t.Fatal(err)
	}
	return fp.Take()
}

// The weights stay packed from the simulation until UnpackWeights appends
// them to a rank's array; Weight is then a view of that array, and a
// second call appends the same weights again.
func TestUnpackWeights(t *testing.T) {
	dir := t.TempDir()
	if _, err := gen.Generate(dir, gen.Config{Workload: "stencil", Ranks: 1, Threads: 3, Events: 20_000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	f := packedFrags(t, dir)
	if f.Weight != nil {
		t.Fatal("Weight is set before UnpackWeights")
	}
	// WeightsOf reads the packed weights in one pass, whatever the order
	// of the nodes asked for (repeats included), and Weight once unpacked.
	rng := rand.New(rand.NewPCG(5, 6))
	ask := make([]int32, 300)
	for k := range ask {
		ask[k] = int32(rng.IntN(f.Len()))
	}
	ask = append(ask, ask[0], int32(f.Len()-1), 0)
	packedW := f.WeightsOf(ask)
	prefix := []int64{-7, -8}
	all := f.UnpackWeights(prefix)
	if len(all) != len(prefix)+f.Len() || all[0] != -7 || all[1] != -8 {
		t.Fatalf("%d values after a prefix of 2, for %d nodes", len(all), f.Len())
	}
	if &f.Weight[0] != &all[2] || len(f.Weight) != f.Len() {
		t.Fatal("Weight is not a view of the appended weights")
	}
	var sum int64
	for _, v := range f.Weight {
		if v < 0 {
			t.Fatalf("negative weight %d", v)
		}
		sum += v
	}
	if sum == 0 {
		t.Fatal("all weights are zero")
	}
	for k, n := range ask {
		if packedW[k] != f.Weight[n] {
			t.Fatalf("WeightsOf: node %d weighs %d packed, %d unpacked", n, packedW[k], f.Weight[n])
		}
	}
	if !slices.Equal(f.WeightsOf(ask), packedW) {
		t.Error("WeightsOf after UnpackWeights differs")
	}
	again := f.UnpackWeights(nil)
	if !slices.Equal(again, all[2:]) {
		t.Error("a second UnpackWeights gives other weights")
	}
	// DrainWeights gives them in node order, unpacked or packed, and
	// drops them.
	var drained []int64
	f.DrainWeights(func(w int64) { drained = append(drained, w) })
	if !slices.Equal(drained, again) || f.Weight != nil {
		t.Error("DrainWeights after UnpackWeights: other weights, or Weight kept")
	}
	g := packedFrags(t, dir)
	drained = drained[:0]
	g.DrainWeights(func(w int64) { drained = append(drained, w) })
	if !slices.Equal(drained, again) {
		t.Error("DrainWeights of the packed weights differs")
	}
	if g.UnpackWeights(nil); len(g.Weight) != 0 {
		t.Error("weights left after DrainWeights")
	}
	// PlanWeights counts the words DrainWeightsTo's framed column takes,
	// packed or unpacked, and keeps them; DrainWeightsTo gives them in
	// node order and drops them.
	for _, unpack := range []bool{false, true} {
		h := packedFrags(t, dir)
		if unpack {
			h.UnpackWeights(nil)
		}
		var plan narrow.FramedPlan
		h.PlanWeights(&plan)
		var b narrow.FramedBuilder
		b.ReserveWords(plan.Words())
		h.DrainWeightsTo(&b)
		c := b.Finish()
		if c.Len() != len(again) || h.Weight != nil || len(h.UnpackWeights(nil)) != 0 {
			t.Fatalf("DrainWeightsTo (unpacked %v): %d weights of %d, or weights kept", unpack, c.Len(), len(again))
		}
		for n, w := range again {
			if c.At(n) != w {
				t.Fatalf("DrainWeightsTo (unpacked %v): node %d weighs %d, want %d", unpack, n, c.At(n), w)
			}
		}
		var check narrow.FramedPlan
		for _, w := range again {
			check.Add(w)
		}
		if plan.Words() != check.Words() {
			t.Errorf("PlanWeights (unpacked %v): %d words, want %d", unpack, plan.Words(), check.Words())
		}
	}
}

// LastsInto gives every task's last fragment, LastOf's, in a buffer it
// reuses when it has room.
func TestLastsInto(t *testing.T) {
	dir := t.TempDir()
	if _, err := gen.Generate(dir, gen.Config{Workload: "stencil", Ranks: 1, Threads: 3, Events: 20_000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	p, err := trace.LoadProcess(filepath.Join(dir, trace.FileName(0)), trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := sim.New(p, nil, false)
	fp := sim.NewFragPass(nil)
	fp.DepsApart = true // the last fragments are kept
	if err := s.Run(ompt.NewModel(), fp); err != nil {
		t.Fatal(err)
	}
	f := fp.Take()
	buf := make([]int32, 5, 1<<20)
	got := f.LastsInto(buf)
	if len(got) == 0 || &got[0] != &buf[0] {
		t.Fatalf("%d last fragments, or not in the buffer given", len(got))
	}
	ran := 0
	for k, v := range got {
		if v != f.LastOf(sim.Task(k)) {
			t.Fatalf("task %d: last fragment %d, LastOf %d", k, v, f.LastOf(sim.Task(k)))
		}
		if v >= 0 {
			ran++
		}
	}
	if ran == 0 {
		t.Fatal("no task has a last fragment")
	}
}

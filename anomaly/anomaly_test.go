package anomaly

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
)

func fromTrace(t *testing.T, dir string) []Task {
	t.Helper()
	ts, err := readTraceTasks(dir, "flops")
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

type injected struct {
	Rank int   `json:"rank"`
	Task int64 `json:"task"`
}

func readInjected(t *testing.T, dir string) []injected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Anomalies struct {
			Injected []injected `json:"tasks"`
		} `json:"anomalies"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e.Anomalies.Injected
}

// Every outlier gen injects is found, in every pattern, with and without a
// cost attribute to regress on, and nothing else is.
func TestGenOutliersFound(t *testing.T) {
	for _, wl := range []string{"stencil", "nearest", "spread"} {
		for _, useCost := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/cost=%v", wl, useCost), func(t *testing.T) {
				dir := t.TempDir()
				_, err := gen.Generate(dir, gen.Config{Workload: wl, Ranks: 3, Threads: 4, Width: 48, Steps: 40, Jitter: 0.3, Outliers: 12, LatencyNS: 1000, Seed: 7})
				if err != nil {
					t.Fatal(err)
				}
				inj := readInjected(t, dir)
				if len(inj) != 12 {
					t.Fatalf("expected.json lists %d injected outliers, want 12", len(inj))
				}
				tasks := fromTrace(t, dir)
				if !useCost {
					for i := range tasks {
						tasks[i].Cost = 0
					}
				}
				res := Detect(tasks, Options{Attribute: "flops"})
				if res.Tested != int64(len(tasks)) {
					t.Errorf("tested %d of %d tasks", res.Tested, len(tasks))
				}
				wantKind := map[bool]string{true: "loglog", false: "location"}[useCost]
				if len(res.Models) != 1 || res.Models[0].Kind != wantKind {
					t.Errorf("models %+v, want one %s model", res.Models, wantKind)
				}
				got := map[injected]bool{}
				for _, a := range res.Tasks {
					got[injected{a.Rank, a.Task}] = true
					if a.DurNS <= a.BoundNS || a.BoundNS <= a.PredictedNS {
						t.Errorf("anomaly %+v: duration not above bound above prediction", a)
					}
					if a.Group < 1 || a.Group > len(res.Groups) {
						t.Errorf("anomaly %+v: group out of range", a)
					}
				}
				for _, in := range inj {
					if !got[in] {
						t.Errorf("injected outlier rank %d task %#x not found", in.Rank, in.Task)
					}
				}
				if res.Found != int64(len(inj)) {
					t.Errorf("found %d anomalies, injected %d", res.Found, len(inj))
				}
				var inGroups int64
				for _, g := range res.Groups {
					inGroups += g.Tasks
				}
				if inGroups != res.Found {
					t.Errorf("groups hold %d tasks, found %d", inGroups, res.Found)
				}
			})
		}
	}
}

// On clean traces (jittered durations, no outliers) at most 1% of the tasks
// are flagged — with α = 0.05 family-wise, almost always none.
func TestCleanTracesFewFalsePositives(t *testing.T) {
	var tasks, flagged int64
	for seed := int64(1); seed <= 6; seed++ {
		for _, wl := range []string{"stencil", "spread", "forkjoin"} {
			dir := t.TempDir()
			if _, err := gen.Generate(dir, gen.Config{Workload: wl, Ranks: 2, Threads: 4, Width: 32, Steps: 40, Jitter: 0.5, Seed: seed}); err != nil {
				t.Fatal(err)
			}
			ts := fromTrace(t, dir)
			res := Detect(ts, Options{Attribute: "flops"})
			tasks += int64(len(ts))
			flagged += res.Found
			// Without the attribute the durations are uniform, not log-normal:
			// the location model must not flag their upper tail either.
			for i := range ts {
				ts[i].Cost = 0
			}
			res = Detect(ts, Options{})
			tasks += int64(len(ts))
			flagged += res.Found
		}
	}
	if float64(flagged) > 0.01*float64(tasks) {
		t.Errorf("%d of %d clean tasks flagged (> 1%%)", flagged, tasks)
	}
	t.Logf("%d of %d clean tasks flagged", flagged, tasks)
}

// On log-normal noise around a power law, the regression recovers the slope
// and flags planted outliers at the rate the Bonferroni bound promises.
func TestLogLogRegression(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var ts []Task
	const n = 5000
	for i := 0; i < n; i++ {
		cost := math.Exp(rng.Float64()*6 + 10) // e^10 … e^16 flops
		d := 2 * math.Pow(cost, 0.9) * math.Exp(0.1*rng.NormFloat64())
		ts = append(ts, Task{Rank: int32(i % 4), Thread: int32(i % 3), ID: int64(i), Construct: "gemm.c:10:1", StartNS: int64(i) * 1000, DurNS: int64(d), Cost: cost})
	}
	planted := map[int64]bool{}
	for i := 0; i < 20; i++ {
		k := rng.Intn(n)
		ts[k].DurNS *= 4
		planted[ts[k].ID] = true
	}
	res := Detect(ts, Options{Attribute: "flops"})
	m := res.Models[0]
	if m.Kind != "loglog" || math.Abs(m.Slope-0.9) > 0.01 || math.Abs(m.Scale-0.1) > 0.01 {
		t.Errorf("model %+v: want slope 0.9, scale 0.1", m)
	}
	for _, a := range res.Tasks {
		if !planted[a.Task] {
			t.Errorf("task %d flagged but not planted (score %.2f)", a.Task, a.Score)
		}
		delete(planted, a.Task)
	}
	if len(planted) > 0 {
		t.Errorf("%d planted outliers (4×, ≈14 scales) missed", len(planted))
	}
}

// Anomalies close in time form one group; Rank/Thread say where they are
// when they share one, -1 when not.
func TestGrouping(t *testing.T) {
	var ts []Task
	for i := 0; i < 200; i++ {
		ts = append(ts, Task{Rank: 0, Thread: int32(i % 4), ID: int64(i), Construct: "a", StartNS: int64(i/4) * 100, DurNS: 100})
	}
	// Three back to back on thread 2 of rank 1, two far apart on different threads.
	for i, at := range []int64{50_000, 50_800, 51_600} {
		ts = append(ts, Task{Rank: 1, Thread: 2, ID: int64(1000 + i), Construct: "a", StartNS: at, DurNS: 800})
	}
	ts = append(ts, Task{Rank: 0, Thread: 1, ID: 2000, Construct: "a", StartNS: 90_000, DurNS: 900})
	ts = append(ts, Task{Rank: 1, Thread: 0, ID: 2001, Construct: "a", StartNS: 90_100, DurNS: 900})
	res := Detect(ts, Options{})
	if res.Found != 5 || len(res.Groups) != 2 {
		t.Fatalf("found %d in %d groups, want 5 in 2: %+v", res.Found, len(res.Groups), res.Groups)
	}
	g1, g2 := res.Groups[0], res.Groups[1]
	if g1.Tasks != 3 || g1.Rank != 1 || g1.Thread != 2 || g1.Threads != 1 || g1.StartNS != 50_000 || g1.EndNS != 52_400 {
		t.Errorf("group 1 %+v", g1)
	}
	if g2.Tasks != 2 || g2.Rank != -1 || g2.Thread != -1 || g2.Threads != 2 {
		t.Errorf("group 2 %+v", g2)
	}
}

// Small constructs are not tested, and the result does not depend on the
// order of the input.
func TestSmallConstructsAndOrder(t *testing.T) {
	var ts []Task
	for i := 0; i < 50; i++ {
		ts = append(ts, Task{Rank: int32(i % 2), ID: int64(i), Construct: "big", StartNS: int64(i) * 10, DurNS: 1000 + int64(i%7)*10})
	}
	ts = append(ts, Task{ID: 99, Construct: "tiny", DurNS: 1e9})
	a := Detect(ts, Options{})
	rev := make([]Task, len(ts))
	for i := range ts {
		rev[len(ts)-1-i] = ts[i]
	}
	b := Detect(rev, Options{})
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("result depends on input order:\n%s\n%s", ja, jb)
	}
	if a.Tested != 50 || a.Found != 0 {
		t.Errorf("tested %d found %d, want 50 and 0 (the tiny construct is untested)", a.Tested, a.Found)
	}
	if a.Models[1].Construct != "tiny" || a.Models[1].Kind != "untested" {
		t.Errorf("models %+v", a.Models)
	}
}

// Test decides most tasks of a location model by comparing durations with
// the bound, without a logarithm; what it finds is what the score says,
// task by task, for durations on both sides of each bound and on it.
func TestTestMatchesScores(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	var tasks []Task
	for i := range 4000 {
		cons := fmt.Sprintf("c%d", i%3)
		d := math.Exp(10 + 0.3*rng.NormFloat64())
		if i%97 == 0 {
			d *= 20
		}
		tasks = append(tasks, Task{Rank: 0, ID: int64(i), Construct: cons, DurNS: int64(d)})
	}
	counts := map[string]int64{}
	for _, tk := range tasks {
		counts[tk.Construct]++
	}
	ms := Fit(tasks, counts, Options{})
	// Add tasks at each construct's bound, one ns either side and on it.
	for _, c := range ms.Cons {
		f := c.Fit.model()
		b := math.Exp(f.a + c.Q*f.s*f.seFactor(0))
		for _, d := range []int64{int64(b) - 1, int64(b), int64(b) + 1, int64(math.Ceil(b))} {
			tasks = append(tasks, Task{Rank: 1, ID: d, Construct: c.Report.Construct, DurNS: d})
		}
	}
	found, _ := ms.Test(tasks)
	got := map[[2]int64]bool{}
	for _, a := range found {
		got[[2]int64{int64(a.Rank), a.Task}] = true
	}
	want := 0
	for _, tk := range tasks {
		var c *ConsModel
		for i := range ms.Cons {
			if ms.Cons[i].Report.Construct == tk.Construct {
				c = &ms.Cons[i]
			}
		}
		f := c.Fit.model()
		score := (math.Log(float64(max(tk.DurNS, 1))) - f.a) / (f.s * f.seFactor(0))
		if score > c.Q != got[[2]int64{int64(tk.Rank), tk.ID}] {
			t.Errorf("%s task of %d ns: score %.9f against bound %.9f, found %v", tk.Construct, tk.DurNS, score, c.Q, got[[2]int64{int64(tk.Rank), tk.ID}])
		}
		if score > c.Q {
			want++
		}
	}
	if want == 0 || want > ms.Opts.MaxListed {
		t.Fatalf("%d anomalies expected: the test needs some, fewer than %d listed", want, ms.Opts.MaxListed)
	}
}

// Screen.Clear never clears a task Test finds anomalous, and clears most
// tasks of a location model; Test over the tasks Clear leaves finds what
// Test over all finds. The constructs: a location model, a log-log one,
// one too small to test, and one the models do not know.
func TestScreenClearsNoAnomaly(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	var tasks []Task
	for i := range 6000 {
		tk := Task{Rank: int32(i % 3), Thread: int32(i % 5), ID: int64(i), StartNS: int64(i) * 1000}
		switch i % 4 {
		case 0, 1:
			tk.Construct = "loc"
			tk.DurNS = int64(math.Exp(9 + 0.2*rng.NormFloat64()))
		case 2:
			tk.Construct = "reg"
			tk.Cost = float64(1 + rng.Intn(1000))
			tk.DurNS = int64(tk.Cost * math.Exp(5+0.1*rng.NormFloat64()))
		case 3:
			tk.Construct = "tiny"
			tk.DurNS = 1 + int64(i%7)
			if i > 20 {
				tk.Construct = "unknown"
			}
		}
		if i%101 == 0 {
			tk.DurNS *= 30
		}
		tasks = append(tasks, tk)
	}
	counts := map[string]int64{}
	for _, tk := range tasks {
		if tk.Construct != "unknown" {
			counts[tk.Construct]++
		}
	}
	ms := Fit(tasks, counts, Options{Attribute: "flops"})
	kinds := map[string]string{}
	for _, c := range ms.Cons {
		kinds[c.Report.Construct] = c.Report.Kind
	}
	if kinds["loc"] != "location" || kinds["reg"] != "loglog" || kinds["tiny"] != "untested" {
		t.Fatalf("models %v: the test needs one of each kind", kinds)
	}
	all, nAll := ms.Test(tasks)
	sc := ms.Screen()
	var kept []Task
	cleared := map[string]int{}
	for _, tk := range tasks {
		if sc.Clear(tk.Construct, tk.DurNS) {
			cleared[tk.Construct]++
			// The score as TestTestMatchesScores computes it: Test's own
			// would go through the same screen.
			for _, c := range ms.Cons {
				if c.Report.Construct != tk.Construct || c.Report.Kind == "untested" {
					continue
				}
				f := c.Fit.model()
				x := 0.0
				if c.Report.Kind == "loglog" {
					x = math.Log(tk.Cost)
				}
				if score := (math.Log(float64(max(tk.DurNS, 1))) - f.a - f.b*x) / (f.s * f.seFactor(x)); score > c.Q {
					t.Errorf("cleared task %+v is an anomaly (score %.3f, bound %.3f)", tk, score, c.Q)
				}
			}
			continue
		}
		kept = append(kept, tk)
	}
	some, nSome := ms.Test(kept)
	if len(all) == 0 || fmt.Sprint(all) != fmt.Sprint(some) || fmt.Sprint(nAll) != fmt.Sprint(nSome) {
		t.Errorf("Test over the tasks kept found %d (%v), over all %d (%v)", len(some), nSome, len(all), nAll)
	}
	if cleared["loc"] < 2800 || cleared["reg"] != 0 || cleared["unknown"] == 0 || cleared["tiny"] == 0 {
		t.Errorf("cleared per construct %v: most location tasks, no log-log task, every untested or unknown one", cleared)
	}
}

// InSample keeps every task of a construct of at most limit tasks and
// about limit of a larger one, the same whatever the order it is asked in.
func TestInSample(t *testing.T) {
	var tasks []Task
	for i := range 5000 {
		c := "c0"
		if i%125 == 0 {
			c = "c1"
		}
		tasks = append(tasks, Task{Rank: int32(i % 7), ID: int64(i * 31), Construct: c})
	}
	counts := map[string]int64{"c0": 4960, "c1": 40}
	kept := map[string]int{}
	for _, tk := range tasks {
		if InSample(tk.Rank, tk.ID, counts[tk.Construct], 100) {
			kept[tk.Construct]++
		}
	}
	for k := len(tasks) - 1; k >= 0; k-- {
		tk := tasks[k]
		if InSample(tk.Rank, tk.ID, counts[tk.Construct], 100) {
			kept[tk.Construct+" again"]++
		}
	}
	if kept["c1"] != 40 || kept["c0"] < 50 || kept["c0"] > 200 || kept["c0 again"] != kept["c0"] || kept["c1 again"] != 40 {
		t.Errorf("sampled %v: all 40 of c1 and about 100 of c0, the same asked backwards", kept)
	}
}

// Keeping only the best of the anomalies found so far, chunk after chunk
// (as the driver does to bound the list), lists the best of all: the order
// is total, ties included.
func TestTopOfTopsIsTopOfAll(t *testing.T) {
	ms := &Models{Opts: Options{MaxListed: 50}}
	rng := rand.New(rand.NewSource(3))
	var all, kept []report.Anomaly
	for range 40 {
		chunk := make([]report.Anomaly, rng.Intn(90))
		for i := range chunk {
			// Few distinct scores and starts: ties are the rule.
			chunk[i] = report.Anomaly{Rank: rng.Intn(3), Thread: rng.Intn(2), Task: rng.Int63n(1000),
				StartNS: rng.Int63n(20), Score: float64(rng.Intn(8))}
		}
		all = append(all, chunk...)
		top := ms.Top(slices.Clone(chunk))
		if len(kept)+len(top) > 2*ms.Opts.MaxListed {
			kept = ms.Top(kept)
		}
		kept = append(kept, top...)
	}
	got, want := ms.Top(kept), ms.Top(all)
	if !slices.Equal(got, want) {
		t.Fatalf("the best of the chunks' best differ from the best of all:\n got %v\nwant %v", got, want)
	}
}

// TestTopScoresIsSortedPrefix checks the selection against its
// definition: the limit first of the whole list sorted in the report's
// order, for lists of every length around the limit, in random, sorted
// and reversed order, with ties on every key but the task.
func TestTopScoresIsSortedPrefix(t *testing.T) {
	byReport := func(a, b report.Anomaly) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Thread, b.Thread),
			cmp.Compare(a.StartNS, b.StartNS), cmp.Compare(a.Task, b.Task))
	}
	rng := rand.New(rand.NewSource(5))
	for _, n := range []int{0, 1, 2, 3, 17, 18, 100, 1000, 5000} {
		for _, limit := range []int{1, 2, 16, 17, 50, 999, 1000, 4999} {
			for shape := range 4 {
				as := make([]report.Anomaly, n)
				for i := range as {
					as[i] = report.Anomaly{Rank: rng.Intn(2), Thread: rng.Intn(3), Task: int64(i),
						StartNS: rng.Int63n(50), Score: float64(rng.Intn(4))}
				}
				switch shape {
				case 1:
					slices.SortFunc(as, byReport)
				case 2:
					slices.SortFunc(as, func(a, b report.Anomaly) int { return byReport(b, a) })
				case 3:
					for i := range as {
						as[i].Score, as[i].StartNS = 1, 0 // one score: the tree's
					}
				}
				want := slices.Clone(as)
				slices.SortFunc(want, byReport)
				want = want[:min(limit, n)]
				if got := topScores(as, limit); !slices.Equal(got, want) {
					t.Fatalf("n %d, limit %d, shape %d: got %v\nwant %v", n, limit, shape, got, want)
				}
			}
		}
	}
}

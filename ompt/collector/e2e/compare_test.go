package e2e

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// recordThreads records cmd with the given number of OpenMP threads.
func (h *harness) recordThreads(t *testing.T, threads string, cmd ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace-"+threads)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, h.ptrace, append([]string{"record", "-o", dir, "--"}, cmd...)...)
	c.Env = append(os.Environ(), "OMP_NUM_THREADS="+threads, "PTRACE_COLLECTOR_DIR="+h.libs)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("record %v with %s threads: %v\n%s", cmd, threads, err, out)
	}
	return dir
}

// ptrace compare on real runs of the tiled Cholesky at 1 and 2 threads:
// the same task constructs with the same counts (strong scaling), the work
// and span laws hold (measured time ≥ max(T1/P, T∞)), the speedup range is
// ordered, the burdened span adds the measured overhead per task, and
// computation scalability is the ratio of summed useful times.
func TestCompareRealRuns(t *testing.T) {
	h := setup(t)
	a := h.recordThreads(t, "1", h.example("cholesky"), "8", "32")
	b := h.recordThreads(t, "2", h.example("cholesky"), "8", "32")
	out, err := exec.Command(h.ptrace, "compare", "-q", "--json", "-", b, a).Output()
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, out)
	}
	var res struct {
		Reference string `json:"reference"`
		Runs      []struct {
			Name         string `json:"name"`
			Cores        int    `json:"cores"`
			UsefulSumNS  int64  `json:"useful_sum_ns"`
			Efficiencies struct {
				ComputationScalability float64 `json:"computation_scalability"`
			} `json:"efficiencies"`
			Bounds *struct {
				SpanNS         int64   `json:"span_ns"`
				PathTasks      int64   `json:"path_tasks"`
				TaskOverheadNS float64 `json:"task_overhead_ns"`
				BurdenedSpanNS int64   `json:"burdened_span_ns"`
				SpeedupMin     float64 `json:"speedup_min"`
				SpeedupMax     float64 `json:"speedup_max"`
				Distance       float64 `json:"distance"`
			} `json:"bounds"`
		} `json:"runs"`
		Constructs []struct {
			Name string `json:"name"`
			Runs []struct {
				Count   int64 `json:"count"`
				Missing bool  `json:"missing"`
			} `json:"runs"`
		} `json:"constructs"`
		Problems []any `json:"problems"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 || len(res.Problems) != 0 || res.Reference != a || res.Runs[0].Cores != 1 || res.Runs[1].Cores != 2 {
		t.Fatalf("runs %+v, problems %v, reference %s", res.Runs, res.Problems, res.Reference)
	}
	if len(res.Constructs) != 4 {
		t.Errorf("%d constructs, want Cholesky's 4 (potrf, trsm, syrk, gemm)", len(res.Constructs))
	}
	for _, c := range res.Constructs {
		if c.Runs[0].Missing || c.Runs[0].Count != c.Runs[1].Count {
			t.Errorf("%s: %d tasks at 1 thread, %d at 2", c.Name, c.Runs[0].Count, c.Runs[1].Count)
		}
	}
	u0 := float64(res.Runs[0].UsefulSumNS)
	for _, r := range res.Runs {
		if want := u0 / float64(r.UsefulSumNS); math.Abs(r.Efficiencies.ComputationScalability-want) > 1e-12 {
			t.Errorf("%s: computation scalability %v, want %v", r.Name, r.Efficiencies.ComputationScalability, want)
		}
		b := r.Bounds
		if b == nil {
			t.Fatalf("%s: no bounds", r.Name)
		}
		if b.Distance < 1-1e-9 {
			t.Errorf("%s: measured time %.4f× max(T1/P, T∞): below the work/span bound", r.Name, b.Distance)
		}
		if b.SpeedupMin > b.SpeedupMax || b.SpeedupMax > float64(r.Cores) {
			t.Errorf("%s: speedup range %v–%v on %d cores", r.Name, b.SpeedupMin, b.SpeedupMax, r.Cores)
		}
		if want := b.SpanNS + int64(math.Round(float64(b.PathTasks)*b.TaskOverheadNS)); b.BurdenedSpanNS != want {
			t.Errorf("%s: burdened span %d, want %d (%d tasks on the path × %.0f ns)", r.Name, b.BurdenedSpanNS, want, b.PathTasks, b.TaskOverheadNS)
		}
	}
	if res.Runs[1].Bounds.TaskOverheadNS <= 0 {
		t.Errorf("2 threads: no runtime overhead measured per task")
	}
}

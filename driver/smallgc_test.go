package driver_test

import (
	"runtime/metrics"
	"testing"

	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/gen"
)

// The collection Run forces after each phase pays off on large traces
// only: on a trace of a few KB it freed nothing and, with the process
// holding 105 MB (a fuzzing worker), was 36 ms of a 37 ms analysis (issue
// 42, item 4: FuzzAnalyzeValues at a few executions a second). A small
// trace forces none.
func TestSmallTraceForcesNoCollection(t *testing.T) {
	dir, _ := generate(t, gen.Config{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 3})
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := forced()
	for k := 1; k <= 2; k++ {
		if _, err := runWith(k, driver.Options{Dir: dir}); err != nil {
			t.Fatal(err)
		}
	}
	if n := forced() - before; n != 0 {
		t.Errorf("%d forced collections analysing a trace of a few KB twice", n)
	}
}

package driver

import (
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/reduce"
	"github.com/ptrace-dev/ptrace/report"
)

func TestTypicalNS(t *testing.T) {
	// half the tasks in [1024, 2048), half in [2048, 4096): the median sits
	// at the boundary
	k := reduce.Construct{ConstructRow: reduce.ConstructRow{Executed: 20, Hist: []int64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 10}}, MeanNS: 99999}
	if got := typicalNS(k); got != 2048 {
		t.Errorf("median %d, want 2048", got)
	}
	if got := typicalNS(reduce.Construct{MeanNS: 7}); got != 7 {
		t.Errorf("without a histogram %d, want the mean 7", got)
	}
}

func TestGrainFindings(t *testing.T) {
	c := &report.InstrumentationCorrection{Applied: true, EventCostNS: 10}
	fine := reduce.Construct{ConstructRow: reduce.ConstructRow{Name: "big", Executed: 4, Hist: make([]int64, 20)}}
	fine.Hist[12] = 4 // ~4–8 µs
	small := reduce.Construct{ConstructRow: reduce.ConstructRow{Name: "small", Executed: 4, Hist: make([]int64, 20)}}
	small.Hist[10] = 4 // ~1–2 µs, below 250 × 10 ns
	got := grainFindings(c, []reduce.Construct{fine, small})
	if len(got) != 1 || got[0].Topic != "resolution" || !strings.Contains(got[0].Message, "small") {
		t.Errorf("findings %+v, want one resolution finding for small", got)
	}
	if f := grainFindings(nil, []reduce.Construct{small}); f != nil {
		t.Errorf("no cost in the trace: findings %+v", f)
	}
}

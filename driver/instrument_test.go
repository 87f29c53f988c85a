package driver

import (
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/reduce"
	"github.com/ptrace-dev/ptrace/report"
)

func TestGrainFindings(t *testing.T) {
	c := &report.InstrumentationCorrection{Applied: true, EventCostNS: 8} // limit 2 µs
	construct := func(name string, mean int64) reduce.Construct {
		return reduce.Construct{ConstructRow: reduce.ConstructRow{Name: name, Executed: 4}, MeanNS: mean}
	}
	fine := construct("big", 6000)
	// Tasks of 1 and 2 µs: the median is on the limit, the mean below.
	small := construct("small", 1500)
	// Mostly 1 µs tasks, but a few descheduled for milliseconds: the
	// construct's work is mostly those, and resolved.
	lifted := construct("lifted", 2100)
	got := grainFindings(c, []reduce.Construct{fine, small, lifted})
	if len(got) != 1 || got[0].Topic != "resolution" || !strings.Contains(got[0].Message, "small") || !strings.Contains(got[0].Message, "1.5 µs on average") {
		t.Errorf("findings %+v, want one resolution finding for small, with its mean", got)
	}
	if f := grainFindings(c, []reduce.Construct{{ConstructRow: reduce.ConstructRow{Name: "never ran"}}}); f != nil {
		t.Errorf("a construct with no task run: findings %+v", f)
	}
	if f := grainFindings(nil, []reduce.Construct{small}); f != nil {
		t.Errorf("no cost in the trace: findings %+v", f)
	}
}

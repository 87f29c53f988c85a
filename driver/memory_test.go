package driver

import (
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
)

// The heap guard stops every rank, saying what would do, when one saw the
// heap above the process's limit; under it, nothing happens.
func TestMemoryGuard(t *testing.T) {
	for _, c := range []struct {
		peak []int64 // per rank
		stop bool
	}{
		{[]int64{90, 50, 80}, false},
		{[]int64{90, 150, 80}, true},
	} {
		errs := make([]error, len(c.peak))
		err := inproc.Run(len(c.peak), func(cm comm.Comm) error {
			errs[cm.Rank()] = memoryGuard{limit: 100}.check(cm, "simulate", c.peak[cm.Rank()])
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for r, e := range errs {
			if (e != nil) != c.stop {
				t.Errorf("peaks %v: rank %d: %v", c.peak, r, e)
			}
			if e != nil && (!strings.Contains(e.Error(), "simulate phase") || !strings.Contains(e.Error(), "reached 150 B") || !strings.Contains(e.Error(), "--memory-limit 187 B or more")) {
				t.Errorf("rank %d: %v, want the phase, the largest resident set and a quarter more", r, e)
			}
		}
	}
}

// What a stop advises is at least the start's high estimate (the largest
// of the ranks'), which lies above what the whole analysis needs, where
// the resident set at the stop says only what the phases so far held.
func TestMemoryGuardAdvice(t *testing.T) {
	errs := make([]error, 2)
	err := inproc.Run(2, func(cm comm.Comm) error {
		g := memoryGuard{limit: 100, advice: []int64{300, 500}[cm.Rank()]}
		errs[cm.Rank()] = g.check(cm, "match", 120)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, e := range errs {
		if e == nil || !strings.Contains(e.Error(), "--memory-limit 500 B or more") {
			t.Errorf("rank %d: %v, want the larger estimate advised", r, e)
		}
	}
}

package driver

import (
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/trace"
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
			errs[cm.Rank()] = memoryGuard{limit: 100}.check(cm, "simulate", c.peak[cm.Rank()], false)
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
		errs[cm.Rank()] = g.check(cm, "match", 120, false)
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

// The collective phases (the match, the wait states) check the limit where
// they drop their largest tables, on every rank, and stop there when the
// process went above it, instead of making their next tables beside what
// they hold and running on to the phase's end; under the limit they go on.
func TestReleaseChecksTheLimit(t *testing.T) {
	stopsUnderLimit(t, "match", func(r *run) error { return r.release("match")() })
}

// stopsUnderLimit runs phase on two ranks under a limit the process is
// above and one it is under, and wants an error on every rank that
// stopped there in the first case and none in the second.
func stopsUnderLimit(t *testing.T, phase string, run1 func(r *run) error) {
	t.Helper()
	for _, c := range []struct {
		limit int64
		stop  bool
	}{{1, true}, {1 << 50, false}} {
		errs := make([]error, 2)
		err := inproc.Run(2, func(cm comm.Comm) error {
			r := &run{c: cm, opts: Options{MemoryLimit: c.limit}}
			r.guard = memoryGuard{hs: &heapSampler{}, limit: c.limit}
			errs[cm.Rank()] = run1(r)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for rk, e := range errs {
			if (e != nil) != c.stop || e != nil && (!strings.Contains(e.Error(), "in the "+phase+" phase") || !strings.Contains(e.Error(), "stopped there")) {
				t.Errorf("limit %d: rank %d: %v, want a stop: %v", c.limit, rk, e, c.stop)
			}
		}
	}
}

// Under a limit the wait states' local loops check it at fixed points on
// every rank (comm.Checkpoints) and stop there when the process
// went above it; without a limit there is no check at all (the loops run
// as before: no collective, no collection).
func TestLimitCheckStopsInTheLoop(t *testing.T) {
	stopsUnderLimit(t, "wait states", func(r *run) error {
		p := comm.Checkpoints{Check: r.limitCheck("wait states")}
		n := 3 * r.c.Rank() // 0 and 3 processes
		for i := range n {
			if err := p.After(i, n); err != nil {
				return err
			}
		}
		return p.Finish()
	})
	if (&run{}).limitCheck("wait states") != nil {
		t.Errorf("a check without a limit")
	}
}

// The flag a stop advises is the largest any rank's node needs: a node
// whose three busy analysis processes share the flag needs three times its
// process's need, whichever rank prints the error (rank 0's node has one).
func TestMemoryGuardAdviceByNode(t *testing.T) {
	errs := make([]error, 2)
	err := inproc.Run(2, func(cm comm.Comm) error {
		g := memoryGuard{limit: 100, advice: 100, nodeProcs: []int64{1, 3}[cm.Rank()]}
		errs[cm.Rank()] = g.check(cm, "exchange", []int64{90, 150}[cm.Rank()], false)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, e := range errs {
		// 150 B and a quarter, for each of rank 1's node's three.
		if e == nil || !strings.Contains(e.Error(), "--memory-limit 561 B or more") {
			t.Errorf("rank %d: %v, want rank 1's node's flag", r, e)
		}
	}
}

// The stop names the process that went above its limit with that
// process's limit and floor, whichever rank prints it: ranks on nodes
// with more busy analysis processes, or less memory, have lower limits
// than rank 0's (here rank 0's node gives its one process 1000 B, rank
// 1's 100 B to each of its processes, and rank 1 reached 150 B). The
// limit's source is named by the process it is: the default's cgroup on
// rank 1, which reached it; rank 0 knows only that it is the flag's or a
// default (its own is the flag).
func TestMemoryGuardNamesTheOutgrownLimit(t *testing.T) {
	errs := make([]error, 2)
	const cgroup = "the default limit, 80% of cgroup /job_42 memory.max, 125 B"
	err := inproc.Run(2, func(cm comm.Comm) error {
		g := []memoryGuard{{limit: 1000, floor: 30, advice: 100, nodeProcs: 1, from: "--memory-limit"}, {limit: 100, floor: 20, advice: 100, nodeProcs: 1, from: cgroup}}[cm.Rank()]
		errs[cm.Rank()] = g.check(cm, "exchange", []int64{500, 150}[cm.Rank()], false)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, e := range errs {
		if e == nil || !strings.Contains(e.Error(), "reached 150 B, above its limit of 100 B") || !strings.Contains(e.Error(), "libraries' 20 B included") {
			t.Errorf("rank %d: %v, want rank 1's limit and floor", r, e)
			continue
		}
		from := []string{"its share of --memory-limit or of the default, 80% of its node's memory or cgroup limit)", "its share of " + cgroup + ")"}[r]
		if !strings.Contains(e.Error(), from) || !Together(e) {
			t.Errorf("rank %d: %v, want %q, every rank's together", r, e, from)
		}
	}
}

// A refusal at the start reaches rank 0, which prints it, with the
// estimate and the flag of the rank whose analysis does not fit: here
// rank 1 (a process) does not fit 1 KiB, and rank 0 (none) does. Rank 0
// said "another rank's analysis would not fit (it says how much it
// needs)", which under MPI no rank printed.
func TestCheckMemoryRefusalReachesRankZero(t *testing.T) {
	errs := make([]error, 2)
	err := inproc.Run(2, func(cm comm.Comm) error {
		r := &run{c: cm, opts: Options{MemoryLimit: 1 << 10}}
		r.guard.nodeProcs = 1
		if cm.Rank() == 1 {
			r.procs = []*trace.Process{{}}
		}
		errs[cm.Rank()] = r.checkMemory()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rk, e := range errs {
		if !IsAgreed(e) || !strings.Contains(e.Error(), "rank 1: its processes' analysis needs about") || !strings.Contains(e.Error(), "run with --memory-limit") {
			t.Errorf("rank %d: %v, want rank 1's estimate and advice, agreed", rk, e)
		}
	}
}

// The guard's stop made inside a phase's loop (match, exchange, the wait
// states' analysis: limitCheck) reaches Run wrapped again by the phase's
// agreed or agree: it is still every rank's together, which the MPI stop
// lines of ranks other than 0 say. Together read only the outermost
// AgreedError, so those ranks said they had failed themselves.
func TestMemoryGuardStopTogetherThroughPhaseWrap(t *testing.T) {
	type got struct{ agreed, agree error }
	gots := make([]got, 2)
	err := inproc.Run(2, func(cm comm.Comm) error {
		g := memoryGuard{limit: 100, floor: 20, advice: 100, nodeProcs: 1, from: "--memory-limit"}
		stop := g.check(cm, "match", 150, true) // every rank above the limit
		gots[cm.Rank()] = got{agreed: agreed(stop), agree: agree(cm, stop)}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, g := range gots {
		for name, e := range map[string]error{"agreed": g.agreed, "agree": g.agree} {
			if e == nil || !strings.Contains(e.Error(), "outgrew its memory limit in the match phase") || !Together(e) {
				t.Errorf("rank %d: %s(guard stop) = %v (together %v), want the guard's stop, every rank's together", r, name, e, Together(e))
			}
		}
	}
}

// A limit given by --memory-limit is every rank's: the stop names it as
// the source whichever rank prints it, not only the rank that outgrew
// it (rank 0 said "its share of --memory-limit or of the default, 80% of
// its node's memory or cgroup limit" of rank 1's stop under
// --memory-limit 60MiB).
func TestMemoryGuardNamesTheFlagOnEveryRank(t *testing.T) {
	errs := make([]error, 2)
	err := inproc.Run(2, func(cm comm.Comm) error {
		g := memoryGuard{limit: 100, floor: 20, advice: 100, nodeProcs: 1, from: FlagLimitSource}
		errs[cm.Rank()] = g.check(cm, "match", []int64{90, 150}[cm.Rank()], true)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, e := range errs {
		if e == nil || !strings.Contains(e.Error(), "reached 150 B, above its limit of 100 B (its code and libraries' 20 B included; its share of --memory-limit)") {
			t.Errorf("rank %d: %v, want rank 1's stop naming --memory-limit", r, e)
		}
	}
}

package waitstate

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/partition"
)

// Analyze calls Check, collectively, inside its loop over the processes
// (where 16 processes of nonblocking collectives grew by 20 MiB between
// two release points), on ranks of two processes and of one, and stops
// on every rank with its error.
func TestAnalyzeChecks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nbc")
	if _, err := gen.Generate(dir, gen.Config{Workload: "nbc", Ranks: 3, Events: 6000, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	plan, err := partition.Assign([]int64{1, 1, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("over the limit")
	for _, stopAt := range []int{0, 3} { // 0: never
		calls, errs := make([]int, 2), make([]error, 2)
		reqs := make([][]int, 2) // the progress requests made at each check
		err := inproc.Run(2, func(c comm.Comm) error {
			procs, m, edges, err := matchRank(c, plan, dir)
			if err != nil {
				return err
			}
			a := New(m)
			for i, p := range procs {
				if err := a.Record(i, p, nil, nil); err != nil {
					return err
				}
			}
			m.DropRecorded()
			a.Check = func() error {
				calls[c.Rank()]++
				reqs[c.Rank()] = append(reqs[c.Rank()], len(a.progReqs))
				if _, err := c.AllreduceInt64(comm.Sum, []int64{1}); err != nil {
					return err
				}
				if calls[c.Rank()] == stopAt {
					return stop
				}
				return nil
			}
			_, _, _, errs[c.Rank()] = a.Analyze(c, plan, edges, 0, math.MaxInt64/4)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for r := range errs {
			want, wantErr := comm.ChecksPerLoop, error(nil)
			if stopAt > 0 {
				want, wantErr = stopAt, stop
			}
			if calls[r] != want || !errors.Is(errs[r], wantErr) {
				t.Errorf("stop at check %d: rank %d made %d checks and returned %v, want %d and %v", stopAt, r, calls[r], errs[r], want, wantErr)
			}
		}
		// Rank 0's two processes: half the checks after the first, whose
		// waits for progress are requested then, the rest at the end.
		if q := reqs[0]; stopAt == 0 && (len(q) != comm.ChecksPerLoop || q[0] == 0 || q[0] != q[comm.ChecksPerLoop/2-1] || q[comm.ChecksPerLoop/2] <= q[0]) {
			t.Errorf("rank 0's progress requests at its checks: %v, want the first process's at the first half, more after", q)
		}
	}
}

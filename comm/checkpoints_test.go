package comm_test

import (
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
)

// Checkpoints makes the same number of checks on every rank whatever its
// loop's length (none, one, fewer items than checks, more; left early),
// so a collective check neither hangs nor pairs with another loop's.
func TestCheckpoints(t *testing.T) {
	ns := []int{0, 1, 3, 20}
	calls := make([]int, len(ns))
	err := inproc.Run(len(ns), func(c comm.Comm) error {
		n := ns[c.Rank()]
		p := comm.Checkpoints{Check: func() error {
			calls[c.Rank()]++
			_, err := c.AllreduceInt64(comm.Sum, []int64{1})
			return err
		}}
		for loop := range 2 {
			for i := range n {
				if loop == 1 && i == n/2 {
					break // left early: Finish makes the rest
				}
				if err := p.After(i, n); err != nil {
					return err
				}
			}
			if err := p.Finish(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, k := range calls {
		if k != 2*comm.ChecksPerLoop {
			t.Errorf("rank %d (%d items): %d checks over two loops, want %d", r, ns[r], k, 2*comm.ChecksPerLoop)
		}
	}
}

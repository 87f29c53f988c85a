package comm_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
)

func TestAgree(t *testing.T) {
	got := make([]error, 4)
	err := inproc.Run(4, func(c comm.Comm) error {
		if e := comm.Agree(c, nil); e != nil {
			return fmt.Errorf("nobody failed, got %v", e)
		}
		var mine error
		if c.Rank() >= 2 {
			mine = fmt.Errorf("rank %d broke", c.Rank())
		}
		got[c.Rank()] = comm.Agree(c, mine)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, e := range got {
		var ae *comm.AbortError
		switch {
		case r >= 2 && (e == nil || e.Error() != fmt.Sprintf("rank %d broke", r)):
			t.Fatalf("failing rank %d got %v, want its own error", r, e)
		case r < 2 && (!errors.As(e, &ae) || ae.Rank != 2 || ae.Err.Error() != "rank 2 broke"):
			t.Fatalf("healthy rank %d got %v, want the lowest failing rank's error", r, e)
		}
	}
}

// Package commtest is the conformance suite every comm backend must pass: the
// same semantic checks (ordering, matching, collectives, reductions, errors)
// run on inproc in one process and on mpi under mpirun.
//
// A case is a function every rank runs; it returns an error naming the rank
// and the wrong value when a check fails. A backend adapts the suite by
// providing a World that runs such a function on all its ranks.
package commtest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
)

// World runs fn on every rank of a communicator and returns the first error.
// In-process backends start a fresh world per call; a process-per-rank backend
// runs fn on its one rank and must abort the job when fn fails, since the
// other ranks may be blocked waiting for this one.
type World func(fn func(c comm.Comm) error) error

// Case is one conformance check, run on every rank.
type Case struct {
	Name string
	Fn   func(c comm.Comm) error
}

// Run runs every case of Cases as a subtest, in order. The order is fixed, so
// process-per-rank backends can run it on each rank independently.
func Run(t *testing.T, world World) {
	t.Helper()
	RunCases(t, world, Cases())
}

// RunCases runs the given cases as subtests, in order.
func RunCases(t *testing.T, world World, cases []Case) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			if err := world(tc.Fn); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Cases returns the conformance cases. They work for any number of ranks
// from 1 up; their cost grows with Size² (Alltoallv), so for thousands of
// ranks use LargeCases.
func Cases() []Case {
	return []Case{
		{"RankSize", rankSize},
		{"Ring", ring},
		{"SendRecvPairs", sendRecvPairs},
		{"FIFOPerTag", fifo},
		{"TagsKeptApart", tags},
		{"IsendIrecv", isendIrecv},
		{"MessageSizes", messageSizes},
		{"IrecvThenBlockingSend", irecvThenSend},
		{"P2PAcrossCollectives", p2pAcrossCollectives},
		{"Alltoallv", alltoallvUneven},
		{"AlltoallvEmpty", alltoallvEmpty},
		{"AlltoallvLarge", alltoallvLarge},
		{"Exchange", exchange},
		{"Gatherv", gatherv},
		{"Bcast", bcast},
		{"AllreduceInt64", allreduceInt64},
		{"AllreduceFloat64", allreduceFloat64},
		{"ReduceInt64", reduceInt64},
		{"ReduceFloat64", reduceFloat64},
		{"Barrier", barrier},
		{"BadArguments", badArguments},
	}
}

// LargeCases returns cases whose cost per rank stays O(Size): a ring exchange,
// a sparse Alltoallv and Exchange. They are meant for thousands of in-process ranks.
func LargeCases() []Case {
	return []Case{
		{"Ring", ring},
		{"AlltoallvSparse", alltoallvSparse},
		{"Exchange", exchange},
	}
}

// RunAbort checks abort semantics on a backend whose ranks run in the test's
// own process (inproc): the last rank aborts while the others are blocked in
// a receive, a barrier and an Alltoallv; every other rank must get a
// *comm.AbortError carrying the original error, for its pending operation and
// for a later one, and world must return the original error, not an echo.
// world must run ranks concurrently and return once all have returned.
func RunAbort(t *testing.T, world World) {
	t.Helper()
	errInjected := errors.New("injected failure")
	var got [][2]error // by rank: pending op, later op; sized on first use
	size := -1
	err := world(func(c comm.Comm) error {
		// Rank 0 sizes got for everyone; the barrier publishes it (it
		// completes before anyone aborts).
		if c.Rank() == 0 {
			size = c.Size()
			got = make([][2]error, c.Size())
		}
		// The last rank may abort while others are still leaving this
		// barrier; then the barrier is their pending operation.
		pending := c.Barrier()
		last := c.Size() - 1
		me := c.Rank()
		if me == last {
			c.Abort(errInjected)
			_, err := c.Recv(0, 1) // own later operations fail too
			got[me][1] = err
			return nil
		}
		if pending == nil {
			switch me % 3 {
			case 0:
				_, pending = c.Recv(last, 1) // never sent
			case 1:
				pending = c.Barrier() // the last rank never joins
			case 2:
				_, pending = c.Alltoallv(make([][]byte, c.Size()))
			}
		}
		got[me][0] = pending
		got[me][1] = c.Send(last, 2, []byte("x"))
		return pending // an echo: world must not report it
	})
	if size < 0 {
		t.Fatalf("world did not run rank 0: %v", err)
	}
	last := size - 1
	var ae *comm.AbortError
	if !errors.As(err, &ae) || ae.Rank != last || !errors.Is(err, errInjected) {
		t.Fatalf("world returned %v (%T), want *comm.AbortError from rank %d wrapping %q", err, err, last, errInjected)
	}
	if want := fmt.Sprintf("rank %d: %v", last, errInjected); err.Error() != want {
		t.Errorf("world error = %q, want %q", err.Error(), want)
	}
	for r, g := range got {
		for i, e := range g {
			if r == last && i == 0 {
				continue
			}
			if !errors.As(e, &ae) || ae.Rank != last || !errors.Is(e, errInjected) {
				t.Errorf("rank %d op %d: got %v, want *comm.AbortError from rank %d", r, i, e, last)
			}
		}
	}
}

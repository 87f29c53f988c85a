package graph

import (
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/partition"
	"github.com/ptrace-dev/ptrace/trace"
)

// TestMatchingParkColumns: the matched nodes' kinds, threads and events
// parked in a spill file read back exactly; Describe says less while
// they are away; a failed read back is an error; a small matching keeps
// its columns.
func TestMatchingParkColumns(t *testing.T) {
	for _, iters := range []int{2, 2000} {
		err := matchHalo(t, iters, func(m *Matching) error {
			n := m.Len()
			kinds, threads, events := matchedCols(m)
			desc := m.Describe(0)
			big := len(m.Kind)+m.thread.Bytes()+m.event.off.Bytes() >= matchParkMin
			if big != (iters > 2) {
				t.Fatalf("%d iterations: %d nodes, over the least parked %v", iters, n, big)
			}
			f := &memSpill{}
			if err := m.ParkColumns(f); err != nil {
				return err
			}
			if parked := m.park != nil; parked != big {
				t.Errorf("%d iterations, %d nodes: parked %v", iters, n, parked)
			}
			if big && (m.Kind != nil || m.thread.Bytes() != 0 || m.Describe(0) == desc) {
				t.Errorf("%d iterations: the columns stay while parked (%q)", iters, m.Describe(0))
			}
			if err := m.UnparkColumns(); err != nil {
				return err
			}
			for v := range n {
				if m.Kind[v] != kinds[v] || m.ThreadOf(v) != threads[v] || m.EventOf(v) != events[v] {
					t.Fatalf("%d iterations: node %d reads %v %d %d, was %v %d %d", iters, v, m.Kind[v], m.ThreadOf(v), m.EventOf(v), kinds[v], threads[v], events[v])
				}
			}
			if m.Describe(0) != desc {
				t.Errorf("node 0 described %q, was %q", m.Describe(0), desc)
			}
			if big {
				if err := m.ParkColumns(f); err != nil {
					return err
				}
				f.failRead = true
				if m.UnparkColumns() == nil {
					t.Error("a failed read back gave no error")
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestMatchingParkColumnsFull: columns whose park fails after some went
// to the file (each of its three writes failing in turn) are an error,
// and UnparkColumns brings those back and keeps the others: every node
// reads as before, and Describe names it again.
func TestMatchingParkColumnsFull(t *testing.T) {
	err := matchHalo(t, 2000, func(m *Matching) error {
		n := m.Len()
		kinds, threads, events := matchedCols(m)
		desc := m.Describe(n - 1)
		for left := 0; left <= 3; left++ {
			err := m.ParkColumns(&fullSpill{left: left})
			if (err != nil) != (left < 3) {
				t.Fatalf("%d writes served: ParkColumns err = %v", left, err)
			}
			if err := m.UnparkColumns(); err != nil {
				t.Fatalf("%d writes served: UnparkColumns: %v", left, err)
			}
			for v := range n {
				if m.Kind[v] != kinds[v] || m.ThreadOf(v) != threads[v] || m.EventOf(v) != events[v] {
					t.Fatalf("%d writes served: node %d reads %v %d %d, was %v %d %d", left, v, m.Kind[v], m.ThreadOf(v), m.EventOf(v), kinds[v], threads[v], events[v])
				}
			}
			if d := m.Describe(n - 1); d != desc {
				t.Fatalf("%d writes served: described %q, was %q", left, d, desc)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// matchHalo matches a halo exchange of 3 processes and the iterations
// given on one rank and calls fn with the matching.
func matchHalo(t *testing.T, iters int, fn func(m *Matching) error) error {
	t.Helper()
	procs := genProcs(t, gen.Config{Workload: "halo", Ranks: 3, Threads: 2, Iterations: iters, LatencyNS: 1000, Jitter: 0.3})
	plan, err := partition.Assign([]int64{1, 1, 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return inproc.Run(1, func(c comm.Comm) error {
		m, err := Match(c, plan, procs, MatchOptions{})
		if err != nil {
			return err
		}
		return fn(m)
	})
}

// matchedCols returns the matched nodes' kinds, threads and events.
func matchedCols(m *Matching) ([]trace.Kind, []int32, []int64) {
	n := m.Len()
	kinds := slices.Clone(m.Kind)
	threads, events := make([]int32, n), make([]int64, n)
	for v := range n {
		threads[v], events[v] = m.ThreadOf(v), m.EventOf(v)
	}
	return kinds, threads, events
}

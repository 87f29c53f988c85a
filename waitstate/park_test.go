package waitstate

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/internal/spill/spilltest"
	"github.com/ptrace-dev/ptrace/partition"
	"github.com/ptrace-dev/ptrace/trace"
)

// TestAnalyzeParked: the wait states with what the driver parks in a
// spill file (the remote edges' rows, the matching's DAG and its nodes'
// kinds, threads and events, and Analyze's nodes' values, each process's
// read back at its turn) give the rows, causes and delays of an analysis
// that parks nothing, on one rank and two; a read failing at any point on
// the last rank, and every read after it or that one alone, is Analyze's
// error on every rank (agreed: the others' name it), never a hang or a
// panic (a column left parked and read).
func TestAnalyzeParked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "halo")
	cfg := gen.Config{Workload: "halo", Ranks: 4, Threads: 2, Iterations: 3000, Jitter: 0.3, LatencyNS: 1500}
	if _, err := gen.Generate(dir, cfg); err != nil {
		t.Fatal(err)
	}
	type result struct {
		rows   []Row
		causes []Cause
		delays []Delay
	}
	// run analyzes on k ranks, parking in its file when fail is not −2;
	// it returns rank 0's results, each rank's error and reads.
	run := func(k, fail int, once bool) (result, []error, []int) {
		plan, err := partition.Assign([]int64{1, 1, 1, 1}, k)
		if err != nil {
			t.Fatal(err)
		}
		var res result
		errs, reads := make([]error, k), make([]int, k)
		err = inproc.Run(k, func(c comm.Comm) error {
			procs, m, edges, err := matchRank(c, plan, dir)
			if err != nil {
				return err
			}
			want := edgeRowsOf(edges)
			var f *spilltest.Mem
			if fail != -2 {
				f = &spilltest.Mem{}
				if c.Rank() == k-1 && fail >= 0 {
					f.FailAt, f.Once = fail+1, once
				}
			}
			// The most processes whose predecessors are in memory while
			// their rows' own columns are parked, at any read: one, as
			// the wait heads reach it (delays.unparkPreds), the others'
			// parked again after their heads (delays.parkRows).
			mostPreds := 0
			if f != nil && fail == -1 {
				f.OnRead = func() {
					n := 0
					for i := range edges {
						e := &edges[i]
						if e.Len() > 0 && readable(func() { e.PredProcAt(0) }) && !readable(func() { e.ThreadAt(0) }) {
							n++
						}
					}
					mostPreds = max(mostPreds, n)
				}
			}
			a := New(m)
			if !a.ReadsRecorded() {
				m.DropRecorded()
			}
			if f != nil {
				for i := range edges {
					if err := edges[i].ParkRows(f); err != nil {
						return err
					}
				}
				if err := m.DAG.Park(f); err != nil {
					return err
				}
			}
			for i, p := range procs {
				if err := a.Record(i, p, nil, nil); err != nil {
					return err
				}
			}
			m.DropRecorded()
			parked := 0
			if f != nil {
				if err := m.ParkColumns(f); err != nil {
					return err
				}
				a.Spill = f
				parked = len(f.B)
			}
			rows, causes, delays, err := a.Analyze(c, plan, edges, 0, math.MaxInt64/4)
			errs[c.Rank()] = err
			// The rows, parked through the delay costs, are back and whole
			// for the phases that follow.
			if err == nil && !slices.Equal(edgeRowsOf(edges), want) {
				return fmt.Errorf("rank %d: the edges' rows changed in the wait states", c.Rank())
			}
			if f != nil && fail == -1 && mostPreds != 1 {
				return fmt.Errorf("rank %d: %d processes' predecessors in memory at once beside their parked rows, want 1", c.Rank(), mostPreds)
			}
			if f != nil {
				reads[c.Rank()] = f.Reads
				if err == nil && len(f.B) < parked+nodeValsParkMin {
					return fmt.Errorf("rank %d: %d bytes of the nodes' values parked", c.Rank(), len(f.B)-parked)
				}
			}
			if c.Rank() == 0 {
				res = result{rows, causes, delays}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return res, errs, reads
	}
	for _, k := range []int{1, 2} {
		want, errs, _ := run(k, -2, false)
		if errs[0] != nil || len(want.rows) == 0 || len(want.delays) == 0 {
			t.Fatalf("%d ranks: %d rows, %d delays, err %v", k, len(want.rows), len(want.delays), errs[0])
		}
		got, errs, reads := run(k, -1, false)
		for r, err := range errs {
			if err != nil {
				t.Fatalf("%d ranks, parked: rank %d: %v", k, r, err)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d ranks: the results with what is parked differ", k)
		}
		last := reads[k-1]
		if last < 10 {
			t.Fatalf("%d ranks: %d reads back", k, last)
		}
		for fail := range last {
			for _, once := range []bool{false, true} {
				_, errs, _ := run(k, fail, once)
				for r, err := range errs {
					if err == nil || !strings.Contains(err.Error(), "I/O error") || strings.Contains(err.Error(), "panic") {
						t.Errorf("%d ranks, the last's read %d of %d failing (alone %v): rank %d: err = %v", k, fail, last, once, r, err)
					}
				}
			}
		}
	}
}

// matchRank loads rank c's processes of dir under plan, matches them and
// exchanges their remote edges, as the driver does before the wait states.
func matchRank(c comm.Comm, plan *partition.Plan, dir string) ([]*trace.Process, *graph.Matching, []graph.RemoteEdges, error) {
	lo, hi := plan.Range(c.Rank())
	var procs []*trace.Process
	for i := lo; i < hi; i++ {
		p, err := trace.LoadProcess(filepath.Join(dir, trace.FileName(i)), trace.LoadOptions{})
		if err != nil {
			return nil, nil, nil, err
		}
		procs = append(procs, p)
	}
	m, err := graph.Match(c, plan, procs, graph.MatchOptions{})
	if err != nil {
		return nil, nil, nil, err
	}
	edges, err := graph.ExchangeEdges(c, m, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	return procs, m, edges, nil
}

// edgeRowsOf returns every row of edges, column by column, as read
// through the accessors (which panic on a parked column).
func edgeRowsOf(edges []graph.RemoteEdges) []int64 {
	var out []int64
	for i := range edges {
		e := &edges[i]
		for k := range e.Len() {
			out = append(out, int64(e.ThreadAt(k)), e.EventAt(k), int64(e.KindAt(k)), int64(e.PredProcAt(k)), int64(e.PredThreadAt(k)), e.PredEventAt(k))
		}
	}
	return out
}

// readable reports whether read returns (a parked column's At panics).
func readable(read func()) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	read()
	return true
}

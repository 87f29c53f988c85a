package sim_test

import (
	"testing"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// A task's creation interval runs from its task_create to its creator's
// next event, summed per construct. A task_create whose creation fails (an
// unknown id, a task created twice) ends the interval of the task created
// last instead, which its own creator's next event writes too: the last
// write counts, whichever thread makes it; before any creation that task
// is task 0, created only later.
func TestCreationIntervals(t *testing.T) {
	g := newProg(2)
	g.tables.Locations = append(g.tables.Locations, trace.Location{ID: 1, File: "t.c", Line: 2})
	create := func(th int, at, task int64, loc int64) {
		g.ev(th, trace.TaskCreate, at, task, 0, ompt.TaskExplicit, loc)
	}
	mark := func(th int, at int64) { g.ev(th, trace.RegionEnter, at, 1) }
	create(0, 5, id(7, 1), 0) // unknown: ends task 0's, not created yet
	mark(0, 8)                // task 0: 3
	create(0, 10, id(0, 1), 0)
	mark(0, 14) // task 0: 4, the last
	create(0, 20, id(0, 2), 0)
	mark(0, 26)                // task 1: 6
	create(1, 30, id(0, 1), 0) // created twice: ends task 1's
	mark(1, 39)                // task 1: 9
	create(0, 40, id(0, 3), 1)
	mark(0, 41) // task 2: 1
	create(0, 60, id(0, 4), 1)
	create(1, 61, id(7, 2), 1) // unknown: ends task 3's
	mark(1, 70)                // task 3: 9
	mark(0, 75)                // task 3: 15, the last
	create(0, 80, id(0, 5), 1) // no next event: 0
	s := sim.New(g.proc(), nil, false)
	stats := sim.NewTaskStats()
	if err := s.Run(ompt.NewModel(), stats); err != nil {
		t.Fatal(err)
	}
	want := map[int32][2]int64{0: {2, 4 + 9}, 1: {3, 1 + 15 + 0}}
	if len(stats.Stats) != len(want) {
		t.Fatalf("%d constructs, want %d", len(stats.Stats), len(want))
	}
	for _, c := range stats.Stats {
		if w := want[c.Loc]; c.Count != w[0] || c.CreateNS != w[1] {
			t.Errorf("construct %d: %d tasks, creation %d ns; want %d, %d", c.Loc, c.Count, c.CreateNS, w[0], w[1])
		}
	}
	if s.Warn.Count["task created twice"] != 1 || s.Warn.Count["unknown task"] != 2 {
		t.Errorf("warnings %v", s.Warn.Count)
	}
}

// Constructs beyond the few searched in order keep their own intervals.
func TestCreationIntervalsManyConstructs(t *testing.T) {
	const n = 20
	g := newProg(1)
	for l := 1; l < n; l++ {
		g.tables.Locations = append(g.tables.Locations, trace.Location{ID: l, File: "t.c", Line: 1 + l})
	}
	at := int64(0)
	for k := range int64(3 * n) {
		l := k % n
		g.ev(0, trace.TaskCreate, at, id(0, 1+k), 0, ompt.TaskExplicit, l)
		g.ev(0, trace.RegionEnter, at+1+l, 1) // construct l's tasks take 1+l ns
		at += 100
	}
	s := sim.New(g.proc(), nil, false)
	stats := sim.NewTaskStats()
	if err := s.Run(ompt.NewModel(), stats); err != nil {
		t.Fatal(err)
	}
	if len(stats.Stats) != n {
		t.Fatalf("%d constructs, want %d", len(stats.Stats), n)
	}
	for _, c := range stats.Stats {
		if c.Count != 3 || c.CreateNS != 3*(1+int64(c.Loc)) {
			t.Errorf("construct %d: %d tasks, creation %d ns; want 3, %d", c.Loc, c.Count, c.CreateNS, 3*(1+int64(c.Loc)))
		}
	}
}

package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// edgeSim returns a simulation of n task slots, all created, and none of
// them yet ready (their dependences are still to come).
func edgeSim(t *testing.T, n int, record bool) *Sim {
	p, err := trace.NewProcess(trace.Header{NRanks: 1}, trace.Tables{Locations: []trace.Location{{ID: 0, File: "t.c", Line: 1}}},
		[][]trace.Event{{{Time: 0, Kind: trace.TaskCreate}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := New(p, nil, false)
	s.RecordDeps = record
	s.AllocTasks(n)
	return s
}

// Registering a waiting task with its first unfinished predecessor only
// (AddEdges, with the edges recorded) makes the tasks ready when an edge
// in every predecessor's list (AddEdge each, not recorded) does: after
// every creation and completion, in any order, over random predecessor
// lists with repeats, completed and uncreated predecessors, itself and
// ids outside the table, dependences that come twice or by the edge, and
// a task ready before its dependences are known. The unfinished count a
// waiting taskwait reports is the same too.
func TestAddEdgesAsEdges(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 3))
		n := 50 + rng.IntN(400)
		reg, per := edgeSim(t, n, true), edgeSim(t, n, false)
		both := []*Sim{reg, per}
		check := func(step string) {
			for k := range n {
				if a, b := reg.Tasks[k].State, per.Tasks[k].State; a != b {
					t.Fatalf("seed %d, %s: task %d %s, want %s", seed, step, k, a, b)
				}
				if reg.Tasks[k].State == Initialized {
					if a, b := reg.unfinished(Task(k)), per.cols.missing.get(Task(k)); a != b {
						t.Fatalf("seed %d, %s: task %d waits for %d, want %d", seed, step, k, a, b)
					}
				}
			}
			if reg.Ready != per.Ready || reg.Blocked != per.Blocked {
				t.Fatalf("seed %d, %s: %d ready %d blocked, want %d %d", seed, step, reg.Ready, reg.Blocked, per.Ready, per.Blocked)
			}
		}
		created := 0
		var live []Task // created, not completed
		for created < n || len(live) > 0 {
			if created < n && (len(live) == 0 || rng.IntN(3) > 0) {
				c := Task(created)
				created++
				var preds []Task
				for range rng.IntN(6) {
					switch x := rng.IntN(20); {
					case x == 0:
						preds = append(preds, c) // itself
					case x == 1:
						preds = append(preds, Task(n+rng.IntN(5)), -1) // outside
					case x == 2 && created < n:
						preds = append(preds, Task(created+rng.IntN(n-created))) // not created yet
					case x < 8 && len(preds) > 0:
						preds = append(preds, preds[rng.IntN(len(preds))]) // a repeat
					default:
						preds = append(preds, Task(rng.IntN(int(c)+1)))
					}
				}
				early := rng.IntN(8) == 0
				for _, s := range both {
					s.CreateTask(c, KindExplicit, NoTask, 0, 0, 0)
					if early {
						s.ReadyIfFree(c) // ready before its dependences come
					}
				}
				reg.AddEdges(preds, c)
				for _, p := range preds {
					per.AddEdge(p, c)
				}
				switch rng.IntN(10) {
				case 0: // the list again
					reg.AddEdges(preds, c)
					for _, p := range preds {
						per.AddEdge(p, c)
					}
				case 1: // an edge reported by the runtime
					p := Task(rng.IntN(int(c) + 1))
					reg.AddEdge(p, c)
					per.AddEdge(p, c)
				}
				for _, s := range both {
					s.ReadyIfFree(c)
				}
				live = append(live, c)
				check("creation")
				continue
			}
			// Complete a live task, ready or not.
			i := rng.IntN(len(live))
			c := live[i]
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
			for _, s := range both {
				s.Discard(c)
			}
			check("completion")
		}
		if a, b := reg.Warn.Summary(), per.Warn.Summary(); a != b {
			t.Errorf("seed %d: warnings %q, want %q", seed, a, b)
		}
	}
}

package anomaly

import (
	"fmt"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// readTraceTasks returns the explicit tasks of every process of the trace
// in dir, in process order, each process's tasks in completion order,
// read directly from the events (creation, cost attribute, the thread and
// times each ran) without the simulator: the tests' records come from the
// trace, not from the analysis whose input they are. Times are as
// recorded (no clock correction); a task's duration runs from its first
// start to its completion. costKey names the task_attr key used as Cost
// ("flops"); tasks without it have Cost 0. It holds every task in memory:
// for small traces only.
func readTraceTasks(dir, costKey string) ([]Task, error) {
	d, err := trace.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Task
	for r := 0; r < d.NRanks(); r++ {
		ts, err := readTraceProcess(d.FilePath(r), r, costKey)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

type pendingTask struct {
	loc     int64
	start   int64
	thread  int
	started bool
}

func readTraceProcess(path string, rank int, costKey string) ([]Task, error) {
	f, err := trace.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, err := trace.NewReader(f, path)
	if err != nil {
		return nil, err
	}
	// Attributes refer to keys by string id; strings may arrive after the
	// chunks that use them, so keep the id and resolve at the end.
	type done struct {
		id  int64
		p   pendingTask
		end int64
	}
	tasks := map[int64]*pendingTask{}
	attrs := map[int64][][2]int64{}
	var finished []done
	for c, err := range rd.Chunks() {
		if err != nil {
			return nil, err
		}
		for i := range c.Events {
			e := &c.Events[i]
			switch e.Kind {
			case trace.TaskCreate:
				p := tasks[e.Args[0]]
				if p == nil {
					p = &pendingTask{}
					tasks[e.Args[0]] = p
				}
				p.loc = e.Args[3]
			case trace.TaskAttr:
				attrs[e.Args[0]] = append(attrs[e.Args[0]], [2]int64{e.Args[1], e.Args[2]})
			case trace.TaskSchedule:
				if next := e.Args[2]; e.Args[1] == ompt.StatusSwitch || e.Args[1] == ompt.StatusYield || e.Args[1] == ompt.StatusComplete {
					if p := tasks[next]; p != nil && !p.started {
						p.started, p.start, p.thread = true, e.Time, c.Thread
					}
				}
				if e.Args[1] == ompt.StatusComplete {
					prior := e.Args[0]
					if p := tasks[prior]; p != nil && p.started {
						finished = append(finished, done{id: prior, p: *p, end: e.Time})
						delete(tasks, prior)
					}
				}
			}
		}
	}
	tb := rd.Tables()
	out := make([]Task, 0, len(finished))
	for _, d := range finished {
		t := Task{Rank: int32(rank), Thread: int32(d.p.thread), ID: d.id, Construct: tb.LocationName(d.p.loc),
			StartNS: d.p.start, DurNS: d.end - d.p.start}
		for _, kv := range attrs[d.id] {
			if tb.String(kv[0]) == costKey {
				t.Cost = float64(kv[1])
			}
		}
		out = append(out, t)
	}
	if len(tasks) > 0 {
		return out, fmt.Errorf("%s: %d tasks never completed", path, len(tasks))
	}
	return out, nil
}

// Package tracetasks reads the explicit tasks of a trace directly from its
// events — creation, cost attribute, the thread and times it ran — without
// the simulator. It exists for tests and examples of the renderers and of
// anomaly detection, which need per-task records before the analyses that
// produce them are written; it holds every task in memory and is not meant
// for big traces.
package tracetasks

import (
	"errors"
	"fmt"
	"io"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// Task is one explicit task of a traced process.
type Task struct {
	Rank, Thread int
	ID           int64
	Construct    string
	CreateNS     int64
	StartNS      int64
	DurNS        int64 // first start to completion
	Cost         float64
}

// Read returns the explicit tasks of every process of the trace in dir, in
// process order, each process's tasks in completion order. Times are as
// recorded (no clock correction). costKey names the task_attr key used as
// Cost ("flops"); tasks without it have Cost 0.
func Read(dir, costKey string) ([]Task, error) {
	d, err := trace.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Task
	for r := 0; r < d.NRanks(); r++ {
		ts, err := readProcess(d.FilePath(r), r, costKey)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

type pending struct {
	loc     int64
	create  int64
	start   int64
	thread  int
	started bool
}

func readProcess(path string, rank int, costKey string) ([]Task, error) {
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
		p   pending
		end int64
	}
	tasks := map[int64]*pending{}
	attrs := map[int64][][2]int64{}
	var finished []done
	var c trace.Chunk
	for {
		err := rd.NextChunk(&c)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for i := range c.Events {
			e := &c.Events[i]
			switch e.Kind {
			case trace.TaskCreate:
				p := tasks[e.Args[0]]
				if p == nil {
					p = &pending{}
					tasks[e.Args[0]] = p
				}
				p.loc, p.create = e.Args[3], e.Time
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
		t := Task{Rank: rank, Thread: d.p.thread, ID: d.id, Construct: tb.LocationName(d.p.loc),
			CreateNS: d.p.create, StartNS: d.p.start, DurNS: d.end - d.p.start}
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

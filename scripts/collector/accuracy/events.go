package main

import (
	"bufio"
	"os"

	"github.com/ptrace-dev/ptrace/trace"
)

// benchEvents streams rank 0's trace in dir chunk by chunk and calls visit
// for each thread's events from the benchmark region on: begin is set on
// the implicit task begin that starts it. The benchmark's parallel region
// is the second of thread 0; its implicit tasks begin after the warm-up
// region's have ended, but a worker's warm-up implicit task passes the
// test too, so a later begin starts the thread over. It returns the trace's
// header and its thread count (threads with events, begun or not).
func benchEvents(dir string, visit func(th int, e *trace.Event, begin bool)) (trace.Header, int, error) {
	d, err := trace.OpenDir(dir)
	if err != nil {
		return trace.Header{}, 0, err
	}
	f, err := os.Open(d.FilePath(0))
	if err != nil {
		return trace.Header{}, 0, err
	}
	defer f.Close()
	r, err := trace.NewReader(bufio.NewReaderSize(f, 1<<20), d.FilePath(0))
	if err != nil {
		return trace.Header{}, 0, err
	}
	var started []bool
	regions := 0
	for c, err := range r.Chunks() {
		if err != nil {
			return trace.Header{}, 0, err
		}
		for len(started) <= c.Thread {
			started = append(started, false)
		}
		for i := range c.Events {
			e := &c.Events[i]
			if c.Thread == 0 && e.Kind == trace.ParallelBegin {
				regions++
			}
			begin := e.Kind == trace.ImplicitTaskBegin && e.Args[0] != 0 && (started[c.Thread] || regions >= 2 || c.Thread > 0)
			started[c.Thread] = started[c.Thread] || begin
			if started[c.Thread] {
				visit(c.Thread, e, begin)
			}
		}
	}
	return r.Header(), len(started), nil
}

// Command mutate rewrites values of a valid ptrace process file in place,
// keeping it valid byte-wise (encoding and checksums): the inputs of
// scripts/robustness.sh, which checks that ptrace survives wrong values, not
// only wrong bytes.
//
//	mutate taskid FILE SEQ     first task_create gets task id (thread, SEQ)
//	mutate time FILE NS        the middle event of thread 0 gets time NS
//	mutate endcount FILE N     the end frame claims N more events on thread 0
//	mutate nranks FILE N       the header claims a world of N ranks
//	mutate version FILE N      the header claims format version N
//	mutate ompt FILE FAULT     one OpenMP or mutex fault of issue 42
//	                           (ompt/ompfault; mutex faults get
//	                           critical sections in every task first)
//	mutate ompt-list           the fault names, one a line
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/ptrace-dev/ptrace/ompt/ompfault"
	"github.com/ptrace-dev/ptrace/trace"
	"github.com/vmihailenco/msgpack/v5"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "ompt-list" {
		for _, f := range ompfault.Faults {
			fmt.Println(f.Name)
		}
		return
	}
	if len(os.Args) == 4 && os.Args[1] == "ompt" {
		if err := ompt(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "mutate:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: mutate taskid|time|endcount|nranks|version FILE VALUE, mutate ompt FILE FAULT, mutate ompt-list")
		os.Exit(2)
	}
	mode, file := os.Args[1], os.Args[2]
	v, err := strconv.ParseInt(os.Args[3], 0, 64)
	if err == nil {
		err = run(mode, file, v)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

func run(mode, file string, v int64) error {
	switch mode {
	case "endcount":
		return ompfault.RewriteFrame(file, trace.FrameEnd, func(payload []byte) ([]byte, error) {
			var e trace.End
			if err := msgpack.Unmarshal(payload, &e); err != nil {
				return nil, err
			}
			if len(e.Events) == 0 {
				e.Events = []int64{0}
			}
			e.Events[0] += v
			return msgpack.Marshal(&e)
		})
	case "nranks", "version":
		return ompfault.RewriteFrame(file, trace.FrameHeader, func(payload []byte) ([]byte, error) {
			var h trace.Header
			if err := msgpack.Unmarshal(payload, &h); err != nil {
				return nil, err
			}
			if mode == "nranks" {
				h.NRanks = int(v)
			} else {
				h.Version = int(v)
			}
			return msgpack.Marshal(&h)
		})
	}
	p, err := trace.ReadRows(file)
	if err != nil {
		return err
	}
	switch mode {
	case "taskid":
		done := false
		for t := range p.Events {
			for i := range p.Events[t] {
				if e := &p.Events[t][i]; !done && e.Kind == trace.TaskCreate {
					e.Args[0] = trace.MakeID(trace.IDThread(e.Args[0]), v)
					done = true
				}
			}
		}
		if !done {
			return fmt.Errorf("%s: no task_create event", file)
		}
	case "time":
		if len(p.Events) == 0 || len(p.Events[0]) < 3 {
			return fmt.Errorf("%s: thread 0 has fewer than 3 events", file)
		}
		p.Events[0][len(p.Events[0])/2].Time = v
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	return p.WriteFile(file, 0)
}

// ompt applies the named fault to file.
func ompt(file, name string) error {
	f, ok := ompfault.ByName(name)
	if !ok {
		return fmt.Errorf("unknown fault %q (mutate ompt-list)", name)
	}
	p, err := trace.ReadRows(file)
	if err != nil {
		return err
	}
	if f.NeedsCriticals() {
		if err := ompfault.AddCriticals(p); err != nil {
			return err
		}
	}
	if err := f.Apply(p); err != nil {
		return err
	}
	return p.WriteFile(file, 0)
}

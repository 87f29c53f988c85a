package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/ptrace-dev/ptrace/trace"
	"github.com/spf13/cobra"
)

func newDumpCmd() *cobra.Command {
	var rank, thread, limit int
	var from, to int64
	cmd := &cobra.Command{
		Use:   "dump DIR",
		Short: "Print a process's events as text (for inspecting traces)",
		Long: `dump prints the events of one process of a trace, one per line: time, thread,
event kind and named arguments (task ids as thread.seq, names resolved).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := trace.OpenDir(args[0])
			if err != nil {
				return err
			}
			if rank < 0 || rank >= d.NRanks() {
				return fmt.Errorf("--rank %d: the trace has ranks 0..%d", rank, d.NRanks()-1)
			}
			// The collector writes the string and location tables after the
			// events (it learns them as it goes): read them in a first pass,
			// so that every event prints with its names resolved.
			tables, err := readTables(d.FilePath(rank))
			if err != nil {
				return err
			}
			f, err := trace.OpenRegular(d.FilePath(rank))
			if err != nil {
				return err
			}
			defer f.Close()
			r, err := trace.NewReader(f, d.FilePath(rank))
			if err != nil {
				return err
			}
			w := bufio.NewWriter(cmd.OutOrStdout())
			defer w.Flush()
			var c trace.Chunk
			n := 0
			for limit <= 0 || n < limit {
				err := r.NextChunk(&c)
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				if thread >= 0 && c.Thread != thread {
					continue
				}
				for i := range c.Events {
					e := &c.Events[i]
					if (from != 0 && e.Time < from) || (to != 0 && e.Time > to) {
						continue
					}
					fmt.Fprintf(w, "%d t%d %s\n", e.Time, c.Thread, describe(e, c.Deps, tables))
					n++
					if limit > 0 && n >= limit {
						break
					}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&rank, "rank", 0, "process to print")
	f.IntVar(&thread, "thread", -1, "only this thread (events of a thread are in time order; threads come chunk by chunk)")
	f.IntVar(&limit, "limit", 0, "stop after N events")
	f.Int64Var(&from, "from", 0, "only events at or after this time (ns)")
	f.Int64Var(&to, "to", 0, "only events at or before this time (ns)")
	return cmd
}

func describe(e *trace.Event, deps []trace.Dep, t *trace.Tables) string {
	s, _ := trace.SchemaOf(e.Kind)
	var b strings.Builder
	b.WriteString(s.Name)
	for j, f := range s.Fields {
		v := e.Args[j]
		b.WriteString(" " + s.Args[j] + "=")
		switch f {
		case trace.FTask, trace.FParallel, trace.FRequest:
			if v == 0 {
				b.WriteString("-")
			} else {
				fmt.Fprintf(&b, "%d.%d", trace.IDThread(v), trace.IDSeq(v))
			}
		case trace.FString:
			b.WriteString(t.String(v))
		case trace.FLoc:
			b.WriteString(t.LocationName(v))
		default:
			fmt.Fprint(&b, v)
		}
	}
	if e.Kind == trace.TaskDeps {
		for _, d := range e.Deps(deps) {
			fmt.Fprintf(&b, " %#x:%d", d.Addr, d.Type)
		}
	}
	return b.String()
}

// readTables streams a process file once and returns its string and
// location tables. A damaged tail ends the scan: the tables read so far are
// returned, and the printing pass reports the damage where it meets it.
func readTables(path string) (*trace.Tables, error) {
	f, err := trace.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := trace.NewReader(f, path)
	if err != nil {
		return nil, err
	}
	var c trace.Chunk
	for r.NextChunk(&c) == nil {
	}
	return r.Tables(), nil
}

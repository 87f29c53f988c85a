package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/trace"
	"github.com/spf13/cobra"
)

func newDumpCmd() *cobra.Command {
	var rank, thread, limit int
	var from, to int64
	cmd := &cobra.Command{
		Use:   "dump DIR|ARCHIVE",
		Short: "Print a process's events as text (for inspecting traces)",
		Long: `dump prints the events of one process of a trace, one per line: time, thread,
event kind and named arguments (task ids as thread.seq, names resolved).

DIR is a ptrace trace directory or an OTF2 archive (Score-P's traces.otf2, or
the experiment directory holding it): a process of an archive is printed as
ptrace converts it (docs/otf2.md), times in ns since the archive's global
offset, on its own time base (its ClockOffsets applied).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, name, err := dumpSource(args[0], rank)
			if err != nil {
				return err
			}
			// The collector writes the string and location tables after the
			// events (it learns them as it goes): read them in a first pass,
			// so that every event prints with its names resolved.
			tables, err := readTablesFrom(src, name)
			if err != nil {
				return err
			}
			rd, err := src()
			if err != nil {
				return err
			}
			defer rd.Close()
			r, err := trace.NewReader(rd, name)
			if err != nil {
				return err
			}
			w := bufio.NewWriter(cmd.OutOrStdout())
			defer w.Flush()
			n := 0
			for c, err := range r.Chunks() {
				if limit > 0 && n >= limit {
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
	// a join's task argument is the thread joined, index + 1; a condition
	// variable's or barrier's sync events name the object
	sync := e.Kind == trace.SyncBegin || e.Kind == trace.SyncWaitBegin || e.Kind == trace.SyncWaitEnd || e.Kind == trace.SyncEnd
	join := sync && e.Args[0] == trace.SyncThreadJoin
	object := sync && trace.SyncNamesObject(e.Args[0])
	for j, f := range s.Fields {
		v := e.Args[j]
		if object && f == trace.FTask {
			fmt.Fprintf(&b, " object=%#x", v)
			continue
		}
		if join && f == trace.FTask {
			if v > 0 {
				fmt.Fprintf(&b, " joined=t%d", v-1)
			} else {
				b.WriteString(" joined=-")
			}
			continue
		}
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

// source opens a process's ptrace stream from its start (again for each
// pass).
type source func() (io.ReadCloser, error)

// dumpSource returns process rank of a ptrace trace directory (its file)
// or of an OTF2 archive (converted in memory), with the name errors use.
func dumpSource(dir string, rank int) (source, string, error) {
	if otf2.IsArchive(dir) {
		a, err := otf2.Open(dir)
		if err != nil {
			return nil, "", err
		}
		b, _, err := convertedProcess(a, rank)
		if err != nil {
			return nil, "", err
		}
		return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil },
			fmt.Sprintf("%s process %d (converted)", a.Path, rank), nil
	}
	d, err := trace.OpenDir(dir)
	if err != nil {
		return nil, "", err
	}
	if rank < 0 || rank >= d.NRanks() {
		return nil, "", fmt.Errorf("--rank %d: the trace has ranks 0..%d", rank, d.NRanks()-1)
	}
	path := d.FilePath(rank)
	return func() (io.ReadCloser, error) { return trace.OpenRegular(path) }, path, nil
}

// readTables streams a process file once and returns its string and
// location tables (readTablesFrom).
func readTables(path string) (*trace.Tables, error) {
	return readTablesFrom(func() (io.ReadCloser, error) { return trace.OpenRegular(path) }, path)
}

// readTablesFrom streams a process once and returns its string and location
// tables. A damaged tail ends the scan: the tables read so far are
// returned, and the printing pass reports the damage where it meets it.
func readTablesFrom(src source, name string) (*trace.Tables, error) {
	f, err := src()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := trace.NewReader(f, name)
	if err != nil {
		return nil, err
	}
	for _, err := range r.Chunks() {
		if err != nil {
			break
		}
	}
	return r.Tables(), nil
}

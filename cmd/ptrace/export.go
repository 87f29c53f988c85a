package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/report/timeline"
	"github.com/spf13/cobra"
)

type exportFlags struct {
	perfetto string
	critical string
	window   string
	ranks    string
	quiet    bool
}

func newExportCmd() *cobra.Command {
	var ef exportFlags
	cmd := &cobra.Command{
		Use:   "export --perfetto FILE DIR|ARCHIVE",
		Short: "Export a trace's timeline for Perfetto / chrome://tracing",
		Long: `export writes the trace's timeline as Chrome trace-event JSON, which Perfetto UI
(ui.perfetto.dev, "Open trace file") and chrome://tracing open: one process per
rank, one track per thread, task parts named by construct, parallel and sync
regions with their waiting parts and the waits for locks and critical sections
(category "wait"), MPI calls, arrows for task dependences, remote dependences and MPI
messages, timestamps on rank 0's clock (offset interpolation between the
init and finalize measurements). The trace is streamed, so memory stays small
whatever its size; cut big traces with --window and --ranks.

DIR may also be an OTF2 archive (Score-P's traces.otf2 or its experiment
directory): it is converted as analyze converts it (docs/otf2.md), on the
archive's own time base.

--critical-path reads the critical-path table the analysis writes
(analyze --csv DIR gives DIR/critical_path.csv: rank,thread,start_ns,dur_ns,
kind,construct) and draws it on a "critical path" track per rank.`,
		Example: `  ptrace export --perfetto run.json /tmp/trace
  ptrace export --perfetto cut.json --window 10ms:25ms --ranks 0-3 /tmp/trace
  ptrace export --perfetto run.json --critical-path out/critical_path.csv /tmp/trace`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], &ef)
		},
	}
	f := cmd.Flags()
	f.StringVar(&ef.perfetto, "perfetto", "", "write the trace-event JSON to FILE (- for stdout)")
	f.StringVar(&ef.critical, "critical-path", "", "critical-path CSV to highlight")
	f.StringVar(&ef.window, "window", "", "export only T0:T1 after the first event (e.g. 10ms:20ms; either side may be empty)")
	f.StringVar(&ef.ranks, "ranks", "", "export only these ranks (e.g. 0,2,8-11)")
	f.BoolVarP(&ef.quiet, "quiet", "q", false, "no progress, no summary")
	return cmd
}

func runExport(stdout, stderr io.Writer, dir string, ef *exportFlags) error {
	if ef.perfetto == "" {
		return errors.New("--perfetto FILE is required (the only export format so far)")
	}
	var in inputs
	in.addTrace(dir)
	if ef.critical != "" {
		in.addFile(ef.critical)
	}
	outs := []output{{"--perfetto", ef.perfetto, false}}
	if err := in.check(outs); err != nil {
		return err
	}
	if err := writable(outs); err != nil {
		return err
	}
	if err := checkStdout(toStdout(ef.quiet, ef.perfetto)); err != nil {
		return err
	}
	var o timeline.Options
	var err error
	if ef.window != "" {
		if o.Window, err = timeline.ParseWindow(ef.window); err != nil {
			return err
		}
	}
	if ef.ranks != "" {
		if o.Ranks, err = timeline.ParseRanks(ef.ranks); err != nil {
			return err
		}
	}
	if ef.critical != "" {
		f, err := os.Open(ef.critical)
		if err != nil {
			return err
		}
		o.CriticalPath, err = report.ReadPathCSV(f, ef.critical)
		f.Close()
		if err != nil {
			return err
		}
	}
	var prog *progress
	if !ef.quiet {
		prog = newProgress(stderr, "export")
		o.Progress = prog.phase
	}
	start := time.Now()
	if otf2.IsArchive(dir) {
		// The timeline streams process files twice: convert the archive
		// into a temporary ptrace trace first, so that a conversion error
		// leaves no output file behind.
		tmp, err := os.MkdirTemp("", "ptrace-export-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if _, err := convertArchive(dir, tmp); err != nil {
			return err
		}
		dir = tmp
	}
	var st *timeline.Stats
	err = writeOutput(ef.perfetto, stdout, func(w io.Writer) error {
		var err error
		st, err = timeline.Export(w, dir, o)
		return err
	})
	if prog != nil {
		prog.done()
	}
	if err != nil {
		return err
	}
	if !ef.quiet && ef.perfetto != "-" {
		el := time.Since(start)
		fmt.Fprintf(stdout, "wrote %s: %d processes, %d events read, %d trace events written, %d arrows in %s (%.1f M events/s)\n",
			ef.perfetto, st.Processes, st.EventsRead, st.EventsWritten, st.Flows, el.Round(time.Millisecond), float64(st.EventsRead)/el.Seconds()/1e6)
		if st.DroppedEdges > 0 || st.UnknownTasks > 0 {
			fmt.Fprintf(stdout, "note: %d dependence arrows dropped and %d task parts unnamed (state limits reached; cut the export with --ranks or --window)\n", st.DroppedEdges, st.UnknownTasks)
		}
	}
	return nil
}

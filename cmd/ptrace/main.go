// Command ptrace analyses traces of hybrid MPI + OpenMP task programs: time
// breakdown, POP efficiencies, critical path, task metrics. See README.md.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/ptrace-dev/ptrace/internal/outfile"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// exitError carries a specific exit status (validate uses 1 for "problems
// found" and 2 for "could not run").
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func main() {
	noHeapProfile()
	tuneGC()
	root := newRoot()
	// Everything a command prints goes through a checked writer: a report
	// lost to a full disk or a closed pipe is an error, not a success.
	out := &outfile.Checked{W: os.Stdout}
	root.SetOut(out)
	err := root.Execute()
	if err == nil && out.Err != nil {
		err = fmt.Errorf("writing to standard output: %w (the output is lost)", out.Err)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ptrace:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		os.Exit(1)
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "ptrace",
		Short: "Post-mortem performance analysis of MPI + OpenMP task programs",
		Long: `ptrace analyses traces of hybrid MPI + OpenMP (task-based) programs: the time
breakdown into work, MPI, overhead and idleness, the POP hybrid efficiencies,
task and graph metrics and a distributed critical path. It reads its own
traces (ptrace record) and OTF2 archives (Score-P, Scalasca, Vampir, TAU):
every command that takes DIR also takes a traces.otf2 anchor file or the
experiment directory holding it.

Run it on the allocation that produced the trace, as "mpirun -np N ptrace-mpi
analyze DIR", or as a plain process: "ptrace analyze DIR".`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.AddCommand(newGenCmd(), newValidateCmd(), newAnalyzeCmd(), newCompareCmd(), newRecordCmd(), newExportCmd(), newVersionCmd(), newDemoCmd(), newDumpCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print ptrace's version and the trace format version it reads",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "ptrace %s (trace format %d, report schema %s, backends %s)\n", version, trace.Version, report.SchemaVersion, backends())
		},
	}
}

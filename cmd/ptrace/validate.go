package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/trace"
	"github.com/spf13/cobra"
)

func newValidateCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate DIR|ARCHIVE",
		Short: "Check a trace: headers, chunk integrity, time order, references",
		Long: `validate checks every file of a trace directory: the manifest and every rank's
file present, headers consistent, frame checksums, chunk sequence, per-thread
time order, and references from events to strings, locations, communicators,
threads and tasks. Each problem is reported with its file and byte offset.

An OTF2 archive (traces.otf2 or its experiment directory) is checked as
analyze reads it: the anchor and global definitions, then every process's
local definitions and event files, each record decoded and its references
checked; what analyze would tolerate (a counted warning) is a problem here,
named by the archive's own file and offset.

Exit status: 0 when the trace is valid, 1 when problems were found, 2 when the
check could not run.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			prog := newProgress(cmd.ErrOrStderr(), "validate")
			validate := trace.ValidateDir
			if otf2.IsArchive(args[0]) {
				validate = validateArchive
			}
			problems, st, err := validate(args[0], func(done, total int) { prog.update(float64(done) / float64(total)) })
			prog.done()
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if problems == nil {
					problems = []trace.Problem{}
				}
				if err := enc.Encode(map[string]any{"problems": problems, "events": st.Events, "threads": st.Threads, "chunks": st.Chunks}); err != nil {
					return err
				}
			} else {
				for _, p := range problems {
					if p.Offset >= 0 {
						fmt.Fprintf(out, "%s: offset %d: %s\n", p.File, p.Offset, p.Message)
					} else {
						fmt.Fprintf(out, "%s: %s\n", p.File, p.Message)
					}
				}
				fmt.Fprintf(out, "%s: %d events, %d threads, %d chunks, span %s; %d problems (%s)\n",
					args[0], st.Events, st.Threads, st.Chunks, time.Duration(st.Last-st.First), len(problems), time.Since(start).Round(time.Millisecond))
			}
			if len(problems) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%s: %d problems", args[0], len(problems))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print problems as JSON")
	return cmd
}

package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/spf13/cobra"
)

func newDemoCmd() *cobra.Command {
	var keep string
	var af analyzeFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Generate an example MPI + OpenMP trace and analyse it",
		Long: `demo writes a synthetic 4-process MPI + OpenMP trace with load imbalance and
clock skew (ptrace gen halo) and analyses it, to show what a report looks like.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := keep
			if dir == "" {
				tmp, err := os.MkdirTemp("", "ptrace-demo-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				dir = filepath.Join(tmp, "trace")
			}
			cfg := gen.Config{Workload: "halo", Ranks: 4, Threads: 4, Iterations: 40,
				RankImbalance: 0.4, ThreadImbalance: 0.3, Jitter: 0.05, LatencyNS: 5000,
				SkewNS: 200_000, DriftPPM: 10}
			res, err := gen.Generate(dir, cfg)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "generated %s: %d events (ptrace gen halo --ranks 4 --threads 4 --rank-imbalance 0.4 --thread-imbalance 0.3 --skew 200us --drift 10)\n\n", dir, res.Events)
			af.opts.Dir = dir
			return runAnalyze(cmd.OutOrStdout(), cmd.ErrOrStderr(), &af)
		},
	}
	cmd.Flags().StringVar(&keep, "keep", "", "write the demo trace to DIR and keep it")
	cmd.Flags().StringVar(&af.jsonOut, "json", "", "write the JSON report to FILE (- for stdout)")
	return cmd
}

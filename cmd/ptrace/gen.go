package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/spf13/cobra"
)

func newGenCmd() *cobra.Command {
	var cfg gen.Config
	var out string
	var family []int
	var grain, task, compute, serial, fork, join, latency, skew, syncRT, poll, pollGap time.Duration
	cmd := &cobra.Command{
		Use:   "gen WORKLOAD -o DIR",
		Short: "Write a synthetic trace with known results (and expected.json)",
		Long: `gen writes a synthetic trace whose analysis results are known analytically,
and DIR/expected.json holding them under the report's JSON keys.

Workloads:
  imbalance  POT's load-imbalance microbenchmark: thread t runs one task of t·g
             and waits, --iterations times (work = I·g·n(n+1)/2, idle = I·g·n(n−1)/2)
  stencil    Task-Bench stencil_1d: task (s,x) depends on (s−1, x−1..x+1)
  nearest    Task-Bench nearest: --radix nearest points (random with --fraction < 1)
  spread     Task-Bench spread: --radix points spread over the width
  forkjoin   per step, --width independent tasks joined by taskwait (or taskgroup)
  pipeline   one chain through all tasks, point by point (one point per rank by
             default): the critical path crosses ranks at every step
  halo       MPI + OpenMP iterations with per-rank/per-thread imbalance and a
             neighbour exchange or an allreduce (--exchange), between an
             MPI_Init and an MPI_Finalize that take time outside the window
  untied     a chain of --steps untied tasks run as LLVM libomp runs them: a
             stub (--task/20) re-queues each task, which waits --task/10 and
             runs its body (--task) on the next thread (overhead = n·L·task/10)
  mpi        a pure MPI program (one thread, no OpenMP): rank pairs exchange a
             message with MPI_Ssend/MPI_Recv, an early MPI_Irecv + MPI_Send +
             MPI_Wait, or a late MPI_Irecv + MPI_Isend + MPI_Wait (Late Sender
             and Late Receiver in turn), then an imbalanced MPI_Allreduce; an
             imbalanced MPI_Barrier at the end (--compute, --rank-imbalance)
  nbc        a pure MPI program of nonblocking collectives, each completed by an
             MPI_Wait: an MPI_Iallreduce started late by the ranks computing
             longer (wait_nxn), one started at once whose MPI_Wait the
             others wait in until the last rank enters its own
             (wait_for_progress), and an MPI_Ibcast whose rotating root starts
             late (late_broadcast), in turn; an imbalanced MPI_Barrier at the
             end
  tree       tasks that create tasks and wait for them (BOTS fib, health): a
             complete tree of --radix children a node (default 2) and --steps
             levels (default 8) under each process's master; a node computes
             --task/10, creates its children and waits in a taskwait, a leaf
             computes --task; run work-first under the tied-task constraint

Points of the task patterns are split over ranks; dependences between ranks
are remote task dependences with --latency.`,
		Example: `  ptrace gen imbalance --threads 8 --grain 100us -o /tmp/imb
  ptrace gen stencil --ranks 4 --threads 4 --width 64 --steps 100 --jitter 0.2 -o /tmp/st
  ptrace gen stencil --family 1,2,4,8 --width 32 --steps 20 --inflation 0.1 --serial 1ms -o /tmp/fam
  ptrace gen halo --ranks 8 --threads 4 --rank-imbalance 0.5 --skew 1ms --drift 20 -o /tmp/halo
  ptrace gen mpi --ranks 4 --latency 5us -o /tmp/mpi
  ptrace gen mpi --ranks 4 --poll 10us --poll-gap 40us -o /tmp/mpipoll`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				cfg.Workload = args[0]
			}
			if cfg.Workload == "" {
				return fmt.Errorf("name a workload: %s", strings.Join(gen.Workloads, ", "))
			}
			if out == "" {
				return fmt.Errorf("-o DIR is required")
			}
			cfg.GrainNS = int64(grain)
			cfg.SyncRuntimeNS = int64(syncRT)
			cfg.TaskNS = int64(task)
			cfg.ComputeNS = int64(compute)
			cfg.SerialNS = int64(serial)
			cfg.ForkNS, cfg.JoinNS = int64(fork), int64(join)
			cfg.LatencyNS = int64(latency)
			cfg.SkewNS = int64(skew)
			cfg.PollNS, cfg.PollGapNS = int64(poll), int64(pollGap)
			start := time.Now()
			if len(family) > 0 {
				fr, err := gen.GenerateFamily(out, cfg, family)
				if err != nil {
					return err
				}
				for _, d := range fr.Dirs {
					fmt.Fprintln(cmd.OutOrStdout(), "wrote", d)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (what ptrace compare must find) in %s\n", filepath.Join(out, "expected-compare.json"), time.Since(start).Round(time.Millisecond))
				return nil
			}
			res, err := gen.Generate(out, cfg)
			if err != nil {
				return err
			}
			el := time.Since(start)
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d processes, %d events, %s (%.1f bytes/event) in %s (%.1f M events/s)\n",
				out, gen.Defaults(cfg).Ranks, res.Events, report.Bytes(res.Bytes), float64(res.Bytes)/float64(max(res.Events, 1)),
				el.Round(time.Millisecond), float64(res.Events)/el.Seconds()/1e6)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "output directory")
	f.StringVar(&cfg.Workload, "workload", "", "workload (or give it as the argument)")
	f.IntVar(&cfg.Ranks, "ranks", 1, "traced MPI processes")
	f.IntVar(&cfg.Threads, "threads", 0, "OpenMP threads per process (default 4; 1 for mpi)")
	f.Int64Var(&cfg.Seed, "seed", 1, "random seed (durations, random patterns, clocks)")
	f.DurationVar(&grain, "grain", 0, "imbalance: g, the task grain (default 100µs)")
	f.IntVar(&cfg.Iterations, "iterations", 0, "imbalance, halo, mpi, nbc: iterations (default 100, 50, 6, 6)")
	f.IntVar(&cfg.Width, "width", 0, "task patterns: points per step (default 4·ranks·threads)")
	f.IntVar(&cfg.Steps, "steps", 0, "task patterns, untied, tree: steps (chain length for untied, default 50; levels of the tree, default 8)")
	f.IntVar(&cfg.Radix, "radix", 0, "nearest, spread: dependences per task (default 3); tree: children per node (default 2)")
	f.IntVar(&cfg.Period, "period", 0, "nearest, spread: the random pattern repeats every PERIOD steps (default 3)")
	f.Float64Var(&cfg.Fraction, "fraction", 0, "nearest, spread: share of dependences kept (default 1)")
	f.DurationVar(&task, "task", 0, "task patterns, untied, tree: task duration (a tree's leaves; default 50µs)")
	f.Float64Var(&cfg.Jitter, "jitter", 0, "relative jitter of durations, in [0,1)")
	f.StringVar(&cfg.Exchange, "exchange", "", "halo: halo or allreduce (default halo)")
	f.BoolVar(&cfg.Taskgroup, "taskgroup", false, "forkjoin: join each step's tasks at the end of a taskgroup instead of a taskwait")
	f.DurationVar(&compute, "compute", 0, "halo, mpi, nbc: per-thread compute per iteration (default 1ms)")
	f.Float64Var(&cfg.RankImbalance, "rank-imbalance", 0, "halo, mpi, nbc: the last rank computes (1+x)× the first")
	f.Float64Var(&cfg.ThreadImbalance, "thread-imbalance", 0, "halo: the last thread computes (1+x)× the first")
	f.DurationVar(&serial, "serial", 0, "halo: serial work of the master per iteration (default 50µs); stencil, nearest, spread: one serial task before the first step")
	f.DurationVar(&syncRT, "sync-runtime", 0, "imbalance: the runtime's code inside each taskwait and barrier before and after its wait (booked as overhead)")
	f.DurationVar(&fork, "fork", 0, "halo: team creation per parallel region (parallel_begin to the implicit tasks)")
	f.DurationVar(&join, "join", 0, "halo: team end per parallel region (the implicit tasks' end to parallel_end)")
	f.Float64Var(&cfg.Inflation, "inflation", 0, "stencil, nearest, spread: tasks run 1+x·(threads−1) times longer (work-time inflation)")
	f.IntSliceVar(&family, "family", nil, "stencil, nearest, spread: write one run per thread count (e.g. 1,2,4,8) into DIR/threads-N, and DIR/expected-compare.json for ptrace compare")
	f.Int64Var(&cfg.Bytes, "bytes", 0, "halo: message size (default 64 KiB)")
	f.DurationVar(&latency, "latency", 2*time.Microsecond, "message and remote-dependence latency")
	f.DurationVar(&poll, "poll", 0, "mpi: complete the early-posted receives in a loop of MPI_Test calls of this duration (polled waits)")
	f.DurationVar(&pollGap, "poll-gap", 0, "mpi: computation between the MPI_Test calls of --poll (default 4× --poll)")
	f.DurationVar(&skew, "skew", 0, "clock offsets drawn from [-skew, skew] per process (rank 0 is the reference)")
	f.Float64Var(&cfg.DriftPPM, "drift", 0, "clock drift drawn from [-drift, drift] ppm per process")
	f.Int64Var(&cfg.Events, "events", 0, "scale the workload to about N events")
	f.BoolVar(&cfg.Lean, "lean", false, "stencil, nearest, spread: no task_attr and no task_dependence events (about 4 events a task, the shape of real task traces)")
	f.IntVar(&cfg.Outliers, "outliers", 0, "stencil, nearest, spread: make N tasks (chosen by --seed) run 8× longer; listed in expected.json")
	f.IntVar(&cfg.ChunkEvents, "chunk-events", 0, "events per chunk (default 16384)")
	return cmd
}

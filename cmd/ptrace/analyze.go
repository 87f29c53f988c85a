package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ptrace-dev/ptrace/clocksync"
	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/internal/procmem"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/report/cube"
	"github.com/ptrace-dev/ptrace/report/timeline"
	"github.com/spf13/cobra"
)

type analyzeFlags struct {
	ranks      int
	jsonOut    string
	csvDir     string
	htmlOut    string
	cubeOut    string
	pathOut    string
	quiet      bool
	stats      bool
	stream     bool // --stream (hidden): false holds the events
	memLimit   string
	cpuProfile string
	memProfile string
	minLatency time.Duration
	window     string
	opts       driver.Options
}

func newAnalyzeCmd() *cobra.Command {
	var af analyzeFlags
	cmd := &cobra.Command{
		Use:   "analyze DIR|ARCHIVE",
		Short: "Analyse a trace and print the summary report",
		Long: `analyze reads a trace directory and reports the time breakdown, POP
efficiencies, critical path and task metrics.

DIR is a ptrace trace directory (ptrace record, ptrace gen) or an OTF2
archive: Score-P's (or Scalasca's, Vampir's, TAU's) traces.otf2 anchor file or
the experiment directory holding it, of any OTF2 version otf2-print reads
(docs/otf2.md says what is read and what OTF2 cannot carry).

Under mpirun (with the ptrace-mpi build) every MPI rank analyses its share of
the traced processes:
    mpirun -np 8 ptrace-mpi analyze DIR
Otherwise it runs --ranks virtual ranks in this process (default: the number
of cores, at most the number of traced processes). Ranks beyond the traced
processes own none and idle (a note on stderr says so). Results do not depend
on the number of ranks.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			af.opts.Dir = args[0]
			if err := cube.CheckName(af.cubeOut); err != nil {
				return fmt.Errorf("--cube: %w", err)
			}
			af.opts.HoldEvents = af.opts.HoldEvents || !af.stream
			af.opts.Clock.MinLatencyNS = int64(af.minLatency)
			if af.window != "" {
				w, err := timeline.ParseWindow(af.window)
				if err != nil {
					return err
				}
				af.opts.Window = &driver.Window{StartNS: w.Start, EndNS: w.End}
			}
			return runAnalyze(cmd.OutOrStdout(), cmd.ErrOrStderr(), &af)
		},
	}
	af.opts.Clock = clocksync.DefaultOptions()
	f := cmd.Flags()
	f.IntVar(&af.ranks, "ranks", 0, "virtual analysis ranks without MPI (default: cores, capped by processes)")
	f.StringVar(&af.jsonOut, "json", "", "write the JSON report to FILE (- for stdout)")
	f.StringVar(&af.csvDir, "csv", "", "write one CSV file per table into DIR")
	f.StringVar(&af.htmlOut, "html", "", "write a self-contained HTML report with plots to FILE")
	f.StringVar(&af.cubeOut, "cube", "", "write the results as a CUBE4 file FILE.cubex for CubeGUI, cube_dump, cube_diff and Extra-P (docs/cube.md)")
	f.StringVar(&af.pathOut, "critical-path", "", "write the whole critical path as CSV to FILE (rank,thread,start_ns,dur_ns,kind,construct; for ptrace export --critical-path)")
	f.BoolVarP(&af.quiet, "quiet", "q", false, "no terminal summary, no progress")
	f.BoolVar(&af.opts.Salvage, "salvage", false, "analyse what precedes a truncated or corrupt part of a file and cut threads at events out of time order (each a warning; the report is marked partial)")
	f.BoolVar(&af.opts.ForceMix, "force-mix", false, "analyse files of different runs (run ids differ) together, with a warning")
	f.BoolVar(&af.opts.Strict, "strict", false, "treat tolerated problems (warnings) as errors")
	f.BoolVar(&af.stats, "stats", false, "print per phase: wall time, events decoded, each analysis rank's peak heap and its process's max RSS so far; then each rank's peaks, estimate, scratch file's size, memory limit and cores, to stderr")
	f.StringVar(&af.memLimit, "memory-limit", "", "memory this analysis may use on this node, code and libraries included, e.g. 8GiB (default: 80% of the machine's or the job's cgroup limit), shared by the node's analysis processes that own a traced process (idle MPI ranks take none); an analysis that finishes stayed under it, one that cannot stops and says what would do; with --hold-events, a rank whose share is too small for its traces reads them from disk on every pass instead")
	f.BoolVar(&af.opts.HoldEvents, "hold-events", false, "keep the traces' events in memory from the load to the simulation instead of reading the files again: each file read once, for about the traces' size more memory (unless --memory-limit says they do not fit)")
	// The default since the events stopped being held (kept so that
	// scripts that asked for it still run); --stream=false holds them.
	f.BoolVar(&af.stream, "stream", true, "read events from the trace files on every pass (the default; --stream=false is --hold-events)")
	f.MarkHidden("stream")
	f.StringVar(&af.cpuProfile, "cpuprofile", "", "write a CPU profile of the analysis to FILE (go tool pprof)")
	f.StringVar(&af.memProfile, "memprofile", "", "write rank 0's live heap after each phase to PREFIX.PHASE.pprof (go tool pprof)")
	f.MarkHidden("cpuprofile")
	f.MarkHidden("memprofile")
	f.BoolVar(&af.opts.NoInstrumentationCorrection, "no-instrumentation-correction", false, "keep the collector's per-event recording cost (trace header event_cost_ns) in the work it was recorded in")
	f.BoolVar(&af.opts.SyncRuntimeAsWork, "sync-runtime-as-work", false, "book the runtime's code inside barriers, taskwaits and taskgroups outside their waits (sync_region begin to wait begin, wait end to end) as work, as POT does, instead of overhead")
	f.BoolVar(&af.opts.NoClockSync, "no-clocksync", false, "use timestamps as recorded (all processes read one clock); violations are still counted")
	f.StringVar(&af.window, "window", "", "measure only T0:T1 after the first event (e.g. 2s:10s; either side may be empty), instead of MPI_Init … MPI_Finalize")
	f.BoolVar(&af.opts.WholeRun, "whole-run", false, "measure the whole trace, MPI_Init and MPI_Finalize included (default: from MPI_Init's end to MPI_Finalize's start, as TALP)")
	f.DurationVar(&af.minLatency, "min-latency", clocksync.DefaultMinLatencyNS, "clock sync: least time from a send to its receive (l_min)")
	f.Float64Var(&af.opts.Clock.Gamma, "clc-gamma", clocksync.DefaultGamma, "clock sync: least rate of a corrected clock against its own (γ, in (0,1])")
	f.Int64Var(&af.opts.Clock.DeltaNS, "clc-delta", clocksync.DefaultDeltaNS, "clock sync: clock resolution in ns (δ): events told apart stay this far apart")
	return cmd
}

func runAnalyze(stdout, stderr io.Writer, af *analyzeFlags) error {
	start := time.Now()
	var in inputs
	in.addTrace(af.opts.Dir)
	outs := []output{{"--json", af.jsonOut, false}, {"--html", af.htmlOut, false}, {"--csv", af.csvDir, true},
		{"--critical-path", af.pathOut, false}, {"--cube", af.cubeOut, false}, {"--cpuprofile", af.cpuProfile, false}}
	if err := in.check(outs); err != nil {
		return err
	}
	if err := checkStdout(toStdout(af.quiet, af.jsonOut, af.htmlOut, af.pathOut)); err != nil {
		return err
	}
	if af.cpuProfile != "" {
		f, err := os.Create(af.cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if af.memProfile != "" {
		// Fine sampling: the phases' live sets are tens of MB.
		runtime.MemProfileRate = 4096
	}
	var prog *progress
	var rep *report.Report
	var stats driver.RunStats
	var path report.PathSource
	inProcess := ranksInProcess(af.ranks, af.opts.Dir)
	limit, limitFrom, err := memoryLimit(af.memLimit)
	if err != nil {
		return err
	}
	// The limit is the process's: once the communicator is up, what the
	// process holds outside the Go runtime is known, and the rest is its
	// ranks' (the same for every in-process rank).
	var limitOnce sync.Once
	var share, floor, procLimit int64
	var limitErr error
	busy := busyRanks(af.ranks, inProcess, af.opts.Dir)
	err = runRanks(af.ranks, af.opts.Dir, func(c comm.Comm) error {
		// The node's memory and cores are its busy analysis processes':
		// under MPI the ranks count them (idle ranks take no share).
		nodeBusy, busyHere, guarded, err := nodeShare(c, af.opts.Dir, limit > 0)
		if err != nil {
			return err
		}
		limitOnce.Do(func() {
			procLimit = processLimit(limit, nodeBusy, busyHere)
			share, floor, limitErr = applyMemoryLimit(procLimit, busy, limitFrom)
		})
		workers := 1
		if busyHere {
			workers = coresPerRank(busy, nodeBusy)
		}
		// Rank 0 writes the outputs: every rank learns whether it can,
		// so that the job ends cleanly before the analysis if not.
		var werr error
		if c.Rank() == 0 {
			werr = writable(outs)
		}
		if err := comm.Agree(c, errors.Join(limitErr, werr)); err != nil {
			return &driver.AgreedError{Err: err}
		}
		opts := af.opts
		opts.MemoryLimit, opts.MemoryFloor, opts.MemoryLimitFrom = share, floor, limitFrom
		opts.MemoryGuard = guarded // the same on every rank
		opts.NodeProcesses = nodeBusy
		opts.Workers = workers
		opts.GC = gcPercents()
		if af.stats {
			opts.Stats = &stats
		}
		if af.pathOut != "" {
			opts.Path = &path
		}
		if af.memProfile != "" {
			opts.AfterPhase = heapProfiler(af.memProfile)
		}
		var pr *progress // rank 0's, for the notes to clear and redraw
		if c.Rank() == 0 && !af.quiet {
			pr = newProgress(stderr, "analyze")
			prog, opts.Progress = pr, pr.phase
		}
		opts.Notice = func(msg string) { pr.note(stderr, "ptrace: "+msg) }
		if !af.quiet {
			opts.Note = opts.Notice
		}
		r, err := driver.Run(c, opts)
		if c.Rank() == 0 {
			rep = r
			if prog != nil {
				prog.done()
			}
		}
		return err
	})
	if err != nil {
		return unwrapAbort(err)
	}
	if rep == nil {
		return nil // not rank 0 under MPI
	}
	if af.stats {
		printStats(stderr, &stats)
		if limit > 0 {
			fmt.Fprintf(stderr, "memory limit of rank 0's node: %s (%s)\n", report.Bytes(limit), limitFrom)
		}
	}
	if af.pathOut != "" {
		if path == nil {
			path = func(func(report.PathNode)) error { return nil }
		}
		if err := writeOutput(af.pathOut, stdout, func(w io.Writer) error { return report.WritePathSource(w, path) }); err != nil {
			return fmt.Errorf("--critical-path: %w", err)
		}
	}
	if err := emit(stdout, rep, af, time.Since(start)); err != nil {
		return err
	}
	// The analysis stayed under the limit (the heap guard stops it
	// otherwise); writing the reports is after it: said, not silent.
	if p := procmem.Peak(); procLimit > 0 && p > procLimit {
		fmt.Fprintf(stderr, "ptrace: warning: the reports are written, but writing them took this process to %s, above its memory limit of %s (--memory-limit)\n", report.Bytes(p), report.Bytes(procLimit))
	}
	return nil
}

// unwrapAbort turns an AbortError from a communicator into the failing
// rank's own message: users need the cause, not which goroutine saw it.
func unwrapAbort(err error) error {
	var ae *comm.AbortError
	if errors.As(err, &ae) && ae.Err != nil {
		return ae.Err
	}
	return err
}

func emit(stdout io.Writer, rep *report.Report, af *analyzeFlags, elapsed time.Duration) error {
	if af.jsonOut != "" {
		if err := writeOutput(af.jsonOut, stdout, func(w io.Writer) error { return report.WriteJSON(w, rep) }); err != nil {
			return err
		}
	}
	if af.csvDir != "" {
		if _, err := report.WriteCSV(af.csvDir, rep); err != nil {
			return fmt.Errorf("--csv: %w", err)
		}
	}
	if af.htmlOut != "" {
		if err := writeOutput(af.htmlOut, stdout, func(w io.Writer) error { return report.WriteHTML(w, rep, report.HTMLOptions{}) }); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	if af.cubeOut != "" {
		if err := writeCube(af.cubeOut, rep); err != nil {
			return fmt.Errorf("--cube: %w", err)
		}
	}
	if !af.quiet && af.jsonOut != "-" && af.htmlOut != "-" {
		report.WriteText(stdout, rep, report.TextOptions{Color: isTerminal(stdout)})
		fmt.Fprintf(stdout, "\nanalysed in %s\n", elapsed.Round(time.Millisecond))
	}
	return nil
}

// writeCube renders the report as a CUBE4 experiment (package
// report/cube) and writes it to path.
func writeCube(path string, rep *report.Report) error {
	f, err := cube.FromReport(rep, cube.Options{Creator: "ptrace " + version})
	if err != nil {
		return err
	}
	return f.WriteFile(path)
}

// virtualRanks picks the inproc rank count: as asked, or one per core
// capped by the number of processes in the trace.
func virtualRanks(ranks int, dir string) int {
	if ranks > 0 {
		return ranks
	}
	n := 1
	if np, err := numProcesses(dir); err == nil {
		n = np
	}
	return defaultRanks(n)
}

// busyRanks is how many of this process's inProcess ranks own a traced
// process: --ranks above the trace's processes leaves the others idle
// (partition), and they take no share of the memory limit or the cores.
// The default rank count is capped by the processes already.
func busyRanks(ranks, inProcess int, dir string) int {
	if ranks <= 0 || inProcess <= 1 {
		return inProcess
	}
	n, err := numProcesses(dir)
	if err != nil || n < 1 {
		return inProcess // the analysis says what is wrong with dir
	}
	return min(inProcess, n)
}

// coresPerRank is each of this process's ranks' share of the cores it may
// use: the node's cores divided among its busy analysis processes
// (nodeBusy), and no more than GOMAXPROCS, which follows the CPU affinity
// a launcher binds a process to (a socket shared by several ranks counts
// once per rank: the division keeps them from oversubscribing it).
func coresPerRank(ranks, nodeBusy int) int {
	n := min(runtime.GOMAXPROCS(0), runtime.NumCPU()/max(nodeBusy, 1))
	return max(1, n/max(ranks, 1))
}

// defaultRanks is the number of virtual ranks when --ranks is not given.
func defaultRanks(processes int) int {
	return max(1, min(runtime.NumCPU(), processes))
}

func printStats(w io.Writer, st *driver.RunStats) {
	idle := ""
	if st.Idle > 0 {
		idle = fmt.Sprintf(" (%d idle, without a process)", st.Idle)
	}
	fmt.Fprintf(w, "analysis ranks: %d%s, %d–%d processes each, event load max/mean %.3f\n", st.Ranks, idle, st.MinProcs, st.MaxProcs, st.Imbalance)
	// The resident set's high-water mark after each phase: the phase
	// where it grows is the one that set the process's peak (under
	// in-process ranks one process, so every rank shows the same).
	rss := len(st.MaxRSS) > 0 && slices.Max(st.MaxRSS) > 0
	heapHead := "peak heap per rank"
	if rss {
		heapHead = fmt.Sprintf("%-*s  %s", 10*len(st.PeakHeap)-1, heapHead, "max RSS so far per rank")
	}
	fmt.Fprintf(w, "%-14s %12s %14s  %s\n", "phase", "wall", "events decoded", heapHead)
	for _, p := range st.Phases {
		var ev int64
		for _, n := range p.Events {
			ev += n
		}
		cols := fmt.Sprintf("%-*s", 10*len(p.PeakHeap)-1, byteList(p.PeakHeap))
		if rss {
			cols += "  " + byteList(p.MaxRSS)
		}
		fmt.Fprintf(w, "%-14s %12s %14d  %s\n", p.Name, time.Duration(p.MaxNS).Round(time.Microsecond), ev, strings.TrimRight(cols, " "))
	}
	var others uint64
	for r, h := range st.PeakHeap {
		line := fmt.Sprintf("rank %d peak heap %s", r, report.Bytes(int64(h)))
		if r < len(st.PeakLive) {
			line += fmt.Sprintf(" (live %s)", report.Bytes(int64(st.PeakLive[r])))
		}
		if rss && r < len(st.MaxRSS) {
			line += ", max RSS " + report.Bytes(int64(st.MaxRSS[r]))
		}
		if r < len(st.Estimate) {
			line += fmt.Sprintf("; estimated need %s–%s", report.Bytes(st.Estimate[r][0]), report.Bytes(st.Estimate[r][1]))
		}
		if r < len(st.Scratch) && st.Scratch[r] > 0 {
			line += "; scratch file " + report.Bytes(st.Scratch[r])
		}
		if r < len(st.Limit) && st.Limit[r] > 0 {
			line += "; memory limit " + report.Bytes(st.Limit[r])
		}
		if r < len(st.Workers) && st.Workers[r] > 0 {
			line += fmt.Sprintf("; cores %d", st.Workers[r])
		}
		fmt.Fprintln(w, line)
		if r > 0 {
			others = max(others, h)
		}
	}
	if len(st.PeakHeap) > 1 && others > 0 {
		fmt.Fprintf(w, "rank 0 / largest other rank heap: %.2f\n", float64(st.PeakHeap[0])/float64(others))
	}
}

// byteList formats sizes for a --stats column, one per rank.
func byteList(v []uint64) string {
	s := make([]string, len(v))
	for i, b := range v {
		s[i] = fmt.Sprintf("%9s", report.Bytes(int64(b)))
	}
	return strings.Join(s, " ")
}

// heapProfiler returns a phase hook that writes rank 0's live heap after each
// phase to PREFIX.PHASE.pprof (a failure to write is reported, not fatal).
func heapProfiler(prefix string) func(rank int, phase string) {
	return func(rank int, phase string) {
		if rank != 0 {
			return
		}
		runtime.GC()
		name := prefix + "." + strings.ReplaceAll(phase, " ", "-") + ".pprof"
		f, err := os.Create(name)
		if err == nil {
			err = pprof.Lookup("heap").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "ptrace: --memprofile:", err)
		}
	}
}

// stopLine is what an MPI rank other than 0 prints when the analysis
// fails (rank 0 prints the cause): which analysis rank failed, this one
// or another, or that all stopped together (the memory guard's check),
// in analysis ranks, which the traced processes' numbers (in the files'
// names and the messages) are not. It said "rank 1 stopped: rank 1
// reported an error" of a rank's own error, and of the guard's stop,
// which no rank reports alone.
func stopLine(me int, err error) string {
	switch f := failingRank(err, me); {
	case f != me && f == 0:
		return fmt.Sprintf("ptrace: analysis rank %d stops: analysis rank 0 failed and prints why", me)
	case f != me:
		return fmt.Sprintf("ptrace: analysis rank %d stops: analysis rank %d failed; rank 0 prints why", me, f)
	case driver.Together(err):
		return fmt.Sprintf("ptrace: analysis rank %d stops with every rank; rank 0 prints why", me)
	default:
		return fmt.Sprintf("ptrace: analysis rank %d failed; rank 0 prints why", me)
	}
}

// failingRank is the rank whose error err is: the one an AbortError names,
// else this rank (me), whose own error it is.
func failingRank(err error, me int) int {
	var ae *comm.AbortError
	if errors.As(err, &ae) {
		return ae.Rank
	}
	return me
}

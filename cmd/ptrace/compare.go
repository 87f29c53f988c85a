package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ptrace-dev/ptrace/clocksync"
	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/compare"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/report/cube"
	"github.com/spf13/cobra"
)

type compareFlags struct {
	ranks    int
	jsonOut  string
	csvDir   string
	htmlOut  string
	cubeDir  string
	quiet    bool
	sizes    []float64
	opts     compare.Options
	wholeRun bool
	salvage  bool
}

func newCompareCmd() *cobra.Command {
	var cf compareFlags
	cmd := &cobra.Command{
		Use:   "compare RUN…",
		Short: "Compare runs: POP scaling, work-time inflation, work/span bounds",
		Long: `compare puts several runs of one program side by side. Each RUN is a trace
directory (analysed here, as analyze would) or a report written by
"analyze --json" (told apart by content), so large runs need not be
analysed again.

It prints the POP scaling table over the runs ordered by cores (global
efficiency = parallel efficiency × computation scalability, from useful time
summed over all threads against the reference run: the one with the fewest
cores unless --ref names another), the work-time inflation of every task
construct against the reference, each run's work/span bounds (T1, T∞,
parallelism, T1/P, the speedup range a greedy scheduler reaches, how far the
measured time is from max(T1/P, T∞)) and, between consecutive runs, what
changed in words. Strong scaling by default; --weak with --size N,N,… (one
problem size per RUN, in order) compares per unit of problem size.

A RUN that is not a trace, fails to load, or shares no task construct with
the others is named and left out; the others are still compared, and the
exit status is 1.

Trace directories are analysed in this process (--ranks virtual ranks);
under mpirun, analyse each run with "analyze --json" and compare the reports.`,
		Example: `  ptrace gen stencil --family 1,2,4,8 --width 32 --steps 20 --inflation 0.1 --serial 1ms -o /tmp/fam
  ptrace compare /tmp/fam/threads-*
  ptrace analyze --json big.json /scratch/big-run && ptrace compare small-run big.json --html cmp.html`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd.OutOrStdout(), cmd.ErrOrStderr(), args, &cf)
		},
	}
	f := cmd.Flags()
	f.IntVar(&cf.ranks, "ranks", 0, "virtual analysis ranks for trace directories (default: cores, capped by processes)")
	f.StringVar(&cf.jsonOut, "json", "", "write the comparison as JSON to FILE (- for stdout)")
	f.StringVar(&cf.csvDir, "csv", "", "write one CSV file per table into DIR")
	f.StringVar(&cf.htmlOut, "html", "", "write a self-contained HTML page with plots to FILE")
	f.StringVar(&cf.cubeDir, "cube", "", "write each compared run as a CUBE4 file, all with the same metric and call trees, to DIR/ptrace.pPROCESSES.tTHREADS[.sSIZE].rN/profile.cubex (Extra-P's layout; docs/cube.md)")
	f.BoolVarP(&cf.quiet, "quiet", "q", false, "no terminal summary, no progress")
	f.StringVar(&cf.opts.Ref, "ref", "", "the reference run (its RUN argument or trace directory; default: fewest cores)")
	f.BoolVar(&cf.opts.Weak, "weak", false, "weak scaling: compare per unit of problem size (--size)")
	f.Float64SliceVar(&cf.sizes, "size", nil, "problem size of each RUN, in order (with --weak)")
	f.BoolVar(&cf.wholeRun, "whole-run", false, "analyse trace directories whole, as analyze --whole-run")
	f.BoolVar(&cf.salvage, "salvage", false, "analyse what precedes a truncated or corrupt file tail, as analyze --salvage")
	return cmd
}

func runCompare(stdout, stderr io.Writer, args []string, cf *compareFlags) error {
	if cf.opts.Weak && len(cf.sizes) != len(args) {
		return fmt.Errorf("--weak needs --size with one problem size per RUN (%d RUNs, %d sizes)", len(args), len(cf.sizes))
	}
	if !cf.opts.Weak && len(cf.sizes) > 0 {
		return fmt.Errorf("--size applies to --weak scaling")
	}
	start := time.Now()
	var in inputs
	for _, arg := range args {
		in.addTrace(arg)
	}
	outs := []output{{"--json", cf.jsonOut, false}, {"--html", cf.htmlOut, false}, {"--csv", cf.csvDir, true}, {"--cube", cf.cubeDir, true}}
	if err := in.check(outs); err != nil {
		return err
	}
	if err := writable(outs); err != nil {
		return err
	}
	if err := checkStdout(toStdout(cf.quiet, cf.jsonOut, cf.htmlOut)); err != nil {
		return err
	}
	inputs := make([]compare.Input, len(args))
	for i, arg := range args {
		inputs[i] = loadRun(arg, stderr, cf)
		if cf.opts.Weak {
			inputs[i].Size = cf.sizes[i]
		}
	}
	res, err := compare.Compare(inputs, cf.opts)
	if err != nil {
		if res != nil {
			for _, p := range res.Problems {
				fmt.Fprintf(stderr, "ptrace: %s: %s\n", p.Run, p.Message)
			}
		}
		return err
	}
	if cf.jsonOut != "" {
		if err := writeOutput(cf.jsonOut, stdout, func(w io.Writer) error { return compare.WriteJSON(w, res) }); err != nil {
			return err
		}
	}
	if cf.csvDir != "" {
		if _, err := compare.WriteCSV(cf.csvDir, res); err != nil {
			return fmt.Errorf("--csv: %w", err)
		}
	}
	if cf.htmlOut != "" {
		if err := writeOutput(cf.htmlOut, stdout, func(w io.Writer) error { return compare.WriteHTML(w, res) }); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	if cf.cubeDir != "" {
		if err := writeCubeSeries(cf.cubeDir, inputs, res); err != nil {
			return fmt.Errorf("--cube: %w", err)
		}
	}
	if !cf.quiet && cf.jsonOut != "-" && cf.htmlOut != "-" {
		compare.WriteText(stdout, res, compare.TextOptions{Color: isTerminal(stdout)})
		fmt.Fprintf(stdout, "\ncompared in %s\n", time.Since(start).Round(time.Millisecond))
	}
	if n := len(res.Problems); n > 0 {
		for _, p := range res.Problems {
			fmt.Fprintf(stderr, "ptrace: %s: %s\n", p.Run, p.Message)
		}
		return &exitError{code: 1, err: fmt.Errorf("%d of %d runs left out of the comparison", n, len(args))}
	}
	return nil
}

// writeCubeSeries writes the compared runs (those not left out) as CUBE
// files with the same metric and call trees, one directory per run named
// as Extra-P's CUBE reader expects: a prefix, then parameter names and
// values (p processes, t threads per process, s problem size with
// --weak), then .rN for the Nth run of the same parameters.
func writeCubeSeries(dir string, inputs []compare.Input, res *compare.Result) error {
	left := map[string]bool{}
	for _, p := range res.Problems {
		left[p.Run] = true
	}
	var reps []*report.Report
	var sizes []float64
	for _, in := range inputs {
		if in.Err == nil && in.Report != nil && !left[in.Arg] {
			reps = append(reps, in.Report)
			sizes = append(sizes, in.Size)
		}
	}
	files, err := cube.FromReports(reps, cube.Options{Creator: "ptrace " + version})
	if err != nil {
		return err
	}
	seen := map[string]int{}
	for i, f := range files {
		r := reps[i]
		procs := r.Trace.Processes
		if b := r.Breakdown; b != nil {
			procs = len(b.PerProcess)
		}
		threads := float64(r.Trace.Threads) / float64(max(1, procs))
		name := fmt.Sprintf("ptrace.p%d.t%s", procs, strconv.FormatFloat(threads, 'f', -1, 64))
		if res.Scaling == "weak" {
			name += ".s" + strconv.FormatFloat(sizes[i], 'f', -1, 64)
		}
		seen[name]++
		sub := filepath.Join(dir, fmt.Sprintf("%s.r%d", name, seen[name]))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		if err := f.WriteFile(filepath.Join(sub, "profile.cubex")); err != nil {
			return err
		}
	}
	return nil
}

// loadRun turns one RUN argument into a report: a file whose content is
// JSON is read as analyze --json output; anything else goes to the same
// driver entry point analyze uses, whose error names what is wrong.
func loadRun(arg string, stderr io.Writer, cf *compareFlags) compare.Input {
	in := compare.Input{Arg: arg}
	st, err := os.Stat(arg)
	if err != nil {
		in.Err = err
		return in
	}
	if st.Mode().IsRegular() && looksJSON(arg) {
		var warnings []string
		in.Report, warnings, in.Err = report.ReadJSONFile(arg)
		if in.Err != nil {
			// The problem list names the RUN already.
			in.Err = errors.New(strings.TrimPrefix(in.Err.Error(), arg+": "))
		}
		for _, w := range warnings {
			fmt.Fprintln(stderr, "ptrace: warning:", w)
		}
		return in
	}
	opts := driver.Options{Dir: arg, Clock: clocksync.DefaultOptions(), WholeRun: cf.wholeRun, Salvage: cf.salvage, GC: gcPercents()}
	var prog *progress
	if !cf.quiet {
		prog = newProgress(stderr, "analyze "+arg)
		opts.Progress = prog.phase
	}
	var rep *report.Report
	err = inproc.Run(virtualRanks(cf.ranks, arg), func(c comm.Comm) error {
		r, err := driver.Run(c, opts)
		if c.Rank() == 0 {
			rep = r
		}
		return err
	})
	if prog != nil {
		prog.done()
	}
	if err != nil {
		in.Err = unwrapAbort(err)
		return in
	}
	in.Report = rep
	return in
}

// looksJSON reports whether a file starts like a JSON object: its first
// bytes are read, never the whole file (a trace file given as a RUN may
// be gigabytes).
func looksJSON(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [512]byte
	n, _ := io.ReadFull(f, b[:])
	t := bytes.TrimLeft(b[:n], " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

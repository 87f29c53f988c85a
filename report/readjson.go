package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"unicode"

	"github.com/ptrace-dev/ptrace/trace"
)

// A report read back (ptrace compare) is input like a trace: every value
// is a claim. ReadJSONFile checks the file's size before reading, then the
// schema and every count, time and ratio a comparison computes with,
// and names the file and the JSON path of what is wrong.

// MaxReportBytes bounds the size of a report read back. A report is
// O(processes) plus lists of bounded length: analyze --json of a
// 1 024-process halo run is 2.09 MB, 2.0 KB a process (clock sync,
// breakdown, POP and wait-state rows); the critical path's segments
// (MaxPathSegments), the anomalies and the other lists add at most a few
// MB. 1 GiB holds the report of some 500 000 processes, more than any
// machine runs, and takes about twice that in memory to decode; a larger
// file is no report (a trace, a core file) and is refused before it is
// read.
const MaxReportBytes = 1 << 30

// maxNameBytes bounds a name (trace directory, construct) read back.
const maxNameBytes = 4096

// maxListLen bounds the rows of a list a comparison walks (constructs,
// per-process rows, a series' bins): a few million at most in a report of
// MaxReportBytes.
const maxListLen = 1 << 24

// effSlack is how far an efficiency may exceed 1 by rounding.
const effSlack = 1e-6

// FieldError is a report value out of its range: the file, the JSON path
// of the value (e.g. "pop.threads_per_process", "tasks.constructs[3].name")
// and what is wrong with it.
type FieldError struct {
	File, Path, Msg string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s: %s: %s", e.File, e.Path, e.Msg) }

// ReadJSONFile reads and checks the report at path (written by analyze
// --json). It refuses a file larger than MaxReportBytes without reading
// it, a document of another schema or version, and a report whose values a
// comparison would compute nonsense from; warnings are what the report
// says about itself that a reader should know (a partial trace).
func ReadJSONFile(path string) (*Report, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() > MaxReportBytes {
		return nil, nil, fmt.Errorf("%s: %d bytes, more than a report can hold (%d): not a report", path, st.Size(), int64(MaxReportBytes))
	}
	// The limit holds a file that grows while it is read to its bound.
	return readChecked(io.LimitReader(f, MaxReportBytes+1), path)
}

// ReadJSON reads a report written by WriteJSON (analyze --json) from r and
// checks it as ReadJSONFile does; name is used in errors.
func ReadJSON(r io.Reader) (*Report, error) {
	rep, _, err := readChecked(io.LimitReader(r, MaxReportBytes+1), "report")
	return rep, err
}

func readChecked(r io.Reader, name string) (*Report, []string, error) {
	var rep Report
	dec := json.NewDecoder(r)
	if err := dec.Decode(&rep); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, nil, fmt.Errorf("%s: offset %d: not a report JSON: %v", name, se.Offset, err)
		case errors.As(err, &te):
			return nil, nil, &FieldError{name, te.Field, fmt.Sprintf("a %s where the report has %s (offset %d)", te.Value, te.Type, te.Offset)}
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, nil, fmt.Errorf("%s: not a report JSON: the document ends early (truncated, or larger than %d bytes)", name, int64(MaxReportBytes))
		}
		return nil, nil, fmt.Errorf("%s: not a report JSON: %w", name, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("%s: offset %d: data after the report", name, dec.InputOffset())
	}
	if rep.Schema != SchemaVersion {
		if v, ok := strings.CutPrefix(rep.Schema, "ptrace.report/"); ok {
			return nil, nil, &FieldError{name, "schema", fmt.Sprintf("version %q; this ptrace reads %q", v, SchemaVersion)}
		}
		return nil, nil, fmt.Errorf("%s: not a ptrace report (schema %q, want %q)", name, rep.Schema, SchemaVersion)
	}
	c := checker{file: name}
	c.report(&rep)
	if c.err != nil {
		return nil, nil, c.err
	}
	return &rep, c.warnings, nil
}

// checker collects the first error and the warnings of a report's check.
type checker struct {
	file     string
	err      error
	warnings []string
}

func (c *checker) fail(path, format string, args ...any) {
	if c.err == nil {
		c.err = &FieldError{c.file, path, fmt.Sprintf(format, args...)}
	}
}

// count checks an integer count or time: 0 ≤ v ≤ hi.
func (c *checker) count(path string, v, hi int64) {
	switch {
	case v < 0:
		c.fail(path, "%d is negative", v)
	case v > hi:
		c.fail(path, "%d exceeds %d", v, hi)
	}
}

// ratio checks an efficiency or share: 0 ≤ v ≤ 1 (rounding aside).
func (c *checker) ratio(path string, v float64) {
	if !(v >= 0 && v <= 1+effSlack) {
		c.fail(path, "%.6g is outside [0, 1]", v)
	}
}

// signed checks a time that may be negative (a sum of gaps): |v| ≤ maxNS.
func (c *checker) signed(path string, v int64) {
	if v < -maxNS || v > maxNS {
		c.fail(path, "%d is outside ±%d", v, int64(maxNS))
	}
}

func (c *checker) name(path, s string) {
	if len(s) > maxNameBytes {
		c.fail(path, "a name of %d bytes (at most %d)", len(s), maxNameBytes)
		return
	}
	if strings.ContainsFunc(s, unicode.IsControl) {
		c.fail(path, "%q holds control characters", s)
	}
}

func (c *checker) list(path string, n int) {
	if n > maxListLen {
		c.fail(path, "%d entries (at most %d)", n, maxListLen)
	}
}

const maxNS = math.MaxInt64 / 4 // times summed over a few sections stay in range

func (c *checker) report(r *Report) {
	t := &r.Trace
	c.name("trace.dir", t.Dir)
	switch {
	case t.Processes <= 0:
		c.fail("trace.processes", "%d: a report has at least one process (is the trace section missing?)", t.Processes)
	case t.Processes > trace.MaxRanks:
		c.fail("trace.processes", "%d exceeds the %d ranks a trace may have", t.Processes, trace.MaxRanks)
	}
	c.count("trace.threads", int64(t.Threads), int64(t.Processes)*trace.MaxThreads)
	c.count("trace.events", t.Events, math.MaxInt64)
	c.count("trace.bytes", t.Bytes, math.MaxInt64)
	c.count("trace.duration_ns", t.DurationNS, maxNS)
	if t.LastNS < t.FirstNS {
		c.fail("trace.last_ns", "%d is before trace.first_ns %d", t.LastNS, t.FirstNS)
	}
	if t.Partial {
		c.warnings = append(c.warnings, fmt.Sprintf("%s: trace.partial: the report is partial (events missing, or the analysis had to guess past inconsistent events): its totals are lower bounds", c.file))
	}
	c.pop(r)
	c.criticalPath(r.CriticalPath)
	if b := r.Breakdown; b != nil {
		c.count("breakdown.thread_time_ns", b.ThreadTimeNS, maxNS)
		c.count("breakdown.work_ns", b.WorkNS, b.ThreadTimeNS)
		c.count("breakdown.overhead_ns", b.OverheadNS, b.ThreadTimeNS)
	}
	if k := r.Tasks; k != nil {
		c.tasks(k)
	}
}

func (c *checker) pop(r *Report) {
	p := r.POP
	if p == nil {
		c.fail("pop", "missing (the simulation did not run)")
		return
	}
	switch {
	case p.Processes <= 0:
		c.fail("pop.processes", "%d: POP covers at least one process (missing?)", p.Processes)
	case p.Processes > r.Trace.Processes:
		c.fail("pop.processes", "%d, more than the trace's %d processes", p.Processes, r.Trace.Processes)
	}
	if tpp := p.ThreadsPerProcess; !(tpp > 0 && tpp <= trace.MaxThreads) {
		c.fail("pop.threads_per_process", "%.6g is outside (0, %d]", tpp, trace.MaxThreads)
	}
	if p.ElapsedNS <= 0 || p.ElapsedNS > maxNS {
		c.fail("pop.elapsed_ns", "%d: an elapsed time is positive (and below 2^61 ns)", p.ElapsedNS)
	}
	if c.err != nil {
		return
	}
	c.list("pop.per_process", len(p.PerProcess))
	if len(p.PerProcess) > r.Trace.Processes {
		c.fail("pop.per_process", "%d rows for %d processes", len(p.PerProcess), r.Trace.Processes)
	}
	var rowThreads int64
	for i, q := range p.PerProcess {
		at := fmt.Sprintf("pop.per_process[%d].", i)
		c.count(at+"threads", int64(q.Threads), trace.MaxThreads)
		c.count(at+"useful_ns", q.UsefulNS, p.ElapsedNS)
		if c.err != nil {
			return
		}
		rowThreads += int64(max(q.Threads, 1))
	}
	// threads_per_process is the processes' mean thread count (one at
	// least each), which sets a run's cores.
	if len(p.PerProcess) == p.Processes {
		if mean := float64(rowThreads) / float64(p.Processes); math.Abs(mean-p.ThreadsPerProcess) > 1e-9*mean {
			c.fail("pop.threads_per_process", "%.6g, but pop.per_process gives %d processes %d threads (mean %.6g)", p.ThreadsPerProcess, p.Processes, rowThreads, mean)
		}
	}
	if c.err != nil {
		return
	}
	// Useful time summed over threads cannot exceed every thread working
	// the whole elapsed time.
	threads := float64(p.Processes) * p.ThreadsPerProcess
	if lim := float64(p.ElapsedNS) * math.Ceil(threads) * (1 + effSlack); float64(p.UsefulSumNS) > lim || p.UsefulSumNS < 0 {
		c.fail("pop.useful_sum_ns", "%d is outside [0, elapsed × threads = %.0f]", p.UsefulSumNS, lim)
	}
	for _, f := range []struct {
		k string
		v int64
	}{{"useful_ns", p.UsefulNS}, {"mpi_ns", p.MPINS}, {"idle_ns", p.IdleNS}, {"max_non_mpi_ns", p.MaxNonMPINS},
		{"idle_serial_ns", p.IdleSerialNS}, {"idle_lb_ns", p.IdleLBNS}, {"idle_sched_ns", p.IdleSchedNS}} {
		c.count("pop."+f.k, f.v, p.ElapsedNS)
	}
	for _, f := range []struct {
		k string
		v float64
	}{
		{"hybrid_efficiency", p.HybridEfficiency}, {"mpi_parallel_efficiency", p.MPIParallelEfficiency},
		{"mpi_load_balance", p.MPILoadBalance}, {"mpi_communication_efficiency", p.MPICommunicationEfficiency},
		{"omp_parallel_efficiency", p.OMPParallelEfficiency}, {"omp_serialization_efficiency", p.OMPSerializationEfficiency},
		{"omp_load_balance", p.OMPLoadBalance}, {"omp_scheduling_efficiency", p.OMPSchedulingEfficiency},
	} {
		c.ratio("pop."+f.k, f.v)
	}
	// The efficiencies are functions of the raw components beside them
	// (TALP's formulas, reduce.ComputePOP): a report whose values
	// disagree with its own components is refused, not compared.
	T := float64(p.ElapsedNS)
	iSer, iLB := float64(p.IdleSerialNS), float64(p.IdleLBNS)
	for _, f := range []struct {
		k        string
		v        float64
		num, den float64
	}{
		{"hybrid_efficiency", p.HybridEfficiency, float64(p.UsefulNS), T},
		{"mpi_parallel_efficiency", p.MPIParallelEfficiency, T - float64(p.MPINS), T},
		{"mpi_load_balance", p.MPILoadBalance, T - float64(p.MPINS), float64(p.MaxNonMPINS)},
		{"mpi_communication_efficiency", p.MPICommunicationEfficiency, float64(p.MaxNonMPINS), T},
		{"omp_parallel_efficiency", p.OMPParallelEfficiency, T - float64(p.IdleNS), T},
		{"omp_serialization_efficiency", p.OMPSerializationEfficiency, T - iSer, T},
		{"omp_load_balance", p.OMPLoadBalance, T - iSer - iLB, T - iSer},
		{"omp_scheduling_efficiency", p.OMPSchedulingEfficiency, T - iSer - iLB - float64(p.IdleSchedNS), T - iSer - iLB},
	} {
		c.formula("pop."+f.k, f.v, f.num, f.den)
	}
}

// formula checks a ratio a report computed from unrounded values whose
// rounding to whole ns it also reports, as num/den: each rounding moves it
// by at most about 1/den. A denominator rounded to 0 says nothing (the
// ratio of two parts of a nanosecond may be anything).
func (c *checker) formula(path string, v, num, den float64) {
	if den == 0 {
		return
	}
	if want := num / den; math.Abs(v-want) > 1e-9+2/math.Abs(den) {
		c.fail(path, "%.9g, but the report's own components give %.9g", v, want)
	}
}

// exact checks a ratio a report computed as num/den from the integers it
// reports (0 when den is 0).
func (c *checker) exact(path string, v, num, den float64) {
	want := 0.0
	if den != 0 {
		want = num / den
	}
	if math.Abs(v-want) > 1e-9*math.Max(1, math.Abs(want)) {
		c.fail(path, "%.9g, but the report's own values give %.9g", v, want)
	}
}

func (c *checker) criticalPath(cp *CriticalPath) {
	if cp == nil {
		c.fail("critical_path", "missing (every analysis writes it)")
		return
	}
	c.count("critical_path.length_ns", cp.LengthNS, maxNS)
	c.count("critical_path.work_ns", cp.WorkNS, maxNS)
	c.count("critical_path.run_time_ns", cp.RunTimeNS, maxNS)
	c.count("critical_path.nodes", cp.Nodes, math.MaxInt64)
	c.list("critical_path.by_kind", len(cp.ByKind))
	var ns, nodes int64
	kinds := make(map[string]bool, len(cp.ByKind))
	for i, k := range cp.ByKind {
		at := fmt.Sprintf("critical_path.by_kind[%d].", i)
		c.name(at+"name", k.Name)
		if k.Name == "" || kinds[k.Name] {
			c.fail(at+"name", "%q: a kind is named once", k.Name)
		}
		kinds[k.Name] = true
		c.count(at+"nodes", k.Nodes, maxNS)
		c.count(at+"ns", k.NS, maxNS)
		if c.err != nil {
			return
		}
		ns, nodes = ns+k.NS, nodes+k.Nodes
	}
	// The path's parts add up to it, and its ratios are its own.
	if ns != cp.LengthNS || nodes != cp.Nodes {
		c.fail("critical_path.by_kind", "its parts add up to %d ns and %d nodes, the path has %d ns (length_ns) and %d nodes", ns, nodes, cp.LengthNS, cp.Nodes)
	}
	c.exact("critical_path.parallelism", cp.Parallelism, float64(cp.WorkNS), float64(cp.LengthNS))
	c.exact("critical_path.share_of_run_time", cp.ShareOfRunTime, float64(cp.LengthNS), float64(cp.RunTimeNS))
	if c.err == nil && cp.OffPath != nil {
		c.offPath(cp)
	}
}

// offPath checks the account of the run time off the path: it is
// run_time_ns − length_ns, split exactly into before, between and after,
// and between into its classes. Only the whole and the start skew are
// counts: a class sums gaps that may be negative (overlapping nodes), and
// the path's first node may begin before the window, its last end after
// it (analyze writes before_first_ns −30.3 ms on
// otf2/testdata/scorep-8.4-recording-off-leave, whose first node began
// before the recorded stretch). Every value is bounded so that the sums
// cannot overflow.
func (c *checker) offPath(cp *CriticalPath) {
	const at = "critical_path.off_path."
	op := cp.OffPath
	if cp.LengthNS == 0 {
		c.fail("critical_path.off_path", "present, but the path has no node of positive weight (length_ns 0)")
		return
	}
	c.count(at+"ns", op.NS, cp.RunTimeNS)
	c.signed(at+"before_first_ns", op.Before)
	c.signed(at+"after_last_ns", op.After)
	c.count(at+"start_skew_ns", op.StartSkew, maxNS)
	classes := []struct {
		key string
		v   int64
	}{
		{"wake_up_ns", op.WakeUp}, {"fork_ns", op.Fork}, {"tasks_ns", op.Tasks}, {"across_threads_ns", op.Threads},
		{"across_processes_ns", op.Processes}, {"mpi_ns", op.MPI}, {"start_skew_ns", op.StartSkew},
	}
	c.signed(at+"between_ns", op.Between)
	for _, k := range classes {
		c.signed(at+k.key, k.v)
	}
	if c.err != nil {
		return
	}
	switch {
	case op.NS != cp.RunTimeNS-cp.LengthNS:
		c.fail(at+"ns", "%d, but run_time_ns − length_ns is %d", op.NS, cp.RunTimeNS-cp.LengthNS)
	case op.Before+op.Between+op.After != op.NS:
		c.fail(at+"between_ns", "before_first_ns %d + between_ns %d + after_last_ns %d is %d, not ns %d", op.Before, op.Between, op.After, op.Before+op.Between+op.After, op.NS)
	}
	// Each partial sum stays within ±2·maxNS: no overflow.
	var sum int64
	for _, k := range classes {
		if sum += k.v; sum < -maxNS || sum > maxNS {
			c.fail(at+k.key, "the classes' sum overflows")
			return
		}
	}
	if sum != op.Between {
		c.fail(at+"between_ns", "%d, but its seven classes add up to %d", op.Between, sum)
	}
	c.exact(at+"share", op.Share, float64(op.NS), float64(cp.RunTimeNS))
}

func (c *checker) tasks(k *Tasks) {
	c.count("tasks.count", k.Count, math.MaxInt64)
	c.list("tasks.constructs", len(k.Constructs))
	seen := make(map[string]int, len(k.Constructs))
	var count int64
	for i, x := range k.Constructs {
		at := fmt.Sprintf("tasks.constructs[%d].", i)
		c.name(at+"name", x.Name)
		c.name(at+"kind", x.Kind)
		if x.Name == "" || x.Kind == "" {
			c.fail(at+"name", "a construct has a name and a kind")
		}
		if j, ok := seen[x.Name]; ok {
			c.fail(at+"name", "%q is also tasks.constructs[%d]", x.Name, j)
		}
		seen[x.Name] = i
		c.count(at+"count", x.Count, math.MaxInt64)
		c.count(at+"executed", x.Executed, x.Count)
		c.count(at+"sum_ns", x.SumNS, maxNS)
		c.count(at+"min_ns", x.MinNS, x.MaxNS)
		c.count(at+"max_ns", x.MaxNS, max(x.SumNS, 0))
		c.count(at+"mean_ns", x.MeanNS, max(x.MaxNS, 0))
		if c.err != nil {
			return
		}
		if x.Executed > 0 && x.MeanNS != x.SumNS/x.Executed || x.Executed == 0 && x.MeanNS != 0 {
			c.fail(at+"mean_ns", "%d, but sum_ns / executed is %d", x.MeanNS, x.SumNS/max(x.Executed, 1))
			return
		}
		if count += x.Count; count > math.MaxInt64/2 {
			c.fail(at+"count", "the constructs' counts overflow")
			return
		}
	}
	if len(k.Constructs) > 0 && count != k.Count {
		c.fail("tasks.count", "%d, but the constructs count %d tasks", k.Count, count)
	}
	if s := k.ReadySeries; s != nil {
		if s.BinNS <= 0 || s.BinNS > maxNS {
			c.fail("tasks.ready_series.bin_ns", "%d: a bin is positive (and below 2^61 ns)", s.BinNS)
		}
		c.list("tasks.ready_series.values", len(s.Values))
		for i, v := range s.Values {
			if !(v >= 0 && v <= math.MaxInt64) {
				c.fail(fmt.Sprintf("tasks.ready_series.values[%d]", i), "%.6g ready tasks", v)
				return
			}
		}
	}
}

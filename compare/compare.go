// Package compare owns the comparison of several analysed runs of one
// program (ptrace compare): the POP scaling table over the runs, work-time
// inflation per task construct, Cilkview-style work/span bounds per run,
// and what changed between consecutive runs in words; its JSON contract
// "ptrace.compare/v1" (docs/report-schema.md) and its renderings. It reads
// only analysis reports (report.Report), never traces: how a report was
// obtained — analysed now or read from analyze --json — is the caller's.
package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ptrace-dev/ptrace/report"
)

// SchemaVersion is the value of the comparison's "schema" key.
const SchemaVersion = "ptrace.compare/v1"

// CountersNote says why IPC, instruction and frequency scalability are
// missing: no trace format ptrace reads carries hardware counters yet.
const CountersNote = "no hardware counters in the traces: computation scalability is not split into IPC, instruction and frequency scalability"

// Input is one run to compare: its report, or why there is none.
type Input struct {
	Arg    string         // the RUN argument as the user gave it
	Report *report.Report // nil when Err is set
	Err    error
	// Size is the problem size for weak scaling (Options.Weak).
	Size float64
}

// Options tune a comparison.
type Options struct {
	// Ref names the reference run (its name or its argument); empty: the
	// run with the fewest cores.
	Ref string
	// Weak compares per unit of problem size (Input.Size); otherwise the
	// runs are taken to solve the same problem (strong scaling).
	Weak bool
}

// Result is the comparison, the JSON document compare --json writes.
type Result struct {
	Schema     string         `json:"schema"`
	Scaling    string         `json:"scaling"` // "strong" or "weak"
	Reference  string         `json:"reference"`
	Note       string         `json:"note"`
	Runs       []Run          `json:"runs"`
	Constructs []ConstructCmp `json:"constructs"`
	Changes    []Change       `json:"changes"`
	Problems   []Problem      `json:"problems"`
}

// Run is one compared run, in increasing order of cores.
type Run struct {
	Name        string  `json:"name"` // the report's trace directory
	Processes   int     `json:"processes"`
	Cores       int     `json:"cores"` // processes × threads per process
	ProblemSize float64 `json:"problem_size,omitempty"`
	ElapsedNS   int64   `json:"elapsed_ns"`
	UsefulSumNS int64   `json:"useful_sum_ns"`
	Speedup     float64 `json:"speedup"`
	// Efficiencies are POP's: global = parallel × computation scalability.
	Efficiencies Factors `json:"efficiencies"`
	// LostWorkNS is the task time this run spends beyond the reference's
	// (scaled by problem size), summed over the constructs that inflated.
	LostWorkNS   int64       `json:"lost_work_ns"`
	MostInflated []Inflation `json:"most_inflated"`
	Bounds       *Bounds     `json:"bounds,omitempty"`
	// Ready is the run's ready-task series, for the HTML overlay.
	Ready *report.Series `json:"-"`
	first int64
	size  float64
	// The critical path's account of the time off it and the window it
	// is of (changes).
	offPath *report.OffPath
	runTime int64
}

// Factors are the POP efficiencies of one run.
type Factors struct {
	Global                 float64 `json:"global"`
	ComputationScalability float64 `json:"computation_scalability"`
	Parallel               float64 `json:"parallel"` // TALP's hybrid parallel efficiency
	MPIParallel            float64 `json:"mpi_parallel"`
	MPILoadBalance         float64 `json:"mpi_load_balance"`
	MPICommunication       float64 `json:"mpi_communication"`
	OMPParallel            float64 `json:"omp_parallel"`
	OMPSerialization       float64 `json:"omp_serialization"`
	OMPLoadBalance         float64 `json:"omp_load_balance"`
	OMPScheduling          float64 `json:"omp_scheduling"`
}

// Factor names one efficiency: its JSON key, its label and its depth in
// POP's tree.
type Factor struct {
	Key, Label string
	Depth      int
	Get        func(*Factors) float64
}

// FactorTree lists the efficiencies in POP's order.
var FactorTree = []Factor{
	{"global", "Global efficiency", 0, func(f *Factors) float64 { return f.Global }},
	{"computation_scalability", "Computation scalability", 1, func(f *Factors) float64 { return f.ComputationScalability }},
	{"parallel", "Parallel efficiency (hybrid)", 1, func(f *Factors) float64 { return f.Parallel }},
	{"mpi_parallel", "MPI parallel efficiency", 2, func(f *Factors) float64 { return f.MPIParallel }},
	{"mpi_load_balance", "MPI load balance", 3, func(f *Factors) float64 { return f.MPILoadBalance }},
	{"mpi_communication", "MPI communication efficiency", 3, func(f *Factors) float64 { return f.MPICommunication }},
	{"omp_parallel", "OpenMP parallel efficiency", 2, func(f *Factors) float64 { return f.OMPParallel }},
	{"omp_serialization", "OpenMP serialization efficiency", 3, func(f *Factors) float64 { return f.OMPSerialization }},
	{"omp_load_balance", "OpenMP load balance", 3, func(f *Factors) float64 { return f.OMPLoadBalance }},
	{"omp_scheduling", "OpenMP scheduling efficiency", 3, func(f *Factors) float64 { return f.OMPScheduling }},
}

// Inflation is how much one construct's task time grew in a run against
// the reference.
type Inflation struct {
	Construct     string  `json:"construct"`
	Inflation     float64 `json:"inflation"`
	MeanInflation float64 `json:"mean_inflation"`
	ExtraNS       int64   `json:"extra_ns"`
	ShareOfLost   float64 `json:"share_of_lost"`
}

// ConstructCmp is one task construct across the runs.
type ConstructCmp struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Runs is aligned with Result.Runs.
	Runs []ConstructRun `json:"runs"`
}

// ConstructRun is one construct in one run against the reference.
// Inflation is total task time over the reference's (scaled by problem
// size), MeanInflation the mean task duration over the reference's; both 0
// when the reference lacks the construct.
type ConstructRun struct {
	Count         int64   `json:"count"`
	SumNS         int64   `json:"sum_ns"`
	MeanNS        int64   `json:"mean_ns"`
	Inflation     float64 `json:"inflation"`
	MeanInflation float64 `json:"mean_inflation"`
	ExtraNS       int64   `json:"extra_ns"`
	ShareOfLost   float64 `json:"share_of_lost"`
	Missing       bool    `json:"missing,omitempty"` // the run has no task of this construct
}

// Bounds are a run's work/span bounds (Cilkview's analysis on the measured
// task graph). P is the run's cores.
type Bounds struct {
	Cores       int     `json:"cores"`
	WorkNS      int64   `json:"work_ns"`     // T1
	SpanNS      int64   `json:"span_ns"`     // T∞
	Parallelism float64 `json:"parallelism"` // T1/T∞
	AreaBoundNS int64   `json:"area_bound_ns"`
	// Burdened span: T∞ plus the measured mean overhead per task for every
	// task on the critical path (Cilkview's burden, measured instead of
	// assumed).
	PathTasks      int64   `json:"path_tasks"`
	TaskOverheadNS float64 `json:"task_overhead_ns"`
	BurdenedSpanNS int64   `json:"burdened_span_ns"`
	// The speedup range for P cores: at most min(P, T1/T∞); a greedy
	// scheduler reaches at least T1 / (T1/P + burdened span).
	SpeedupMax float64 `json:"speedup_max"`
	SpeedupMin float64 `json:"speedup_min"`
	MeasuredNS int64   `json:"measured_ns"` // the run time the critical path spans
	BoundNS    int64   `json:"bound_ns"`    // max(T1/P, T∞)
	Limit      string  `json:"limit"`       // "work" or "span": which term is the bound
	Distance   float64 `json:"distance"`    // measured / bound
	Text       string  `json:"text"`
}

// Change says in words what changed from one run to the next (in core
// order): the factor that lost most and the construct that inflated most.
type Change struct {
	From      string  `json:"from"`
	To        string  `json:"to"`
	Factor    string  `json:"factor,omitempty"` // Factor.Key; empty when none dropped
	FactorWas float64 `json:"factor_was,omitempty"`
	FactorIs  float64 `json:"factor_is,omitempty"`
	Construct string  `json:"construct,omitempty"` // empty when none inflated
	MeanWasNS int64   `json:"mean_was_ns,omitempty"`
	MeanIsNS  int64   `json:"mean_is_ns,omitempty"`
	ExtraNS   int64   `json:"extra_ns,omitempty"`
	Share     float64 `json:"share,omitempty"` // of the task time added between the two
	// OffPath is the part of the time off the critical path (the key of
	// report.OffPath, e.g. "wake_up_ns") whose share of the run time grew
	// most, by at least report.OffPathShown; empty when none did.
	OffPath    string  `json:"off_path,omitempty"`
	OffPathWas float64 `json:"off_path_was,omitempty"` // its share of the run time in From
	OffPathIs  float64 `json:"off_path_is,omitempty"`
	Text       string  `json:"text"`
}

// Problem is a run left out of the comparison, and why.
type Problem struct {
	Run     string `json:"run"`
	Message string `json:"message"`
}

// Compare compares the inputs. Inputs that failed, lack the sections a
// comparison needs, or share no task construct with the compared program
// are listed in Result.Problems; it fails only when no run is left or the
// options are wrong.
func Compare(inputs []Input, o Options) (*Result, error) {
	res := &Result{Schema: SchemaVersion, Scaling: "strong", Note: CountersNote, Runs: []Run{}, Constructs: []ConstructCmp{}, Changes: []Change{}, Problems: []Problem{}}
	if o.Weak {
		res.Scaling = "weak"
	}
	type cand struct {
		in   *Input
		run  Run
		cons map[string]report.Construct
	}
	var cands []cand
	names := map[string]int{}
	for i := range inputs {
		in := &inputs[i]
		if in.Err != nil {
			// the run is named beside the message: not twice
			res.Problems = append(res.Problems, Problem{Run: in.Arg, Message: strings.TrimPrefix(in.Err.Error(), in.Arg+": ")})
			continue
		}
		r := in.Report
		if r == nil || r.POP == nil {
			res.Problems = append(res.Problems, Problem{Run: in.Arg, Message: "the report has no POP section (the simulation did not run)"})
			continue
		}
		size := 1.0
		if o.Weak {
			if !(in.Size > 0) {
				return nil, fmt.Errorf("%s: --weak needs a positive problem size for every run", in.Arg)
			}
			size = in.Size
		}
		name := r.Trace.Dir
		if name == "" {
			name = in.Arg
		}
		if n := names[name]; n > 0 {
			names[name] = n + 1
			name = fmt.Sprintf("%s (%d)", name, n+1)
		} else {
			names[name] = 1
		}
		c := cand{in: in, run: newRun(name, r, size), cons: map[string]report.Construct{}}
		if o.Weak {
			c.run.ProblemSize = size
		}
		if r.Tasks != nil {
			for _, k := range r.Tasks.Constructs {
				c.cons[k.Name] = k
			}
		}
		cands = append(cands, c)
	}
	if len(cands) == 0 {
		return res, fmt.Errorf("no run to compare")
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(a.run.Cores, b.run.Cores) })
	ref := 0
	if o.Ref != "" {
		ref = -1
		for i, c := range cands {
			if c.run.Name == o.Ref || c.in.Arg == o.Ref {
				ref = i
				break
			}
		}
		if ref < 0 {
			return nil, fmt.Errorf("--ref %s names none of the compared runs", o.Ref)
		}
	}
	// One program: the runs connected to the reference's group by shared
	// task constructs (runs without tasks form a group of their own). Without
	// --ref, the largest such group, and its run with the fewest cores as
	// reference.
	group := make([]int, len(cands))
	for i := range group {
		group[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for group[i] != i {
			i = group[i]
		}
		return i
	}
	for i := range cands {
		for j := i + 1; j < len(cands); j++ {
			if shareConstruct(cands[i].cons, cands[j].cons) || len(cands[i].cons) == 0 && len(cands[j].cons) == 0 {
				group[find(j)] = find(i)
			}
		}
	}
	if o.Ref == "" {
		count := map[int]int{}
		best := find(0)
		for i := range cands {
			count[find(i)]++
		}
		for i := range cands {
			if g := find(i); count[g] > count[best] {
				best = g
			}
		}
		for i := range cands {
			if find(i) == best {
				ref = i
				break
			}
		}
	}
	refName := cands[ref].run.Name
	var kept []cand
	for i, c := range cands {
		if find(i) == find(ref) {
			kept = append(kept, c)
			continue
		}
		msg := "shares no task construct with the reference %s (a different program?); left out"
		switch {
		case len(c.cons) == 0:
			msg = "has no tasks, unlike the reference %s (a different program?); left out"
		case len(cands[ref].cons) == 0:
			msg = "has tasks, unlike the reference %s (a different program?); left out"
		}
		res.Problems = append(res.Problems, Problem{Run: c.in.Arg, Message: fmt.Sprintf(msg, refName)})
	}
	res.Reference = refName
	runs := make([]Run, len(kept))
	cons := make([]map[string]report.Construct, len(kept))
	ri := 0
	for i, c := range kept {
		runs[i], cons[i] = c.run, c.cons
		if c.run.Name == refName {
			ri = i
		}
	}
	scaling(runs, ri)
	res.Constructs = inflation(runs, cons, ri)
	res.Runs = runs
	res.Changes = changes(runs, cons)
	return res, nil
}

func shareConstruct(a, b map[string]report.Construct) bool {
	for k := range a {
		if _, ok := b[k]; ok {
			return true
		}
	}
	return false
}

// newRun takes what a comparison needs from a report.
func newRun(name string, r *report.Report, size float64) Run {
	p := r.POP
	cores := int(math.Round(float64(p.Processes) * p.ThreadsPerProcess))
	if cores == 0 {
		cores = r.Trace.Threads
	}
	useful := p.UsefulSumNS
	if useful == 0 {
		// A report from before useful_sum_ns: the per-process averages
		// times their threads (exact to rounding).
		for _, q := range p.PerProcess {
			useful += q.UsefulNS * int64(q.Threads)
		}
	}
	run := Run{Name: name, Processes: p.Processes, Cores: cores, ElapsedNS: p.ElapsedNS, UsefulSumNS: useful,
		MostInflated: []Inflation{}, first: r.Trace.FirstNS, size: size}
	run.Efficiencies = Factors{
		Parallel: p.HybridEfficiency, MPIParallel: p.MPIParallelEfficiency, MPILoadBalance: p.MPILoadBalance,
		MPICommunication: p.MPICommunicationEfficiency, OMPParallel: p.OMPParallelEfficiency,
		OMPSerialization: p.OMPSerializationEfficiency, OMPLoadBalance: p.OMPLoadBalance, OMPScheduling: p.OMPSchedulingEfficiency,
	}
	if r.Tasks != nil {
		run.Ready = r.Tasks.ReadySeries
	}
	run.Bounds = bounds(r, cores)
	if cp := r.CriticalPath; cp != nil && cp.OffPath != nil && cp.RunTimeNS > 0 {
		run.offPath, run.runTime = cp.OffPath, cp.RunTimeNS
	}
	return run
}

// scaling fills computation scalability, global efficiency and speedup
// against the reference: useful time per unit of problem size.
func scaling(runs []Run, ref int) {
	rr := &runs[ref]
	refU := float64(rr.UsefulSumNS) / rr.size
	for i := range runs {
		r := &runs[i]
		u := float64(r.UsefulSumNS) / r.size
		r.Efficiencies.ComputationScalability = ratio(refU, u)
		r.Efficiencies.Global = r.Efficiencies.Parallel * r.Efficiencies.ComputationScalability
		if r.ElapsedNS > 0 {
			r.Speedup = float64(rr.ElapsedNS) / float64(r.ElapsedNS) * (r.size / rr.size)
		}
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// bounds computes the work/span bounds from the critical-path section.
func bounds(r *report.Report, cores int) *Bounds {
	cp := r.CriticalPath
	if cp == nil || cp.LengthNS <= 0 || cores <= 0 {
		return nil
	}
	b := &Bounds{Cores: cores, WorkNS: cp.WorkNS, SpanNS: cp.LengthNS, MeasuredNS: cp.RunTimeNS}
	P := float64(cores)
	b.Parallelism = float64(cp.WorkNS) / float64(cp.LengthNS)
	area := float64(cp.WorkNS) / P
	b.AreaBoundNS = int64(math.Round(area))
	for _, k := range cp.ByKind {
		if k.Name == "task" {
			b.PathTasks = k.Nodes
		}
	}
	if r.Breakdown != nil && r.Tasks != nil && r.Tasks.Count > 0 {
		b.TaskOverheadNS = float64(r.Breakdown.OverheadNS) / float64(r.Tasks.Count)
	}
	b.BurdenedSpanNS = cp.LengthNS + int64(math.Round(float64(b.PathTasks)*b.TaskOverheadNS))
	b.SpeedupMax = math.Min(P, b.Parallelism)
	b.SpeedupMin = float64(cp.WorkNS) / (area + float64(b.BurdenedSpanNS))
	bound := math.Max(area, float64(cp.LengthNS))
	b.BoundNS = int64(math.Round(bound))
	b.Limit = "work"
	if float64(cp.LengthNS) > area {
		b.Limit = "span"
	}
	b.Distance = float64(b.MeasuredNS) / bound
	b.Text = boundsText(b)
	return b
}

func boundsText(b *Bounds) string {
	var s strings.Builder
	fmt.Fprintf(&s, "at %s this run takes %.2f× its bound max(T1/P, T∞) = %s", plural(b.Cores, "core"), b.Distance, report.Dur(b.BoundNS))
	if b.Limit == "span" {
		fmt.Fprintf(&s, "; the span limits it: beyond T1/T∞ = %.3g cores more cores cannot help", b.Parallelism)
	} else {
		fmt.Fprintf(&s, "; the work bound T1/P limits it; the span would limit it beyond T1/T∞ = %.3g cores", b.Parallelism)
	}
	fmt.Fprintf(&s, "; a greedy scheduler would reach a speedup between %.3g and %.3g", b.SpeedupMin, b.SpeedupMax)
	return s.String()
}

// inflation compares every construct's task time with the reference's.
func inflation(runs []Run, cons []map[string]report.Construct, ref int) []ConstructCmp {
	all := map[string]report.Construct{}
	for _, m := range cons {
		for k, c := range m {
			if a, ok := all[k]; !ok || c.SumNS > a.SumNS {
				all[k] = c
			}
		}
	}
	names := make([]string, 0, len(all))
	for k := range all {
		names = append(names, k)
	}
	// The reference's constructs by total time, then the others by their
	// largest total; ties by name.
	refCons := cons[ref]
	slices.SortFunc(names, func(a, b string) int {
		ra, okA := refCons[a]
		rb, okB := refCons[b]
		switch {
		case okA != okB:
			if okA {
				return -1
			}
			return 1
		case okA && ra.SumNS != rb.SumNS:
			return cmp.Compare(rb.SumNS, ra.SumNS)
		case !okA && all[a].SumNS != all[b].SumNS:
			return cmp.Compare(all[b].SumNS, all[a].SumNS)
		}
		return strings.Compare(a, b)
	})
	out := make([]ConstructCmp, len(names))
	for j, n := range names {
		out[j] = ConstructCmp{Name: n, Kind: all[n].Kind, Runs: make([]ConstructRun, len(runs))}
	}
	rr := &runs[ref]
	for i := range runs {
		r := &runs[i]
		scale := r.size / rr.size
		for j, n := range names {
			c, ok := cons[i][n]
			rc, inRef := refCons[n]
			cr := ConstructRun{Count: c.Count, SumNS: c.SumNS, MeanNS: c.MeanNS, Missing: !ok}
			if inRef {
				want := int64(math.Round(float64(rc.SumNS) * scale))
				cr.ExtraNS = c.SumNS - want
				cr.Inflation = ratio(float64(c.SumNS), float64(rc.SumNS)*scale)
				cr.MeanInflation = ratio(float64(c.MeanNS), float64(rc.MeanNS))
			} else {
				cr.ExtraNS = c.SumNS
			}
			if ok && cr.ExtraNS > 0 {
				r.LostWorkNS += cr.ExtraNS
			}
			out[j].Runs[i] = cr
		}
		for j := range out {
			cr := &out[j].Runs[i]
			if r.LostWorkNS > 0 && cr.ExtraNS > 0 {
				cr.ShareOfLost = float64(cr.ExtraNS) / float64(r.LostWorkNS)
			}
		}
		var top []Inflation
		for j := range out {
			if cr := out[j].Runs[i]; cr.ExtraNS > 0 {
				top = append(top, Inflation{Construct: out[j].Name, Inflation: cr.Inflation, MeanInflation: cr.MeanInflation, ExtraNS: cr.ExtraNS, ShareOfLost: cr.ShareOfLost})
			}
		}
		slices.SortStableFunc(top, func(a, b Inflation) int { return cmp.Compare(b.ExtraNS, a.ExtraNS) })
		if len(top) > 3 {
			top = top[:3]
		}
		if top == nil {
			top = []Inflation{}
		}
		r.MostInflated = top
	}
	return out
}

// changes describes each step from one run to the next in core order.
func changes(runs []Run, cons []map[string]report.Construct) []Change {
	out := []Change{}
	for i := 1; i < len(runs); i++ {
		a, b := &runs[i-1], &runs[i]
		ch := Change{From: a.Name, To: b.Name}
		var s strings.Builder
		fmt.Fprintf(&s, "%s → %s (%d → %s): global efficiency %.2f → %.2f", a.Name, b.Name, a.Cores, plural(b.Cores, "core"),
			a.Efficiencies.Global, b.Efficiencies.Global)
		if a.ElapsedNS > 0 && b.ElapsedNS > 0 {
			fmt.Fprintf(&s, ", elapsed %s → %s", report.Dur(a.ElapsedNS), report.Dur(b.ElapsedNS))
		}
		// The largest drop; on a tie the deeper factor, which says why
		// (OpenMP load balance rather than the parallel efficiency it
		// brings down).
		worst, drop := -1, 1e-9
		for k, f := range FactorTree[1:] {
			d := f.Get(&a.Efficiencies) - f.Get(&b.Efficiencies)
			if d > drop+1e-9 || worst >= 0 && d > drop-1e-9 && f.Depth > FactorTree[worst].Depth {
				worst, drop = k+1, max(d, drop)
			}
		}
		if worst >= 0 {
			f := FactorTree[worst]
			ch.Factor, ch.FactorWas, ch.FactorIs = f.Key, f.Get(&a.Efficiencies), f.Get(&b.Efficiencies)
			fmt.Fprintf(&s, "; %s lost most (%.2f → %.2f)", lowerFirst(f.Label), ch.FactorWas, ch.FactorIs)
		} else {
			s.WriteString("; no efficiency factor dropped")
		}
		scale := b.size / a.size
		var added int64
		best, bestExtra := "", int64(0)
		for n, cb := range cons[i] {
			ca := cons[i-1][n]
			extra := cb.SumNS - int64(math.Round(float64(ca.SumNS)*scale))
			if extra <= 0 {
				continue
			}
			added += extra
			if extra > bestExtra || extra == bestExtra && n < best {
				best, bestExtra = n, extra
			}
		}
		if best != "" {
			ch.Construct, ch.ExtraNS = best, bestExtra
			ch.MeanWasNS, ch.MeanIsNS = cons[i-1][best].MeanNS, cons[i][best].MeanNS
			ch.Share = float64(bestExtra) / float64(added)
			fmt.Fprintf(&s, "; %s inflated most: +%s of task time (%s of the time added)", best, report.Dur(bestExtra), report.Pct(ch.Share))
			if na, nb := cons[i-1][best].Count, cons[i][best].Count; na != nb {
				fmt.Fprintf(&s, ", %d → %d tasks", na, nb)
			}
			if ch.MeanWasNS > 0 {
				fmt.Fprintf(&s, ", mean task %s → %s (×%.3g)", report.Dur(ch.MeanWasNS), report.Dur(ch.MeanIsNS), float64(ch.MeanIsNS)/float64(ch.MeanWasNS))
			}
		} else if len(cons[i]) > 0 {
			s.WriteString("; no construct's task time grew")
		}
		offPathChange(&ch, &s, a, b)
		ch.Text = s.String()
		out = append(out, ch)
	}
	return out
}

// offPathChange names the part of the time off the critical path whose
// share of the run time grew most from a to b, when it grew by at least
// report.OffPathShown (the share from which the reports show the
// account): time the path does not hold, such as the wake-ups after
// barriers as threads are added, which the span and work bounds miss.
// Shares, not times, so that a part that merely follows the run's length
// is no change.
func offPathChange(ch *Change, s *strings.Builder, a, b *Run) {
	if a.offPath == nil || b.offPath == nil {
		return
	}
	pa, pb := a.offPath.PartList(), b.offPath.PartList()
	best, grew := -1, report.OffPathShown
	var was, is float64
	for k := range pb {
		w, n := float64(pa[k].NS)/float64(a.runTime), float64(pb[k].NS)/float64(b.runTime)
		if n-w >= grew {
			best, grew, was, is = k, n-w, w, n
		}
	}
	if best < 0 {
		return
	}
	ch.OffPath, ch.OffPathWas, ch.OffPathIs = pb[best].Key, was, is
	fmt.Fprintf(s, "; off the critical path, %s grew most: %s → %s of the run time (%s → %s)", pb[best].Name,
		report.Pct(was), report.Pct(is), report.Dur(pa[best].NS), report.Dur(pb[best].NS))
}

// plural formats a count with its noun.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "s") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// lowerFirst lowers a label's first letter for use inside a sentence,
// unless its first word is a name with capitals of its own (MPI, OpenMP).
func lowerFirst(s string) string {
	word, _, _ := strings.Cut(s, " ")
	if len(word) < 2 || strings.ToLower(word[1:]) != word[1:] {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

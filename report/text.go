package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ptrace-dev/ptrace/internal/units"
)

// TextOptions tune the terminal summary.
type TextOptions struct {
	Color bool // ANSI colours (only on a terminal)
	// TopConstructs, TopFindings and TopAnomalies bound the lists (defaults
	// 5, 5 and 3), so the summary stays one screen.
	TopConstructs, TopFindings, TopAnomalies int
}

func (o TextOptions) withDefaults() TextOptions {
	if o.TopConstructs <= 0 {
		o.TopConstructs = 5
	}
	if o.TopFindings <= 0 {
		o.TopFindings = 5
	}
	if o.TopAnomalies <= 0 {
		o.TopAnomalies = 3
	}
	return o
}

// ClassBasis says what Tallent's class was decided on: the idleness and
// overhead inside parallel regions, not the breakdown's totals printed
// above it (a hybrid code's idleness is mostly serial, so a class of "low
// idleness" under a total above the threshold read as a contradiction).
// The overhead inside regions is the advice's; a report without advice
// gives the idleness alone.
func ClassBasis(b *Breakdown) string {
	var in string
	if b.ThreadTimeNS > 0 {
		tt := float64(b.ThreadTimeNS)
		in = "idleness " + Pct(float64(b.IdlenessParallelNS)/tt)
		if b.Advice != nil {
			in += ", overhead " + Pct(float64(b.Advice.OverheadNS)/tt)
		}
		in += " of thread time; "
	}
	return fmt.Sprintf("inside parallel regions: %sidleness > %s, overhead > %s count as high",
		in, Pct(b.Thresholds.Idleness), Pct(b.Thresholds.Overhead))
}

// TallentReading is the reading of Tallent et al.'s idleness/overhead
// classes (seed pot-dependent-task-time-breakdown.txt, Table 1).
var TallentReading = map[string]string{
	"LL": "low idleness, low overhead: effectively parallel; focus on serial performance",
	"LH": "low idleness, high overhead: coarsen concurrency granularity",
	"HL": "high idleness, low overhead: refine concurrency granularity",
	"HH": "high idleness, high overhead: switch parallelization strategies",
}

// WriteText writes the one-screen terminal summary. Every section but the
// trace facts is optional and skipped when its analysis did not run.
func WriteText(w io.Writer, r *Report, o TextOptions) {
	o = o.withDefaults()
	p := &printer{w: w, color: o.Color, origin: r.Trace.FirstNS}
	t := &r.Trace
	p.head("ptrace report")
	p.line("trace      %s", t.Dir)
	if t.Producer != "" {
		p.line("producer   %s", t.Producer)
	}
	p.line("size       %d processes on %d hosts, %d threads, %d events, %s", t.Processes, t.Hosts, t.Threads, t.Events, Bytes(t.Bytes))
	p.line("span       %s", Dur(t.DurationNS))
	if w := t.Window; w != nil {
		switch w.Bounds {
		case "mpi":
			p.line("window     %s, MPI_Init → MPI_Finalize (%s … %s; start-up and shutdown not measured)",
				Dur(w.DurationNS), Dur(w.StartNS-t.FirstNS), Dur(w.EndNS-t.FirstNS))
		case "user":
			p.line("window     %s, as asked (%s … %s)", Dur(w.DurationNS), Dur(w.StartNS-t.FirstNS), Dur(w.EndNS-t.FirstNS))
		case "recorded":
			p.line("window     %s, the longest stretch every process recorded (%s … %s; recording was switched off: see the warnings)",
				Dur(w.DurationNS), Dur(w.StartNS-t.FirstNS), Dur(w.EndNS-t.FirstNS))
		}
	}
	if t.Warnings != nil && t.Warnings.Count > 0 && len(t.Warnings.First) > 0 {
		p.warn("warnings   %d (first: %s)", t.Warnings.Count, t.Warnings.First[0])
	}
	for _, n := range t.Notes {
		p.line("note       %s", n)
	}
	if t.Partial {
		p.warn("partial    events are missing (see the warnings): times and counts are lower bounds")
	}
	for _, u := range t.Unavailable {
		if u == "task_dependences" {
			p.warn("no deps    the trace has no task dependences (OTF2): critical path, span, parallelism and idleness treat tasks as independent")
		} else if u == "source_lines" {
			p.warn("no lines   the program has no line table (compiled without -g): code locations are named function+offset; compile with -g for file:line")
		} else {
			p.warn("missing    %s: not in the trace", u)
		}
	}
	if cs := r.ClockSync; cs != nil {
		p.clockSync(cs)
	}
	// No thread modelled (an archive's threads all of kinds the model
	// leaves out, see the notes): zeros and efficiencies of nothing would
	// read as a perfect run.
	none := r.Breakdown != nil && r.Breakdown.ThreadTimeNS == 0
	if none {
		p.line("")
		p.warn("no thread modelled: the trace has no thread whose time the analysis accounts (see the notes), so there is no time breakdown, POP efficiency or critical path")
	}
	if b := r.Breakdown; b != nil && !none {
		p.breakdown(b, !t.NoOpenMP)
	}
	if pop := r.POP; pop != nil && !none {
		p.pop(pop, !t.NoOpenMP || t.UserThreads, t.NoOpenMP && t.UserThreads, t.TaskWorkers)
	}
	if ws := r.WaitStates; ws != nil {
		if ws.Calls > 0 || ws.MPINS > 0 {
			p.waitStates(ws, o)
		}
		if ws.OpenMP != nil {
			p.ompWaits(ws.OpenMP, o, waitsTitle(&r.Trace))
		}
	}
	if cp := r.CriticalPath; cp != nil && !(none && cp.LengthNS == 0) {
		p.criticalPath(cp, r.Graph)
	} else if g := r.Graph; g != nil && !none {
		p.graph(g)
	}
	if ts := r.Tasks; ts != nil {
		p.tasks(ts, o)
	}
	if a := r.Anomalies; a != nil {
		p.anomalies(a, o)
	}
}

func (p *printer) clockSync(cs *ClockSync) {
	s := "clocks     " + ClockSummary(cs)
	if cs.ViolationsAfter > 0 {
		p.warn("%s", s)
	} else {
		p.line("%s", s)
	}
}

func (p *printer) breakdown(b *Breakdown, openmp bool) {
	p.line("")
	p.head(fmt.Sprintf("time breakdown (%s of thread time)", Dur(b.ThreadTimeNS)))
	idle := fmt.Sprintf("idleness %s", Pct(b.IdlenessRatio))
	if b.IdlenessSerialNS > 0 || b.IdlenessParallelNS > 0 {
		idle += fmt.Sprintf(" (serial %s, in parallel %s)", Dur(b.IdlenessSerialNS), Dur(b.IdlenessParallelNS))
	}
	p.line("  work %s   MPI %s   overhead %s   %s", Pct(b.WorkRatio), Pct(b.MPIRatio), Pct(b.OverheadRatio), idle)
	// A correction that took nothing out (a pure MPI program: no event
	// fell inside work) says nothing worth a line.
	if c := b.InstrumentationCorrection; c != nil && !(c.Applied && c.Events == 0 && c.CorrectedNS == 0) {
		if c.Applied {
			p.line("  instrumentation correction: %s taken out of work (%d events × %d ns recording cost; --no-instrumentation-correction keeps it)",
				Dur(c.CorrectedNS), c.Events, c.EventCostNS)
		} else {
			p.line("  instrumentation correction off: work includes the collector's recording cost (%d ns per event)", c.EventCostNS)
		}
	}
	if f := b.BufferFlushes; f != nil {
		p.line("  %s", FlushLine(f, b.ThreadTimeNS, len(b.PerProcess)))
	}
	if b.SyncRuntimeAsWork {
		p.line("  runtime code inside barriers, taskwaits and taskgroups (outside their waits) is booked as work, as in POT (--sync-runtime-as-work)")
	} else if b.SyncRuntimeNS > 0 {
		p.line("  overhead includes %s of runtime code inside barriers, taskwaits and taskgroups, outside their waits (--sync-runtime-as-work books it as work, as POT)", Dur(b.SyncRuntimeNS))
	}
	if !openmp {
		p.line("  no OpenMP in the trace: Tallent's class and the OpenMP efficiencies do not apply")
	} else if b.Class != "" {
		reading := TallentReading[b.Class]
		p.line("  class %s (%s): %s", p.em(b.Class), ClassBasis(b), reading)
	}
	if a := b.Advice; a != nil {
		p.line("  %s", AdviceLine(a))
	} else if b.Interpretation != "" && !strings.Contains(TallentReading[b.Class], b.Interpretation) {
		p.line("  %s", b.Interpretation)
	}
	if b.ForkJoinNS > 0 || b.IdleDuringMPINS > 0 {
		p.line("  inside overhead and idleness: %s", RawLine(b.ForkJoinNS, b.IdleDuringMPINS, b.IdleSerialDuringMPINS))
	}
	if b.InitFinalizeNS > 0 {
		p.line("  MPI includes %s in the processes' own MPI_Init and MPI_Finalize inside the window (from the first MPI_Init exit to the last MPI_Finalize entry); it is not on the critical path", Dur(b.InitFinalizeNS))
	}
}

// popRows is the efficiency tree as TALP prints it: hybrid, then MPI with
// its load balance and communication, then OpenMP with serialization, load
// balance and scheduling.
func popRows(pop *POP, openmp bool) []struct {
	Depth int
	Name  string
	Value float64
} {
	rows := []struct {
		Depth int
		Name  string
		Value float64
	}{
		{0, "Hybrid parallel efficiency", pop.HybridEfficiency},
		{1, "MPI parallel efficiency", pop.MPIParallelEfficiency},
		{2, "MPI load balance", pop.MPILoadBalance},
		{2, "MPI communication efficiency", pop.MPICommunicationEfficiency},
		{1, "OpenMP parallel efficiency", pop.OMPParallelEfficiency},
		{2, "OpenMP serialization efficiency", pop.OMPSerializationEfficiency},
		{2, "OpenMP load balance", pop.OMPLoadBalance},
		{2, "OpenMP scheduling efficiency", pop.OMPSchedulingEfficiency},
	}
	if !openmp {
		return rows[:4] // without OpenMP the hybrid efficiency is the MPI one
	}
	return rows
}

func (p *printer) pop(pop *POP, openmp, threadsOnly, workers bool) {
	p.line("")
	p.head(fmt.Sprintf("POP efficiencies (%d processes × %.3g threads, elapsed %s)", pop.Processes, pop.ThreadsPerProcess, Dur(pop.ElapsedNS)))
	for _, row := range popRows(pop, openmp) {
		label := strings.Repeat("  ", row.Depth) + row.Name
		p.line("  %-36s %s", label, p.eff(row.Value))
	}
	if !openmp {
		p.line("  (no OpenMP: the OpenMP efficiencies are 1 by construction and left out)")
	}
	if threadsOnly {
		if workers {
			p.line("  (no OpenMP: the OpenMP efficiencies are those of the task runtime's worker threads and the threads the program started itself)")
		} else {
			p.line("  (no OpenMP: the OpenMP efficiencies are those of the threads the program started itself)")
		}
	}
	p.line("  per thread: useful %s, MPI %s, idle %s (serial %s, load balance %s, scheduling %s)",
		Dur(pop.UsefulNS), Dur(pop.MPINS), Dur(pop.IdleNS), Dur(pop.IdleSerialNS), Dur(pop.IdleLBNS), Dur(pop.IdleSchedNS))
	if pop.ForkJoinNS > 0 || pop.IdleDuringMPINS > 0 {
		p.line("  per thread, inside idle: %s", RawLine(pop.ForkJoinNS, pop.IdleDuringMPINS, pop.IdleSerialDuringMPINS))
	}
	if len(pop.ProcessesWithoutEvents) > 0 {
		p.line("  %s", WithoutEventsLine(pop.ProcessesWithoutEvents))
	}
}

// WithoutEventsLine says which processes POP leaves out for having no
// events.
func WithoutEventsLine(ranks []int) string {
	const most = 8
	parts := make([]string, 0, most+1)
	for i, r := range ranks {
		if i == most {
			parts = append(parts, fmt.Sprintf("… %d more", len(ranks)-most))
			break
		}
		parts = append(parts, strconv.Itoa(r))
	}
	what := "process"
	if len(ranks) > 1 {
		what = "processes"
	}
	return fmt.Sprintf("left out: %s %s, with no events in the trace (not measured: a rank killed before it wrote any?)", what, strings.Join(parts, ", "))
}

func (p *printer) criticalPath(cp *CriticalPath, g *Graph) {
	p.line("")
	s := fmt.Sprintf("critical path  %s = %s of run time, parallelism %.3g (work %s), %d nodes, %d rank crossings",
		Dur(cp.LengthNS), Pct(cp.ShareOfRunTime), cp.Parallelism, Dur(cp.WorkNS), cp.Nodes, cp.RankCrossings)
	p.head(s)
	if cp.ComputeParallelism > 0 {
		p.line("  parallelism is T1/T∞ and T∞ holds %s of communication (MPI calls' own time, latencies), which is no work: the computation on the path alone gives %.3g",
			Pct(1-float64(cp.WorkOnPath())/float64(cp.LengthNS)), cp.ComputeParallelism)
	}
	if op := cp.OffPath; op.Shown() {
		p.line("  not on the path %s (%s of run time): %s", Dur(op.NS), Pct(op.Share), strings.Join(op.Parts(), ", "))
	}
	if len(cp.ByKind) > 0 {
		p.line("  by kind: %s", shares(cp.ByKind, 4))
	}
	if len(cp.ByConstruct) > 0 {
		p.line("  by construct: %s", shares(cp.ByConstruct, 3))
	}
	if g != nil {
		p.graphLine(g)
	}
}

func (p *printer) graph(g *Graph) {
	p.line("")
	p.head(fmt.Sprintf("task graph  critical path %s", Dur(g.CriticalPathNS)))
	p.graphLine(g)
}

func (p *printer) graphLine(g *Graph) {
	if g.Tasks == 0 {
		p.line("  graph: no explicit tasks")
		return
	}
	rp := g.RootPaths
	p.line("  graph: %d tasks, %d edges (%d remote), %d roots, %d leaves; root paths relative to it: mean %.2f, median %.2f, min %.2f, %d within 4%%",
		g.Tasks, g.Edges, g.RemoteEdges, g.Roots, g.Leaves, rp.Mean, rp.Median, rp.Min, rp.Within4Pct)
}

func shares(ss []PathShare, n int) string {
	var parts []string
	for i, s := range ss {
		if i == n {
			parts = append(parts, fmt.Sprintf("… %d more", len(ss)-n))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s", ShortCode(s.Name), Pct(s.Share)))
	}
	return strings.Join(parts, ", ")
}

func (p *printer) tasks(ts *Tasks, o TextOptions) {
	if len(ts.Constructs) > 0 {
		p.line("")
		p.head(fmt.Sprintf("top constructs (%d tasks)", ts.Count))
		for i, c := range ts.Constructs {
			if i == o.TopConstructs {
				p.line("  … %d more", len(ts.Constructs)-i)
				break
			}
			p.line("  %-28s %-8s %8d× mean %-9s [%s … %s]  %6s of task time, create %s",
				ShortCode(c.Name), c.Kind, c.Count, Dur(c.MeanNS), Dur(c.MinNS), Dur(c.MaxNS), Pct(c.Share), Dur(c.CreateNS))
		}
	}
	if len(ts.Findings) > 0 {
		p.line("")
		p.head("findings")
		for i, f := range ts.Findings {
			if i == o.TopFindings {
				p.line("  … %d more (see the JSON or HTML report)", len(ts.Findings)-i)
				break
			}
			s := fmt.Sprintf("  %-7s %s: %s", f.Severity, f.Topic, f.Message)
			switch f.Severity {
			case "problem":
				p.bad("%s", s)
			case "warning":
				p.warn("%s", s)
			default:
				p.line("%s", s)
			}
		}
	}
}

func (p *printer) anomalies(a *Anomalies, o TextOptions) {
	p.line("")
	if a.Tested == 0 {
		p.head("anomalies  none tested: no construct has enough explicit tasks to model their durations")
		return
	}
	s := fmt.Sprintf("anomalies  %d of %d tasks above their model's bound (α = %.2g, Bonferroni), %d groups", a.Found, a.Tested, a.Alpha, len(a.Groups))
	if a.Found > 0 {
		p.warn("%s", s)
	} else {
		p.head(s)
	}
	// The groups are the findings; list the biggest first.
	shown := 0
	for _, g := range biggestGroups(a.Groups) {
		if shown == o.TopAnomalies {
			break
		}
		shown++
		p.line("  group %d: %d tasks on %s, at %s … %s", g.ID, g.Tasks, where(g), Dur(g.StartNS-p.origin), Dur(g.EndNS-p.origin))
	}
	var worst *Anomaly
	for i := range a.Tasks {
		if worst == nil || a.Tasks[i].Score > worst.Score {
			worst = &a.Tasks[i]
		}
	}
	if worst != nil {
		p.line("  worst: task %#x (%s) on rank %d thread %d at %s ran %s, predicted %s",
			worst.Task, ShortCode(worst.Construct), worst.Rank, worst.Thread, Dur(worst.StartNS-p.origin), Dur(worst.DurNS), Dur(worst.PredictedNS))
	}
}

// waitPatterns names the wait-state patterns of w with their times, in
// the report's order.
func waitPatterns(w *WaitTimes) []struct {
	name string
	ns   int64
} {
	return []struct {
		name string
		ns   int64
	}{{"late sender", w.LateSenderNS}, {"late receiver", w.LateReceiverNS}, {"wait at N×N", w.WaitNxNNS},
		{"wait at barrier", w.WaitBarrierNS}, {"late broadcast", w.LateBroadcastNS}, {"early reduce", w.EarlyReduceNS},
		{"wait at fence", w.WaitAtFenceNS}, {"wait at window create", w.WaitAtWinCreateNS}, {"wait at window free", w.WaitAtWinFreeNS},
		{"late post", w.LatePostNS}, {"early wait", w.EarlyWaitNS}, {"lock contention", w.LockContentionNS},
		{"wait for progress", w.WaitForProgressNS}}
}

func (p *printer) waitStates(ws *WaitStates, o TextOptions) {
	p.line("")
	p.head(fmt.Sprintf("wait states (%s of MPI time in %d calls; each call counts in one pattern at most)", Dur(ws.MPINS), ws.Calls))
	share := func(ns, of int64) string {
		if of <= 0 {
			return Pct(0)
		}
		return Pct(float64(ns) / float64(of))
	}
	var parts []string
	for _, pt := range waitPatterns(&ws.WaitTimes) {
		if pt.ns > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", pt.name, share(pt.ns, ws.MPINS)))
		}
	}
	parts = append(parts, fmt.Sprintf("transfer/other %s", share(ws.OtherNS, ws.MPINS)))
	p.line("  %s", strings.Join(parts, "   "))
	shown := 0
	for i := range ws.CallSites {
		c := &ws.CallSites[i]
		top := waitPatterns(&c.WaitTimes)[0]
		for _, pt := range waitPatterns(&c.WaitTimes) {
			if pt.ns > top.ns {
				top = pt
			}
		}
		if top.ns == 0 || shown == o.TopFindings {
			break
		}
		shown++
		calls := fmt.Sprintf("%d of %d calls", c.WaitingCalls, c.Calls)
		if c.WaitingCalls == 0 {
			// A polling loop's share of waits that other calls completed
			// (an MPI_Test loop ended by an MPI_Wait elsewhere): the wait
			// instances count where they ended.
			calls = fmt.Sprintf("polled in %d calls, the waits ending in other calls", c.Calls)
		}
		p.line("  %s: %s %s (%s of its %s, %s)", siteName(c.Func, c.Site, c.Region), top.name, Dur(top.ns), share(top.ns, c.MPINS), Dur(c.MPINS), calls)
	}
	var most *WaitProcess
	for i := range ws.PerProcess {
		q := &ws.PerProcess[i]
		if most == nil || q.WaitTimes.Waiting() > most.WaitTimes.Waiting() {
			most = q
		}
	}
	if most != nil && most.WaitTimes.Waiting() > 0 {
		p.line("  rank %d waits most: %s (%s of its MPI time)", most.Rank, Dur(most.WaitTimes.Waiting()), share(most.WaitTimes.Waiting(), most.MPINS))
	}
	for i, c := range ws.Causes {
		if i == o.TopFindings {
			break
		}
		calls := fmt.Sprintf("%d calls", c.Calls)
		switch c.Calls {
		case 0:
			calls = "polling for waits that ended in other calls"
		case 1:
			calls = "1 call"
		}
		p.line("  waited for rank %d: %s of all waiting (%s at %s, %s)", c.Rank, Pct(c.Share), patternTitle(c.Pattern), siteName(c.Func, c.Site, c.Region), calls)
	}
	if ProgressNotable(&ws.WaitTimes) {
		p.line("  %s", ProgressHint(&ws.WaitTimes))
	}
	for i, d := range ws.Delays {
		if i == o.TopFindings || d.NS+d.LongTermNS == 0 {
			break
		}
		code := p.em(ShortCode(d.Code))
		if strings.HasPrefix(d.Code, "MPI_") {
			// Scalasca's communication imbalance: MPI time that was no wait.
			code = "MPI time outside waits in " + code
		}
		if d.Site != "" && d.Site != d.Code {
			code += " before " + ShortCode(d.Site)
		}
		if total := ws.WaitTimes.Waiting(); d.LongTermNS > 0 && total > 0 {
			p.line("  root cause: rank %d's %s costs %s of all waiting (its excess time before the calls waited for), %s more through the waits it propagated",
				d.Rank, code, Pct(d.Share), Pct(float64(d.LongTermNS)/float64(total)))
			continue
		}
		p.line("  root cause: rank %d's %s costs %s of all waiting (its excess time before the calls waited for)", d.Rank, code, Pct(d.Share))
	}
}

// ProgressNotable says whether the waits for progress are worth a word:
// a twentieth of the MPI time or more.
func ProgressNotable(w *WaitTimes) bool {
	return w.WaitForProgressNS > 0 && w.WaitForProgressNS*20 >= w.MPINS
}

// ProgressHint says what a wait for progress is and what to do about it
// (docs/report-schema.md, wait_for_progress): the members had started
// their nonblocking collectives in time, the MPI library advanced them
// only inside MPI calls.
func ProgressHint(w *WaitTimes) string {
	return fmt.Sprintf("wait for progress: %s (%s of MPI time) in calls completing nonblocking collectives that every member had started, "+
		"until the last of them entered MPI again: the MPI library advances them only inside MPI calls, so the overlap was lost; "+
		"call MPI_Test now and then in the overlapped computation, or give the library a progress thread; the root causes (delay costs of wait_for_progress) "+
		"name what the last member computed before entering MPI",
		Dur(w.WaitForProgressNS), Pct(float64(w.WaitForProgressNS)/float64(max(w.MPINS, 1))))
}

// siteName names an MPI call site: "MPI_Recv at halo.c:52:3 in phase".
func siteName(fn, site, region string) string {
	name := fn
	if site != "" {
		name += " at " + ShortCode(site)
	}
	if region != "" {
		name += " in " + ShortCode(region)
	}
	return name
}

// OMPPlaces names where threads wait, with the times of w, in the report's
// order.
func OMPPlaces(w *OMPWaitTimes) []NamedNS {
	ps := []NamedNS{{"implicit barrier", w.BarrierImplicitNS}, {"explicit barrier", w.BarrierExplicitNS},
		{"taskwait", w.TaskwaitNS}, {"taskgroup end", w.TaskgroupNS}, {"other sync", w.OtherSyncNS}, {"outside constructs", w.OutsideSyncNS}}
	if w.ThreadSyncNS > 0 { // a program that starts threads itself
		ps = append(ps, NamedNS{"thread sync", w.ThreadSyncNS})
	}
	return ps
}

// OMPReasons names why threads had no work, with the times of w.
func OMPReasons(w *OMPWaitTimes) []NamedNS {
	return []NamedNS{{"a task was ready", w.TaskReadyNS}, {"tasks waited on dependences", w.DependencesNS}, {"no task", w.NoTaskNS}}
}

// NamedNS is a named time.
type NamedNS struct {
	Name string
	NS   int64
}

// ompKindTitle names a wait_states.openmp construct kind in words.
func ompKindTitle(kind string) string {
	switch kind {
	case "barrier_implicit":
		return "implicit barrier"
	case "barrier_explicit":
		return "explicit barrier"
	case "taskgroup":
		return "taskgroup end"
	case "other_sync":
		return "other sync"
	case "outside_sync":
		return "outside constructs"
	case "thread_join":
		return "thread join"
	case "cond_wait":
		return "condition wait"
	case "thread_barrier":
		return "thread barrier"
	}
	return kind
}

// waitsTitle names the OpenMP wait states: those of the program's own
// threads when it has no OpenMP.
func waitsTitle(t *TraceInfo) string {
	if t.NoOpenMP && t.UserThreads {
		return "Thread wait states"
	}
	return "OpenMP wait states"
}

func (p *printer) ompWaits(o *OMPWaits, opts TextOptions, title string) {
	p.line("")
	p.head(fmt.Sprintf("%s (%s of threads not working outside MPI: overhead + idleness − fork/join − sync runtime; each split is disjoint)", title, Dur(o.WaitingNS)))
	share := func(ns, of int64) string {
		if of <= 0 {
			return Pct(0)
		}
		return Pct(float64(ns) / float64(of))
	}
	line := func(title string, xs []NamedNS) {
		var parts []string
		for _, x := range xs {
			if x.NS > 0 {
				parts = append(parts, fmt.Sprintf("%s %s", x.Name, share(x.NS, o.WaitingNS)))
			}
		}
		if len(parts) > 0 {
			p.line("  %s: %s", title, strings.Join(parts, "   "))
		}
	}
	line("where", OMPPlaces(&o.OMPWaitTimes))
	line("why", OMPReasons(&o.OMPWaitTimes))
	for i, c := range o.Constructs {
		if i == opts.TopFindings || c.WaitingNS == 0 {
			break
		}
		name := ompKindTitle(c.Kind)
		if c.Construct != "" {
			name += " " + p.em(ShortCode(c.Construct))
		}
		if c.Region != "" {
			name += " in region " + ShortCode(c.Region)
		}
		why := OMPReasons(&OMPWaitTimes{TaskReadyNS: c.TaskReadyNS, DependencesNS: c.DependencesNS, NoTaskNS: c.NoTaskNS})
		top := why[0]
		for _, x := range why {
			if x.NS > top.NS {
				top = x
			}
		}
		if c.Count > 0 {
			p.line("  %s: %s in %d waits (%s: %s)", name, Dur(c.WaitingNS), c.Count, top.Name, share(top.NS, c.WaitingNS))
		} else {
			p.line("  %s: %s (%s: %s)", name, Dur(c.WaitingNS), top.Name, share(top.NS, c.WaitingNS))
		}
	}
	if len(o.Mutexes) > 0 {
		p.line("  mutexes (%s waiting to acquire, inside work):", Dur(o.MutexWaitNS))
	}
	for i, m := range o.Mutexes {
		if i == opts.TopFindings {
			break
		}
		name := m.Kind
		if m.Construct != "" {
			name += " " + p.em(ShortCode(m.Construct))
		}
		p.line("    %s: %s waiting in %d acquisitions (longest %s; %s while another thread held it), held %s", name, Dur(m.WaitNS), m.Acquisitions, Dur(m.MaxWaitNS), Dur(m.ContentionNS), Dur(m.HoldNS))
	}
}

// patternTitle names a wait_states pattern key in words.
func patternTitle(key string) string {
	switch key {
	case "wait_nxn":
		return "wait at N×N"
	case "wait_barrier":
		return "wait at barrier"
	case "wait_at_win_create":
		return "wait at window create"
	case "wait_at_win_free":
		return "wait at window free"
	}
	return strings.ReplaceAll(key, "_", " ")
}

func biggestGroups(gs []AnomalyGroup) []AnomalyGroup {
	out := append([]AnomalyGroup(nil), gs...)
	// Stable by size, so equal groups stay in time order.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Tasks > out[j-1].Tasks; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func where(g AnomalyGroup) string {
	switch {
	case g.Rank < 0:
		return fmt.Sprintf("%d threads of several ranks", g.Threads)
	case g.Thread < 0:
		return fmt.Sprintf("%d threads of rank %d", g.Threads, g.Rank)
	}
	return fmt.Sprintf("rank %d thread %d", g.Rank, g.Thread)
}

type printer struct {
	w      io.Writer
	color  bool
	origin int64 // times are printed relative to the trace's first event
}

const (
	ansiBold   = "\033[1m"
	ansiRed    = "\033[31m"
	ansiGreen  = "\033[32m"
	ansiYellow = "\033[33m"
	ansiReset  = "\033[0m"
)

func (p *printer) paint(code, s string) string {
	if !p.color {
		return s
	}
	return code + s + ansiReset
}

func (p *printer) head(s string) { fmt.Fprintln(p.w, p.paint(ansiBold, s)) }

func (p *printer) line(format string, args ...any) { fmt.Fprintf(p.w, format+"\n", args...) }

func (p *printer) warn(format string, args ...any) {
	fmt.Fprintln(p.w, p.paint(ansiYellow, fmt.Sprintf(format, args...)))
}

func (p *printer) bad(format string, args ...any) {
	fmt.Fprintln(p.w, p.paint(ansiRed, fmt.Sprintf(format, args...)))
}

func (p *printer) em(s string) string { return p.paint(ansiBold, s) }

// eff prints an efficiency with POP's traffic-light reading: ≥ 0.8 good,
// ≥ 0.6 fair, below poor.
func (p *printer) eff(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	switch {
	case v >= 0.8:
		return p.paint(ansiGreen, s)
	case v >= 0.6:
		return p.paint(ansiYellow, s)
	}
	return p.paint(ansiRed, s)
}

// Dur formats nanoseconds for people: 1.23 s, 45.6 ms, 789 µs.
func Dur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second || d <= -time.Second:
		return fmt.Sprintf("%.3g s", d.Seconds())
	case d >= time.Millisecond || d <= -time.Millisecond:
		return fmt.Sprintf("%.3g ms", float64(d)/1e6)
	case d >= time.Microsecond || d <= -time.Microsecond:
		return fmt.Sprintf("%.3g µs", float64(d)/1e3)
	}
	return fmt.Sprintf("%d ns", ns)
}

// Bytes formats a byte count for people.
func Bytes(n int64) string { return units.Bytes(n) }

// Pct formats a ratio as a percentage.
func Pct(r float64) string { return strings.TrimSpace(fmt.Sprintf("%5.1f%%", 100*r)) }

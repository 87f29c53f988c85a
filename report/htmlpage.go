package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/ptrace-dev/ptrace/internal/htmlw"
)

// writePage writes the page as the template it replaces (kept in
// htmltmpl_test.go, which checks the two agree) wrote it: each block below
// is one of its lines or sections, literal text as it was, values escaped
// as html/template escaped them.
func writePage(w io.Writer, pg *page) error {
	p := htmlw.New(w)
	r := pg.R
	t := &r.Trace
	p.S("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>ptrace report — ")
	p.E(t.Dir)
	p.S("</title>\n" + pageStyle + "</head>\n<body>\n<h1>ptrace report</h1>\n<p class=\"muted\">schema ")
	p.E(r.Schema)
	p.S(" · ")
	p.E(t.Dir)
	p.S("</p>\n<table class=\"facts\">\n<tr><td>processes</td><td>")
	p.I(int64(t.Processes))
	p.S(" on ")
	p.I(int64(t.Hosts))
	p.S(" hosts, ")
	p.I(int64(t.Threads))
	p.S(" threads</td></tr>\n<tr><td>events</td><td>")
	p.I(t.Events)
	p.S(" (")
	p.E(Bytes(t.Bytes))
	p.S(")</td></tr>\n<tr><td>span</td><td>")
	p.E(Dur(t.DurationNS))
	p.S("</td></tr>\n")
	if wi := t.Window; wi != nil {
		var what string
		switch wi.Bounds {
		case "mpi":
			what = ", MPI_Init → MPI_Finalize (start-up and shutdown not measured)"
		case "user":
			what = ", as asked"
		case "recorded":
			what = ", the longest stretch every process recorded (recording was switched off: see the warnings)"
		}
		if what != "" {
			p.S("<tr><td>window</td><td>")
			p.E(Dur(wi.DurationNS))
			p.S(what + "</td></tr>")
		}
	}
	p.S("\n")
	if t.Producer != "" {
		p.S("<tr><td>producer</td><td>")
		p.E(t.Producer)
		p.S("</td></tr>")
	}
	p.S("\n")
	if cs := r.ClockSync; cs != nil {
		p.S("<tr><td>clocks</td><td>")
		p.E(ClockSummary(cs))
		p.S("</td></tr>")
	}
	p.S("\n")
	for _, u := range t.Unavailable {
		if u == "source_lines" {
			p.S(`<tr><td class="warn">no lines</td><td class="warn">the program has no line table (compiled without -g): code locations are named function+offset; compile with -g for file:line</td></tr>`)
		}
	}
	p.S("\n")
	if t.Warnings != nil {
		p.S(`<tr><td class="warn">warnings</td><td class="warn">`)
		p.I(t.Warnings.Count)
		for _, s := range pg.Warnings {
			p.S("<br>")
			p.E(s)
		}
		p.S("</td></tr>")
	}
	p.S("\n</table>\n\n")
	if pg.NoThread {
		p.S(`<p class="warn" id="no-thread">no thread modelled: the trace has no thread whose time the analysis accounts (see the notes), so there is no time breakdown, POP efficiency or critical path</p>`)
	}
	p.S("\n")
	if b := r.Breakdown; b != nil {
		writeBreakdown(p, pg, b)
	}
	p.S("\n")
	writeFig(p, pg.Breakdown)
	p.S("\n\n")
	if pop := r.POP; pop != nil {
		writePOP(p, pop)
	}
	p.S("\n")
	if len(pg.POPRows) > 0 {
		p.S("\n<table id=\"pop-tree\">\n<tr><th class=\"l\">efficiency</th><th>value</th></tr>\n")
		for _, row := range pg.POPRows {
			p.S(`<tr><td class="l" style="`)
			p.E(indentCSS(row.Indent))
			p.S(`">`)
			p.E(row.Name)
			p.S(`</td><td style="`)
			p.E(row.Style)
			p.S(`">`)
			p.E(effText(row.Value))
			p.S("</td></tr>\n")
		}
		p.S("</table>\n")
	}
	p.S("\n")
	if len(pg.POPProcs) > 0 {
		writePOPProcs(p, pg)
	}
	p.S("\n\n")
	if cp := r.CriticalPath; cp != nil {
		writePath(p, cp)
	}
	p.S("\n")
	writeFig(p, pg.Path)
	p.S("\n")
	if g := r.Graph; g != nil && g.Tasks != 0 {
		p.S("<p>Task graph: ")
		p.I(g.Tasks)
		p.S(" tasks, ")
		p.I(g.Edges)
		p.S(" edges (")
		p.I(g.RemoteEdges)
		p.S(" remote), ")
		p.I(g.Roots)
		p.S(" roots, ")
		p.I(g.Leaves)
		p.S(" leaves. Root longest paths relative to the critical path: mean ")
		p.E(effText(g.RootPaths.Mean))
		p.S(", median ")
		p.E(effText(g.RootPaths.Median))
		p.S(", min ")
		p.E(effText(g.RootPaths.Min))
		p.S(", ")
		p.I(g.RootPaths.Within4Pct)
		p.S(" within 4%.</p>")
	}
	p.S("\n\n")
	if ts := r.Tasks; ts != nil {
		writeTasks(p, ts)
	}
	p.S("\n")
	writeFig(p, pg.Ready)
	p.S("\n")
	if len(pg.Histograms) > 0 {
		p.S("<h3>Task durations per construct</h3>\n<div class=\"plots\">")
		for i := range pg.Histograms {
			writeFig(p, &pg.Histograms[i])
		}
		p.S("</div>")
	}
	p.S("\n\n")
	if ws := r.WaitStates; ws != nil && (ws.Calls != 0 || ws.MPINS != 0) {
		writeWaits(p, ws)
	}
	p.S("\n")
	if len(pg.WaitHeat) > 0 {
		writeHeat(p, pg)
	}
	p.S("\n\n")
	if om := pg.OMPWaits; om != nil {
		writeOMPWaits(p, om)
	}
	p.S("\n\n")
	if a := r.Anomalies; a != nil {
		writeAnomalyModels(p, a)
	}
	p.S("\n")
	if len(pg.Anomalies) > 0 {
		writeAnomalies(p, pg)
	}
	p.S("\n\n")
	if cs := r.ClockSync; cs != nil && len(cs.PerProcess) > 0 {
		writeClocks(p, cs)
	}
	p.S("\n<p class=\"muted\">Times in tables are relative to the first event of the trace; all figures are in the JSON report.</p>\n</body>\n</html>\n")
	return p.Flush()
}

const pageStyle = `<style>
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; }
td.l, th.l { text-align: left; }
.facts td { text-align: left; border: none; padding: 0.1em 0.8em 0.1em 0; }
.plots { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0.5em 0; }
.warn { color: #a15c00; }
.problem { color: #b71c1c; }
.muted { color: #777; font-size: 0.85em; }
.key span { display: inline-block; padding: 0 0.5em; margin-right: 0.4em; }
</style>
`

// effText is an efficiency as its cell shows it.
func effText(v float64) string { return fmt.Sprintf("%.2f", v) }

// indentCSS indents a row of the efficiency tree by its depth.
func indentCSS(n int) string { return fmt.Sprintf("padding-left: %.1fem", 0.3+1.5*float64(n)) }

// g3 is a number to three significant digits.
func g3(v float64) string { return fmt.Sprintf("%.3g", v) }

func writeFig(p *htmlw.Writer, f *plotFig) {
	if f == nil {
		return
	}
	p.S(`<figure id="`)
	p.E(f.ID)
	p.S(`">`)
	p.S(f.SVG)
	p.S("</figure>")
}

func writeBreakdown(p *htmlw.Writer, pg *page, b *Breakdown) {
	p.S("\n<h2>Time breakdown</h2>\n<p class=\"key\"><span style=\"background:#4caf50\">work ")
	p.E(Pct(b.WorkRatio))
	p.S(`</span><span style="background:#2196f3;color:#fff">MPI `)
	p.E(Pct(b.MPIRatio))
	p.S(`</span><span style="background:#ff9800">overhead `)
	p.E(Pct(b.OverheadRatio))
	p.S(`</span><span style="background:#bdbdbd">idleness `)
	p.E(Pct(b.IdlenessRatio))
	p.S(`</span> of `)
	p.E(Dur(b.ThreadTimeNS))
	p.S(" thread time</p>\n")
	if pg.R.Trace.NoOpenMP {
		p.S(`<p class="muted">no OpenMP in the trace: Tallent's class and the OpenMP efficiencies do not apply</p>`)
	} else if b.Class != "" {
		p.S("<p>Tallent class <b>")
		p.E(b.Class)
		p.S("</b> (")
		p.E(ClassBasis(b))
		p.S("): ")
		p.E(pg.Class)
		p.S("</p>")
	}
	p.S("\n")
	if b.Advice != nil {
		p.S(`<p id="advice">`)
		p.E(AdviceLine(b.Advice))
		p.S("</p>")
	} else if pg.Interp != "" {
		p.S("<p>")
		p.E(pg.Interp)
		p.S("</p>")
	}
	p.S("\n")
	if f := b.BufferFlushes; f != nil {
		p.S(`<p class="warn" id="buffer-flushes">`)
		p.E(FlushLine(f, b.ThreadTimeNS, len(b.PerProcess)))
		p.S("</p>")
	}
	p.S("\n")
	if b.ForkJoinNS != 0 || b.IdleDuringMPINS != 0 {
		p.S(`<p class="muted" id="raw-components">inside overhead and idleness: `)
		p.E(RawLine(b.ForkJoinNS, b.IdleDuringMPINS, b.IdleSerialDuringMPINS))
		p.S("</p>")
	}
	p.S("\n")
	if b.SyncRuntimeAsWork {
		p.S(`<p class="muted" id="sync-runtime">runtime code inside barriers, taskwaits and taskgroups (outside their waits) is booked as work, as in POT (--sync-runtime-as-work)</p>`)
	} else if b.SyncRuntimeNS != 0 {
		p.S(`<p class="muted" id="sync-runtime">overhead includes `)
		p.E(Dur(b.SyncRuntimeNS))
		p.S(` of runtime code inside barriers, taskwaits and taskgroups, outside their waits</p>`)
	}
	p.S("\n")
}

func writePOP(p *htmlw.Writer, pop *POP) {
	p.S("\n<h2>POP efficiencies</h2>\n<p class=\"muted\">TALP's hybrid model: ")
	p.I(int64(pop.Processes))
	p.S(" processes × ")
	p.F(pop.ThreadsPerProcess)
	p.S(" threads, elapsed ")
	p.E(Dur(pop.ElapsedNS))
	p.S("; per thread useful ")
	p.E(Dur(pop.UsefulNS))
	p.S(", MPI ")
	p.E(Dur(pop.MPINS))
	p.S(", idle ")
	p.E(Dur(pop.IdleNS))
	p.S(" (serial ")
	p.E(Dur(pop.IdleSerialNS))
	p.S(", load balance ")
	p.E(Dur(pop.IdleLBNS))
	p.S(", scheduling ")
	p.E(Dur(pop.IdleSchedNS))
	p.S(").")
	if pop.ForkJoinNS != 0 || pop.IdleDuringMPINS != 0 {
		p.S(" Per thread, inside idle: ")
		p.E(RawLine(pop.ForkJoinNS, pop.IdleDuringMPINS, pop.IdleSerialDuringMPINS))
		p.S(".")
	}
	p.S("</p>\n")
	if len(pop.ProcessesWithoutEvents) > 0 {
		p.S(`<p class="warn" id="pop-without-events">`)
		p.E(WithoutEventsLine(pop.ProcessesWithoutEvents))
		p.S("</p>")
	}
	p.S("\n")
}

func writePOPProcs(p *htmlw.Writer, pg *page) {
	p.S("\n<table id=\"pop-per-process\">\n<tr><th>rank</th><th>threads</th><th>elapsed</th><th>useful</th>")
	if pg.POPOpenMP {
		p.S("<th>fork/join</th><th>idle during MPI</th><th>OpenMP parallel</th><th>serialization</th><th>load balance</th><th>scheduling</th>")
	}
	p.S("</tr>\n")
	for i := range pg.POPProcs {
		q := &pg.POPProcs[i]
		p.S("<tr><td>")
		p.I(int64(q.Rank))
		p.S("</td><td>")
		p.I(int64(q.Threads))
		p.S("</td><td>")
		p.E(Dur(q.ElapsedNS))
		p.S("</td><td>")
		p.E(Dur(q.UsefulNS))
		if !pg.POPOpenMP {
			p.S("</td></tr>\n")
			continue
		}
		p.S("</td><td>")
		p.E(Dur(q.ForkJoinNS))
		p.S("</td><td>")
		p.E(Dur(q.IdleDuringMPINS))
		p.S(" (serial ")
		p.E(Dur(q.IdleSerialDuringMPINS))
		p.S(")</td>")
		for _, v := range []float64{q.OMPParallelEfficiency, q.OMPSerializationEfficiency, q.OMPLoadBalance, q.OMPSchedulingEfficiency} {
			p.S(`<td style="`)
			p.E(effStyle(v))
			p.S(`">`)
			p.E(effText(v))
			p.S("</td>")
		}
		p.S("</tr>\n")
	}
	p.S("</table>\n")
	if pg.POPMore != 0 {
		p.S(`<p class="muted">… `)
		p.I(int64(pg.POPMore))
		p.S(" more processes in the CSV tables.</p>")
	}
	p.S("\n")
}

func writePath(p *htmlw.Writer, cp *CriticalPath) {
	p.S("\n<h2>Critical path</h2>\n<p>")
	p.E(Dur(cp.LengthNS))
	p.S(" = ")
	p.E(Pct(cp.ShareOfRunTime))
	p.S(" of run time ")
	p.E(Dur(cp.RunTimeNS))
	p.S("; work T1 ")
	p.E(Dur(cp.WorkNS))
	p.S(", parallelism ")
	p.E(g3(cp.Parallelism))
	p.S("; ")
	p.I(cp.Nodes)
	p.S(" nodes, ")
	p.I(cp.RankCrossings)
	p.S(" rank crossings.</p>\n")
	if op := cp.OffPath; op.Shown() {
		p.S("<p>Not on the path ")
		p.E(Dur(op.NS))
		p.S(" (")
		p.E(Pct(op.Share))
		p.S(" of run time): ")
		p.E(strings.Join(op.Parts(), ", "))
		p.S(".</p>\n")
	}
	if len(cp.ByKind) > 0 {
		p.S(`<table><tr><th class="l">by kind</th><th>time</th><th>share</th><th>nodes</th></tr>`)
		for _, k := range cp.ByKind {
			p.S(`<tr><td class="l">`)
			p.E(k.Name)
			p.S("</td><td>")
			p.E(Dur(k.NS))
			p.S("</td><td>")
			p.E(Pct(k.Share))
			p.S("</td><td>")
			p.I(k.Nodes)
			p.S("</td></tr>")
		}
		p.S("</table>")
	}
	p.S("\n")
}

func writeTasks(p *htmlw.Writer, ts *Tasks) {
	p.S("\n<h2>Tasks</h2>\n<p>")
	if ts.Count != 0 {
		p.I(ts.Count)
		p.S(" explicit tasks.")
	} else {
		p.S("No explicit tasks: the program's OpenMP, if any, is parallel regions and worksharing.")
	}
	p.S("</p>\n")
	if len(ts.Constructs) > 0 {
		p.S("<table id=\"constructs\"><tr><th class=\"l\">construct</th><th class=\"l\">kind</th><th>count</th><th>sum</th><th>mean</th><th>min</th><th>max</th><th>share</th><th>creation</th><th>per thread</th></tr>\n")
		for i := range ts.Constructs {
			c := &ts.Constructs[i]
			p.S(`<tr><td class="l">`)
			p.S(codeHTML(c.Name))
			p.S(`</td><td class="l">`)
			p.E(c.Kind)
			p.S("</td><td>")
			p.I(c.Count)
			for _, ns := range []int64{c.SumNS, c.MeanNS, c.MinNS, c.MaxNS} {
				p.S("</td><td>")
				p.E(Dur(ns))
			}
			p.S("</td><td>")
			p.E(Pct(c.Share))
			p.S("</td><td>")
			p.E(Dur(c.CreateNS))
			p.S("</td><td>")
			p.E(g3(c.TasksPerThread))
			p.S("</td></tr>\n")
		}
		p.S("</table>")
	}
	p.S("\n")
	if len(ts.Findings) > 0 {
		p.S("<ul>")
		for _, f := range ts.Findings {
			p.S(`<li class="`)
			p.E(f.Severity)
			p.S(`"><b>`)
			p.E(f.Severity)
			p.S("</b> ")
			p.E(f.Topic)
			p.S(": ")
			p.E(f.Message)
			p.S("</li>")
		}
		p.S("</ul>")
	}
	p.S("\n")
}

func writeWaits(p *htmlw.Writer, ws *WaitStates) {
	p.S("\n<h2>Wait states</h2>\n<p>")
	p.E(Dur(ws.MPINS))
	p.S(" of MPI time in ")
	p.I(ws.Calls)
	p.S(" calls; each call counts in one pattern at most, so the patterns and transfer/other add up to the MPI time.</p>\n")
	if len(ws.Delays) > 0 {
		p.S("<ul>")
		for i := range ws.Delays {
			d := &ws.Delays[i]
			if d.NS > 0 || d.LongTermNS > 0 {
				p.S("<li>rank ")
				p.I(int64(d.Rank))
				p.S("'s <b>")
				p.S(codeHTML(d.Code))
				p.S("</b>")
				if d.Site != "" {
					p.S(" before ")
					p.S(codeHTML(d.Site))
				}
				p.S(" costs ")
				p.E(Pct(d.Share))
				p.S(" of all waiting (its excess time before the calls waited for)")
				if d.LongTermNS > 0 {
					p.S(", and ")
					p.E(Dur(d.LongTermNS))
					p.S(" more through the waits it propagated")
				}
				p.S("</li>")
			}
		}
		p.S("</ul>")
	}
	p.S("\n")
	if ProgressNotable(&ws.WaitTimes) {
		p.S("<p>")
		p.E(ProgressHint(&ws.WaitTimes))
		p.S("</p>")
	}
	win, ep, lk, pr := ws.Windows(), ws.Epochs(), ws.Locks(), ws.Progress()
	p.S("\n<table id=\"wait-sites\"><tr><th class=\"l\">call site</th><th>MPI time</th><th>calls</th><th>late sender</th><th>late receiver</th><th>wait at N×N</th><th>wait at barrier</th><th>late broadcast</th><th>early reduce</th>")
	if win {
		p.S("<th>wait at fence</th><th>wait at window create</th><th>wait at window free</th>")
	}
	if ep {
		p.S("<th>late post</th><th>early wait</th>")
	}
	if lk {
		p.S("<th>lock contention</th>")
	}
	if pr {
		p.S("<th>wait for progress</th>")
	}
	p.S("<th>transfer/other</th></tr>\n")
	for i := range ws.CallSites {
		s := &ws.CallSites[i]
		p.S(`<tr><td class="l">`)
		p.E(s.Func)
		if s.Site != "" {
			p.S(" at ")
			p.S(codeHTML(s.Site))
		}
		if s.Region != "" {
			p.S(" in ")
			p.S(codeHTML(s.Region))
		}
		p.S("</td><td>")
		p.E(Dur(s.MPINS))
		p.S("</td><td>")
		p.I(s.Calls)
		p.S("</td>")
		durCells(p, s.LateSenderNS, s.LateReceiverNS, s.WaitNxNNS, s.WaitBarrierNS, s.LateBroadcastNS, s.EarlyReduceNS)
		if win {
			durCells(p, s.WaitAtFenceNS, s.WaitAtWinCreateNS, s.WaitAtWinFreeNS)
		}
		if ep {
			durCells(p, s.LatePostNS, s.EarlyWaitNS)
		}
		if lk {
			durCells(p, s.LockContentionNS)
		}
		if pr {
			durCells(p, s.WaitForProgressNS)
		}
		durCells(p, s.OtherNS)
		p.S("</tr>\n")
	}
	p.S("</table>\n")
}

// durCells writes a table cell of each duration.
func durCells(p *htmlw.Writer, ns ...int64) {
	for _, v := range ns {
		p.S("<td>")
		p.E(Dur(v))
		p.S("</td>")
	}
}

func writeHeat(p *htmlw.Writer, pg *page) {
	p.S(`<table id="wait-heat"><tr><th>rank</th>`)
	for _, c := range pg.WaitCols {
		p.S("<th>")
		p.E(c)
		p.S("</th>")
	}
	p.S("</tr>\n")
	for _, row := range pg.WaitHeat {
		p.S("<tr><td>")
		p.I(int64(row.Rank))
		p.S("</td>")
		for _, c := range row.Cells {
			p.S(`<td style="`)
			p.E(c.Style)
			p.S(`" title="`)
			p.E(c.Title)
			p.S(`">`)
			p.E(c.Text)
			p.S("</td>")
		}
		p.S("</tr>\n")
	}
	p.S("</table>\n")
	if pg.WaitMore > 0 {
		p.S(`<p class="muted">… `)
		p.I(int64(pg.WaitMore))
		p.S(" more processes in the CSV tables.</p>")
	}
}

func writeOMPWaits(p *htmlw.Writer, om *ompPage) {
	p.S("\n<h2>")
	p.E(om.Title)
	p.S("</h2>\n<p>")
	p.E(Dur(om.WaitingNS))
	p.S(" of thread time neither working nor in MPI (the breakdown's overhead + idleness − fork/join − sync runtime), split by where the threads waited and, separately, by why they had no work; each split adds up to the whole.</p>\n<table id=\"omp-wait-split\"><tr><th class=\"l\">where</th><th>time</th><th>share</th></tr>\n")
	split := func(rows []NamedNS) {
		for _, n := range rows {
			if n.NS > 0 {
				p.S(`<tr><td class="l">`)
				p.E(n.Name)
				p.S("</td><td>")
				p.E(Dur(n.NS))
				p.S("</td><td>")
				r := 0.0
				if om.WaitingNS > 0 {
					r = float64(n.NS) / float64(om.WaitingNS)
				}
				p.E(Pct(r))
				p.S("</td></tr>")
			}
		}
	}
	split(om.Places)
	p.S("\n<tr><th class=\"l\">why</th><th></th><th></th></tr>\n")
	split(om.Reasons)
	p.S("</table>\n<table id=\"omp-wait-constructs\"><tr><th class=\"l\">where</th><th class=\"l\">construct</th><th class=\"l\">region</th><th>waits</th><th>time</th><th>task ready</th><th>on dependences</th><th>no task</th></tr>\n")
	for i := range om.Constructs {
		c := &om.Constructs[i]
		p.S(`<tr><td class="l">`)
		p.E(c.Kind)
		p.S(`</td><td class="l">`)
		p.S(codeHTML(c.Construct))
		p.S(`</td><td class="l">`)
		p.S(codeHTML(c.Region))
		p.S("</td><td>")
		p.I(c.Count)
		p.S("</td>")
		durCells(p, c.WaitingNS, c.TaskReadyNS, c.DependencesNS, c.NoTaskNS)
		p.S("</tr>\n")
	}
	p.S("</table>\n")
	if om.More > 0 {
		p.S(`<p class="muted">… `)
		p.I(int64(om.More))
		p.S(" more constructs in the CSV tables.</p>")
	}
	p.S("\n")
	if len(om.Mutexes) > 0 {
		p.S("<p>Waiting to acquire locks and critical sections: ")
		p.E(Dur(om.MutexWaitNS))
		p.S(", inside the breakdown's work (the task runs while it waits).</p>\n<table id=\"omp-mutexes\"><tr><th class=\"l\">mutex</th><th class=\"l\">call site</th><th>acquisitions</th><th>waiting</th><th title=\"from the request to the previous holder's release (Scalasca's contention); the rest of the wait is the hand-over\">while held by another</th><th>longest wait</th><th>held</th></tr>\n")
		for i := range om.Mutexes {
			m := &om.Mutexes[i]
			p.S(`<tr><td class="l">`)
			p.E(m.Kind)
			p.S(`</td><td class="l">`)
			p.S(codeHTML(m.Construct))
			p.S("</td><td>")
			p.I(m.Acquisitions)
			p.S("</td>")
			durCells(p, m.WaitNS, m.ContentionNS, m.MaxWaitNS, m.HoldNS)
			p.S("</tr>\n")
		}
		p.S("</table>")
	}
}

func writeAnomalyModels(p *htmlw.Writer, a *Anomalies) {
	p.S("\n<h2>Anomalies</h2>\n<p>")
	p.I(a.Found)
	p.S(" of ")
	p.I(a.Tested)
	p.S(" tasks above their construct's prediction bound (α = ")
	p.F(a.Alpha)
	p.S(", Bonferroni-corrected), in ")
	p.I(int64(len(a.Groups)))
	p.S(` groups. <span class="muted">`)
	p.E(a.Model)
	p.S("</span></p>\n")
	if len(a.Models) > 0 {
		p.S("<table><tr><th class=\"l\">construct</th><th class=\"l\">model</th><th>tasks</th><th>slope</th><th>scale</th><th>bound</th><th>found</th></tr>\n")
		for i := range a.Models {
			m := &a.Models[i]
			p.S(`<tr><td class="l">`)
			p.S(codeHTML(m.Construct))
			p.S(`</td><td class="l">`)
			p.E(m.Kind)
			if m.Attribute != "" {
				p.S(" on ")
				p.E(m.Attribute)
			}
			p.S("</td><td>")
			p.I(m.Tasks)
			p.S("</td><td>")
			p.E(g3(m.Slope))
			p.S("</td><td>")
			p.E(g3(m.Scale))
			p.S("</td><td>×")
			p.E(g3(m.BoundFactor))
			p.S("</td><td>")
			p.I(m.Found)
			p.S("</td></tr>")
		}
		p.S("</table>")
	}
	p.S("\n")
}

func writeAnomalies(p *htmlw.Writer, pg *page) {
	p.S("<table id=\"anomalies\"><tr><th>group</th><th>rank</th><th>thread</th><th>task</th><th class=\"l\">construct</th><th>start</th><th>duration</th><th>predicted</th><th>score</th></tr>\n")
	for i := range pg.Anomalies {
		a := &pg.Anomalies[i]
		p.S("<tr><td>")
		p.I(int64(a.Group))
		p.S("</td><td>")
		p.I(int64(a.Rank))
		p.S("</td><td>")
		p.I(int64(a.Thread))
		p.S("</td><td>")
		p.E(fmt.Sprintf("%#x", a.Task))
		p.S(`</td><td class="l">`)
		p.S(codeHTML(a.Construct))
		p.S("</td>")
		durCells(p, a.StartNS-pg.Origin, a.DurNS, a.PredictedNS)
		p.S("<td>")
		p.E(fmt.Sprintf("%.1f", a.Score))
		p.S("</td></tr>\n")
	}
	p.S("</table>\n")
	if pg.AnomMore > 0 {
		p.S(`<p class="muted">… `)
		p.I(pg.AnomMore)
		p.S(" more in the CSV tables.</p>")
	}
}

func writeClocks(p *htmlw.Writer, cs *ClockSync) {
	p.S("\n<h2>Clock synchronisation</h2>\n<table><tr><th>rank</th><th>offset at init</th><th>offset at finalize</th><th>drift (ppm)</th><th>CLC max correction</th><th>violations recorded</th><th>after offsets</th></tr>\n")
	for i := range cs.PerProcess {
		c := &cs.PerProcess[i]
		p.S("<tr><td>")
		p.I(int64(c.Rank))
		p.S("</td>")
		durCells(p, c.OffsetInitNS, c.OffsetFinalNS)
		p.S("<td>")
		p.E(g3(c.DriftPPM))
		p.S("</td>")
		durCells(p, c.MaxCorrectionNS)
		p.S("<td>")
		p.I(c.Violations)
		p.S("</td><td>")
		p.I(c.ViolationsInterpolated)
		p.S("</td></tr>\n")
	}
	p.S("</table>")
}

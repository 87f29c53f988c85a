package compare

import (
	"fmt"
	"io"

	"github.com/ptrace-dev/ptrace/internal/htmlw"
	"github.com/ptrace-dev/ptrace/report"
)

// writePage writes the page as the template it replaces (kept in
// htmltmpl_test.go, which checks the two agree) wrote it: literal text as
// it was, values escaped as html/template escaped them.
func writePage(w io.Writer, pg *htmlPage) error {
	p := htmlw.New(w)
	r := pg.R
	weak := r.Scaling == "weak"
	p.S("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>ptrace compare — ")
	p.I(int64(len(r.Runs)))
	p.S(" runs</title>\n" + pageStyle + "</head>\n<body>\n<h1>ptrace compare</h1>\n<p class=\"muted\">schema ")
	p.E(r.Schema)
	p.S(" · ")
	p.E(r.Scaling)
	p.S(" scaling · reference ")
	p.E(r.Reference)
	p.S("</p>\n<table id=\"runs\"><tr><th>#</th><th class=\"l\">run</th><th>processes</th><th>cores</th>")
	if weak {
		p.S("<th>problem size</th>")
	}
	p.S("<th>elapsed</th><th>speedup</th></tr>\n")
	for i := range r.Runs {
		run := &r.Runs[i]
		p.S("<tr><td>")
		p.I(int64(i + 1))
		p.S(`</td><td class="l">`)
		p.E(run.Name)
		p.S("</td><td>")
		p.I(int64(run.Processes))
		p.S("</td><td>")
		p.I(int64(run.Cores))
		p.S("</td>")
		if weak {
			p.S("<td>")
			p.F(run.ProblemSize)
			p.S("</td>")
		}
		p.S("<td>")
		p.E(report.Dur(run.ElapsedNS))
		p.S("</td><td>")
		p.E(g3(run.Speedup))
		p.S("</td></tr>\n")
	}
	p.S("</table>\n")
	if len(r.Problems) > 0 {
		p.S(`<ul id="problems">`)
		for _, q := range r.Problems {
			p.S(`<li class="warn"><b>`)
			p.E(q.Run)
			p.S("</b>: ")
			p.E(q.Message)
			p.S("</li>")
		}
		p.S("</ul>")
	}
	p.S("\n\n<h2>POP scaling</h2>\n<p>Global efficiency = parallel efficiency × computation scalability; computation scalability compares useful time summed over all threads against the reference")
	if weak {
		p.S(", per unit of problem size")
	}
	p.S(`. <span class="muted">`)
	p.E(r.Note)
	p.S(".</span></p>\n<table id=\"heat\"><tr><th class=\"l\">efficiency</th>")
	for i := range r.Runs {
		p.S("<th>#")
		p.I(int64(i + 1))
		p.S("<br>")
		p.E(plural(r.Runs[i].Cores, "core"))
		p.S("</th>")
	}
	p.S("</tr>\n")
	for _, row := range pg.Heat {
		p.S(`<tr><td class="l" style="`)
		p.E(row.Indent)
		p.S(`">`)
		p.E(row.Name)
		p.S("</td>")
		for _, c := range row.Cells {
			p.S(`<td style="`)
			p.E(c.Style)
			p.S(`">`)
			p.E(fmt.Sprintf("%.2f", c.Value))
			p.S("</td>")
		}
		p.S("</tr>\n")
	}
	p.S("</table>\n")
	writeFig(p, pg.Lines)
	p.S("\n\n")
	if len(r.Constructs) > 0 {
		writeInflation(p, pg)
	}
	p.S("\n")
	writeFig(p, pg.Bars)
	p.S("\n\n<h2>Bounds</h2>\n<p class=\"muted\">T1 work, T∞ span, P cores; a greedy scheduler reaches a speedup between T1 / (T1/P + burdened span) and min(P, T1/T∞); the burdened span adds the measured mean overhead per task for every task on the critical path.</p>\n<table id=\"bounds\"><tr><th>#</th><th>P</th><th>T1</th><th>T∞</th><th>parallelism</th><th>T1/P</th><th>burdened T∞</th><th>speedup range</th><th>measured</th><th>× bound</th></tr>\n")
	for i := range r.Runs {
		if b := r.Runs[i].Bounds; b != nil {
			p.S("<tr><td>")
			p.I(int64(i + 1))
			p.S("</td><td>")
			p.I(int64(b.Cores))
			p.S("</td><td>")
			p.E(report.Dur(b.WorkNS))
			p.S("</td><td>")
			p.E(report.Dur(b.SpanNS))
			p.S("</td><td>")
			p.E(g3(b.Parallelism))
			p.S("</td><td>")
			p.E(report.Dur(b.AreaBoundNS))
			p.S("</td><td>")
			p.E(report.Dur(b.BurdenedSpanNS))
			p.S("</td><td>")
			p.E(g3(b.SpeedupMin))
			p.S("–")
			p.E(g3(b.SpeedupMax))
			p.S("</td><td>")
			p.E(report.Dur(b.MeasuredNS))
			p.S("</td><td>")
			p.E(fmt.Sprintf("%.2f", b.Distance))
			p.S("</td></tr>")
		}
		p.S("\n")
	}
	p.S("</table>\n<ul>")
	for i := range r.Runs {
		if b := r.Runs[i].Bounds; b != nil {
			p.S("<li>#")
			p.I(int64(i + 1))
			p.S(": ")
			p.E(b.Text)
			p.S("</li>")
		}
	}
	p.S("</ul>\n\n")
	if len(r.Changes) > 0 {
		p.S("<h2>What changed</h2>\n<ul id=\"changes\">")
		for _, c := range r.Changes {
			p.S("<li>")
			p.E(c.Text)
			p.S("</li>")
		}
		p.S("</ul>")
	}
	p.S("\n\n")
	if f := pg.Ready; f != nil {
		p.S("<h2>Ready tasks</h2>\n<p>#")
		p.I(int64(pg.ReadyIA))
		p.S(" ")
		p.E(pg.ReadyA)
		p.S(" and #")
		p.I(int64(pg.ReadyIB))
		p.S(" ")
		p.E(pg.ReadyB)
		p.S(", each from its own start.</p>\n")
		writeFig(p, f)
	}
	p.S("\n<p class=\"muted\">All figures are in the JSON output (ptrace compare --json).</p>\n</body>\n</html>\n")
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
.plots { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0.5em 0; }
.warn { color: #a15c00; }
.muted { color: #777; font-size: 0.85em; }
</style>
`

func g3(v float64) string { return fmt.Sprintf("%.3g", v) }

func writeFig(p *htmlw.Writer, f *fig) {
	if f == nil {
		return
	}
	p.S(`<figure id="`)
	p.E(f.ID)
	p.S(`">`)
	p.S(f.SVG)
	p.S("</figure>")
}

func writeInflation(p *htmlw.Writer, pg *htmlPage) {
	r := pg.R
	p.S("\n<h2>Work-time inflation per construct</h2>\n<p>Total task time of each construct against the reference's (×), and its mean task duration.</p>\n<table id=\"inflation\"><tr><th class=\"l\">construct</th>")
	for i := range r.Runs {
		p.S("<th>#")
		p.I(int64(i + 1))
		p.S("</th>")
	}
	p.S("</tr>\n")
	for i := range pg.TopConstructs {
		c := &pg.TopConstructs[i]
		p.S(`<tr><td class="l">`)
		p.E(c.Name)
		p.S("</td>")
		for _, cr := range c.Runs {
			p.S("<td>")
			if cr.Missing {
				p.S("—")
			} else {
				p.S("×")
				p.E(fmt.Sprintf("%.2f", cr.Inflation))
				p.S(" (")
				p.E(report.Dur(cr.MeanNS))
				p.S(")")
			}
			p.S("</td>")
		}
		p.S("</tr>\n")
	}
	p.S("</table>\n")
	if pg.MoreConstructs != 0 {
		p.S(`<p class="muted">… `)
		p.I(int64(pg.MoreConstructs))
		p.S(" more constructs in the JSON and CSV output.</p>")
	}
	p.S("\n<ul>")
	for i := range r.Runs {
		run := &r.Runs[i]
		if len(run.MostInflated) == 0 {
			continue
		}
		p.S("<li>#")
		p.I(int64(i + 1))
		p.S(" lost ")
		p.E(report.Dur(run.LostWorkNS))
		p.S(" of task time: ")
		for j, m := range run.MostInflated {
			if j != 0 {
				p.S("; ")
			}
			p.E(m.Construct)
			p.S(" +")
			p.E(report.Dur(m.ExtraNS))
			p.S(" (×")
			p.E(fmt.Sprintf("%.2f", m.Inflation))
			p.S(", ")
			p.E(report.Pct(m.ShareOfLost))
			p.S(")")
		}
		p.S("</li>")
	}
	p.S("</ul>\n")
}

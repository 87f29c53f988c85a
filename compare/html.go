package compare

import (
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"sync"

	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/report/svgplot"
)

// maxBarConstructs bounds the constructs in the inflation bar chart.
const maxBarConstructs = 8

type fig struct {
	ID  string
	SVG template.HTML
}

type heatCell struct {
	Value float64
	Style template.CSS
}

type heatRow struct {
	Name   string
	Indent template.CSS
	Cells  []heatCell
}

type htmlPage struct {
	R                  *Result
	Heat               []heatRow
	Lines, Bars, Ready *fig
	ReadyA, ReadyB     string
	ReadyIA, ReadyIB   int
	TopConstructs      []ConstructCmp
	MoreConstructs     int
}

// WriteHTML writes the comparison as one self-contained HTML page (inline
// CSS and SVG, no script), like analyze --html: efficiency against cores,
// the heat table of factors × runs in POP's colours, inflation bars per
// construct, and the ready-task series of two runs overlaid (the
// reference and the run with the most cores).
func WriteHTML(w io.Writer, r *Result) error {
	pg := &htmlPage{R: r}
	for _, f := range FactorTree {
		row := heatRow{Name: f.Label, Indent: template.CSS(fmt.Sprintf("padding-left: %.1fem", 0.3+1.5*float64(f.Depth)))}
		for i := range r.Runs {
			v := f.Get(&r.Runs[i].Efficiencies)
			row.Cells = append(row.Cells, heatCell{Value: v, Style: report.EffStyle(v)})
		}
		pg.Heat = append(pg.Heat, row)
	}
	pg.TopConstructs = r.Constructs
	if len(pg.TopConstructs) > 3*maxBarConstructs {
		pg.MoreConstructs = len(pg.TopConstructs) - 3*maxBarConstructs
		pg.TopConstructs = pg.TopConstructs[:3*maxBarConstructs]
	}
	if len(r.Runs) > 1 {
		pg.Lines = svgFig("plot-efficiency", effPlot(r), 560, 340)
		if len(r.Constructs) > 0 {
			pg.Bars = svgFig("plot-inflation", barPlot(r), 560, 320)
		}
		a, b := refIndex(r), len(r.Runs)-1
		if a == b {
			b = 0
		}
		if ra, rb := r.Runs[a].Ready, r.Runs[b].Ready; ra != nil && rb != nil && len(ra.Values) > 0 && len(rb.Values) > 0 {
			pg.Ready = svgFig("plot-ready", readyPlot(r, a, b), 560, 300)
			pg.ReadyA, pg.ReadyB = r.Runs[a].Name, r.Runs[b].Name
			pg.ReadyIA, pg.ReadyIB = a+1, b+1
		}
	}
	return pageTmpl().Execute(w, pg)
}

func refIndex(r *Result) int {
	for i, run := range r.Runs {
		if run.Name == r.Reference {
			return i
		}
	}
	return 0
}

func svgFig(id string, p *svgplot.Plot, w, h float64) *fig {
	return &fig{ID: id, SVG: report.SVG(p, w, h)}
}

// effPlot draws every factor against the runs' cores, one line each.
func effPlot(r *Result) *svgplot.Plot {
	p := svgplot.New("Efficiency against cores", "cores", "efficiency")
	p.LegendLeft, p.LegendBottom = true, true
	for k, f := range FactorTree {
		l := &svgplot.Line{X: make([]float64, len(r.Runs)), Y: make([]float64, len(r.Runs)),
			Color: svgplot.Color(k), Width: 1.5 - 0.25*float64(f.Depth), Dashes: svgplot.Dashes(f.Depth), Shape: svgplot.Shapes(k)}
		finite := true
		for i := range r.Runs {
			l.X[i] = float64(r.Runs[i].Cores)
			l.Y[i] = f.Get(&r.Runs[i].Efficiencies)
			finite = finite && !math.IsNaN(l.Y[i]) && !math.IsInf(l.Y[i], 0)
		}
		if !finite {
			continue // a NaN or Inf: leave the factor out of the plot
		}
		p.Add(l)
		p.Legend(f.Label, svgplot.Key{Color: l.Color, Width: l.Width, Dashes: l.Dashes, Shape: l.Shape})
	}
	p.Y.Min = 0
	p.Y.Include = []float64{1.05}
	return p
}

// barPlot groups, per construct, one bar per run: its inflation against
// the reference.
func barPlot(r *Result) *svgplot.Plot {
	p := svgplot.New("Work-time inflation per construct", "construct", "task time / reference's")
	cons := r.Constructs
	if len(cons) > maxBarConstructs {
		cons = cons[:maxBarConstructs]
	}
	n := len(r.Runs)
	width := math.Max(2, math.Min(18, 420/float64(len(cons)*n)))
	for i := range r.Runs {
		vals := make([]float64, len(cons))
		for j, c := range cons {
			vals[j] = c.Runs[i].Inflation
		}
		bar := &svgplot.Bars{Values: vals, Width: width, Offset: (float64(i) - float64(n-1)/2) * width, Color: svgplot.Color(i)}
		p.Add(bar)
		p.Legend(fmt.Sprintf("#%d (%s)", i+1, plural(r.Runs[i].Cores, "core")), svgplot.Key{Color: bar.Color, Box: true})
	}
	labels := make([]string, len(cons))
	for j, c := range cons {
		labels[j] = clip(c.Name, 24)
	}
	p.NominalX(labels...)
	p.Y.Min = 0
	p.Add(&svgplot.Line{X: []float64{-0.5, float64(len(cons)) - 0.5}, Y: []float64{1, 1}, Color: color.RGBA{A: 255}, Width: 1, Dashes: []float64{3, 3}})
	return p
}

// readyPlot overlays two runs' ready-task series, each from its own start.
func readyPlot(r *Result, a, b int) *svgplot.Plot {
	p := svgplot.New("Ready tasks over time", "time since the run's start (ms)", "ready tasks (mean per bin)")
	for k, i := range []int{a, b} {
		run := &r.Runs[i]
		l := report.ReadyLine(run.Ready, run.first, svgplot.Color(k), color.RGBA{})
		p.Add(l)
		p.Legend(fmt.Sprintf("#%d (%s)", i+1, plural(run.Cores, "core")), svgplot.Key{Color: l.Color, Width: l.Width})
	}
	p.Y.Min = 0
	p.Y.Include = []float64{1}
	return p
}

// pageTmpl parses the page template on first use: parsing it at start-up
// touched the template packages' code and data in every command (about
// a megabyte of resident memory), HTML written or not.
var pageTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("compare").Funcs(template.FuncMap{
		"dur":   report.Dur,
		"pct":   report.Pct,
		"eff":   func(v float64) string { return fmt.Sprintf("%.2f", v) },
		"g3":    func(v float64) string { return fmt.Sprintf("%.3g", v) },
		"inc":   func(i int) int { return i + 1 },
		"cores": func(n int) string { return plural(n, "core") },
	}).Parse(pageHTML))
})

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>ptrace compare — {{len .R.Runs}} runs</title>
<style>
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
</head>
<body>
<h1>ptrace compare</h1>
<p class="muted">schema {{.R.Schema}} · {{.R.Scaling}} scaling · reference {{.R.Reference}}</p>
<table id="runs"><tr><th>#</th><th class="l">run</th><th>processes</th><th>cores</th>{{if eq .R.Scaling "weak"}}<th>problem size</th>{{end}}<th>elapsed</th><th>speedup</th></tr>
{{range $i, $r := .R.Runs}}<tr><td>{{inc $i}}</td><td class="l">{{$r.Name}}</td><td>{{$r.Processes}}</td><td>{{$r.Cores}}</td>{{if eq $.R.Scaling "weak"}}<td>{{$r.ProblemSize}}</td>{{end}}<td>{{dur $r.ElapsedNS}}</td><td>{{g3 $r.Speedup}}</td></tr>
{{end}}</table>
{{if .R.Problems}}<ul id="problems">{{range .R.Problems}}<li class="warn"><b>{{.Run}}</b>: {{.Message}}</li>{{end}}</ul>{{end}}

<h2>POP scaling</h2>
<p>Global efficiency = parallel efficiency × computation scalability; computation scalability compares useful time summed over all threads against the reference{{if eq .R.Scaling "weak"}}, per unit of problem size{{end}}. <span class="muted">{{.R.Note}}.</span></p>
<table id="heat"><tr><th class="l">efficiency</th>{{range $i, $r := .R.Runs}}<th>#{{inc $i}}<br>{{cores $r.Cores}}</th>{{end}}</tr>
{{range .Heat}}<tr><td class="l" style="{{.Indent}}">{{.Name}}</td>{{range .Cells}}<td style="{{.Style}}">{{eff .Value}}</td>{{end}}</tr>
{{end}}</table>
{{with .Lines}}<figure id="{{.ID}}">{{.SVG}}</figure>{{end}}

{{if .R.Constructs}}
<h2>Work-time inflation per construct</h2>
<p>Total task time of each construct against the reference's (×), and its mean task duration.</p>
<table id="inflation"><tr><th class="l">construct</th>{{range $i, $r := .R.Runs}}<th>#{{inc $i}}</th>{{end}}</tr>
{{range .TopConstructs}}<tr><td class="l">{{.Name}}</td>{{range .Runs}}<td>{{if .Missing}}—{{else}}×{{printf "%.2f" .Inflation}} ({{dur .MeanNS}}){{end}}</td>{{end}}</tr>
{{end}}</table>
{{if .MoreConstructs}}<p class="muted">… {{.MoreConstructs}} more constructs in the JSON and CSV output.</p>{{end}}
<ul>{{range $i, $r := .R.Runs}}{{if $r.MostInflated}}<li>#{{inc $i}} lost {{dur $r.LostWorkNS}} of task time: {{range $j, $m := $r.MostInflated}}{{if $j}}; {{end}}{{$m.Construct}} +{{dur $m.ExtraNS}} (×{{printf "%.2f" $m.Inflation}}, {{pct $m.ShareOfLost}}){{end}}</li>{{end}}{{end}}</ul>
{{end}}
{{with .Bars}}<figure id="{{.ID}}">{{.SVG}}</figure>{{end}}

<h2>Bounds</h2>
<p class="muted">T1 work, T∞ span, P cores; a greedy scheduler reaches a speedup between T1 / (T1/P + burdened span) and min(P, T1/T∞); the burdened span adds the measured mean overhead per task for every task on the critical path.</p>
<table id="bounds"><tr><th>#</th><th>P</th><th>T1</th><th>T∞</th><th>parallelism</th><th>T1/P</th><th>burdened T∞</th><th>speedup range</th><th>measured</th><th>× bound</th></tr>
{{range $i, $r := .R.Runs}}{{with $r.Bounds}}<tr><td>{{inc $i}}</td><td>{{.Cores}}</td><td>{{dur .WorkNS}}</td><td>{{dur .SpanNS}}</td><td>{{g3 .Parallelism}}</td><td>{{dur .AreaBoundNS}}</td><td>{{dur .BurdenedSpanNS}}</td><td>{{g3 .SpeedupMin}}–{{g3 .SpeedupMax}}</td><td>{{dur .MeasuredNS}}</td><td>{{printf "%.2f" .Distance}}</td></tr>{{end}}
{{end}}</table>
<ul>{{range $i, $r := .R.Runs}}{{with $r.Bounds}}<li>#{{inc $i}}: {{.Text}}</li>{{end}}{{end}}</ul>

{{if .R.Changes}}<h2>What changed</h2>
<ul id="changes">{{range .R.Changes}}<li>{{.Text}}</li>{{end}}</ul>{{end}}

{{with .Ready}}<h2>Ready tasks</h2>
<p>#{{$.ReadyIA}} {{$.ReadyA}} and #{{$.ReadyIB}} {{$.ReadyB}}, each from its own start.</p>
<figure id="{{.ID}}">{{.SVG}}</figure>{{end}}
<p class="muted">All figures are in the JSON output (ptrace compare --json).</p>
</body>
</html>
`

package compare

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/report/svgplot"
)

// maxBarConstructs bounds the constructs in the inflation bar chart.
const maxBarConstructs = 8

type fig struct {
	ID  string
	SVG string
}

type heatCell struct {
	Value float64
	Style string
}

type heatRow struct {
	Name   string
	Indent string
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
	return writePage(w, buildPage(r))
}

func buildPage(r *Result) *htmlPage {
	pg := &htmlPage{R: r}
	for _, f := range FactorTree {
		row := heatRow{Name: f.Label, Indent: fmt.Sprintf("padding-left: %.1fem", 0.3+1.5*float64(f.Depth))}
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
	return pg
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

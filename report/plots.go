package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"github.com/ptrace-dev/ptrace/report/svgplot"
)

// Colours of the time categories, shared by plots and tables.
var (
	colWork     = color.RGBA{R: 0x4c, G: 0xaf, B: 0x50, A: 0xff}
	colMPI      = color.RGBA{R: 0x21, G: 0x96, B: 0xf3, A: 0xff}
	colOverhead = color.RGBA{R: 0xff, G: 0x98, B: 0x00, A: 0xff}
	colIdle     = color.RGBA{R: 0xbd, G: 0xbd, B: 0xbd, A: 0xff}
	colAnomaly  = color.RGBA{R: 0xd3, G: 0x2f, B: 0x2f, A: 0xff}
	colOther    = color.RGBA{R: 0x90, G: 0x90, B: 0x90, A: 0xff}
	colRegion   = color.RGBA{R: 0x00, G: 0x96, B: 0x88, A: 0xff} // parallel-region code on the critical path
)

// pathColor gives a critical-path segment kind its colour.
func pathColor(kind string) color.RGBA {
	switch {
	case strings.Contains(kind, "task"):
		return colWork
	case strings.Contains(kind, "message") || strings.Contains(kind, "remote") || strings.Contains(kind, "dep"):
		return colMPI
	case strings.Contains(kind, "mpi") || strings.Contains(kind, "coll"):
		return color.RGBA{R: 0x7e, G: 0x57, B: 0xc2, A: 0xff}
	case strings.Contains(kind, "overhead") || strings.Contains(kind, "create"):
		return colOverhead
	case kind == "region":
		return colRegion
	}
	return colOther
}

// Plot sizes, in points.
const (
	plotWide, plotTall = 560, 300
	histWide, histTall = 420, 240
)

// breakdownPlot stacks each rank's thread time into work, MPI, overhead and
// idleness.
func breakdownPlot(b *Breakdown) *svgplot.Plot {
	p := svgplot.New("Time breakdown per rank", "rank", "thread time (ms, summed over threads)")
	n := len(b.PerProcess)
	cats := []struct {
		col color.RGBA
		get func(ProcessTimes) int64
	}{
		{colWork, func(q ProcessTimes) int64 { return q.WorkNS }},
		{colMPI, func(q ProcessTimes) int64 { return q.MPINS }},
		{colOverhead, func(q ProcessTimes) int64 { return q.OverheadNS }},
		{colIdle, func(q ProcessTimes) int64 { return q.IdlenessNS }},
	}
	width := math.Max(1, math.Min(40, 420/float64(n)*0.8))
	var base []float64
	for _, c := range cats {
		vals := make([]float64, n)
		for i, q := range b.PerProcess {
			vals[i] = float64(c.get(q)) / 1e6
		}
		bar := &svgplot.Bars{Values: vals, Base: base, Width: width, Color: c.col}
		base = bar.Tops()
		p.Add(bar)
		// No legend: it would cover bars; the page prints the colour key.
	}
	labels := make([]string, n)
	step := max(1, n/24)
	for i, q := range b.PerProcess {
		if i%step == 0 {
			labels[i] = fmt.Sprint(q.Rank)
		}
	}
	p.NominalX(labels...)
	p.Y.Min = 0
	return p
}

// readyPlot is StarVZ's ready-task panel: the number of ready tasks over
// time, summed over processes.
func readyPlot(s *Series, origin int64) *svgplot.Plot {
	p := svgplot.New("Ready tasks over time", "time since trace start (ms)", "ready tasks (mean per bin)")
	p.Add(ReadyLine(s, origin, colWork, color.RGBA{R: 0x4c, G: 0xaf, B: 0x50, A: 0x50}))
	// An all-zero series (no tasks) still gets a sensible axis.
	p.Y.Min = 0
	p.Y.Include = []float64{1}
	return p
}

// ReadyLine draws a ready-task series as a step line, its times in ms
// from origin, filled below in fill (alpha 0: not filled).
func ReadyLine(s *Series, origin int64, c, fill color.RGBA) *svgplot.Line {
	n := len(s.Values)
	l := &svgplot.Line{X: make([]float64, n+1), Y: make([]float64, n+1), Color: c, Width: 1.5, Step: true, Fill: fill}
	for i, v := range s.Values {
		l.X[i] = float64(s.StartNS-origin+int64(i)*s.BinNS) / 1e6
		l.Y[i] = v
	}
	// The last bin's value holds until the bin's end.
	l.X[n] = float64(s.StartNS-origin+int64(n)*s.BinNS) / 1e6
	if n > 0 {
		l.Y[n] = s.Values[n-1]
	}
	return l
}

// pathPlot draws the critical path's segments as bars in rows, one row
// per rank, joined by thin lines where the path moves on.
func pathPlot(cp *CriticalPath, origin int64) *svgplot.Plot {
	title := fmt.Sprintf("Critical path across ranks (%s, %d rank crossings)", Dur(cp.LengthNS), cp.RankCrossings)
	if cp.Truncated {
		title += ", first segments"
	}
	p := svgplot.New(title, "time since trace start (ms)", "")
	var ranks []int
	row := map[int]int{}
	for _, s := range cp.Segments {
		if _, ok := row[s.Rank]; !ok {
			row[s.Rank] = 0
			ranks = append(ranks, s.Rank)
		}
	}
	slices.Sort(ranks)
	for i, r := range ranks {
		row[r] = i
	}
	ms := func(ns int64) float64 { return float64(ns-origin) / 1e6 }
	n := len(cp.Segments)
	q := &svgplot.Rects{X0: make([]float64, n), X1: make([]float64, n), Y0: make([]float64, n), Y1: make([]float64, n),
		Colors: make([]color.RGBA, n), MinWidth: 1, Link: color.RGBA{R: 0x40, G: 0x40, B: 0x40, A: 0xff}}
	seen := map[string]bool{}
	for i, s := range cp.Segments {
		y := float64(row[s.Rank])
		q.X0[i], q.X1[i] = ms(s.StartNS), ms(s.StartNS+s.DurNS)
		q.Y0[i], q.Y1[i] = y-0.3, y+0.3
		q.Colors[i] = pathColor(s.Kind)
		if !seen[s.Kind] {
			seen[s.Kind] = true
			p.Legend(s.Kind, svgplot.Key{Color: q.Colors[i], Box: true})
		}
	}
	p.Add(q)
	step := max(1, len(ranks)/20)
	p.Y.Ticks = []svgplot.Tick{}
	for i, r := range ranks {
		if i%step == 0 {
			p.Y.Ticks = append(p.Y.Ticks, svgplot.Tick{Value: float64(i), Label: fmt.Sprintf("rank %d", r)})
		}
	}
	// Room above the top row for the legend.
	p.Y.Min, p.Y.Max = -0.6, float64(len(ranks))-0.5+0.4*float64(len(seen))
	return p
}

// histPlot draws a construct's task durations in power-of-two buckets, and
// the construct's anomalies as red markers above the bucket they fall in.
func histPlot(c Construct, anomalies []Anomaly) *svgplot.Plot {
	lo, hi := -1, -1
	for i, v := range c.Histogram {
		if v > 0 {
			if lo < 0 {
				lo = i
			}
			hi = i
		}
	}
	for _, a := range anomalies {
		b := bucket(a.DurNS)
		if lo < 0 || b < lo {
			lo = b
		}
		hi = max(hi, b)
	}
	if lo < 0 {
		return nil
	}
	lo, hi = max(0, lo-1), hi+1
	counts := make([]float64, hi-lo+1)
	var top float64
	for i := range counts {
		if k := lo + i; k < len(c.Histogram) {
			counts[i] = float64(c.Histogram[k])
		}
		top = math.Max(top, counts[i])
	}
	p := svgplot.New(c.Name, "task duration (power-of-two buckets)", "tasks")
	p.Add(&svgplot.Bars{X0: float64(lo), Values: counts, Width: math.Min(24, 380/float64(len(counts))), Color: colWork})
	p.Legend(fmt.Sprintf("%d tasks", c.Count), svgplot.Key{Color: colWork, Box: true})
	if len(anomalies) > 0 {
		m := &svgplot.Markers{X: make([]float64, len(anomalies)), Y: make([]float64, len(anomalies)),
			Shape: svgplot.Triangle, Radius: 3.5, Color: colAnomaly}
		for i, a := range anomalies {
			// Bar k spans [k−½, k+½] for durations [2^k, 2^(k+1)).
			m.X[i] = math.Log2(float64(max(a.DurNS, 1))) - 0.5
			k := bucket(a.DurNS) - lo
			h := 0.0
			if k >= 0 && k < len(counts) {
				h = counts[k]
			}
			m.Y[i] = h + 0.06*top
		}
		p.Add(m)
		p.Legend(fmt.Sprintf("%d anomalies", len(anomalies)), svgplot.Key{Color: colAnomaly, Shape: svgplot.Triangle})
	}
	step := int(math.Max(1, math.Ceil(float64(hi-lo+1)/8)))
	for k := lo; k <= hi; k++ {
		label := ""
		if (k-lo)%step == 0 {
			label = Dur(int64(1) << uint(k))
		}
		p.X.Ticks = append(p.X.Ticks, svgplot.Tick{Value: float64(k) - 0.5, Label: label})
	}
	p.X.Min, p.X.Max = float64(lo)-0.5, float64(hi)+0.5
	p.Y.Min = 0
	p.Y.Max = math.Max(top*1.4, 1) // room for the legend
	return p
}

// bucket is the power-of-two bucket of a duration: 2^k ≤ d < 2^(k+1).
func bucket(d int64) int {
	if d <= 1 {
		return 0
	}
	return int(math.Floor(math.Log2(float64(d))))
}

// svgOf renders p as an inline SVG element of w × h points. The SVG is
// generated from numbers and from text svgplot escapes.
func svgOf(p *svgplot.Plot, w, h float64) string { return p.SVG(w, h) }

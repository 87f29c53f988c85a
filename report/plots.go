package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
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
func pathColor(kind string) color.Color {
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

// svgOf renders p as an inline SVG element (the XML prolog that vgsvg
// writes for standalone files is dropped: it is invalid inside HTML).
func svgOf(p *plot.Plot, w, h vg.Length) (template.HTML, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("plot %q: vgsvg wrote no <svg> element", p.Title.Text)
	}
	// The SVG is generated here from numbers and from text vgsvg escapes.
	return template.HTML(s[i:]), nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	return p
}

// breakdownPlot stacks each rank's thread time into work, MPI, overhead and
// idleness.
func breakdownPlot(b *Breakdown) (*plot.Plot, error) {
	p := newPlot("Time breakdown per rank", "rank", "thread time (ms, summed over threads)")
	n := len(b.PerProcess)
	cats := []struct {
		name string
		col  color.Color
		get  func(ProcessTimes) int64
	}{
		{"work", colWork, func(q ProcessTimes) int64 { return q.WorkNS }},
		{"MPI", colMPI, func(q ProcessTimes) int64 { return q.MPINS }},
		{"overhead", colOverhead, func(q ProcessTimes) int64 { return q.OverheadNS }},
		{"idleness", colIdle, func(q ProcessTimes) int64 { return q.IdlenessNS }},
	}
	width := vg.Points(math.Max(1, math.Min(40, 420/float64(n)*0.8)))
	var below *plotter.BarChart
	for _, c := range cats {
		vals := make(plotter.Values, n)
		for i, q := range b.PerProcess {
			vals[i] = float64(c.get(q)) / 1e6
		}
		bar, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, fmt.Errorf("breakdown %s: %w", c.name, err)
		}
		bar.Color = c.col
		bar.LineStyle.Width = 0
		if below != nil {
			bar.StackOn(below)
		}
		below = bar
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
	return p, nil
}

// readyPlot is StarVZ's ready-task panel: the number of ready tasks over
// time, summed over processes.
func readyPlot(s *Series, origin int64) (*plot.Plot, error) {
	p := newPlot("Ready tasks over time", "time since trace start (ms)", "ready tasks (mean per bin)")
	pts := make(plotter.XYs, len(s.Values)+1)
	for i, v := range s.Values {
		pts[i].X = float64(s.StartNS-origin+int64(i)*s.BinNS) / 1e6
		pts[i].Y = v
	}
	// The last bin's value holds until the bin's end.
	last := len(s.Values)
	pts[last].X = float64(s.StartNS-origin+int64(last)*s.BinNS) / 1e6
	if last > 0 {
		pts[last].Y = s.Values[last-1]
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, fmt.Errorf("ready series: %w", err)
	}
	l.StepStyle = plotter.PostStep
	l.Color = colWork
	l.Width = vg.Points(1.5)
	l.FillColor = color.NRGBA{R: 0x4c, G: 0xaf, B: 0x50, A: 0x50}
	p.Add(l)
	// Added after the data so an all-zero series (no tasks) still gets a
	// sensible axis rather than gonum's symmetric default around 0.
	p.Y.Min = 0
	p.Y.Max = max(p.Y.Max, 1)
	return p, nil
}

// gantt draws critical-path segments as bars in rows, one row per rank,
// joined by thin lines where the path moves on.
type gantt struct {
	segs   []PathNode
	origin int64
	row    map[int]int
	ranks  []int
}

func newGantt(segs []PathNode, origin int64) *gantt {
	g := &gantt{segs: segs, origin: origin, row: map[int]int{}}
	for _, s := range segs {
		if _, ok := g.row[s.Rank]; !ok {
			g.row[s.Rank] = 0
			g.ranks = append(g.ranks, s.Rank)
		}
	}
	slices.Sort(g.ranks)
	for i, r := range g.ranks {
		g.row[r] = i
	}
	return g
}

func (g *gantt) ms(ns int64) float64 { return float64(ns-g.origin) / 1e6 }

// Plot implements plot.Plotter.
func (g *gantt) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	link := draw.LineStyle{Color: color.Gray{Y: 0x40}, Width: vg.Points(0.5)}
	var prev vg.Point
	for i, s := range g.segs {
		y := float64(g.row[s.Rank])
		x0, x1 := trX(g.ms(s.StartNS)), trX(g.ms(s.StartNS+s.DurNS))
		if x1-x0 < vg.Points(1) {
			x1 = x0 + vg.Points(1) // zero-length steps stay visible
		}
		y0, y1 := trY(y-0.3), trY(y+0.3)
		c.FillPolygon(pathColor(s.Kind), c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}))
		mid := vg.Point{X: x0, Y: trY(y)}
		if i > 0 {
			c.StrokeLines(link, c.ClipLinesXY([]vg.Point{prev, mid})...)
		}
		prev = vg.Point{X: x1, Y: trY(y)}
	}
}

// DataRange implements plot.DataRanger.
func (g *gantt) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, s := range g.segs {
		xmin = math.Min(xmin, g.ms(s.StartNS))
		xmax = math.Max(xmax, g.ms(s.StartNS+s.DurNS))
	}
	// Room above the top row for the legend.
	return xmin, xmax, -0.6, float64(len(g.ranks)) + 0.5
}

func pathPlot(cp *CriticalPath, origin int64) *plot.Plot {
	title := fmt.Sprintf("Critical path across ranks (%s, %d rank crossings)", Dur(cp.LengthNS), cp.RankCrossings)
	if cp.Truncated {
		title += ", first segments"
	}
	p := newPlot(title, "time since trace start (ms)", "")
	g := newGantt(cp.Segments, origin)
	p.Add(g)
	var ticks []plot.Tick
	step := max(1, len(g.ranks)/20)
	for i, r := range g.ranks {
		if i%step == 0 {
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: fmt.Sprintf("rank %d", r)})
		}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	seen := map[string]bool{}
	for _, s := range cp.Segments {
		if !seen[s.Kind] {
			seen[s.Kind] = true
			p.Legend.Add(s.Kind, &plotter.BarChart{Color: pathColor(s.Kind)})
		}
	}
	return p
}

// histPlot draws a construct's task durations in power-of-two buckets, and
// the construct's anomalies as red markers above the bucket they fall in.
func histPlot(c Construct, anomalies []Anomaly) (*plot.Plot, error) {
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
		return nil, nil
	}
	lo, hi = max(0, lo-1), hi+1
	counts := make(plotter.Values, hi-lo+1)
	var top float64
	for i := range counts {
		if k := lo + i; k < len(c.Histogram) {
			counts[i] = float64(c.Histogram[k])
		}
		top = math.Max(top, counts[i])
	}
	p := newPlot(c.Name, "task duration (power-of-two buckets)", "tasks")
	bars, err := plotter.NewBarChart(counts, vg.Points(math.Min(24, 380/float64(len(counts)))))
	if err != nil {
		return nil, fmt.Errorf("histogram %s: %w", c.Name, err)
	}
	bars.XMin = float64(lo)
	bars.Color = colWork
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.Legend.Add(fmt.Sprintf("%d tasks", c.Count), bars)
	if len(anomalies) > 0 {
		pts := make(plotter.XYs, len(anomalies))
		for i, a := range anomalies {
			// Bar k spans [k−½, k+½] for durations [2^k, 2^(k+1)).
			pts[i].X = math.Log2(float64(max(a.DurNS, 1))) - 0.5
			k := bucket(a.DurNS) - lo
			h := 0.0
			if k >= 0 && k < len(counts) {
				h = counts[k]
			}
			pts[i].Y = h + 0.06*top
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("anomalies %s: %w", c.Name, err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: colAnomaly, Radius: vg.Points(3.5), Shape: draw.TriangleGlyph{}}
		p.Add(sc)
		p.Legend.Add(fmt.Sprintf("%d anomalies", len(anomalies)), sc)
	}
	p.X.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ts []plot.Tick
		step := int(math.Max(1, math.Ceil((max-min)/8)))
		for k := lo; k <= hi; k++ {
			label := ""
			if (k-lo)%step == 0 {
				label = Dur(int64(1) << uint(k))
			}
			ts = append(ts, plot.Tick{Value: float64(k) - 0.5, Label: label})
		}
		return ts
	})
	p.Y.Min = 0
	p.Y.Max = top * 1.4 // room for the legend
	return p, nil
}

// bucket is the power-of-two bucket of a duration: 2^k ≤ d < 2^(k+1).
func bucket(d int64) int {
	if d <= 1 {
		return 0
	}
	return int(math.Floor(math.Log2(float64(d))))
}

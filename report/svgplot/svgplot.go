// Package svgplot draws the reports' charts as inline SVG: linear axes
// with ticks and labels, bars, lines, rectangles, markers and a legend, and
// nothing more. ptrace drew them with a general plotting library before,
// whose embedded fonts and package initialisation put about 4.5 MB of
// resident pages into every ptrace process, an HTML page written or not
// (docs/PERFORMANCE.md, fifteenth round). Text is laid out with an
// estimated glyph width and left to the browser's sans-serif font.
package svgplot

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"github.com/ptrace-dev/ptrace/internal/htmlw"
)

// Color returns the k-th of a set of distinguishable colours, cycling,
// for series without a colour of their own (runs, factors).
func Color(k int) color.RGBA {
	palette := [...]color.RGBA{
		{R: 241, G: 90, B: 96, A: 255},
		{R: 122, G: 195, B: 106, A: 255},
		{R: 90, G: 155, B: 212, A: 255},
		{R: 250, G: 167, B: 91, A: 255},
		{R: 158, G: 103, B: 171, A: 255},
		{R: 206, G: 112, B: 88, A: 255},
		{R: 215, G: 127, B: 180, A: 255},
	}
	return palette[k%len(palette)]
}

// Dashes returns the k-th dash pattern, solid first, cycling.
func Dashes(k int) []float64 {
	pats := [][]float64{nil, {6, 2}, {2, 2}, {6, 2, 2, 2}, {4, 4}}
	return pats[k%len(pats)]
}

// Shape is a marker's shape.
type Shape int

// The marker shapes.
const (
	NoShape Shape = iota
	Ring
	Square
	Triangle
	Diamond
	Plus
	Cross
)

// Shapes returns the k-th marker shape, cycling.
func Shapes(k int) Shape { return Shape(1 + k%int(Cross)) }

// Tick is a labelled position on an axis.
type Tick struct {
	Value float64
	Label string // empty: a tick mark without a label
}

// Axis is a plot's horizontal or vertical axis.
type Axis struct {
	Label string
	// Min and Max bound the axis; NaN (New's default) takes the data's
	// range, widened to whole ticks.
	Min, Max float64
	// Include lists values the data's range must reach (0 for counts, 1
	// for ratios).
	Include []float64
	// Ticks replaces the chosen ticks.
	Ticks []Tick
}

// Plot is one chart: a title, two axes, the data items in drawing order
// and the legend.
type Plot struct {
	Title string
	X, Y  Axis
	// LegendLeft and LegendBottom move the legend from the plot area's
	// top right corner.
	LegendLeft, LegendBottom bool
	items                    []Item
	legend                   []legendEntry
}

// New returns an empty plot with a title and axis labels.
func New(title, x, y string) *Plot {
	nan := math.NaN()
	return &Plot{Title: title, X: Axis{Label: x, Min: nan, Max: nan}, Y: Axis{Label: y, Min: nan, Max: nan}}
}

// Item is data drawn in the plot area: *Bars, *Line, *Rects or *Markers.
type Item interface {
	// bounds widens the data's range to hold the item.
	bounds(r *dataRange)
	draw(w *writer, f *frame)
}

// Bars draws bar i of Values at x = X0 + i, from Base[i] (0 without Base)
// up by Values[i]; Width and Offset are in points, so bars keep their
// width whatever the axis.
type Bars struct {
	X0            float64
	Values, Base  []float64
	Width, Offset float64
	Color         color.RGBA
}

// Tops returns where each bar ends: the base of bars stacked on these.
func (b *Bars) Tops() []float64 {
	t := make([]float64, len(b.Values))
	for i, v := range b.Values {
		t[i] = b.base(i) + v
	}
	return t
}

func (b *Bars) base(i int) float64 {
	if b.Base != nil {
		return b.Base[i]
	}
	return 0
}

func (b *Bars) bounds(r *dataRange) {
	for i, v := range b.Values {
		r.add(b.X0+float64(i)-0.5, b.base(i))
		r.add(b.X0+float64(i)+0.5, b.base(i)+v)
	}
}

func (b *Bars) draw(w *writer, f *frame) {
	for i, v := range b.Values {
		x := f.x(b.X0+float64(i)) + b.Offset
		y0, y1 := f.y(b.base(i)), f.y(b.base(i)+v)
		w.rect(x-b.Width/2, x+b.Width/2, y1, y0, b.Color)
	}
}

// Line joins points (X[i], Y[i]); Step holds each value until the next
// point's x. A Fill colour with alpha fills the area down to y = 0, and a
// Shape marks every point.
type Line struct {
	X, Y   []float64
	Color  color.RGBA
	Width  float64
	Dashes []float64
	Step   bool
	Fill   color.RGBA
	Shape  Shape
}

func (l *Line) bounds(r *dataRange) {
	for i := range l.X {
		r.add(l.X[i], l.Y[i])
	}
}

func (l *Line) points(f *frame) [][2]float64 {
	var pts [][2]float64
	for i := range l.X {
		if l.Step && i > 0 {
			pts = append(pts, [2]float64{f.x(l.X[i]), f.y(l.Y[i-1])})
		}
		pts = append(pts, [2]float64{f.x(l.X[i]), f.y(l.Y[i])})
	}
	return pts
}

func (l *Line) draw(w *writer, f *frame) {
	pts := l.points(f)
	if len(pts) == 0 {
		return
	}
	if l.Fill.A > 0 {
		zero := f.y(0)
		area := append([][2]float64{{pts[0][0], zero}}, pts...)
		area = append(area, [2]float64{pts[len(pts)-1][0], zero})
		w.polygon(area, l.Fill)
	}
	w.polyline(pts, l.Color, l.Width, l.Dashes)
	if l.Shape != NoShape {
		for i := range l.X {
			w.marker(f.x(l.X[i]), f.y(l.Y[i]), 3, l.Shape, l.Color)
		}
	}
}

// Rects draws axis-aligned rectangles in data coordinates, each at least
// MinWidth points wide, and joins each rectangle's right end to the next
// one's left end at mid-height with a line of Link (alpha 0: none) where
// the next one is on another row.
type Rects struct {
	X0, X1, Y0, Y1 []float64
	Colors         []color.RGBA
	MinWidth       float64
	Link           color.RGBA
}

func (q *Rects) bounds(r *dataRange) {
	for i := range q.X0 {
		r.add(q.X0[i], q.Y0[i])
		r.add(q.X1[i], q.Y1[i])
	}
}

func (q *Rects) draw(w *writer, f *frame) {
	var link [][2]float64
	for i := range q.X0 {
		x0, x1 := f.x(q.X0[i]), f.x(q.X1[i])
		if x1-x0 < q.MinWidth {
			x1 = x0 + q.MinWidth // zero-length steps stay visible
		}
		w.rect(x0, x1, f.y(q.Y1[i]), f.y(q.Y0[i]), q.Colors[i])
		mid := f.y((q.Y0[i] + q.Y1[i]) / 2)
		link = append(link, [2]float64{x0, mid}, [2]float64{x1, mid})
	}
	if q.Link.A > 0 && len(link) > 2 {
		// From each rectangle's end to the next one's start, when the
		// next is on another row.
		var d strings.Builder
		for i := 1; i+1 < len(link); i += 2 {
			if link[i][1] == link[i+1][1] {
				continue
			}
			fmt.Fprintf(&d, "M%s %sL%s %s", num(link[i][0]), num(link[i][1]), num(link[i+1][0]), num(link[i+1][1]))
		}
		if d.Len() > 0 {
			w.printf(`<path d="%s" fill="none"%s stroke-width="0.5"/>`, d.String(), stroke(q.Link))
		}
	}
}

// Markers draws a marker at each point (X[i], Y[i]).
type Markers struct {
	X, Y   []float64
	Shape  Shape
	Radius float64
	Color  color.RGBA
}

func (m *Markers) bounds(r *dataRange) {
	for i := range m.X {
		r.add(m.X[i], m.Y[i])
	}
}

func (m *Markers) draw(w *writer, f *frame) {
	for i := range m.X {
		w.marker(f.x(m.X[i]), f.y(m.Y[i]), m.Radius, m.Shape, m.Color)
	}
}

// Add appends items, drawn in order.
func (p *Plot) Add(items ...Item) { p.items = append(p.items, items...) }

// Key is how a legend entry shows its series: a filled box (Box), or a
// line of Width with Dashes and a marker of Shape.
type Key struct {
	Color  color.RGBA
	Box    bool
	Width  float64
	Dashes []float64
	Shape  Shape
}

type legendEntry struct {
	label string
	key   Key
}

// Legend adds an entry to the legend.
func (p *Plot) Legend(label string, k Key) {
	p.legend = append(p.legend, legendEntry{label, k})
}

// NominalX makes the horizontal axis categorical: one tick at x = i for
// each label (empty labels make unlabelled ticks).
func (p *Plot) NominalX(labels ...string) {
	p.X.Ticks = p.X.Ticks[:0]
	for i, l := range labels {
		p.X.Ticks = append(p.X.Ticks, Tick{Value: float64(i), Label: l})
	}
	p.X.Min, p.X.Max = -0.5, float64(len(labels))-0.5
}

// Sizes, in points.
const (
	fontSize  = 10.0
	titleSize = 12.0
	charWidth = 0.56 * fontSize // an estimate for a sans-serif font
	tickLen   = 4.0
	pad       = 6.0
	lineH     = 13.0
)

// SVG renders the plot as an SVG element w × h points, for inline use in
// an HTML page.
func (p *Plot) SVG(w, h float64) string {
	var r dataRange
	r.init()
	for _, it := range p.items {
		it.bounds(&r)
	}
	xmin, xmax, xticks := p.X.resolve(r.xmin, r.xmax)
	ymin, ymax, yticks := p.Y.resolve(r.ymin, r.ymax)
	// Margins from the texts around the plot area.
	yTickW := 0.0
	for _, t := range yticks {
		yTickW = math.Max(yTickW, textWidth(t.Label))
	}
	left := pad + yTickW + tickLen + 3
	if p.Y.Label != "" {
		left += lineH + 2
	}
	top := pad
	if p.Title != "" {
		top += titleSize + 6
	}
	bottom := h - pad - tickLen - lineH
	if p.X.Label != "" {
		bottom -= lineH + 2
	}
	right := w - pad
	if n := len(xticks); n > 0 {
		// Room for the last label, centred on its tick.
		right -= textWidth(xticks[n-1].Label) / 2
	}
	f := &frame{left: left, right: math.Max(right, left+1), top: top, bottom: math.Max(bottom, top+1),
		xmin: xmin, xmax: xmax, ymin: ymin, ymax: ymax}

	var out writer
	out.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%spt" height="%spt" viewBox="0 0 %s %s" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="%s">`,
		num(w), num(h), num(w), num(h), num(fontSize))
	out.printf(`<rect width="100%%" height="100%%" fill="#fff"/>`)
	if p.Title != "" {
		out.text((f.left+f.right)/2, pad+titleSize, "middle", titleSize, p.Title)
	}
	// Grid lines under the data, then the data, clipped to the area.
	for _, t := range yticks {
		if y := f.y(t.Value); t.Label != "" && y > f.top+0.5 && y < f.bottom-0.5 {
			out.printf(`<path d="M%s %sH%s" stroke="#e6e6e6" stroke-width="0.5"/>`, num(f.left), num(y), num(f.right))
		}
	}
	out.printf(`<svg x="%s" y="%s" width="%s" height="%s" viewBox="%s %s %s %s" overflow="hidden">`,
		num(f.left), num(f.top), num(f.right-f.left), num(f.bottom-f.top),
		num(f.left), num(f.top), num(f.right-f.left), num(f.bottom-f.top))
	for _, it := range p.items {
		it.draw(&out, f)
	}
	out.printf(`</svg>`)
	// Axes, ticks and labels.
	out.printf(`<path d="M%s %sV%sH%s" fill="none" stroke="#000" stroke-width="0.75"/>`, num(f.left), num(f.top), num(f.bottom), num(f.right))
	eachTick(xticks, f.x, f.left, f.right, func(x, mark float64, label string) {
		out.printf(`<path d="M%s %sv%s" stroke="#000" stroke-width="0.5"/>`, num(x), num(f.bottom), num(mark))
		if label != "" {
			out.text(x, f.bottom+tickLen+fontSize+1, "middle", fontSize, label)
		}
	})
	eachTick(yticks, f.y, f.top, f.bottom, func(y, mark float64, label string) {
		out.printf(`<path d="M%s %sh%s" stroke="#000" stroke-width="0.5"/>`, num(f.left), num(y), num(-mark))
		if label != "" {
			out.text(f.left-tickLen-2, y+fontSize*0.35, "end", fontSize, label)
		}
	})
	if p.X.Label != "" {
		out.text((f.left+f.right)/2, h-pad-2, "middle", fontSize+1, p.X.Label)
	}
	if p.Y.Label != "" {
		x, y := pad+fontSize+1, (f.top+f.bottom)/2
		out.printf(`<text transform="translate(%s %s) rotate(-90)" text-anchor="middle" font-size="%s">%s</text>`,
			num(x), num(y), num(fontSize+1), htmlw.Escape(p.Y.Label))
	}
	p.drawLegend(&out, f)
	out.printf(`</svg>`)
	return out.String()
}

// eachTick calls fn with the position of each tick that falls on its axis
// (between lo and hi, in points) and the length of its mark, half for an
// unlabelled tick.
func eachTick(ts []Tick, pos func(float64) float64, lo, hi float64, fn func(at, mark float64, label string)) {
	for _, t := range ts {
		at := pos(t.Value)
		if at < lo-0.5 || at > hi+0.5 {
			continue
		}
		mark := tickLen
		if t.Label == "" {
			mark /= 2
		}
		fn(at, mark, t.Label)
	}
}

// drawLegend draws the entries in a box in a corner of the plot area.
func (p *Plot) drawLegend(w *writer, f *frame) {
	if len(p.legend) == 0 {
		return
	}
	const swatch = 20.0
	tw := 0.0
	for _, e := range p.legend {
		tw = math.Max(tw, textWidth(e.label))
	}
	bw, bh := swatch+tw+12, float64(len(p.legend))*lineH+6
	x, y := f.right-bw-4, f.top+4
	if p.LegendLeft {
		x = f.left + 4
	}
	if p.LegendBottom {
		y = f.bottom - bh - 4
	}
	w.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="#fff" fill-opacity="0.85" stroke="#ccc" stroke-width="0.5"/>`,
		num(x), num(y), num(bw), num(bh))
	for i, e := range p.legend {
		cy := y + 3 + lineH*(float64(i)+0.5)
		k := e.key
		if k.Box {
			w.rect(x+4, x+4+swatch-4, cy-4, cy+4, k.Color)
		} else {
			w.polyline([][2]float64{{x + 4, cy}, {x + swatch, cy}}, k.Color, math.Max(k.Width, 1), k.Dashes)
			if k.Shape != NoShape {
				w.marker(x+4+(swatch-4)/2, cy, 3, k.Shape, k.Color)
			}
		}
		w.text(x+swatch+6, cy+fontSize*0.35, "start", fontSize, e.label)
	}
}

// dataRange is the data's bounding box.
type dataRange struct{ xmin, xmax, ymin, ymax float64 }

func (r *dataRange) init() {
	r.xmin, r.ymin = math.Inf(1), math.Inf(1)
	r.xmax, r.ymax = math.Inf(-1), math.Inf(-1)
}

func (r *dataRange) add(x, y float64) {
	if !math.IsNaN(x) && !math.IsInf(x, 0) {
		r.xmin, r.xmax = math.Min(r.xmin, x), math.Max(r.xmax, x)
	}
	if !math.IsNaN(y) && !math.IsInf(y, 0) {
		r.ymin, r.ymax = math.Min(r.ymin, y), math.Max(r.ymax, y)
	}
}

// resolve returns the axis's range and ticks for data spanning [lo, hi]
// (lo > hi: no data).
func (a *Axis) resolve(lo, hi float64) (float64, float64, []Tick) {
	for _, v := range a.Include {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if !math.IsNaN(a.Min) {
		lo = a.Min
	}
	if !math.IsNaN(a.Max) {
		hi = a.Max
	}
	switch {
	case lo > hi:
		lo, hi = 0, 1
	case lo == hi:
		lo, hi = lo-1, hi+1
	}
	step := niceStep((hi - lo) / 5)
	// Ends the data set widen to whole steps; fixed ends stay.
	if math.IsNaN(a.Min) {
		lo = math.Floor(lo/step+1e-9) * step
	}
	if math.IsNaN(a.Max) {
		hi = math.Ceil(hi/step-1e-9) * step
	}
	if a.Ticks != nil {
		return lo, hi, a.Ticks
	}
	var ticks []Tick
	digits := decimals(step)
	// Counted, not stepped until past hi: at magnitudes where adding 1 to
	// k no longer changes it a stepped loop would not end.
	first := math.Ceil(lo/step - 1e-9)
	for i := 0; i <= 20 && (first+float64(i))*step <= hi+step*1e-9; i++ {
		v := (first + float64(i)) * step
		ticks = append(ticks, Tick{Value: v, Label: strconv.FormatFloat(v+0, 'f', digits, 64)})
		// Unlabelled minor ticks halfway.
		if m := v + step/2; m < hi {
			ticks = append(ticks, Tick{Value: m})
		}
	}
	return lo, hi, ticks
}

// niceStep rounds a tick spacing up to 1, 2, 2.5 or 5 times a power of
// ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// decimals is how many decimals the multiples of step need (at most 9).
func decimals(step float64) int {
	d := 0
	for scaled := step; d < 9 && math.Abs(scaled-math.Round(scaled)) > 1e-6*scaled; d++ {
		scaled *= 10
	}
	return d
}

// frame maps data coordinates into the plot area.
type frame struct {
	left, right, top, bottom float64
	xmin, xmax, ymin, ymax   float64
}

func (f *frame) x(v float64) float64 {
	return f.left + (v-f.xmin)/(f.xmax-f.xmin)*(f.right-f.left)
}

func (f *frame) y(v float64) float64 {
	return f.bottom - (v-f.ymin)/(f.ymax-f.ymin)*(f.bottom-f.top)
}

func textWidth(s string) float64 { return float64(len([]rune(s))) * charWidth }

// writer accumulates the SVG text.
type writer struct{ strings.Builder }

func (w *writer) printf(format string, args ...any) { fmt.Fprintf(w, format, args...) }

// text writes s escaped as the page's text is (htmlw.Escape): a label is
// a construct's or a run's name, and unlike html.EscapeString that also
// turns NUL into U+FFFD, as html/template did, since NUL is no character
// of XML and a parse error in HTML.
func (w *writer) text(x, y float64, anchor string, size float64, s string) {
	w.printf(`<text x="%s" y="%s" text-anchor="%s" font-size="%s">%s</text>`, num(x), num(y), anchor, num(size), htmlw.Escape(s))
}

func (w *writer) rect(x0, x1, y0, y1 float64, c color.RGBA) {
	w.printf(`<path d="M%s %sH%sV%sH%sZ"%s/>`, num(x0), num(y0), num(x1), num(y1), num(x0), fill(c))
}

func (w *writer) polygon(pts [][2]float64, c color.RGBA) {
	w.printf(`<path d="%sZ"%s/>`, pathOf(pts), fill(c))
}

func (w *writer) polyline(pts [][2]float64, c color.RGBA, width float64, dashes []float64) {
	dash := ""
	if len(dashes) > 0 {
		s := make([]string, len(dashes))
		for i, d := range dashes {
			s[i] = num(d)
		}
		dash = fmt.Sprintf(` stroke-dasharray="%s"`, strings.Join(s, " "))
	}
	w.printf(`<path d="%s" fill="none"%s stroke-width="%s"%s stroke-linejoin="round"/>`, pathOf(pts), stroke(c), num(width), dash)
}

// marker draws a shape of radius r centred on (x, y).
func (w *writer) marker(x, y, r float64, s Shape, c color.RGBA) {
	var d string
	filled := true
	switch s {
	case Ring:
		d, filled = fmt.Sprintf("M%s %sa%s %s 0 1 0 %s 0a%s %s 0 1 0 %s 0", num(x-r), num(y), num(r), num(r), num(2*r), num(r), num(r), num(-2*r)), false
	case Square:
		d = pathOf([][2]float64{{x - r, y - r}, {x + r, y - r}, {x + r, y + r}, {x - r, y + r}}) + "Z"
	case Triangle:
		d = pathOf([][2]float64{{x, y - r}, {x + r, y + r*0.75}, {x - r, y + r*0.75}}) + "Z"
	case Diamond:
		d = pathOf([][2]float64{{x, y - r}, {x + r, y}, {x, y + r}, {x - r, y}}) + "Z"
	case Plus:
		d, filled = fmt.Sprintf("M%s %sh%sM%s %sv%s", num(x-r), num(y), num(2*r), num(x), num(y-r), num(2*r)), false
	case Cross:
		d, filled = fmt.Sprintf("M%s %sl%s %sM%s %sl%s %s", num(x-r), num(y-r), num(2*r), num(2*r), num(x-r), num(y+r), num(2*r), num(-2*r)), false
	default:
		return
	}
	if filled {
		w.printf(`<path d="%s"%s/>`, d, fill(c))
		return
	}
	w.printf(`<path d="%s" fill="none"%s stroke-width="1"/>`, d, stroke(c))
}

func pathOf(pts [][2]float64) string {
	var b strings.Builder
	for i, p := range pts {
		if i == 0 {
			b.WriteByte('M')
		} else {
			b.WriteByte('L')
		}
		b.WriteString(num(p[0]))
		b.WriteByte(' ')
		b.WriteString(num(p[1]))
	}
	return b.String()
}

func fill(c color.RGBA) string {
	if c.A == 255 {
		return fmt.Sprintf(` fill="%s"`, hex(c))
	}
	return fmt.Sprintf(` fill="%s" fill-opacity="%s"`, hex(c), num(float64(c.A)/255))
}

func stroke(c color.RGBA) string {
	if c.A == 255 {
		return fmt.Sprintf(` stroke="%s"`, hex(c))
	}
	return fmt.Sprintf(` stroke="%s" stroke-opacity="%s"`, hex(c), num(float64(c.A)/255))
}

func hex(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// num formats a coordinate with two decimals at most.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

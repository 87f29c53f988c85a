package svgplot

import (
	"encoding/xml"
	"image/color"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ raw, want float64 }{
		{0.21, 0.25}, {6, 10}, {1, 1}, {1.2, 2}, {3, 5}, {0.003, 0.005}, {1e6, 1e6}, {0, 1}, {math.NaN(), 1},
	} {
		if got := niceStep(c.raw); math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("niceStep(%g) = %g, want %g", c.raw, got, c.want)
		}
	}
	for _, c := range []struct {
		step float64
		want int
	}{{1, 0}, {10, 0}, {0.5, 1}, {0.25, 2}, {0.005, 3}, {2.5, 1}} {
		if got := decimals(c.step); got != c.want {
			t.Errorf("decimals(%g) = %d, want %d", c.step, got, c.want)
		}
	}
}

// The axis takes the data's range widened to whole steps, keeps fixed
// ends, reaches the included values and labels every step.
func TestAxisResolve(t *testing.T) {
	nan := math.NaN()
	a := Axis{Min: nan, Max: nan}
	lo, hi, ticks := a.resolve(3, 27.5)
	if lo != 0 || hi != 30 {
		t.Errorf("range [%g, %g], want [0, 30]", lo, hi)
	}
	var labels []string
	for _, tk := range ticks {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if want := []string{"0", "5", "10", "15", "20", "25", "30"}; !slices.Equal(labels, want) {
		t.Errorf("labels %v, want %v", labels, want)
	}
	a = Axis{Min: 0, Max: nan, Include: []float64{1.05}}
	if lo, hi, _ := a.resolve(0.5, 1); lo != 0 || hi != 1.25 {
		t.Errorf("ratios: range [%g, %g], want [0, 1.25]", lo, hi)
	}
	a = Axis{Min: nan, Max: nan}
	if lo, hi, _ := a.resolve(math.Inf(1), math.Inf(-1)); lo != 0 || hi != 1 {
		t.Errorf("no data: range [%g, %g], want [0, 1]", lo, hi)
	}
	if lo, hi, _ := a.resolve(4, 4); lo >= 4 || hi <= 4 {
		t.Errorf("one value: range [%g, %g] does not hold 4 inside", lo, hi)
	}
	// Huge magnitudes (times from a damaged trace) end with few ticks.
	for _, v := range []float64{1e17, 1e300, -1e300} {
		if _, _, ticks := a.resolve(v, v*(1+1e-15)); len(ticks) > 50 {
			t.Errorf("around %g: %d ticks", v, len(ticks))
		}
		if _, _, ticks := a.resolve(v, v); len(ticks) > 50 { // v±1 is v
			t.Errorf("at %g: %d ticks", v, len(ticks))
		}
	}
	if _, _, ticks := a.resolve(-1e308, 1e308); len(ticks) > 50 {
		t.Errorf("±1e308: %d ticks", len(ticks))
	}
}

// parse checks that s is one well-formed svg element and returns its
// elements' names and the texts it shows.
func parse(t *testing.T, s string) (names, texts []string) {
	t.Helper()
	if !strings.HasPrefix(s, "<svg") {
		t.Fatalf("not an svg element: %.40s", s)
	}
	d := xml.NewDecoder(strings.NewReader(s))
	inText := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			names = append(names, tk.Name.Local)
			inText = tk.Name.Local == "text"
		case xml.CharData:
			if inText {
				texts = append(texts, string(tk))
			}
		case xml.EndElement:
			inText = false
		}
	}
}

// A label is escaped as the page's text: markup as entities, NUL (no
// character of XML) as U+FFFD.
func TestTextEscaped(t *testing.T) {
	p := New("t\x00<script>'\"&", "x\x00", "y\x00")
	p.Add(&Bars{Values: []float64{1}, Width: 10, Color: color.RGBA{A: 255}})
	p.Legend("k\x00</text>", Key{Box: true})
	svg := p.SVG(400, 200)
	if strings.ContainsRune(svg, 0) {
		t.Fatalf("NUL in %q", svg)
	}
	_, texts := parse(t, svg)
	for _, want := range []string{"t\uFFFD<script>'\"&", "x\uFFFD", "y\uFFFD", "k\uFFFD</text>"} {
		if !slices.Contains(texts, want) {
			t.Errorf("text %q missing from %q", want, texts)
		}
	}
}

// Bars stand on their base at x = X0 + i, their heights proportional to
// their values, and labels are escaped text.
func TestBarsAndText(t *testing.T) {
	p := New(`a <b> & "c"`, "x", "y")
	green := color.RGBA{G: 200, A: 255}
	b := &Bars{Values: []float64{1, 2, 4}, Width: 10, Color: green}
	top := &Bars{Values: []float64{1, 1, 1}, Base: b.Tops(), Width: 10, Color: color.RGBA{B: 200, A: 255}}
	p.Add(b, top)
	p.NominalX("r0", "r1", "r2")
	p.Y.Min = 0
	p.Legend("work", Key{Color: green, Box: true})
	svg := p.SVG(400, 200)
	names, texts := parse(t, svg)
	for _, want := range []string{`a <b> & "c"`, "r0", "r1", "r2", "work", "x", "y"} {
		if !slices.Contains(texts, want) {
			t.Errorf("text %q missing from %q", want, texts)
		}
	}
	if !slices.Contains(names, "path") {
		t.Error("nothing drawn")
	}
	// The green bars: M x0 y0 H x1 V y1 ..., y0 the top (smaller y).
	re := regexp.MustCompile(`<path d="M([\d.]+) ([\d.]+)H([\d.]+)V([\d.]+)H[\d.]+Z" fill="#00c800"/>`)
	m := re.FindAllStringSubmatch(svg, -1)
	if len(m) != 4 {
		t.Fatalf("%d green boxes, want 3 bars and the legend's", len(m))
	}
	var h, x []float64
	for _, g := range m[:3] {
		x0, _ := strconv.ParseFloat(g[1], 64)
		y0, _ := strconv.ParseFloat(g[2], 64)
		x1, _ := strconv.ParseFloat(g[3], 64)
		y1, _ := strconv.ParseFloat(g[4], 64)
		if math.Abs(x1-x0-10) > 0.02 {
			t.Errorf("bar width %g, want 10", x1-x0)
		}
		h = append(h, y1-y0)
		x = append(x, (x0+x1)/2)
	}
	if math.Abs(h[1]-2*h[0]) > 0.05 || math.Abs(h[2]-4*h[0]) > 0.05 {
		t.Errorf("bar heights %v, not as 1:2:4", h)
	}
	if math.Abs((x[1]-x[0])-(x[2]-x[1])) > 0.05 || x[1] <= x[0] {
		t.Errorf("bar centres %v, not evenly spaced left to right", x)
	}
}

// Lines, rectangles and markers draw, NaN values included, and every
// number written is finite.
func TestItemsDraw(t *testing.T) {
	p := New("", "", "")
	p.Add(&Line{X: []float64{0, 1, 2}, Y: []float64{1, math.NaN(), 3}, Color: Color(0), Width: 1.5, Step: true, Fill: color.RGBA{G: 100, A: 80}, Shape: Shapes(0), Dashes: Dashes(1)})
	p.Add(&Rects{X0: []float64{0, 1}, X1: []float64{0, 2}, Y0: []float64{0, 1}, Y1: []float64{0.5, 1.5}, Colors: []color.RGBA{Color(1), Color(2)}, MinWidth: 1, Link: color.RGBA{A: 255}})
	for s := Ring; s <= Cross; s++ {
		p.Add(&Markers{X: []float64{float64(s)}, Y: []float64{2}, Shape: s, Radius: 3, Color: Color(int(s))})
		p.Legend(strconv.Itoa(int(s)), Key{Color: Color(int(s)), Shape: s, Width: 1})
	}
	svg := p.SVG(300, 200)
	names, _ := parse(t, svg)
	paths := 0
	for _, n := range names {
		if n == "path" {
			paths++
		}
	}
	if paths < 20 {
		t.Errorf("%d paths drawn", paths)
	}
	if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
		t.Error("non-finite number written")
	}
}

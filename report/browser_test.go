package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/internal/headless"
	"github.com/ptrace-dev/ptrace/report"
)

// figureScript lists each figure's SVG: its id, drawn shapes and size.
const figureScript = `JSON.stringify([...document.querySelectorAll('figure')].map(f => {
  const s = f.querySelector('svg'); const r = s ? s.getBoundingClientRect() : {width: 0, height: 0};
  return {id: f.id, shapes: s ? s.querySelectorAll('path,text').length : 0, w: r.width, h: r.height};
}))`

type fig struct {
	ID     string  `json:"id"`
	Shapes int     `json:"shapes"`
	W      float64 `json:"w"`
	H      float64 `json:"h"`
}

// The HTML report of generated traces opens in headless Chromium without
// console errors or failed loads, and every plot is there, drawn and sized.
// PTRACE_SCREENSHOT=FILE saves the halo report's screenshot (the example
// in docs/).
func TestHTMLInChromium(t *testing.T) {
	chromium := headless.Find()
	if chromium == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (apt-get install -y chromium); CI must run the browser check")
		}
		t.Skip("chromium is not installed (apt-get install -y chromium): browser check skipped")
	}
	for _, tc := range []struct {
		name, title string
		cfg         gen.Config
		figs        []string
	}{
		{"halo", "ptrace gen halo --ranks 6 --threads 4 --iterations 30 --rank-imbalance 0.6 --thread-imbalance 0.4 --jitter 0.05 --latency 5us", gen.Config{Workload: "halo", Ranks: 6, Threads: 4, Iterations: 30, RankImbalance: 0.6, ThreadImbalance: 0.4, Jitter: 0.05, LatencyNS: 5000}, []string{"plot-breakdown"}},
		{"stencil", "ptrace gen stencil --ranks 4 --threads 4 --width 64 --steps 40 --jitter 0.3 --outliers 6", gen.Config{Workload: "stencil", Ranks: 4, Threads: 4, Width: 64, Steps: 40, Jitter: 0.3, Outliers: 6, LatencyNS: 2000},
			[]string{"plot-breakdown", "plot-ready", "plot-hist-0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := gen.Generate(filepath.Join(dir, "trace"), tc.cfg); err != nil {
				t.Fatal(err)
			}
			var rep *report.Report
			err := inproc.Run(1, func(c comm.Comm) error {
				r, err := driver.Run(c, driver.Options{Dir: filepath.Join(dir, "trace")})
				rep = r
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			rep.Trace.Dir = tc.title
			page := filepath.Join(dir, "report.html")
			var b bytes.Buffer
			if err := report.WriteHTML(&b, rep, report.HTMLOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, err := headless.Load(ctx, chromium, "file://"+page, figureScript, 1200, filepath.Join(dir, "profile"))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Errors {
				t.Errorf("browser: %s", e)
			}
			var s string
			var figs []fig
			if err := json.Unmarshal(res.Eval, &s); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(s), &figs); err != nil {
				t.Fatal(err)
			}
			got := map[string]fig{}
			for _, f := range figs {
				got[f.ID] = f
				if f.Shapes < 10 || f.W < 200 || f.H < 100 {
					t.Errorf("figure %s: %d shapes, %.0f×%.0f px", f.ID, f.Shapes, f.W, f.H)
				}
			}
			for _, id := range tc.figs {
				if _, ok := got[id]; !ok {
					t.Errorf("figure %s missing (have %v)", id, figs)
				}
			}
			img, err := png.Decode(bytes.NewReader(res.Screenshot))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			if img.Bounds().Dx() != 1200 || img.Bounds().Dy() < 600 || colours(img) < 8 {
				t.Errorf("screenshot %v with %d colours: not a rendered report", img.Bounds(), colours(img))
			}
			if out := os.Getenv("PTRACE_SCREENSHOT"); out != "" && tc.name == "halo" {
				if err := os.WriteFile(out, res.Screenshot, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("%s: %d bytes of HTML, %d figures, screenshot %v", tc.name, b.Len(), len(figs), img.Bounds())
		})
	}
}

// colours counts distinct colours on a sample grid of the image.
func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y += 7 {
		for x := bd.Min.X; x < bd.Max.X; x += 7 {
			r, g, b, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, b, a}] = true
		}
	}
	return len(seen)
}

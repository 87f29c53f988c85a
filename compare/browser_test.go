package compare_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ptrace-dev/ptrace/compare"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/internal/headless"
)

// figureScript lists each figure's SVG: its id, drawn shapes and size, and
// the heat table's coloured cells.
const figureScript = `JSON.stringify({figs: [...document.querySelectorAll('figure')].map(f => {
  const s = f.querySelector('svg'); const r = s ? s.getBoundingClientRect() : {width: 0, height: 0};
  return {id: f.id, shapes: s ? s.querySelectorAll('path,text').length : 0, w: r.width, h: r.height};
}), heat: document.querySelectorAll('#heat td[style*=background]').length})`

// The comparison page opens in headless Chromium without errors, with the
// efficiency lines, the inflation bars and the ready-task overlay drawn,
// and one coloured heat cell per factor and run. PTRACE_SCREENSHOT=FILE
// saves its screenshot.
func TestHTMLInChromium(t *testing.T) {
	chromium := headless.Find()
	if chromium == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (apt-get install -y chromium); CI must run the browser check")
		}
		t.Skip("chromium is not installed (apt-get install -y chromium): browser check skipped")
	}
	_, in := family(t, gen.Config{Workload: "stencil", Width: 32, Steps: 12, Inflation: 0.1, SerialNS: 500_000, Jitter: 0.2}, []int{1, 2, 4, 8})
	res, err := compare.Compare(in, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "compare.html")
	var b bytes.Buffer
	if err := compare.WriteHTML(&b, res); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := headless.Load(ctx, chromium, "file://"+page, figureScript, 1200, filepath.Join(dir, "profile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range out.Errors {
		t.Errorf("browser: %s", e)
	}
	var s string
	if err := json.Unmarshal(out.Eval, &s); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Figs []struct {
			ID     string  `json:"id"`
			Shapes int     `json:"shapes"`
			W      float64 `json:"w"`
			H      float64 `json:"h"`
		} `json:"figs"`
		Heat int `json:"heat"`
	}
	if err := json.Unmarshal([]byte(s), &got); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, f := range got.Figs {
		ids[f.ID] = true
		if f.Shapes < 10 || f.W < 200 || f.H < 100 {
			t.Errorf("figure %s: %d shapes, %.0f×%.0f px", f.ID, f.Shapes, f.W, f.H)
		}
	}
	for _, id := range []string{"plot-efficiency", "plot-inflation", "plot-ready"} {
		if !ids[id] {
			t.Errorf("figure %s missing (have %v)", id, got.Figs)
		}
	}
	if want := len(compare.FactorTree) * len(res.Runs); got.Heat != want {
		t.Errorf("heat table: %d coloured cells, want %d", got.Heat, want)
	}
	if _, err := png.Decode(bytes.NewReader(out.Screenshot)); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if f := os.Getenv("PTRACE_SCREENSHOT"); f != "" {
		if err := os.WriteFile(f, out.Screenshot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func htmlOf(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// figures returns the inline SVG of each <figure id=...>.
func figures(t *testing.T, page string) map[string]string {
	t.Helper()
	re := regexp.MustCompile(`(?s)<figure id="([^"]+)">(.*?)</figure>`)
	out := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// The page is self-contained: no script, no external reference of any
// kind, and every plot is inline SVG that parses as XML and draws things.
func TestHTMLSelfContained(t *testing.T) {
	page := htmlOf(t, sampleReport())
	for _, bad := range []string{"<script", "http://", "https://", "<link", "@import", "url("} {
		// The SVG namespace declarations are names, not fetched resources.
		stripped := strings.NewReplacer(`xmlns="http://www.w3.org/2000/svg"`, "", `xmlns:xlink="http://www.w3.org/1999/xlink"`, "").Replace(page)
		if strings.Contains(stripped, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	figs := figures(t, page)
	for _, id := range []string{"plot-breakdown", "plot-ready", "plot-critical-path", "plot-hist-0", "plot-hist-1"} {
		svg, ok := figs[id]
		if !ok {
			t.Errorf("no figure %s", id)
			continue
		}
		if !strings.HasPrefix(strings.TrimSpace(svg), "<svg") {
			t.Errorf("%s: not inline SVG", id)
		}
		d := xml.NewDecoder(strings.NewReader(svg))
		shapes := 0
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Errorf("%s: SVG does not parse: %v", id, err)
				break
			}
			if se, ok := tok.(xml.StartElement); ok && (se.Name.Local == "path" || se.Name.Local == "text") {
				shapes++
			}
		}
		if shapes < 10 {
			t.Errorf("%s: only %d shapes", id, shapes)
		}
	}
	if os.Getenv("PTRACE_KEEP_HTML") != "" {
		os.WriteFile(filepath.Join(os.Getenv("PTRACE_KEEP_HTML"), "sample.html"), []byte(page), 0o644)
	}
}

// Tables show the report's values: POP cells coloured by value, anomalies
// marked in their construct's histogram.
func TestHTMLContent(t *testing.T) {
	r := sampleReport()
	page := htmlOf(t, r)
	if effStyle(0.55) != "background-color: hsl(12, 70%, 78%)" || effStyle(1) != "background-color: hsl(120, 70%, 78%)" {
		t.Errorf("efficiency colours: 0.55 → %s, 1 → %s; want near red and green", effStyle(0.55), effStyle(1))
	}
	for _, w := range []string{
		"Hybrid parallel efficiency", "0.55",
		string(effStyle(r.POP.OMPLoadBalance)), string(effStyle(r.POP.MPICommunicationEfficiency)),
		"stencil.c:42:9", "Tallent class <b>HL</b>", TallentReading["HL"],
		"3 of 640 tasks", "0x10000004", Dur(6_000_000) + " = " + Pct(0.6),
		"3 anomalies", // the histogram legend of stencil.c:42:9
	} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	// The per-process POP table has one row per process.
	if n := strings.Count(page[strings.Index(page, `id="pop-per-process"`):], "<tr><td>"); n < len(r.POP.PerProcess) {
		t.Errorf("%d POP rows, want %d", n, len(r.POP.PerProcess))
	}
}

// Sections are optional: a trace-only report renders, without plots.
func TestHTMLTraceOnly(t *testing.T) {
	r := &Report{Schema: SchemaVersion, Trace: sampleReport().Trace}
	page := htmlOf(t, r)
	if len(figures(t, page)) != 0 || strings.Contains(page, "<svg") {
		t.Error("plots without data")
	}
	if !strings.Contains(page, r.Trace.Dir) {
		t.Error("no trace facts")
	}
}

// The wait states' heat map and root causes appear with the section, and
// nothing of them without it.
func TestHTMLWaitStates(t *testing.T) {
	r := sampleReport()
	if page := htmlOf(t, r); strings.Contains(page, "Wait states") || strings.Contains(page, "wait-heat") {
		t.Error("wait states in a report without them")
	}
	r.WaitStates = &WaitStates{
		WaitTimes:  WaitTimes{MPINS: 100, Calls: 2, LateSenderNS: 80, OtherNS: 20, WaitingCalls: 1},
		CallSites:  []WaitSite{{Func: "MPI_Recv", WaitTimes: WaitTimes{MPINS: 100, Calls: 2, LateSenderNS: 80, OtherNS: 20}}},
		PerProcess: []WaitProcess{{Rank: 0, WaitTimes: WaitTimes{MPINS: 100, LateSenderNS: 80, OtherNS: 20}}, {Rank: 1, CausedNS: 80, DelayNS: 60}},
		Causes:     []WaitCause{{Rank: 1, Func: "MPI_Recv", Pattern: "late_sender", NS: 80, Share: 1, Calls: 1}},
		Delays:     []WaitDelay{{Rank: 1, Code: "slow_compute (s.c:3:1)", NS: 60, Share: 0.75, LongTermNS: 15, PropagatedNS: 5, Waits: 1}},
	}
	page := htmlOf(t, r)
	for _, want := range []string{`id="wait-heat"`, `id="wait-sites"`, "<b>slow_compute (s.c:3:1)</b> costs 75.0% of all waiting (its excess time before the calls waited for), and 15 ns more through the waits it propagated", `title="80.0% of its MPI time">80 ns`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// A pure MPI program's per-process POP table has no OpenMP columns: they
// are 1 by construction and zeros (NPB LU, FT, MG showed four columns of
// 1.00 and two of 0 ns under a table that left the OpenMP rows out).
func TestHTMLPOPPerProcessPureMPI(t *testing.T) {
	table := func(r *Report) string {
		page := htmlOf(t, r)
		i := strings.Index(page, `id="pop-per-process"`)
		if i < 0 {
			t.Fatal("no per-process POP table")
		}
		return page[i : i+strings.Index(page[i:], "</table>")]
	}
	r := sampleReport()
	if tb := table(r); !strings.Contains(tb, "<th>OpenMP parallel</th>") || !strings.Contains(tb, strconv.FormatFloat(r.POP.PerProcess[1].OMPLoadBalance, 'f', 2, 64)) {
		t.Errorf("hybrid table lacks the OpenMP columns:\n%s", tb)
	}
	r.Trace.NoOpenMP = true
	tb := table(r)
	for _, w := range []string{"OpenMP parallel", "serialization", "scheduling", "fork/join", "idle during MPI"} {
		if strings.Contains(tb, w) {
			t.Errorf("pure MPI table has %q:\n%s", w, tb)
		}
	}
	if n := strings.Count(tb, "<td>"); n != 4*len(r.POP.PerProcess) {
		t.Errorf("pure MPI table has %d cells, want rank, threads, elapsed, useful for %d processes:\n%s", n, len(r.POP.PerProcess), tb)
	}
	if !strings.Contains(tb, Dur(r.POP.PerProcess[1].UsefulNS)) {
		t.Errorf("pure MPI table lacks rank 1's useful time:\n%s", tb)
	}
}

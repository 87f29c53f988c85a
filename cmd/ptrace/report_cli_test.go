package main

import (
	"encoding/csv"
	"encoding/json"
	stdhtml "html"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
)

// analyze --csv/--html write their files; export --perfetto writes a trace
// the JSON parser reads, with the critical path given as the analysis's CSV.
func TestReportAndExportFlags(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "trace")
	if _, err := gen.Generate(tr, gen.Config{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 5}); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(binDir, "ptrace")
	html := filepath.Join(dir, "r.html")
	csvDir := filepath.Join(dir, "csv")
	if r := run(t, bin, "analyze", tr, "--csv", csvDir, "--html", html, "-q"); r.code != 0 {
		t.Fatalf("analyze: %s", r.stderr)
	}
	page, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(page), "<!DOCTYPE html>") || !strings.Contains(string(page), tr) {
		t.Errorf("--html wrote no report (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(csvDir, "breakdown_per_process.csv")); err != nil {
		t.Errorf("--csv: %v", err)
	}
	path := filepath.Join(dir, "path.csv")
	if err := os.WriteFile(path, []byte("rank,thread,start_ns,dur_ns,kind,construct\n0,0,1000,5000,task,a.c:1\n1,0,7000,2000,task,a.c:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "t.json")
	r := run(t, bin, "export", "--perfetto", out, "--critical-path", path, tr)
	if r.code != 0 || !strings.Contains(r.stdout, "wrote "+out) {
		t.Fatalf("export: %d %s %s", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("export output is not JSON: %v", err)
	}
	crit := 0
	for _, e := range doc.TraceEvents {
		if e["cat"] == "critical_path" && e["ph"] == "X" {
			crit++
		}
	}
	if crit != 2 {
		t.Errorf("%d critical-path slices, want 2", crit)
	}
	for _, bad := range [][]string{
		{"export", tr},
		{"export", "--perfetto", out, "--window", "5ms", tr},
		{"export", "--perfetto", out, "--ranks", "9", tr},
		{"export", "--perfetto", out, "--critical-path", filepath.Join(dir, "none.csv"), tr},
	} {
		if r := run(t, bin, bad...); r.code == 0 {
			t.Errorf("ptrace %v succeeded", bad)
		}
	}
}

// The file analyze --critical-path writes is the file export --critical-path
// reads, for every gen workload: join nodes (thread -1) included, and every
// node that falls in the exported window drawn.
func TestCriticalPathFileRoundTrip(t *testing.T) {
	bin := ptraceBin()
	for _, wl := range gen.Workloads {
		t.Run(wl, func(t *testing.T) {
			dir := t.TempDir()
			tr := filepath.Join(dir, "trace")
			if _, err := gen.Generate(tr, gen.Config{Workload: wl, Ranks: 2, Threads: gen.ThreadsFor(wl, 2), Iterations: 3}); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "cp.csv")
			csvDir := filepath.Join(dir, "csv")
			if r := run(t, bin, "analyze", "-q", "--critical-path", path, "--csv", csvDir, tr); r.code != 0 {
				t.Fatalf("analyze: %s", r.stderr)
			}
			// The segments table of --csv is the other file export reads.
			seg := filepath.Join(csvDir, "critical_path.csv")
			if r := run(t, bin, "export", "--perfetto", filepath.Join(dir, "s.json"), "--critical-path", seg, tr); r.code != 0 {
				t.Fatalf("export rejects the critical_path.csv analyze --csv wrote: %s", r.stderr)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := report.ReadPathCSV(f, path)
			f.Close()
			if err != nil {
				t.Fatalf("the file analyze wrote does not read back: %v", err)
			}
			if len(nodes) == 0 {
				t.Fatal("empty critical path")
			}
			out := filepath.Join(dir, "t.json")
			if r := run(t, bin, "export", "--perfetto", out, "--critical-path", path, tr); r.code != 0 {
				t.Fatalf("export rejects the file analyze wrote: %s", r.stderr)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				TraceEvents []map[string]any `json:"traceEvents"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatalf("export output is not JSON: %v", err)
			}
			crit := 0
			for _, e := range doc.TraceEvents {
				if e["cat"] == "critical_path" && e["ph"] == "X" {
					crit++
				}
			}
			if crit == 0 {
				t.Errorf("no critical-path slice drawn from %d nodes", len(nodes))
			}
		})
	}
}

// The text, JSON, CSV and HTML reports of one analysis agree on what issue
// #17 added: the clock-sync words, the advice and its numbers, the fork/join
// and idle-during-MPI components in total and per process.
func TestReportsAgree(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "trace")
	if _, err := gen.Generate(tr, gen.Config{Workload: "halo", Ranks: 2, Threads: 3, Iterations: 4, ForkNS: 20_000, JoinNS: 10_000,
		ThreadImbalance: 0.5, SkewNS: 500_000, LatencyNS: 2000}); err != nil {
		t.Fatal(err)
	}
	js, csvDir, html := filepath.Join(dir, "r.json"), filepath.Join(dir, "csv"), filepath.Join(dir, "r.html")
	r := run(t, ptraceBin(), "analyze", "--json", js, "--csv", csvDir, "--html", html, tr)
	if r.code != 0 {
		t.Fatalf("analyze: %s", r.stderr)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	bd, pop, cs := rep.Breakdown, rep.POP, rep.ClockSync
	if bd.Advice == nil || bd.ForkJoinNS == 0 || bd.IdleDuringMPINS == 0 || pop.ForkJoinNS == 0 {
		t.Fatalf("the JSON lacks what the others must agree on: %+v", bd)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	htmlText := stdhtml.UnescapeString(string(page))
	for _, s := range []string{
		report.ClockSummary(cs),
		report.AdviceLine(bd.Advice),
		report.RawLine(bd.ForkJoinNS, bd.IdleDuringMPINS, bd.IdleSerialDuringMPINS),
		report.RawLine(pop.ForkJoinNS, pop.IdleDuringMPINS, pop.IdleSerialDuringMPINS),
	} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("text report lacks %q", s)
		}
		if !strings.Contains(htmlText, s) {
			t.Errorf("HTML report lacks %q", s)
		}
	}
	// CSV: the same integers as the JSON, per process and in the summaries.
	csvRows := func(name string) []map[string]string {
		f, err := os.Open(filepath.Join(csvDir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var out []map[string]string
		for _, rec := range recs[1:] {
			m := map[string]string{}
			for i, h := range recs[0] {
				m[h] = rec[i]
			}
			out = append(out, m)
		}
		return out
	}
	eq := func(what, got string, want int64) {
		if got != strconv.FormatInt(want, 10) {
			t.Errorf("%s: CSV %q, JSON %d", what, got, want)
		}
	}
	for i, row := range csvRows(report.CSVBreakdown) {
		p := bd.PerProcess[i]
		eq("breakdown fork_join_ns", row["fork_join_ns"], p.ForkJoinNS)
		eq("breakdown idle_during_mpi_ns", row["idle_during_mpi_ns"], p.IdleDuringMPINS)
		eq("breakdown idle_serial_during_mpi_ns", row["idle_serial_during_mpi_ns"], p.IdleSerialDuringMPINS)
		if !strings.Contains(htmlText, report.Dur(pop.PerProcess[i].ForkJoinNS)) {
			t.Errorf("HTML lacks rank %d's fork/join %s", p.Rank, report.Dur(pop.PerProcess[i].ForkJoinNS))
		}
	}
	for i, row := range csvRows(report.CSVPOP) {
		q := pop.PerProcess[i]
		eq("pop fork_join_ns", row["fork_join_ns"], q.ForkJoinNS)
		eq("pop idle_during_mpi_ns", row["idle_during_mpi_ns"], q.IdleDuringMPINS)
		eq("pop idle_serial_during_mpi_ns", row["idle_serial_during_mpi_ns"], q.IdleSerialDuringMPINS)
	}
	sum := map[string]string{}
	for _, row := range csvRows(report.CSVPOPSummary) {
		sum[row["metric"]] = row["value"]
	}
	eq("pop_summary fork_join_ns", sum["fork_join_ns"], pop.ForkJoinNS)
	eq("pop_summary idle_during_mpi_ns", sum["idle_during_mpi_ns"], pop.IdleDuringMPINS)
	adv := csvRows(report.CSVAdvice)
	if len(adv) != 1 || adv[0]["dominant"] != bd.Advice.Dominant || adv[0]["text"] != bd.Advice.Text {
		t.Errorf("advice.csv %v, JSON %+v", adv, bd.Advice)
	} else {
		eq("advice serial_ns", adv[0]["serial_ns"], bd.Advice.SerialNS)
		eq("advice imbalance_ns", adv[0]["imbalance_ns"], bd.Advice.ImbalanceNS)
		eq("advice starvation_ns", adv[0]["starvation_ns"], bd.Advice.StarvationNS)
		eq("advice overhead_ns", adv[0]["overhead_ns"], bd.Advice.OverheadNS)
	}
	for i, row := range csvRows(report.CSVClockSync) {
		eq("clocksync violations_interpolated", row["violations_interpolated"], cs.PerProcess[i].ViolationsInterpolated)
	}
}

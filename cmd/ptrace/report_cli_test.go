package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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
			if _, err := gen.Generate(tr, gen.Config{Workload: wl, Ranks: 2, Threads: 2, Iterations: 3}); err != nil {
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

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
)

// genFamily writes a stencil family with inflation and a serial task
// through the CLI and returns its directory.
func genFamily(t *testing.T, ranks string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fam")
	r := run(t, ptraceBin(), "gen", "stencil", "--family", "1,2,4", "--ranks", ranks, "--width", "24", "--steps", "8",
		"--inflation", "0.2", "--serial", "300us", "--jitter", "0.1", "-o", dir)
	if r.code != 0 {
		t.Fatalf("gen --family: exit %d: %s", r.code, r.stderr)
	}
	return dir
}

func familyDirs(dir string) []string {
	return []string{gen.FamilyDir(dir, 1), gen.FamilyDir(dir, 2), gen.FamilyDir(dir, 4)}
}

// analyzeEach writes each trace directory's report beside it (DIR.json)
// and returns their paths.
func analyzeEach(t *testing.T, dirs []string) []string {
	t.Helper()
	var jsons []string
	for _, d := range dirs {
		j := d + ".json"
		if r := run(t, ptraceBin(), "analyze", "-q", "--json", j, d); r.code != 0 {
			t.Fatalf("analyze %s: exit %d: %s", d, r.code, r.stderr)
		}
		jsons = append(jsons, j)
	}
	return jsons
}

// compare on trace directories and compare on the reports analyze --json
// wrote for them print the same JSON and the same text, and the JSON holds
// the family's expected values.
func TestCompareTracesEqualsReports(t *testing.T) {
	dir := genFamily(t, "2")
	dirs := familyDirs(dir)
	jsons := analyzeEach(t, dirs)
	fromTraces := run(t, ptraceBin(), append([]string{"compare", "--json", "-"}, dirs...)...)
	fromReports := run(t, ptraceBin(), append([]string{"compare", "--json", "-"}, jsons...)...)
	if fromTraces.code != 0 || fromReports.code != 0 {
		t.Fatalf("exit %d, %d: %s %s", fromTraces.code, fromReports.code, fromTraces.stderr, fromReports.stderr)
	}
	if fromTraces.stdout != fromReports.stdout {
		t.Errorf("compare JSON differs between traces and reports:\n%s\n---\n%s", fromTraces.stdout, fromReports.stdout)
	}
	checkExpected(t, fromTraces.stdout, filepath.Join(dir, "expected-compare.json"), "")
	// Mixed: two traces and one report; the text too, but for its timing line.
	textA := run(t, ptraceBin(), append([]string{"compare", "-q=false"}, dirs...)...)
	textB := run(t, ptraceBin(), "compare", dirs[0], jsons[1], dirs[2])
	strip := func(s string) string { return s[:strings.LastIndex(s, "compared in")] }
	if textA.code != 0 || textB.code != 0 || strip(textA.stdout) != strip(textB.stdout) {
		t.Errorf("text differs (exit %d, %d):\n%s\n---\n%s", textA.code, textB.code, textA.stdout, textB.stdout)
	}
	for _, want := range []string{"POP scaling", "Computation scalability", "Work-time inflation", "Bounds", "What changed", "no hardware counters"} {
		if !strings.Contains(textA.stdout, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	// HTML and CSV outputs are written.
	out := t.TempDir()
	r := run(t, ptraceBin(), append([]string{"compare", "-q", "--html", filepath.Join(out, "c.html"), "--csv", filepath.Join(out, "csv")}, jsons...)...)
	if r.code != 0 {
		t.Fatalf("html/csv: exit %d: %s", r.code, r.stderr)
	}
	for _, f := range []string{"c.html", "csv/scaling.csv", "csv/inflation.csv", "csv/bounds.csv", "csv/changes.csv", "csv/problems.csv"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// A directory that is not a trace, a trace that fails to load, a JSON file
// that is not a report and a run of another program: each is named on
// stderr and in the JSON, the family is still compared, and the exit
// status is 1.
func TestCompareNamesBadRuns(t *testing.T) {
	dir := genFamily(t, "1")
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	broken := damage(t, genTrace(t, "stencil", "--ranks", "3", "--threads", "2"), "truncated")
	stray := filepath.Join(t.TempDir(), "stray.json")
	if err := os.WriteFile(stray, []byte(`{"schema": "something/else"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	other := genTrace(t, "forkjoin", "--threads", "2")
	missing := filepath.Join(t.TempDir(), "nowhere")
	args := append([]string{"compare", "--json", "-"}, familyDirs(dir)...)
	args = append(args, empty, broken, stray, other, missing)
	r := run(t, ptraceBin(), args...)
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	for _, want := range []string{
		empty + ": an empty directory",
		broken + ": ", "rank-00002.ptrace",
		stray + ": ", "not a ptrace report",
		other + ": ", "shares no task construct",
		missing + ": ", "no such file",
		"5 of 8 runs left out",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if n := strings.Count(r.stdout, `"cores":`); n != 3*2 { // runs and their bounds
		t.Errorf("JSON has %d cores keys, want the 3 family runs with bounds:\n%s", n, r.stdout)
	}
	checkExpected(t, r.stdout, filepath.Join(dir, "expected-compare.json"), "")
	// Nothing usable: an error, exit 1.
	r = run(t, ptraceBin(), "compare", empty, stray)
	if r.code == 0 || !strings.Contains(r.stderr, "no run to compare") {
		t.Errorf("nothing to compare: exit %d: %s", r.code, r.stderr)
	}
}

// Reports that lie are left out, named with the JSON path of the lie, and
// the honest runs are still compared (issue 42, item 1): before, a report
// with threads_per_process = -4 became the reference ("1 process, -4
// cores") and the others reached a global efficiency of 1.09. A 12 GB file
// given as a RUN is refused without being read (it was a fatal
// out-of-memory), as a report or as a trace.
func TestCompareRefusesHostileReports(t *testing.T) {
	dir := genFamily(t, "1")
	dirs := familyDirs(dir)
	jsons := analyzeEach(t, dirs)
	b, err := os.ReadFile(jsons[0])
	if err != nil {
		t.Fatal(err)
	}
	lie := func(name, from, to string) string {
		if !strings.Contains(string(b), from) {
			t.Fatalf("report lacks %q", from)
		}
		p := filepath.Join(t.TempDir(), name)
		os.WriteFile(p, []byte(strings.Replace(string(b), from, to, 1)), 0o644)
		return p
	}
	tpp := lie("tpp.json", `"threads_per_process": 1,`, `"threads_per_process": -4,`)
	el := lie("elapsed.json", `"elapsed_ns": `, `"elapsed_ns": -1, "x": `)
	huge := filepath.Join(t.TempDir(), "huge.json")
	f, _ := os.Create(huge)
	f.WriteString("{")
	f.Truncate(12 << 30)
	f.Close()
	zeros := filepath.Join(t.TempDir(), "zeros")
	f, _ = os.Create(zeros)
	f.Truncate(12 << 30)
	f.Close()
	args := append([]string{"compare", "--json", "-"}, tpp, el, huge, zeros)
	r := run(t, ptraceBin(), append(args, jsons...)...)
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	for _, want := range []string{tpp + ": pop.threads_per_process", el + ": pop.elapsed_ns", huge + ": ", "more than a report can hold", zeros + ": ", "4 of 7 runs left out"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	checkExpected(t, r.stdout, filepath.Join(dir, "expected-compare.json"), "")
}

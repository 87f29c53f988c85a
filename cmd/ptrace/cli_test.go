package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/trace"
)

// binDir holds the ptrace binaries built once for the CLI tests.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ptrace-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "ptrace"), ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build ptrace: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// ptrace runs a ptrace binary with a 60 s limit.
func run(t *testing.T, bin string, args ...string) result {
	t.Helper()
	return runCmd(t, exec.Command(bin, args...))
}

func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	c.Env = cmd.Env
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	err := c.Run()
	r := result{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%v: did not finish within 60 s (hang?)\nstderr: %s", cmd.Args, r.stderr)
	}
	return r
}

func ptraceBin() string { return filepath.Join(binDir, "ptrace") }

func genTrace(t *testing.T, args ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	r := run(t, ptraceBin(), append([]string{"gen", "-o", dir}, args...)...)
	if r.code != 0 {
		t.Fatalf("gen %v: exit %d: %s", args, r.code, r.stderr)
	}
	return dir
}

// Every workload goes through gen, validate and analyze on the command line,
// and the JSON report carries the expected values.
func TestGenValidateAnalyze(t *testing.T) {
	for _, wl := range gen.Workloads {
		dir := genTrace(t, wl, "--ranks", "3", "--threads", fmt.Sprint(gen.ThreadsFor(wl, 2)))
		if r := run(t, ptraceBin(), "validate", dir); r.code != 0 {
			t.Fatalf("%s: validate exit %d:\n%s%s", wl, r.code, r.stdout, r.stderr)
		}
		r := run(t, ptraceBin(), "analyze", "--ranks", "2", "--json", "-", dir)
		if r.code != 0 {
			t.Fatalf("%s: analyze exit %d: %s", wl, r.code, r.stderr)
		}
		checkExpected(t, r.stdout, filepath.Join(dir, "expected.json"), wl+": ")
	}
}

// The tree workload's schedules (work-first, the tied-task constraint)
// leave threads idle in taskwaits while tasks they may not run are ready:
// POT's overhead and the OpenMP wait states by reason are the schedule's,
// whatever the radix, depth, team size and jitter.
func TestTreeExpected(t *testing.T) {
	for _, args := range [][]string{
		{"--ranks", "3", "--threads", "8", "--steps", "7", "--jitter", "0.5", "--seed", "4"},
		{"--ranks", "1", "--threads", "3", "--radix", "3", "--steps", "5", "--jitter", "0.3"},
		{"--ranks", "2", "--threads", "5", "--radix", "5", "--steps", "4", "--jitter", "0.7", "--seed", "9"},
		{"--ranks", "2", "--threads", "2", "--radix", "1", "--steps", "6"},
	} {
		dir := genTrace(t, append([]string{"tree"}, args...)...)
		r := run(t, ptraceBin(), "analyze", "--ranks", "1", "--json", "-", dir)
		if r.code != 0 {
			t.Fatalf("tree %v: analyze exit %d: %s", args, r.code, r.stderr)
		}
		checkExpected(t, r.stdout, filepath.Join(dir, "expected.json"), fmt.Sprintf("tree %v: ", args))
	}
}

// The JSON report is the same byte for byte whatever the number of
// in-process analysis ranks. With fewer ranks than processes a rank
// simulates several processes with the tables the previous one left
// (sim.Spare, ompt.Spare): the untied workload's processes use the same
// dependence address, as processes of one binary often do. With more
// ranks than processes (5, 7, 8 for 4) the ranks past the processes idle,
// which one line on stderr says (not with -q).
func TestAnalyzeSameForRankCounts(t *testing.T) {
	for _, args := range [][]string{
		{"halo", "--ranks", "4", "--threads", "3", "--rank-imbalance", "0.5", "--skew", "100us", "--drift", "5"},
		{"nearest", "--ranks", "4", "--threads", "2", "--width", "24", "--steps", "20", "--fraction", "0.7", "--jitter", "0.3"},
		{"untied", "--ranks", "4", "--threads", "2", "--steps", "30", "--jitter", "0.3"},
	} {
		dir := genTrace(t, args...)
		var first string
		for _, k := range []int{1, 2, 3, 4, 5, 7, 8} {
			r := run(t, ptraceBin(), "analyze", "--ranks", fmt.Sprint(k), "--json", "-", dir)
			if r.code != 0 {
				t.Fatalf("%s, %d ranks: exit %d: %s", args[0], k, r.code, r.stderr)
			}
			if k == 1 {
				first = r.stdout
			} else if r.stdout != first {
				t.Errorf("%s: report on %d ranks differs from 1 rank", args[0], k)
			}
			idle := "rank 4 has no process to analyse and idle"
			if k > 5 {
				idle = fmt.Sprintf("ranks 4–%d have no process to analyse and idle", k-1)
			}
			if note := fmt.Sprintf("ptrace: %d analysis ranks for 4 processes: %s\n", k, idle); k > 4 && !strings.Contains(r.stderr, note) {
				t.Errorf("%s, %d ranks: stderr lacks %q:\n%s", args[0], k, note, r.stderr)
			} else if k <= 4 && strings.Contains(r.stderr, "idle") {
				t.Errorf("%s, %d ranks: stderr speaks of idle ranks:\n%s", args[0], k, r.stderr)
			}
		}
		if r := run(t, ptraceBin(), "analyze", "-q", "--ranks", "6", "--json", "-", dir); r.code != 0 || r.stdout != first || r.stderr != "" {
			t.Errorf("%s, -q on 6 ranks: exit %d, report same %v, stderr %q", args[0], r.code, r.stdout == first, r.stderr)
		}
	}
}

// damage copies a trace and breaks rank 2's file in one of several ways.
func damage(t *testing.T, src, how string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "broken")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(src)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(src, e.Name()))
		os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644)
	}
	victim := filepath.Join(dst, trace.FileName(2))
	switch how {
	case "missing":
		os.Remove(victim)
	case "corrupt":
		b, _ := os.ReadFile(victim)
		b[len(b)/2] ^= 0x5a
		os.WriteFile(victim, b, 0o644)
	case "truncated":
		b, _ := os.ReadFile(victim)
		os.WriteFile(victim, b[:len(b)*2/3], 0o644)
	}
	return dst
}

// One failing rank makes the whole analysis exit non-zero quickly with that
// rank's message naming the file.
func TestFailingRankInproc(t *testing.T) {
	src := genTrace(t, "stencil", "--ranks", "4", "--threads", "2")
	for _, how := range []string{"missing", "corrupt", "truncated", "missing/6", "corrupt/6", "truncated/6"} {
		how, ranks, _ := strings.Cut(how, "/") // 6 ranks: two own no process
		if ranks == "" {
			ranks = "4"
		}
		dir := damage(t, src, how)
		r := run(t, ptraceBin(), "analyze", "--ranks", ranks, "-q", dir)
		if r.code == 0 {
			t.Errorf("%s: exit 0", how)
		}
		if r.took > 10*time.Second {
			t.Errorf("%s: took %v", how, r.took)
		}
		if !strings.Contains(r.stderr, "rank-00002.ptrace") {
			t.Errorf("%s: stderr does not name the file: %q", how, r.stderr)
		}
		if how != "missing" && !strings.Contains(r.stderr, "offset") {
			t.Errorf("%s: stderr does not give an offset: %q", how, r.stderr)
		}
		v := run(t, ptraceBin(), "validate", dir)
		if v.code == 0 {
			t.Errorf("%s: validate exit 0", how)
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	r := run(t, ptraceBin(), "version")
	if r.code != 0 || !strings.Contains(r.stdout, "trace format 4") {
		t.Errorf("version: %d %q", r.code, r.stdout)
	}
	for _, sub := range []string{"gen", "validate", "analyze", "record", "export", "version", "demo", "compare"} {
		r := run(t, ptraceBin(), sub, "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("%s --help: exit %d, %q", sub, r.code, r.stdout)
		}
	}
}

// --stats names the assignment of processes to analysis ranks: 7 processes
// of equal size on 3 ranks, in contiguous blocks whose largest holds 3 (a
// load 9/7 of the mean; the partition minimises the largest block: 3, 3, 1).
func TestStatsReportsAssignment(t *testing.T) {
	dir := genTrace(t, "imbalance", "--ranks", "7", "--threads", "2")
	r := run(t, ptraceBin(), "analyze", "--ranks", "3", "-q", "--stats", dir)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if want := "analysis ranks: 3, 1–3 processes each, event load max/mean 1.286"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	// Two ranks more than processes: they idle, and the balance is the
	// busy ranks'.
	r = run(t, ptraceBin(), "analyze", "--ranks", "9", "-q", "--stats", dir)
	if r.code != 0 {
		t.Fatalf("9 ranks: exit %d: %s", r.code, r.stderr)
	}
	if want := "analysis ranks: 9 (2 idle, without a process), 1–1 processes each, event load max/mean 1.000"; !strings.Contains(r.stderr, want) {
		t.Errorf("9 ranks: stderr lacks %q:\n%s", want, r.stderr)
	}
}

// checkExpected reports every difference between a JSON document and the
// expected values gen wrote to path (expected.json, expected-compare.json),
// each prefixed with what.
func checkExpected(t *testing.T, doc, path, what string) {
	t.Helper()
	exp, err := gen.ReadExpected(path)
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := gen.Compare([]byte(doc), exp)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Errorf("%s%s", what, d)
	}
}

// TestHoldEventsFlags: the events are streamed by default; --hold-events
// (or the old --stream=false) keeps them, and then a memory limit too
// small for them streams anyway and says so. The report is the same.
func TestHoldEventsFlags(t *testing.T) {
	dir := genTrace(t, "stencil", "--ranks", "2", "--threads", "2", "--events", "400000")
	// A limit the analysis fits in (--memory-limit is a bound: below what
	// it needs, it refuses; one rank needs about 4 bytes a trace byte
	// here, and the process's code about 12 MiB beside the Go runtime's
	// share), but the events held (8 bytes a trace byte) do not: 5 and 16 MiB.
	var bytes int64
	files, _ := filepath.Glob(filepath.Join(dir, "rank-*.ptrace"))
	for _, f := range files {
		st, _ := os.Stat(f)
		bytes += st.Size()
	}
	lim := fmt.Sprint(5*bytes + 16<<20)
	var want string
	for _, c := range []struct {
		args   []string
		notice bool
	}{
		{nil, false},
		{[]string{"--memory-limit", lim}, false}, // streaming already: nothing to say
		{[]string{"--hold-events"}, false},
		{[]string{"--hold-events", "--memory-limit", lim}, true},
		{[]string{"--stream=false", "--memory-limit", lim}, true},
		{[]string{"--stream"}, false},
	} {
		r := run(t, ptraceBin(), append(append([]string{"analyze", "-q", "--ranks", "1", "--json", "-"}, c.args...), dir)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, r.code, r.stderr)
		}
		if got := strings.Contains(r.stderr, "reading events from disk"); got != c.notice {
			t.Errorf("%v: notice %v, want %v (stderr %q)", c.args, got, c.notice, r.stderr)
		}
		if want == "" {
			want = r.stdout
		} else if r.stdout != want {
			t.Errorf("%v: the report differs from the default's", c.args)
		}
	}
}

// TestGCPercents: ptrace's collector settings unless GOGC is set, and none
// (the user's GOGC alone) when it is.
func TestGCPercents(t *testing.T) {
	t.Setenv("GOGC", "")
	if g := gcPercents(); g.Normal != gcPercent || g.Simulate != simulateGCPercent || g.CriticalPath != criticalPathGCPercent {
		t.Fatalf("GOGC unset: %+v", g)
	}
	t.Setenv("GOGC", "200")
	if g := gcPercents(); g.Normal != 0 || g.Simulate != 0 || g.CriticalPath != 0 {
		t.Fatalf("GOGC=200: %+v, want none", g)
	}
}

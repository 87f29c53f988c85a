package cube_test

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/report/cube"
)

// CubeLib's own tools reading ptrace's files. CubeLib is not packaged in
// Debian, so CI skips these (even under CI=true); where it is installed
// (../shared/tools/scorep-scalasca builds CubeLib 4.8.2 with Score-P) give
// its cube_dump with PTRACE_CUBE_DUMP=/path/to/cube_dump, or put it on
// PATH. cube_stat, cube_diff and cube_merge are taken from beside it.

func cubeTool(t *testing.T, name string) string {
	t.Helper()
	dump := os.Getenv("PTRACE_CUBE_DUMP")
	if dump == "" {
		p, err := exec.LookPath("cube_dump")
		if err != nil {
			t.Skip("CubeLib's cube_dump is not installed (not on PATH, PTRACE_CUBE_DUMP unset); CubeLib is not packaged in Debian")
		}
		dump = p
	}
	if name == "cube_dump" {
		return dump
	}
	p := filepath.Join(filepath.Dir(dump), name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s beside %s: %v", name, dump, err)
	}
	return p
}

func run(t *testing.T, tool string, args ...string) string {
	t.Helper()
	out, err := exec.Command(tool, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(tool), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// dumped holds cube_dump -s csv2 output: values by metric, call path id
// and location id.
type dumped map[string]map[[2]int]float64

func (d dumped) at(metric string, c, l int) float64 { return d[metric][[2]int{c, l}] }

// parseCSV2 reads cube_dump's csv2 layout: a header "Cnode ID, Thread
// ID,metric,..." and one row per call path and location.
func parseCSV2(t *testing.T, out string) dumped {
	t.Helper()
	rd := csv.NewReader(strings.NewReader(out))
	rd.TrimLeadingSpace = true
	rows, err := rd.ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("cube_dump output is not csv2 (%v):\n%.2000s", err, out)
	}
	head := rows[0]
	if head[0] != "Cnode ID" || head[1] != "Thread ID" {
		t.Fatalf("cube_dump header %q", head)
	}
	d := dumped{}
	for _, row := range rows[1:] {
		c, err1 := strconv.Atoi(row[0])
		l, err2 := strconv.Atoi(row[1])
		if err1 != nil || err2 != nil || len(row) != len(head) {
			t.Fatalf("cube_dump row %q", row)
		}
		for i, m := range head[2:] {
			v, err := strconv.ParseFloat(row[2+i], 64)
			if err != nil {
				t.Fatalf("cube_dump %s value %q", m, row[2+i])
			}
			if d[m] == nil {
				d[m] = map[[2]int]float64{}
			}
			d[m][[2]int{c, l}] = v
		}
	}
	return d
}

// cubeDumpTol is the relative error of cube_dump's numbers: it prints
// doubles with C++'s default 6 significant digits (CubeDoubleValue.cpp,
// getString), so a value is off by at most half a unit of the 6th digit.
const cubeDumpTol = 5.000001e-6

// TestCubeLibReads has CubeLib's cube_dump read every value of files
// rendered from real analyses, and compares them with the report's;
// cube_dump -w, cube_stat, cube_diff and cube_merge must accept the files.
func TestCubeLibReads(t *testing.T) {
	dump := cubeTool(t, "cube_dump")
	stat := cubeTool(t, "cube_stat")
	dir := t.TempDir()
	for _, cfg := range workloads {
		t.Run(name(cfg), func(t *testing.T) {
			r, _ := analyzeGen(t, cfg)
			f, err := cube.FromReport(r, cube.Options{Creator: "ptrace test"})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name(cfg)+".cubex")
			if err := f.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			d := mustDecode(t, b)
			out := run(t, dump, "-m", "all", "-s", "csv2", path)
			dm := parseCSV2(t, out)
			if len(dm) != len(d.metrics) {
				t.Fatalf("cube_dump -m all shows %d metrics, the file defines %d", len(dm), len(d.metrics))
			}
			checkValues(t, r, d, dm, cubeDumpTol)
			run(t, dump, "-w", path)

			// The share over all processes and call paths is the report's
			// share of run time.
			agg := parseAggregate(t, run(t, dump, "-m", "critical_path_share", "-z", "incl", "-t", "aggr", "-c", "roots", "-s", "csv2", path))
			if got, want := agg, r.CriticalPath.ShareOfRunTime; math.Abs(got-want) > cubeDumpTol*want+1e-12 {
				t.Errorf("critical_path_share %v, report share_of_run_time %v", got, want)
			}

			// cube_stat: the program's inclusive time is all threads' time.
			root := d.regions[d.cnodes[0].callee].name
			st := run(t, stat, "-p", "-m", "time,mpi", "-r", root, path)
			var sum int64
			for _, q := range r.Breakdown.PerProcess {
				sum += q.ThreadTimeNS
			}
			got := statIncl(t, st, root)
			if want := float64(sum) / 1e9; math.Abs(got-want) > 1e-6*want+1e-9 {
				t.Errorf("cube_stat: INCL(%s) time %v, the report's thread time %v\n%s", root, got, want, st)
			}
		})
	}
}

// parseAggregate reads the one value of cube_dump -t aggr -c roots -s csv2
// for one metric.
func parseAggregate(t *testing.T, out string) float64 {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("cube_dump aggregate output:\n%s", out)
	}
	f := strings.Split(lines[1], ",")
	v, err := strconv.ParseFloat(strings.TrimSpace(f[len(f)-1]), 64)
	if err != nil {
		t.Fatalf("cube_dump aggregate output:\n%s", out)
	}
	return v
}

// statIncl reads the time column of cube_stat -p's INCL(root) line.
func statIncl(t *testing.T, out, root string) float64 {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "INCL("+root+")"); ok {
			f := strings.Fields(rest)
			if len(f) < 1 {
				break
			}
			v, err := strconv.ParseFloat(f[0], 64)
			if err == nil {
				return v
			}
		}
	}
	t.Fatalf("cube_stat output has no INCL(%s) line:\n%s", root, out)
	return 0
}

// TestCubeLibSeries: the files of a series (compare --cube) share their
// trees, so cube_diff and cube_merge line them up; the difference of the
// program's time is the difference of the runs' thread times.
func TestCubeLibSeries(t *testing.T) {
	dump := cubeTool(t, "cube_dump")
	diff := cubeTool(t, "cube_diff")
	merge := cubeTool(t, "cube_merge")
	var reps []*report.Report
	for _, n := range []int{2, 3} {
		r, _ := analyzeGen(t, gen.Config{Workload: "halo", Ranks: n, Threads: 2, Iterations: 3, RankImbalance: 0.5})
		reps = append(reps, r)
	}
	fs, err := cube.FromReports(reps, cube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var paths []string
	for i, f := range fs {
		p := filepath.Join(dir, fmt.Sprintf("run%d.cubex", i))
		if err := f.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	out := filepath.Join(dir, "diff.cubex")
	if msg := run(t, diff, "-o", out, paths[1], paths[0]); strings.Contains(msg, "wrong") {
		t.Errorf("cube_diff complains:\n%s", msg)
	}
	got := parseAggregate(t, run(t, dump, "-m", "time", "-z", "incl", "-t", "aggr", "-c", "roots", "-s", "csv2", out))
	var want float64
	for i, r := range reps {
		sign := float64(2*i - 1)
		for _, q := range r.Breakdown.PerProcess {
			want += sign * float64(q.ThreadTimeNS) / 1e9
		}
	}
	if math.Abs(got-want) > cubeDumpTol*math.Abs(want)+1e-9 {
		t.Errorf("cube_diff: time %v, the runs differ by %v", got, want)
	}
	calltree := func(p string) string {
		s := run(t, dump, "-w", "calltree", p)
		_, tree, _ := strings.Cut(s, "CALL TREE")
		return tree
	}
	if a, b := calltree(paths[0]), calltree(out); a != b {
		t.Errorf("cube_diff's call tree differs from the runs':\n%s\n%s", a, b)
	}
	if msg := run(t, merge, "-o", filepath.Join(dir, "merge.cubex"), paths[0], paths[1]); strings.Contains(msg, "wrong") {
		t.Errorf("cube_merge complains:\n%s", msg)
	}
}

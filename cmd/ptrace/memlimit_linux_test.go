package main

import (
	"bytes"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// analyzeRSS runs an analysis of dir at ranks under limit (bytes, 0: the
// default) and returns its exit status, JSON report, standard error and
// peak resident set as the process itself read it (--stats: its VmHWM at its
// phases' ends; a peak above the limit while the reports are written is
// a warning), the least value its printed figure stands for. Not the
// rusage wait4 returns: a child the test process starts (clone with
// CLONE_VM, then exec) inherits the test process's own high-water mark
// in it, 26 MB here whatever the child does.
func analyzeRSS(t *testing.T, dir string, ranks int, limit int64) (int, []byte, string, int64) {
	t.Helper()
	args := []string{"analyze", "-q", "--stats", "--ranks", fmt.Sprint(ranks), "--json", "-", dir}
	if limit > 0 {
		args = append(args, "--memory-limit", fmt.Sprint(limit))
	}
	c := exec.Command(ptraceBin(), args...)
	var outb, errb bytes.Buffer
	c.Stdout, c.Stderr = &outb, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var peak int64
	for _, m := range statsRSS.FindAllStringSubmatch(errb.String(), -1) {
		var v float64
		fmt.Sscan(m[1], &v)
		// The figure is rounded to its last decimal (20.8 MiB is anything
		// from 20.75 up): the least it can be, so that a peak just under
		// a limit is not read as above it.
		if i := strings.IndexByte(m[1], '.'); i >= 0 {
			v -= 0.5 * math.Pow(10, -float64(len(m[1])-i-1))
		}
		peak = max(peak, int64(v*map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m[2]]))
	}
	if code == 0 && peak == 0 {
		t.Fatalf("no max RSS in --stats: %s", errb.String())
	}
	return code, outb.Bytes(), errb.String(), peak
}

// statsRSS finds a rank's max RSS in --stats' closing lines.
var statsRSS = regexp.MustCompile(`rank \d+ peak heap .*max RSS ([0-9.]+) (B|KiB|MiB|GiB)`)

var adviceRE = regexp.MustCompile(`run with --memory-limit ([0-9.]+) (KiB|MiB|GiB) or more`)

// --memory-limit bounds the process, not only its heap: an analysis that
// finishes under a limit stayed under it (its code and libraries, about
// 12 MiB of a pure-Go binary, count too) and wrote the report it writes
// unlimited, and one that cannot says so and names a limit that does
// (which is then checked). The limits go down from the unlimited run's
// peak to a fraction of it, on a hybrid trace, a pure MPI program of 64
// processes (the wait states' and matching's state) and one task-heavy
// process (the simulation's).
func TestMemoryLimitBoundsTheProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("thirty analyses of 0.5–1 M-event traces")
	}
	for _, c := range []struct {
		name  string
		ranks int
		gen   []string
	}{
		{"stencil", 2, []string{"stencil", "--ranks", "4", "--threads", "4", "--events", "1000000"}},
		{"mpi", 2, []string{"mpi", "--ranks", "64", "--events", "500000"}},
		{"lean", 1, []string{"stencil", "--lean", "--ranks", "1", "--threads", "4", "--events", "500000"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			memoryLimitSweep(t, genTrace(t, c.gen...), c.ranks)
		})
	}
}

func memoryLimitSweep(t *testing.T, dir string, ranks int) {
	code, want, stderr, free := analyzeRSS(t, dir, ranks, 0)
	if code != 0 {
		t.Fatalf("unlimited: exit %d: %s", code, stderr)
	}
	fits, stops := 0, 0
	for _, f := range []float64{1.1, 1, 0.95, 0.9, 0.85, 0.8, 0.7, 0.5, 0.3} {
		lim := int64(f * float64(free))
		code, got, stderr, rss := analyzeRSS(t, dir, ranks, lim)
		t.Logf("limit %.2f× the unlimited peak (%d): exit %d, peak %d", f, lim, code, rss)
		if code == 0 {
			fits++
			// The analysis stays under the limit; only writing the report
			// may take the process above it, and then it says so.
			if rss > lim && !strings.Contains(stderr, "above its memory limit") {
				t.Errorf("limit %d: finished with a peak resident set of %d, above it, unsaid", lim, rss)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("limit %d: the report differs from the unlimited one", lim)
			}
			continue
		}
		stops++
		if strings.Contains(stderr, "before any analysis") {
			continue // below the program's own: no analysis to advise on
		}
		m := adviceRE.FindStringSubmatch(stderr)
		if m == nil {
			t.Errorf("limit %d: exit %d without advice: %s", lim, code, stderr)
			continue
		}
		var v float64
		fmt.Sscan(m[1], &v)
		advised := int64(v * map[string]float64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m[2]])
		if code, got, stderr, rss := analyzeRSS(t, dir, ranks, advised); code != 0 || rss > advised || !bytes.Equal(got, want) {
			t.Errorf("limit %d advised %d, under which the analysis exits %d with a peak of %d (the report as unlimited: %v): %s", lim, advised, code, rss, bytes.Equal(got, want), stderr)
		}
	}
	if fits == 0 || stops == 0 {
		t.Errorf("%d limits fit and %d stopped: the test needs both", fits, stops)
	}
}

// The start refuses only a limit that leaves the Go runtime less than any
// analysis takes beyond the process's code and libraries: Score-P's
// lulesh-small (8 processes, 0.1 MB) under its unlimited peak passes the
// start and fits with the unlimited report, or stops naming a limit under
// which it does. The start refused it when it asked 4 MiB beyond the floor
// (11.4 MiB and 4 against a peak of 14.4: forty-fourth round).
func TestMemoryLimitFloorLetsSmallTracesTry(t *testing.T) {
	dir := filepath.Join("..", "..", "otf2", "testdata", "scorep-8.4-lulesh-small-nc")
	code, want, stderr, free := analyzeRSS(t, dir, 1, 0)
	if code != 0 {
		t.Fatalf("unlimited: exit %d: %s", code, stderr)
	}
	code, got, stderr, _ := analyzeRSS(t, dir, 1, free)
	t.Logf("limit %d (the unlimited peak): exit %d", free, code)
	if strings.Contains(stderr, "before any analysis") {
		t.Fatalf("limit %d, the unlimited run's peak: refused at the start: %s", free, stderr)
	}
	if code == 0 {
		if !bytes.Equal(got, want) {
			t.Errorf("limit %d: the report differs from the unlimited one", free)
		}
		return
	}
	m := adviceRE.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("limit %d: exit %d without advice: %s", free, code, stderr)
	}
	var v float64
	fmt.Sscan(m[1], &v)
	advised := int64(v * map[string]float64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m[2]])
	if code, got, stderr, rss := analyzeRSS(t, dir, 1, advised); code != 0 || rss > advised || !bytes.Equal(got, want) {
		t.Errorf("advised %d: exit %d, peak %d (the report as unlimited: %v): %s", advised, code, rss, bytes.Equal(got, want), stderr)
	}
}

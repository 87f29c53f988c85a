//go:build mpi

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptrace-dev/ptrace/report"
)

var (
	mpiOnce sync.Once
	mpiBin  string
	mpiErr  error
)

// ptraceMPI builds the mpi-tagged binary once, or skips (fails under CI)
// when mpirun is missing.
func ptraceMPI(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("mpirun"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("mpirun not found (install openmpi-bin)")
		}
		t.Skip("mpirun not found")
	}
	mpiOnce.Do(func() {
		mpiBin = filepath.Join(binDir, "ptrace-mpi")
		c := exec.Command("go", "build", "-tags", "mpi", "-o", mpiBin, ".")
		if os.Getenv("CC") == "" {
			c.Env = append(os.Environ(), "CC=mpicc") // as make ptrace-mpi
		}
		out, err := c.CombinedOutput()
		if err != nil {
			mpiErr = fmt.Errorf("build ptrace-mpi: %v\n%s", err, out)
		}
	})
	if mpiErr != nil {
		t.Fatal(mpiErr)
	}
	return mpiBin
}

func mpirun(t *testing.T, np int, args ...string) result {
	t.Helper()
	full := append([]string{"--oversubscribe", "--allow-run-as-root", "-np", fmt.Sprint(np), ptraceMPI(t)}, args...)
	return runCmd(t, exec.Command("mpirun", full...))
}

// The report under mpirun -np 1, 2, 4 equals the in-process one byte for byte.
func TestAnalyzeUnderMPI(t *testing.T) {
	ptraceMPI(t)
	halo := genTrace(t, "halo", "--ranks", "4", "--threads", "3", "--rank-imbalance", "0.5", "--skew", "100us", "--drift", "5")
	// A pipeline whose critical path crosses processes at every task.
	pipe := genTrace(t, "pipeline", "--ranks", "256", "--threads", "1", "--steps", "2", "--skew", "50us")
	for _, dir := range []string{halo, pipe} {
		want := run(t, ptraceBin(), "analyze", "--ranks", "3", "--json", "-", dir)
		if want.code != 0 {
			t.Fatalf("inproc: %s", want.stderr)
		}
		for _, np := range []int{1, 2, 4} {
			out := filepath.Join(t.TempDir(), "r.json")
			r := mpirun(t, np, "analyze", "-q", "--json", out, dir)
			if r.code != 0 {
				t.Fatalf("np %d: exit %d: %s", np, r.code, r.stderr)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want.stdout {
				t.Errorf("%s np %d: report differs from the in-process one", filepath.Base(filepath.Dir(dir)), np)
			}
		}
	}
	// Only rank 0 prints the summary.
	r := mpirun(t, 2, "analyze", halo)
	if n := strings.Count(r.stdout, "ptrace report"); r.code != 0 || n != 1 {
		t.Errorf("np 2: exit %d, %d summaries printed", r.code, n)
	}
}

// mpirun -np N on a trace of fewer processes (issue 44: an OpenMP-only
// program is one process): the ranks past the processes idle through every
// collective, the report equals one in-process rank's byte for byte, and
// rank 0 alone says so on stderr (not with -q).
func TestIdleRanksUnderMPI(t *testing.T) {
	ptraceMPI(t)
	for _, c := range []struct {
		dir   string
		procs int
	}{
		{genTrace(t, "tree", "--ranks", "1", "--threads", "3", "--steps", "6", "--jitter", "0.3"), 1},
		{genTrace(t, "mpi", "--ranks", "2", "--rank-imbalance", "0.5", "--latency", "3us"), 2},
		{genTrace(t, "nbc", "--ranks", "3", "--skew", "100us", "--drift", "5"), 3},
		{filepath.Join("..", "..", "otf2", "testdata", "scorep-8.4-mpi-waits4"), 4},
	} {
		want := run(t, ptraceBin(), "analyze", "--ranks", "1", "--json", "-", c.dir)
		if want.code != 0 {
			t.Fatalf("inproc: %s", want.stderr)
		}
		for _, np := range []int{c.procs + 1, c.procs + 3} {
			out := filepath.Join(t.TempDir(), "r.json")
			r := mpirun(t, np, "analyze", "--json", out, c.dir)
			if r.code != 0 {
				t.Fatalf("%s np %d: exit %d: %s", c.dir, np, r.code, r.stderr)
			}
			if got, err := os.ReadFile(out); err != nil || string(got) != want.stdout {
				t.Errorf("%s np %d: report differs from the in-process one (%v)", c.dir, np, err)
			}
			if n := strings.Count(r.stderr, "no process to analyse and idle"); n != 1 {
				t.Errorf("%s np %d: %d notes of idle ranks on stderr: %q", c.dir, np, n, r.stderr)
			}
		}
		r := mpirun(t, c.procs+1, "analyze", "-q", "--json", filepath.Join(t.TempDir(), "r.json"), c.dir)
		if r.code != 0 || strings.Contains(r.stderr, "idle") {
			t.Errorf("%s -q: exit %d, stderr %q", c.dir, r.code, r.stderr)
		}
	}
}

// Under MPI a node's memory limit and cores are its busy analysis
// processes': ranks past the trace's processes own none and take no share
// (they divided both by every process of the node, idle ones included:
// under mpirun -np 6 a 2-process trace's ranks got a sixth of the limit
// each). The ranks count them themselves (comm.Node), whatever the
// launcher's variables say.
func TestIdleRanksTakeNoShareUnderMPI(t *testing.T) {
	ptraceMPI(t)
	// Open MPI binds a rank to a core or a socket, which Go follows: a
	// rank is given no more cores than that, whatever its node's share.
	t.Setenv("OMPI_MCA_hwloc_base_binding_policy", "none")
	line := regexp.MustCompile(`(?m)^rank (\d+) peak heap .*$`)
	for _, c := range []struct {
		dir   string
		procs int
	}{
		{genTrace(t, "tree", "--ranks", "1", "--threads", "2", "--steps", "4"), 1},
		{genTrace(t, "mpi", "--ranks", "2"), 2},
	} {
		for _, np := range []int{c.procs + 1, c.procs + 3} {
			r := mpirun(t, np, "analyze", "-q", "--stats", "--memory-limit", "600MiB", "--json", filepath.Join(t.TempDir(), "r.json"), c.dir)
			if r.code != 0 {
				t.Fatalf("%d processes, np %d: exit %d: %s", c.procs, np, r.code, r.stderr)
			}
			ms := line.FindAllStringSubmatch(r.stderr, -1)
			if len(ms) != np {
				t.Fatalf("%d processes, np %d: %d ranks in --stats: %s", c.procs, np, len(ms), r.stderr)
			}
			for _, m := range ms {
				rank, _ := strconv.Atoi(m[1])
				want := "; cores 1"
				if rank < c.procs {
					want = fmt.Sprintf("; memory limit %s; cores %d", report.Bytes(600<<20/int64(c.procs)), max(1, runtime.NumCPU()/c.procs))
				}
				if !strings.HasSuffix(m[0], want) {
					t.Errorf("%d processes, np %d: %q, want it to end in %q", c.procs, np, m[0], want)
				}
			}
		}
	}

	// A stop names the node's flag for its busy processes, and that flag
	// fits: 1 M events in two processes, 30 MiB each, under mpirun -np 4.
	dir := genTrace(t, "stencil", "--ranks", "2", "--threads", "4", "--events", "1000000")
	want := run(t, ptraceBin(), "analyze", "--ranks", "1", "--json", "-", dir)
	if want.code != 0 {
		t.Fatalf("inproc: %s", want.stderr)
	}
	r := mpirun(t, 4, "analyze", "-q", "--memory-limit", "60MiB", dir)
	m := regexp.MustCompile(`run with --memory-limit ([0-9.]+) (KiB|MiB|GiB) or more`).FindStringSubmatch(r.stderr)
	if r.code == 0 || m == nil {
		t.Fatalf("60 MiB for the node, 30 a busy process: exit %d, want a stop naming a limit: %s", r.code, r.stderr)
	}
	var v float64
	fmt.Sscan(m[1], &v)
	node := int64(v * map[string]float64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m[2]])
	out := filepath.Join(t.TempDir(), "r.json")
	r = mpirun(t, 4, "analyze", "-q", "--memory-limit", fmt.Sprint(node), "--json", out, dir)
	if r.code != 0 {
		t.Fatalf("the advised %s %s for the node: exit %d: %s", m[1], m[2], r.code, r.stderr)
	}
	if got, err := os.ReadFile(out); err != nil || string(got) != want.stdout {
		t.Errorf("under the advised limit the report differs from the unlimited one (%v)", err)
	}
}

// Under MPI, one failing rank makes every rank exit non-zero within 10 s with
// that rank's message on stderr, and every other rank says why it stops
// (issue 42: they exited 1 in silence).
func TestFailingRankUnderMPI(t *testing.T) {
	ptraceMPI(t)
	src := genTrace(t, "stencil", "--ranks", "4", "--threads", "2")
	for _, how := range []string{"missing", "corrupt", "corrupt/6"} {
		how, nps, _ := strings.Cut(how, "/") // 6: ranks 4 and 5 own no process
		np := 4
		if nps != "" {
			np = 6
		}
		dir := damage(t, src, how)
		start := time.Now()
		r := mpirun(t, np, "analyze", "-q", dir)
		if r.code == 0 {
			t.Errorf("%s: exit 0", how)
		}
		// A rank left waiting would hang until mpirun's own timeout; the
		// bound leaves room for the launcher, which took a constant 10.7 s
		// for a failing job in a fresh Debian root (0.9–5.8 s here).
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%s: took %v", how, d)
		}
		if !strings.Contains(r.stderr, "rank-00002.ptrace") {
			t.Errorf("%s: stderr lacks the failing file: %q", how, r.stderr)
		}
		// A missing file is found by rank 0's listing, a corrupt one by
		// rank 2's load.
		failing := map[string]int{"missing": 0, "corrupt": 2}[how]
		for k := 1; k < np; k++ {
			want := fmt.Sprintf("analysis rank %d stops: analysis rank %d failed; rank 0 prints why", k, failing)
			switch {
			case failing == 0:
				want = fmt.Sprintf("analysis rank %d stops: analysis rank 0 failed and prints why", k)
			case k == failing:
				want = fmt.Sprintf("analysis rank %d failed; rank 0 prints why", k)
			}
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: stderr lacks %q: %q", how, want, r.stderr)
			}
		}
	}
}

// An output rank 0 cannot write stops the job before the analysis, with
// rank 0's reason, every rank told (no MPI_Abort).
func TestUnwritableOutputUnderMPI(t *testing.T) {
	ptraceMPI(t)
	dir := genTrace(t, "stencil", "--ranks", "4", "--threads", "2")
	gone := filepath.Join(t.TempDir(), "no", "such")
	start := time.Now()
	r := mpirun(t, 4, "analyze", "-q", "--json", filepath.Join(gone, "r.json"), dir)
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
	want := "--json " + gone + "/r.json: directory " + gone + " does not exist"
	if r.code == 0 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "analysis rank 3 stops: analysis rank 0 failed and prints why") {
		t.Errorf("exit %d, stderr %q; want rank 0's refusal %q and the others stopped", r.code, r.stderr, want)
	}
}

// The pure-Go binary under mpirun -np 2 refuses (each copy would analyse the
// whole trace and write the same files); under -np 1 it is one analysis.
func TestPureBinaryUnderMPI(t *testing.T) {
	ptraceMPI(t)
	dir := genTrace(t, "stencil", "--ranks", "2", "--threads", "2")
	run := func(np int) result {
		full := []string{"--oversubscribe", "--allow-run-as-root", "-np", fmt.Sprint(np), ptraceBin(), "analyze", "-q", "--json", "-", dir}
		return runCmd(t, exec.Command("mpirun", full...))
	}
	if r := run(2); r.code == 0 || !strings.Contains(r.stderr, "one of 2 processes") || !strings.Contains(r.stderr, "ptrace-mpi") {
		t.Errorf("-np 2: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := run(1); r.code != 0 || !strings.Contains(r.stdout, `"breakdown"`) {
		t.Errorf("-np 1: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Under mpirun, --memory-limit is the node's, each of its analysis
// processes taking its share once MPI_Init has mapped what it keeps (the
// Open MPI libraries, its shared memory: about 19 MiB a process here).
// Every process of a run that finishes stayed under its share (--stats:
// each rank's resident-set high-water mark); a share below what a process
// holds before any analysis stops every rank saying so; one below what
// the analysis needs stops them naming a limit, under which the run
// finishes, again within its shares.
func TestMemoryLimitUnderMPI(t *testing.T) {
	ptraceMPI(t)
	// 2 M events: a process needs 40–50 MiB, well above what a limit
	// that leaves room for its code (19 MiB) and the runtime can give it.
	dir := genTrace(t, "stencil", "--ranks", "4", "--threads", "4", "--events", "2000000")
	rssRE := regexp.MustCompile(`rank (\d+) peak heap .*max RSS ([0-9.]+) (KiB|MiB|GiB)`)
	unit := map[string]float64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
	within := func(stderr string, share float64) {
		t.Helper()
		ms := rssRE.FindAllStringSubmatch(stderr, -1)
		if len(ms) != 2 {
			t.Fatalf("%d ranks' figures in --stats, want 2: %s", len(ms), stderr)
		}
		for _, m := range ms {
			var v float64
			fmt.Sscan(m[2], &v)
			if v*unit[m[3]] > share {
				t.Errorf("rank %s peaked at %s %s, above its share of the limit, %.0f bytes", m[1], m[2], m[3], share)
			}
		}
	}
	r := mpirun(t, 2, "analyze", "-q", "--stats", "--memory-limit", "400MiB", "--json", filepath.Join(t.TempDir(), "r.json"), dir)
	if r.code != 0 {
		t.Fatalf("400 MiB for the node: exit %d: %s", r.code, r.stderr)
	}
	within(r.stderr, 200<<20)

	r = mpirun(t, 2, "analyze", "-q", "--memory-limit", "24MiB", dir)
	if r.code == 0 || !strings.Contains(r.stderr, "before any analysis") || !strings.Contains(r.stderr, "analysis rank 1 failed; rank 0 prints why") {
		t.Errorf("24 MiB for the node, 12 a process: exit %d: %s", r.code, r.stderr)
	}

	r = mpirun(t, 2, "analyze", "-q", "--memory-limit", "52MiB", dir)
	m := regexp.MustCompile(`run with --memory-limit ([0-9.]+) (KiB|MiB|GiB) or more`).FindStringSubmatch(r.stderr)
	if r.code == 0 || m == nil {
		t.Fatalf("52 MiB for the node, 26 a process: exit %d, want a stop naming a limit: %s", r.code, r.stderr)
	}
	// The advice is the node's, as the flag is.
	var v float64
	fmt.Sscan(m[1], &v)
	node := int64(v * unit[m[2]])
	r = mpirun(t, 2, "analyze", "-q", "--stats", "--memory-limit", fmt.Sprint(node), "--json", filepath.Join(t.TempDir(), "r.json"), dir)
	if r.code != 0 {
		t.Fatalf("the advised %s %s for the node: exit %d: %s", m[1], m[2], r.code, r.stderr)
	}
	within(r.stderr, float64(node/2))
}

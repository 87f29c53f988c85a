package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func TestRecordEnv(t *testing.T) {
	base := []string{"PATH=/bin", "LD_PRELOAD=/x/other.so", "OMP_TOOL_LIBRARIES=/x/tool.so", "PTRACE_DIR=/old"}
	m := envMap(recordEnv(base, "/c/libptrace.so", "/t/dir", true, 2))
	if m["LD_PRELOAD"] != "/c/libptrace.so:/x/other.so" || m["OMP_TOOL_LIBRARIES"] != "/c/libptrace.so:/x/tool.so" ||
		m["PTRACE_DIR"] != "/t/dir" || m["PTRACE_BUFFER_MB"] != "2" || m["PATH"] != "/bin" {
		t.Errorf("MPI environment %v", m)
	}
	m = envMap(recordEnv([]string{"PATH=/bin"}, "/c/libptrace-omp.so", "/t/dir", false, 0))
	if _, ok := m["LD_PRELOAD"]; ok || m["OMP_TOOL_LIBRARIES"] != "/c/libptrace-omp.so" {
		t.Errorf("OpenMP-only environment %v: want OMP_TOOL_LIBRARIES only", m)
	}
	if _, ok := m["PTRACE_BUFFER_MB"]; ok {
		t.Error("PTRACE_BUFFER_MB set without --buffer-mb")
	}
	if got := prependList("/a.so", "/b.so:/a.so"); got != "/b.so:/a.so" {
		t.Errorf("prependList duplicated an entry: %q", got)
	}
}

func TestFindCollector(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, libOMP)
	if err := os.WriteFile(lib, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PTRACE_COLLECTOR_DIR", dir)
	if got, err := findCollector(libOMP); err != nil || got != lib {
		t.Errorf("findCollector = %q, %v; want %q", got, err, lib)
	}
	// nowhere to be found: outside the repository, empty PTRACE_COLLECTOR_DIR
	t.Setenv("PTRACE_COLLECTOR_DIR", t.TempDir())
	t.Chdir(t.TempDir())
	if _, err := findCollector("libptrace-none.so"); err == nil || !strings.Contains(err.Error(), "make collector") {
		t.Errorf("error %v, want a hint to run make collector", err)
	}
}

func TestPrepareDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tr")
	got, err := prepareDir(dir, false)
	if err != nil || got != dir {
		t.Fatalf("prepareDir = %q, %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rank-00000.ptrace"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := prepareDir(dir, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("a directory holding a trace was accepted: %v", err)
	}
	if _, err := prepareDir(dir, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "rank-00000.ptrace")); !os.IsNotExist(err) {
		t.Error("--force kept the old rank file")
	}
}

func TestLooksMPI(t *testing.T) {
	for _, args := range [][]string{
		{"mpirun", "-np", "2", "./app"}, {"/usr/bin/mpiexec", "./app"},
		// Debian's alternatives' targets, MPICH's and vendors' launchers
		{"mpiexec.mpich", "-n", "4", "./app"}, {"mpirun.openmpi", "./app"}, {"mpiexec.hydra", "./app"},
		{"mpiexec_mpt", "./app"}, {"mpirun_rsh", "./app"}, {"aprun", "-n", "4", "./app"},
		{"jsrun", "./app"}, {"ibrun", "./app"}, {"flux", "run", "-n", "4", "./app"},
		// a launcher behind wrappers
		{"time", "mpirun", "-np", "2", "./app"}, {"env", "OMP_NUM_THREADS=2", "mpiexec", "-n", "2", "./app"},
		{"taskset", "-c", "0-3", "mpirun", "./app"}, {"timeout", "60", "srun", "./app"},
	} {
		if !looksMPI(args) {
			t.Errorf("%q not taken for an MPI run", args)
		}
	}
	for _, args := range [][]string{{"/bin/sh"}, {"/bin/sh", "-c", "true"}, {"./app", "-np", "2"}, {"env", "OMP_NUM_THREADS=2", "./app"},
		// a launcher's name among a program's own arguments
		{"/bin/sh", "--log", "mpirun.log"}, {"/bin/sh", "results/mpiexec_scaling.csv"}, {"/bin/sh", "flux"}} {
		if looksMPI(args) {
			t.Errorf("%q taken for an MPI run", args)
		}
	}
}

// A program that links an MPI library is an MPI run whatever starts it:
// under a launcher record does not know, it is one of the launcher's
// words.
func TestLooksMPILinked(t *testing.T) {
	cc, err := exec.LookPath("mpicc")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and mpicc is not installed (apt-get install -y libopenmpi-dev)")
		}
		t.Skip("mpicc is not installed")
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "m.c"), filepath.Join(dir, "m")
	if err := os.WriteFile(src, []byte("#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); return MPI_Finalize(); }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, out)
	}
	for _, args := range [][]string{{bin}, {"mylauncher", "-n", "4", bin}} {
		if !looksMPI(args) {
			t.Errorf("%q not taken for an MPI run", args)
		}
	}
}

// How a traced command ended, as record words it: the signal that killed
// it named, an exit status above 128 read as one (mpirun exits so when a
// rank was killed), and no advice about linking libomp, which the
// automatic libgomp swap made obsolete.
func TestNoTraceMessage(t *testing.T) {
	for _, c := range []struct {
		st        childStatus
		noRuntime bool
		want, not []string
	}{
		{childStatus{136, syscall.SIGFPE}, false,
			[]string{"./app was killed by SIGFPE (floating point exception) before it started the OpenMP tool interface or MPI"}, []string{"lomp", "libgomp"}},
		{childStatus{code: 136}, false,
			[]string{"mpirun exited with status 136 (128 + 8: a process killed by SIGFPE (floating point exception)?) before it started"}, nil},
		{childStatus{code: 0}, true,
			[]string{"started neither the OpenMP tool interface nor MPI. It is linked with no OpenMP runtime"}, []string{"-lomp", "killed"}},
		{childStatus{code: 2}, false,
			[]string{"started neither the OpenMP tool interface nor MPI"}, []string{"-lomp", "linked", "killed"}},
	} {
		name := "./app"
		if c.st.signal == 0 && c.st.code > 128 {
			name = "mpirun"
		}
		got := noTrace("/tmp/t", name, c.st, "", c.noRuntime)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: %q lacks %q", c.st, got, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("%+v: %q has %q", c.st, got, w)
			}
		}
	}
	if got := (childStatus{code: 3}).describe("./app"); got != "./app exited with status 3" {
		t.Errorf("describe: %q", got)
	}
}

// dump prints a join's task argument as the thread joined (index + 1 in
// the trace), not as a task id; other sync regions' tasks stay task ids.
func TestDescribeThreadJoin(t *testing.T) {
	tb := &trace.Tables{}
	for _, c := range []struct {
		e    trace.Event
		want string
	}{
		{trace.Event{Kind: trace.SyncBegin, Args: [trace.MaxArgs]int64{trace.SyncThreadJoin, 0, 3, -1}}, "sync_begin sync_kind=256 parallel=- joined=t2 loc=<unknown>"},
		{trace.Event{Kind: trace.SyncWaitEnd, Args: [trace.MaxArgs]int64{trace.SyncThreadJoin, 0, 0}}, "sync_wait_end sync_kind=256 parallel=- joined=-"},
		{trace.Event{Kind: trace.SyncWaitBegin, Args: [trace.MaxArgs]int64{2, trace.MakeID(0, 2), trace.MakeID(1, 3)}}, "sync_wait_begin sync_kind=2 parallel=0.2 task=1.3"},
	} {
		if got := describe(&c.e, nil, tb); got != c.want {
			t.Errorf("describe = %q, want %q", got, c.want)
		}
	}
}

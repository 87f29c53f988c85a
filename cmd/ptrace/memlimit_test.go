package main

import (
	"errors"
	"fmt"
	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/driver"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
)

// --memory-limit is the node's: each of the node's busy analysis
// processes gets an equal share, a lone process gets it all, and an idle
// one (an MPI rank past the trace's processes) none, whatever the
// launcher's variables say (they count the idle ones).
func TestMemoryLimitSharedByTheNode(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "6")
	node, from, err := memoryLimit("8GiB")
	if err != nil || node != 8<<30 || from != "--memory-limit" {
		t.Fatalf("8GiB: %d from %q (%v)", node, from, err)
	}
	for _, c := range []struct {
		nodeBusy int
		busy     bool
		want     int64
	}{{1, true, 8 << 30}, {4, true, 2 << 30}, {3, true, (8 << 30) / 3}, {2, false, 0}, {0, false, 0}} {
		if got := processLimit(node, c.nodeBusy, c.busy); got != c.want {
			t.Errorf("8GiB, %d busy processes on the node, this one busy: %v: %d, want %d", c.nodeBusy, c.busy, got, c.want)
		}
	}
	if got := processLimit(0, 2, true); got != 0 {
		t.Errorf("no limit: %d", got)
	}
	if _, _, err := memoryLimit("eight"); err == nil {
		t.Error("--memory-limit eight: no error")
	}
	// The cores: the node's divided by its busy processes, then by the
	// process's busy ranks; one at least.
	n := min(runtime.GOMAXPROCS(0), runtime.NumCPU())
	for _, c := range []struct{ ranks, nodeBusy, want int }{
		{1, 1, n}, {2, 1, max(1, n/2)}, {1, 2 * n, 1}, {1, 0, n},
	} {
		if got := coresPerRank(c.ranks, c.nodeBusy); got != c.want {
			t.Errorf("%d ranks, %d busy processes on the node: %d cores, want %d", c.ranks, c.nodeBusy, got, c.want)
		}
	}
}

// Ranks past the trace's processes own none: the memory limit and the
// cores are shared by the busy ones only (--ranks 8 on 2 processes gives
// each busy rank half, not an eighth).
func TestBusyRanks(t *testing.T) {
	dir := genTrace(t, "mpi", "--ranks", "2")
	for _, c := range []struct{ ranks, inProcess, want int }{
		{8, 8, 2}, {3, 3, 2}, {2, 2, 2}, {1, 1, 1},
		{0, 2, 2}, // the default, capped by the processes already
		{8, 1, 1}, // under MPI: one rank a process
	} {
		if got := busyRanks(c.ranks, c.inProcess, dir); got != c.want {
			t.Errorf("--ranks %d, %d in the process: %d busy, want %d", c.ranks, c.inProcess, got, c.want)
		}
	}
	if got := busyRanks(8, 8, filepath.Join(t.TempDir(), "none")); got != 8 {
		t.Errorf("no trace: %d busy, want 8 (the analysis reports the error)", got)
	}
}

// The default limit is the least of the process's cgroups' limits (its
// own and every ancestor's, cgroup v1 or v2 or both) and the machine's
// memory, named where it was set; "max", an unlimited v1 value, and a
// bad file (garbage, empty, negative) are no limit, never an error.
func TestMachineMemoryFromCgroups(t *testing.T) {
	meminfo := &fstest.MapFile{Data: []byte("MemTotal:       16384000 kB\nMemFree:         1000 kB\n")}
	machine := memorySource{16384000 << 10, "the machine's memory (/proc/meminfo MemTotal)"}
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	const slurm = "0::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0\n"
	const v2 = "sys/fs/cgroup/system.slice/slurmstepd.scope/job_42"
	const v1 = "sys/fs/cgroup/memory/slurm/uid_0/job_7"
	for _, c := range []struct {
		name    string
		files   fstest.MapFS
		cgroups string
		want    memorySource
	}{
		{"no cgroup", fstest.MapFS{"proc/meminfo": meminfo}, "", machine},
		{"v2, the job's limit on an ancestor of the step", fstest.MapFS{
			"proc/meminfo":                          meminfo,
			v2 + "/memory.max":                      file("4294967296\n"),
			v2 + "/memory.high":                     file("max\n"),
			v2 + "/step_0/memory.max":               file("max\n"),
			"sys/fs/cgroup/system.slice/memory.max": file("max\n"),
		}, slurm, memorySource{4 << 30, "cgroup /system.slice/slurmstepd.scope/job_42 memory.max"}},
		{"v2, the least along the path, memory.high below memory.max", fstest.MapFS{
			"proc/meminfo":                        meminfo,
			v2 + "/memory.max":                    file("4294967296\n"),
			v2 + "/step_0/user/memory.high":       file("2147483648\n"),
			v2 + "/step_0/user/task_0/memory.max": file("3221225472\n"),
		}, slurm, memorySource{2 << 30, "cgroup /system.slice/slurmstepd.scope/job_42/step_0/user memory.high"}},
		{"v2, bad files skipped for the next source", fstest.MapFS{
			"proc/meminfo":                        meminfo,
			v2 + "/memory.max":                    file("lots\n"),
			v2 + "/memory.high":                   file(""),
			v2 + "/step_0/memory.max":             file("-5\n"),
			v2 + "/step_0/user/memory.max":        file("99999999999999999999999\n"),
			v2 + "/step_0/user/task_0/memory.max": file("1073741824"),
		}, slurm, memorySource{1 << 30, "cgroup /system.slice/slurmstepd.scope/job_42/step_0/user/task_0 memory.max"}},
		{"v2 limit above the machine's memory", fstest.MapFS{
			"proc/meminfo":     meminfo,
			v2 + "/memory.max": file("68719476736\n"),
		}, slurm, machine},
		{"v2 inside a container's namespace: its cgroup is the mount's root", fstest.MapFS{
			"proc/meminfo":             meminfo,
			"sys/fs/cgroup/memory.max": file("8589934592\n"),
		}, "0::/\n", memorySource{8 << 30, "cgroup / memory.max"}},
		{"v2 path not under the mount (no namespace): the root's", fstest.MapFS{
			"proc/meminfo":             meminfo,
			"sys/fs/cgroup/memory.max": file("8589934592\n"),
		}, "0::/docker/abc123\n", memorySource{8 << 30, "cgroup / memory.max"}},
		{"v1, the job's limit", fstest.MapFS{
			"proc/meminfo": meminfo,
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("9223372036854771712\n"),
			v1 + "/memory.limit_in_bytes":                file("6442450944\n"),
			v1 + "/step_0/memory.limit_in_bytes":         file("9223372036854771712\n"),
		}, "12:pids:/slurm/uid_0/job_7/step_0\n4:memory:/slurm/uid_0/job_7/step_0\n1:name=systemd:/\n", memorySource{6 << 30, "cgroup /slurm/uid_0/job_7 memory.limit_in_bytes"}},
		{"v1, hierarchical_memory_limit from an ancestor not visible", fstest.MapFS{
			"proc/meminfo":                       meminfo,
			v1 + "/step_0/memory.limit_in_bytes": file("9223372036854771712\n"),
			v1 + "/step_0/memory.stat":           file("cache 0\nhierarchical_memory_limit 5368709120\nhierarchical_memsw_limit 9223372036854771712\n"),
		}, "4:memory:/slurm/uid_0/job_7/step_0\n", memorySource{5 << 30, "cgroup /slurm/uid_0/job_7/step_0 memory.stat hierarchical_memory_limit"}},
		{"v1, unlimited everywhere (this machine's shape)", fstest.MapFS{
			"proc/meminfo": meminfo,
			"sys/fs/cgroup/memory/process_api/b601/memory.limit_in_bytes": file("9223372036854771712\n"),
			"sys/fs/cgroup/memory/process_api/b601/memory.stat":           file("hierarchical_memory_limit 9223372036854771712\n"),
		}, "4:memory:/process_api/b601\n0::/\n", machine},
		{"hybrid: v1 memory and v2 unified, the least of both", fstest.MapFS{
			"proc/meminfo": meminfo,
			"sys/fs/cgroup/memory/user.slice/memory.limit_in_bytes": file("3221225472\n"),
			"sys/fs/cgroup/unified/user.slice/memory.max":           file("2147483648\n"),
		}, "5:cpu,memory:/user.slice\n0::/user.slice\n", memorySource{2 << 30, "cgroup /user.slice memory.max"}},
		{"no meminfo, no limit: none", fstest.MapFS{}, "garbage\n::\n0::relative\n", memorySource{}},
		{"bad meminfo", fstest.MapFS{"proc/meminfo": file("MemTotal: -4 kB\n")}, "", memorySource{}},
	} {
		if got := machineMemory(c.files, c.cgroups); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	// The default is 80 % of it, saying where from; nothing found: no limit.
	if lim, from := defaultLimit(memorySource{10 << 30, "cgroup /job_1 memory.max"}); lim != 8<<30 || from != "the default limit, 80% of cgroup /job_1 memory.max, 10.00 GiB" {
		t.Errorf("default of 10 GiB: %d, %q", lim, from)
	}
	if lim, from := defaultLimit(memorySource{}); lim != 0 || from != "" {
		t.Errorf("default of nothing: %d, %q", lim, from)
	}
}

// An MPI rank other than 0 says in one line which analysis rank failed
// (another, itself, or none alone: the memory guard's stop reached by
// every rank together) and that rank 0 prints the cause, naming no rank
// twice (it said "rank 1 stopped: rank 1 reported an error").
func TestStopLine(t *testing.T) {
	guard := &driver.AgreedError{Err: errors.New("the analysis outgrew its memory limit"), Together: true}
	for _, c := range []struct {
		me   int
		err  error
		want string
	}{
		{1, &comm.AbortError{Rank: 2, Err: errors.New("corrupt")}, "ptrace: analysis rank 1 stops: analysis rank 2 failed; rank 0 prints why"},
		{3, &driver.AgreedError{Err: &comm.AbortError{Rank: 0, Err: errors.New("--json: no such directory")}}, "ptrace: analysis rank 3 stops: analysis rank 0 failed and prints why"},
		{2, &driver.AgreedError{Err: errors.New("rank 2: corrupt")}, "ptrace: analysis rank 2 failed; rank 0 prints why"},
		{2, errors.New("MPI: lost"), "ptrace: analysis rank 2 failed; rank 0 prints why"},
		{1, guard, "ptrace: analysis rank 1 stops with every rank; rank 0 prints why"},
		{1, fmt.Errorf("critical path: %w", guard), "ptrace: analysis rank 1 stops with every rank; rank 0 prints why"},
	} {
		got := stopLine(c.me, c.err)
		if got != c.want {
			t.Errorf("rank %d, %v: %q, want %q", c.me, c.err, got, c.want)
		}
		if strings.Contains(got, "\n") || strings.Count(got, fmt.Sprintf("rank %d ", c.me)) > 1 {
			t.Errorf("rank %d, %v: %q is not one line naming the rank once", c.me, c.err, got)
		}
	}
}

// Heap profiling is off unless asked for: the runtime's default samples an
// allocation every 512 KiB into a hash table whose touched pages stay
// resident (docs/PERFORMANCE.md, forty-fifth round). A rate GODEBUG sets
// is the user's, and stays.
func TestNoHeapProfile(t *testing.T) {
	defer func(r int) { runtime.MemProfileRate = r }(runtime.MemProfileRate)
	for _, c := range []struct {
		godebug string
		want    int
	}{
		{"", 0},
		{"gctrace=1", 0},
		{"memprofilerate=1", 512 << 10},
		{"gctrace=1,memprofilerate=4096", 512 << 10},
	} {
		t.Setenv("GODEBUG", c.godebug)
		runtime.MemProfileRate = 512 << 10
		noHeapProfile()
		if runtime.MemProfileRate != c.want {
			t.Errorf("GODEBUG=%q: MemProfileRate %d, want %d", c.godebug, runtime.MemProfileRate, c.want)
		}
	}
}

// --memprofile still profiles the analysis, although main turned the
// sampling off: its profiles hold the simulation's allocations.
func TestMemProfileSamples(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t")
	if r := run(t, ptraceBin(), "gen", "stencil", "--ranks", "1", "--events", "20000", "-o", trace); r.code != 0 {
		t.Fatalf("gen: %s", r.stderr)
	}
	prefix := filepath.Join(dir, "mp")
	if r := run(t, ptraceBin(), "analyze", "-q", "--ranks", "1", "--memprofile", prefix, trace); r.code != 0 {
		t.Fatalf("analyze: %s", r.stderr)
	}
	out, err := exec.Command("go", "tool", "pprof", "-sample_index=alloc_space", "-top", ptraceBin(), prefix+".simulate.pprof").CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "sim.") {
		t.Errorf("the simulation's profile names no allocation of package sim:\n%s", out)
	}
}

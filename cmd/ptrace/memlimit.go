package main

import (
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/internal/procmem"
	"github.com/ptrace-dev/ptrace/report"
)

// parseBytes reads a size such as "4GiB", "512M", "2g" or "1000000".
// Decimal (k, M, G, T) and binary (Ki, Mi, Gi, Ti) units; B is optional.
func parseBytes(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "B")
	t = strings.TrimSuffix(t, "b")
	mult := int64(1)
	units := []struct {
		suffix string
		mult   int64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
		{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"m", 1e6}, {"G", 1e9}, {"g", 1e9}, {"T", 1e12}, {"t", 1e12}}
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v < 0 || v*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q is not a size (e.g. 4GiB, 512M)", s)
	}
	return int64(v * float64(mult)), nil
}

// memorySource is what bounds this process's memory: the least of its
// cgroups' limits and the machine's memory, and where that was read.
type memorySource struct {
	bytes int64
	from  string // e.g. "cgroup /slurm/job_42 memory.max"; "" when nothing was
}

// unlimitedV1 is where cgroup v1 values mean "no limit": the kernel
// writes PAGE_COUNTER_MAX pages (9223372036854771712 with 4 KiB pages).
const unlimitedV1 = int64(1) << 60

// machineMemory returns the memory this process may use, read from fsys
// (the file system's root: os.DirFS("/")) and cgroups (the text of
// /proc/self/cgroup): the least of the limits of its cgroup and every
// ancestor's (cgroup v2 memory.max and memory.high, under
// sys/fs/cgroup or sys/fs/cgroup/unified; v1 memory.limit_in_bytes and
// memory.stat's hierarchical_memory_limit under sys/fs/cgroup/memory)
// and the machine's memory (proc/meminfo's MemTotal). A batch job's
// allocation is its cgroup's limit, not the root's (which has none): a
// Slurm step on cgroup v2 lives in
// /system.slice/slurmstepd.scope/job_42/step_0/user/task_0 and its job's
// limit is on job_42. memory.high counts: above it the kernel throttles
// the cgroup's processes under heavy reclaim, so an analysis past it
// would crawl where the guard should stop it. An ancestor missing under
// the mount (a container's namespace shows its own cgroup as the root)
// is skipped; a file that is not a positive number ("max", garbage,
// empty, negative) is no limit.
func machineMemory(fsys fs.FS, cgroups string) memorySource {
	var best memorySource
	take := func(v int64, from string) {
		if v > 0 && (best.bytes == 0 || v < best.bytes) {
			best = memorySource{v, from}
		}
	}
	for _, line := range strings.Split(cgroups, "\n") {
		id, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		ctrls, path, ok := strings.Cut(rest, ":")
		if !ok || !strings.HasPrefix(path, "/") {
			continue
		}
		switch {
		case id == "0" && ctrls == "": // cgroup v2
			for _, mount := range []string{"sys/fs/cgroup", "sys/fs/cgroup/unified"} {
				for _, dir := range ancestors(path) {
					for _, file := range []string{"memory.max", "memory.high"} {
						take(readLimit(fsys, mount+dir, file), cgroupName(dir, file))
					}
				}
			}
		case slices.Contains(strings.Split(ctrls, ","), "memory"): // v1
			for _, dir := range ancestors(path) {
				take(readLimit(fsys, "sys/fs/cgroup/memory"+dir, "memory.limit_in_bytes"), cgroupName(dir, "memory.limit_in_bytes"))
				take(hierarchicalLimit(fsys, "sys/fs/cgroup/memory"+dir), cgroupName(dir, "memory.stat hierarchical_memory_limit"))
			}
		}
	}
	if b, err := fs.ReadFile(fsys, "proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if fields := strings.Fields(line); len(fields) >= 2 && fields[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil && kb > 0 && kb < unlimitedV1>>10 {
					take(kb<<10, "the machine's memory (/proc/meminfo MemTotal)")
				}
			}
		}
	}
	return best
}

// ancestors returns a cgroup's path and its ancestors' from the root
// ("" for "/") down, as suffixes of the mount's directory: of equal
// limits the one nearest the root is named, where it was set (a step's
// hierarchical_memory_limit repeats its job's).
func ancestors(path string) []string {
	p := strings.TrimRight(path, "/")
	out := []string{p}
	for p != "" {
		p = p[:strings.LastIndexByte(p, '/')]
		out = append(out, p)
	}
	slices.Reverse(out)
	return out
}

// cgroupName names a cgroup's limit for the messages.
func cgroupName(dir, file string) string {
	if dir == "" {
		dir = "/"
	}
	return "cgroup " + dir + " " + file
}

// readLimit reads a cgroup's limit file: a positive byte count below
// unlimitedV1, else 0 (no limit: "max", a missing or bad file).
func readLimit(fsys fs.FS, dir, file string) int64 {
	b, err := fs.ReadFile(fsys, dir+"/"+file)
	if err != nil {
		return 0
	}
	return limitValue(strings.TrimSpace(string(b)))
}

// limitValue parses a limit; 0 for none or garbage.
func limitValue(s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 || v >= unlimitedV1 {
		return 0
	}
	return v
}

// hierarchicalLimit reads cgroup v1's effective limit of dir, which
// counts its ancestors' (memory.stat's hierarchical_memory_limit).
func hierarchicalLimit(fsys fs.FS, dir string) int64 {
	b, err := fs.ReadFile(fsys, dir+"/memory.stat")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == "hierarchical_memory_limit" {
			return limitValue(strings.TrimSpace(v))
		}
	}
	return 0
}

// defaultShare is the part of the machine's (or cgroup's) memory the
// default limit takes, in tenths.
const defaultShare = 8

// memoryLimit resolves --memory-limit for the node (0: none): the
// flag's or by default 80 % of the memory the process may use
// (machineMemory), with where it came from for the messages. Its busy
// analysis processes share it (processLimit).
func memoryLimit(flag string) (int64, string, error) {
	if flag != "" {
		v, err := parseBytes(flag)
		if err != nil {
			return 0, "", fmt.Errorf("--memory-limit: %w", err)
		}
		return v, driver.FlagLimitSource, nil
	}
	cg, _ := os.ReadFile("/proc/self/cgroup") // none: the machine's memory
	v, from := defaultLimit(machineMemory(os.DirFS("/"), string(cg)))
	return v, from, nil
}

// defaultLimit is the default limit of m (0: none), and its source for
// the messages.
func defaultLimit(m memorySource) (int64, string) {
	if m.bytes <= 0 {
		return 0, ""
	}
	return m.bytes / 10 * defaultShare, fmt.Sprintf("the default limit, %d0%% of %s, %s", defaultShare, m.from, report.Bytes(m.bytes))
}

// processLimit is one analysis process's part of the node's limit: an
// equal share of the node's busy processes' (busy: this one owns a traced
// process); an idle one (an MPI rank past the trace's processes) takes
// none and has no limit of its own: it holds its code and libraries and
// the communicator, no analysis. The flag was once each process's, which
// under mpirun with four ranks a node gave the node four times what it
// said; then the node's shared by all its processes, idle ones included,
// which gave a busy rank of a 2-process trace under mpirun -np 6 a sixth.
func processLimit(node int64, nodeBusy int, busy bool) int64 {
	if !busy || node <= 0 {
		return 0
	}
	return node / int64(max(nodeBusy, 1))
}

// nodeShare returns how many busy analysis processes share this rank's
// node, whether this rank is one (owns a traced process: partition leaves
// the ranks past the trace's processes idle) and whether any rank runs
// under a memory limit (limited: this one does; the guard's checks are
// collective, so every rank must agree to take them, and each node
// resolves the default from its own memory). Under MPI the ranks learn it
// together (a collective: rank 0 counts the trace's processes, each node
// sums its busy ranks), from the ranks themselves rather than a
// launcher's variables, which count idle ranks and differ between
// launchers; an in-process communicator is the node's one process.
func nodeShare(c comm.Comm, dir string, limited bool) (nodeBusy int, busy, anyLimited bool, err error) {
	nc, ok := c.(comm.Node)
	if !ok {
		return 1, true, limited, nil
	}
	n, lim := int64(0), int64(0)
	if c.Rank() == 0 {
		if np, err := numProcesses(dir); err == nil {
			n = int64(np)
		}
	}
	if limited {
		lim = 1
	}
	v, err := c.AllreduceInt64(comm.Max, []int64{n, lim})
	if err != nil {
		return 0, false, false, err
	}
	// A trace that cannot be counted leaves every rank busy: the analysis
	// says what is wrong with it.
	busy = v[0] <= 0 || int64(c.Rank()) < v[0]
	flag := int64(0)
	if busy {
		flag = 1
	}
	sum, err := nc.NodeSum(flag)
	return int(sum), busy, v[1] > 0, err
}

// minGoMemory is the least a memory limit must leave the Go runtime
// beyond the floor for the start to let the analysis try; what a trace
// needs beyond that is the estimate's to refuse once the traces are read,
// or the guard's to stop, each naming a limit that fits. It was 4 MiB,
// which refused analyses that fit: Score-P's 8-process lulesh-small takes
// 14.4 MiB unlimited and fits in 14.0, 2.6 over its floor of 11.4, and was
// refused at 15.4. Below 2 MiB the limits the start lets through reach
// the estimate's refusal after the load above the limit (a 3 MB OTF2
// archive converted at two ranks: 4.2 MiB above 12.5), where the start
// refused them under the limit; the least analysis, 2 processes of 200
// events, fits in its floor and 1.3 MiB (forty-fourth round).
const minGoMemory = 2 << 20

// applyMemoryLimit gives the Go runtime the part of the process's limit
// its code, libraries and C allocations (procmem.Floor, measured once the
// communicator is up: an MPI library has mapped and allocated what it
// keeps) do not take, as its soft limit, so the collector works harder
// before the process outgrows the limit. It returns the share of one
// analysis rank (ranks is the number of ranks this process runs: the
// busy inproc ranks, or 1 under MPI) and the floor; from is where the
// limit came from, for the refusal.
func applyMemoryLimit(limit int64, ranks int, from string) (share, floor int64, err error) {
	if limit <= 0 {
		return 0, 0, nil
	}
	floor = procmem.Floor()
	if limit < floor+minGoMemory {
		return 0, floor, fmt.Errorf("the memory limit leaves this process %s (its share of %s), less than what it holds before any analysis (%s of code and libraries, and the Go runtime's %s): give it more; the analysis's own need is estimated once the traces are read, and a limit below it is refused then, saying what would do",
			report.Bytes(limit), from, report.Bytes(floor), report.Bytes(minGoMemory))
	}
	goLimit := limit - floor
	debug.SetMemoryLimit(goLimit)
	// The heap guard compares the process's peak resident set with the
	// limit: what MPI_Init and the start took before is part of it, but
	// not a peak the start reached and left.
	procmem.ResetPeak()
	return goLimit / int64(max(ranks, 1)), floor, nil
}

// gcPercent is the heap growth between collections that ptrace runs with
// unless GOGC says otherwise. Its heap is dense arrays without pointers
// (events, task and graph tables), so a collection marks little and costs
// little: collecting at +25 % of the live heap instead of Go's +100 % cuts
// the peak RSS of an analysis by about a quarter for no measurable CPU
// (docs/PERFORMANCE.md, "garbage collection").
const gcPercent = 25

// criticalPathGCPercent is the growth during the critical path, which
// makes its large arrays in a few steps, each mostly live until the phase
// ends: at +25 % the collector let the heap, and the free pages the
// scavenger keeps 10 % above its goal, reach 20 MiB over the live arrays
// on the 10 M-event halo, its peak; at +10 % that is 8–10 MiB less, and
// the phase runs as fast (a few more collections of pointer-free arrays).
// Other phases ran 5 % slower at +10 % (docs/PERFORMANCE.md, sixteenth
// round).
const criticalPathGCPercent = 10

// simulateGCPercent is the growth during the simulation, whose tables
// grow steadily to its peak (the end of a task-heavy process's creations):
// at +25 % the garbage between collections was 11 MiB over the lean
// stencil's 175 MiB of live tables at that peak; at +10 % it is 0–1 MiB
// (docs/PERFORMANCE.md, twenty-second round).
const simulateGCPercent = 10

// waitStatesGCPercent is the growth during the MPI wait states, whose
// points, tasks and the calls' columns are made in a few steps and live
// to the phase's end: at +25 % the heap peaked at 1.25× the live 230 MiB
// of the 64-process pure-MPI trace; at +10 % 20–25 MiB less, as fast
// (docs/PERFORMANCE.md, twenty-fifth round).
const waitStatesGCPercent = 10

// gcPercents returns the collector's settings ptrace runs with, for the
// driver: none when the user set GOGC.
func gcPercents() driver.GCPercents {
	if os.Getenv("GOGC") != "" {
		return driver.GCPercents{}
	}
	return driver.GCPercents{Normal: gcPercent, Simulate: simulateGCPercent, WaitStates: waitStatesGCPercent, CriticalPath: criticalPathGCPercent}
}

// tuneGC sets gcPercent when the user did not set GOGC.
func tuneGC() {
	if g := gcPercents(); g.Normal > 0 {
		debug.SetGCPercent(g.Normal)
	}
}

// noHeapProfile turns the runtime's heap profiling off unless GODEBUG sets
// its rate (--memprofile sets its own). The binary links runtime/pprof for
// --memprofile, so the runtime samples an allocation every 512 KiB by
// default, for a profile nothing reads: each sampled call stack gets a
// bucket in a 1.4 MB hash table, and an analysis's buckets, scattered over
// it, kept a page each resident (276 KiB on BOTS health large, 2.1×
// its trace's bytes at its peak; docs/PERFORMANCE.md, forty-fifth round).
func noHeapProfile() {
	if !strings.Contains(os.Getenv("GODEBUG"), "memprofilerate=") {
		runtime.MemProfileRate = 0
	}
}

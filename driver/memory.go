package driver

import (
	"fmt"
	"math"
	"runtime/debug"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// The heap an analysis needs, estimated after the load from the census of
// a rank's processes. Two kinds of state make it:
//
//   - what the rank keeps of every process until the end (the critical
//     path's fragments and edges, the task table it reads, the
//     communication nodes, the wait states' calls): per explicit task and
//     per communication event (a message's or collective's end, an MPI
//     call), summed over the processes;
//   - the simulation's working state of the process being simulated (task
//     records, the dependence table, the fragment pass's columns), given to
//     the next process when one ends: per explicit task, for the largest
//     process only.
//
// Fitted on the live heap (--stats) of the 10 M-event gen traces (stencil,
// nearest, halo) at --ranks 1, the lean stencil (2.5 M tasks in one
// process) and a recorded fib(27) (636 000 tasks): the low estimate lies
// under each of them (lean 114.4 MiB against 117.9–124.2 live, the
// tightest; fib 29.1 against 39.6; refitted when the twenty-second round
// took the lean stencil's live heap from 198 to 118 MiB: the working
// state a task 40 -> 24 bytes, what is kept a task 20 -> 24, which leaves
// the estimate of a rank of four or more equal processes where it was,
// within 3x of its live heap under load too), the high one above their
// peak heaps. The low one
// decides a refusal at the start; the heap guard catches the rest. Held
// events (--hold-events) add their files' bytes.
//
// Refitted in the twenty-fourth round on the other shapes of gen (a pure
// MPI program of 64 processes, allreduce and halo exchanges, pipeline,
// spread, fork-join, imbalance, an untied chain): an MPI call's wait
// states hold up to about 150 bytes at their peak (keepCallHi; its low
// one is a communication event's), and a parallel region's implicit
// task its fragments and their critical path (keepImplicit), which the
// task and communication terms left out: the 10 M-event allreduce halo's
// live heap was three times the low estimate and above the high one. A
// task's low shares went 24 -> 22 bytes kept and 24 -> 16 of working
// state: the 10 M-event fork-join trace (3.3 M tasks) lived within 1 %
// of the first, and an untied chain (one task at a time) under the
// second. The low estimate errs low: too low, an analysis starts that
// the guard may stop; too high, one is refused that fits.
//
// A process also costs about 10 KiB whatever its events (twenty-fifth
// round): its header, string and location tables, census and chunk
// index, its simulation's and critical path's per-process state, its
// rows in every section of the report. Without that term a rank of
// thousands of processes of a few dozen events each (gen mpi --ranks
// 8192) lived at 82.5 MiB against a high estimate of 31 and a low one of
// 4.1 (keepProc). The twenty-fifth round's dependence tracker (states
// dropped at their last entry, a registration per waiting task) took a
// task's kept low share 22 -> 10 bytes and an entry's to 3: the 1 M-event
// lean stencil (4 entries a task) lived at 10.7-12.0 MB against a low
// estimate of 11.4, tasks of 65 entries (gen nearest --radix 64) at up to
// 24.3 MB against four times a low estimate of 5.8. And a dependence entry (an address a task names in
// its depend clause) costs a few bytes beyond its task's share: the
// pairs it makes, the tracker's reader cells, the successor lists. On
// tasks of many dependences (gen nearest --radix 64, 65 entries a task)
// that is most of the heap: 159 MiB live against a high estimate of 95
// without it (keepDep). The twenty-seventh round's 8-byte task record,
// run times frozen by page and the last process's working state dropped
// before the later phases' tables took a task's low working share 16 ->
// 10 bytes: the 1 M-event lean stencil lived at 8.7 MB against a low
// estimate of 9.4. The twenty-eighth round's compact dependence pairs (a
// byte a pair), tasks' cost attributes as runs and fragment attributes
// in the spill file put the 10 M-event gen traces' live heap under the
// low estimate (stencil 37.4 MiB live against 42.9, nearest 31.8 against
// 36.8, halo 39.5 against 47.3, the lean stencil 73.3 against 75.4): an
// entry's low share 3 -> 2 bytes, a task's 10 -> 8, a communication
// event's 20 -> 15, an implicit task's 12 -> 10 (low estimates 31.7,
// 27.2, 36.4 and 61.4 MiB). That left the simulation's working state
// without a share per dependence entry: a process whose tasks have 64
// dependences each (TestMemoryEstimateBelowLive's nearest, 2.5 M entries)
// lived at 19.9–22.8 MB against a low estimate of 5.35, so a run of the
// suite failed the test's 4× (22.8 > 21.4); a byte an entry of the largest
// process (workDepLo) makes it 7.7 and leaves the 10 M-event traces'
// low estimates under their live heaps (stencil 32.1 MiB against 37.4,
// nearest 27.5 against 32.0, the lean stencil 70.6 against 75.9). The
// thirty-first round streams the fragment nodes' attributes and weights
// to the spill file as the simulation encodes them (about 5 bytes a task
// of the lean stencil's simulation peak): its live heap 75.9 -> 68.8 MiB,
// under the low estimate, so a task's low working share 10 -> 8 bytes
// (65.6 MiB). The thirty-fourth round's task record of 6 bytes (was 8)
// took that share 8 -> 6: the lean stencil's peak heap 74.3 -> 65.3 MiB,
// its low estimate 65.9 -> 61.1.
//
// A nonblocking collective's start (coll_start) costs its wait states
// beyond its events' shares: its progress point and its completion's
// record (16 bytes each) and its completion's progress value (8 bytes),
// held together through the propagation (waitstate/progress.go).
// Without that term (keepNBCLo) 16 processes of nonblocking collectives
// (gen nbc, 1.5 M events) lived at 34.3 MiB against a low estimate of
// 14.4, so every limit from half their peak passed the start and the
// guard stopped them in their wait states, 9–15 MiB above the limit
// (forty-third round); with it the estimate is 23.9 MiB.
const (
	keepProcLo, keepProcHi         = 6 << 10, 14 << 10
	keepDepLo, keepDepHi           = 2, 6
	keepTaskLo, keepTaskHi         = 8, 50
	keepCommLo, keepCommHi         = 15, 40
	keepCallHi                     = 150
	keepNBCLo                      = 40
	keepImplicitLo, keepImplicitHi = 10, 48
	workTaskLo, workTaskHi         = 6, 120
	workDepLo                      = 1
	estBaseHi                      = 12 << 20 // the runtime's own, once a process
)

// memoryEstimate returns the low and high estimates of the heap this
// rank's analysis needs.
func (r *run) memoryEstimate() (lo, hi int64) {
	hi = estBaseHi
	var workLo, workHi int64
	for _, p := range r.procs {
		c := &p.Census
		var comms int64
		for k, n := range c.Kinds {
			if trace.IsComm(trace.Kind(k)) {
				comms += n
			}
		}
		tasks, calls, implicit := c.Kinds[trace.TaskCreate], c.Kinds[trace.MPIEnter], c.Kinds[trace.ImplicitTaskBegin]
		deps := c.DepEntries
		lo += keepProcLo + keepTaskLo*tasks + keepDepLo*deps + keepCommLo*(comms+calls) + keepImplicitLo*implicit + keepNBCLo*c.Kinds[trace.CollStart]
		hi += keepProcHi + keepTaskHi*tasks + keepDepHi*deps + keepCommHi*comms + keepCallHi*calls + keepImplicitHi*implicit
		workLo, workHi = max(workLo, workTaskLo*tasks+workDepLo*deps), max(workHi, workTaskHi*tasks)
		// Events held in memory (--hold-events, or converted from OTF2):
		// their encoded bytes, which for an OTF2 archive are not its own.
		lo += p.HeldBytes()
		hi += p.HeldBytes()
	}
	return lo + workLo, hi + workHi
}

// processNeed returns the process limit that gives this rank perRank:
// --memory-limit is the process's, shared by its in-process ranks after
// what the process holds outside the Go runtime, so that is perRank times
// their number, and the floor.
func (r *run) processNeed(perRank int64) int64 {
	lim := r.opts.MemoryLimit
	if p := debug.SetMemoryLimit(-1); lim > 0 && p > lim && p < math.MaxInt64 {
		perRank *= int64(math.Round(float64(p) / float64(lim)))
	}
	return perRank + r.opts.MemoryFloor
}

// checkMemory refuses, on every rank, an analysis that cannot fit: some
// rank's low estimate exceeds its share of --memory-limit. The error
// names the rank, its estimate and the limit that would do: the largest
// any rank's node needs, as the heap guard's errors advise. Every rank
// returns the refusing rank's error (comm.Agree): rank 0, which prints
// it under MPI, once said only that another rank did not fit.
func (r *run) checkMemory() error {
	lim := r.opts.MemoryLimit
	lo, hi := r.memoryEstimate()
	r.guard.advice = r.processNeed(hi)
	need := int64(0)
	if lim > 0 && lo > lim {
		need = hi
	}
	worst, err := r.c.AllreduceInt64(comm.Max, []int64{need, r.guard.advice * r.guard.nodeProcs})
	if err != nil || worst[0] == 0 {
		return err
	}
	var mine error
	if need > 0 {
		mine = fmt.Errorf("rank %d: its processes' analysis needs about %s–%s of memory (estimated from their events, tasks and messages), above its limit, %s (%s): run with --memory-limit %s or more%s",
			r.c.Rank(), report.Bytes(lo), report.Bytes(hi), report.Bytes(lim), limitShare(r.guard.from), report.Bytes(worst[1]), moreRanks(r.guard.oneEach))
	}
	return agree(r.c, mine)
}

// memoryGuard is the runtime side of --memory-limit: the process's
// resident set (what a batch system's accounting and an out-of-memory
// killer see: its code and libraries, the Go runtime's heap and its own
// memory) against the process's limit, which is the Go runtime's soft
// memory limit (debug.SetMemoryLimit, which --memory-limit sets) and the
// floor the caller took off it (Options.MemoryFloor). The Go runtime
// keeps its memory under its limit while the live data allows; a resident
// set above the process's limit means the analysis needs more, and it
// stops, saying so, instead of running on beyond it: an analysis that
// finishes stayed under the limit.
type memoryGuard struct {
	hs    *heapSampler
	limit int64 // the process's: the runtime's and floor; 0: none
	floor int64
	// advice is the process limit the errors advise at least: the
	// start's high estimate of the process's analysis and the floor
	// (checkMemory); the flag they name is the node's, nodeProcs (the
	// node's busy analysis processes) times a process's.
	advice    int64
	nodeProcs int64
	// oneEach: every process already has an analysis rank of its own,
	// so more ranks would idle and the errors do not advise them.
	oneEach bool
	// from: where this process's limit came from (Options.MemoryLimitFrom).
	from string
}

// FlagLimitSource is Options.MemoryLimitFrom of a limit given by
// --memory-limit, the same on every rank (the command line is).
const FlagLimitSource = "--memory-limit"

// limitShare names what a process's limit is a share of, from its source
// (Options.MemoryLimitFrom).
func limitShare(from string) string {
	if from == "" {
		return "its share of --memory-limit or of the default, 80% of its node's memory or cgroup limit"
	}
	return "its share of " + from
}

// moreRanks is the memory errors' second advice, unless every process
// already has a rank of its own (oneEach).
func moreRanks(oneEach bool) string {
	if oneEach {
		return ""
	}
	return ", or with more analysis ranks (mpirun -np N)"
}

func newMemoryGuard(hs *heapSampler, floor int64) memoryGuard {
	g := memoryGuard{hs: hs, floor: floor}
	if l := processLimit(); l > 0 {
		g.limit = int64(l) + floor
	}
	return g
}

// processLimit returns the process's soft memory limit, 0 for none.
func processLimit() uint64 {
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		return uint64(l)
	}
	return 0
}

// exceeded returns, once the sampler saw the resident set above the
// limit, the error that stops phase on this rank at once: a phase that
// polls it (the simulation, every 65 536 events) ends there instead of
// running on far beyond the limit to its end, where check would stop it.
func (g memoryGuard) exceeded(phase string) error {
	if g.hs == nil {
		return nil
	}
	if rss := g.hs.over.Load(); rss > 0 {
		return g.outgrown(phase, int64(rss), g.advice, true)
	}
	return nil
}

// check returns an error on every rank when the process's resident set
// reached above the limit during phase (rss: its peak so far; collective),
// at its end or, stopped, at a point inside it every rank reaches.
func (g memoryGuard) check(c comm.Comm, phase string, rss int64, stopped bool) error {
	over := int64(0)
	if g.limit > 0 && rss > g.limit {
		over = rss
	}
	// The flag to advise is the largest any rank's node needs: nodes
	// differ in how many busy analysis processes share their flag.
	worst, err := c.AllreduceInt64(comm.Max, []int64{over, g.flag(over, g.advice)})
	if err != nil || worst[0] == 0 {
		return err
	}
	// The limit and floor named are those of the process that reached
	// worst[0]: nodes differ in them (their busy processes, their
	// memory), and rank 0's beside another's peak read "reached 150 B,
	// above its limit of 1000 B". Every rank takes this second reduction:
	// worst[0] is the same on all.
	// Its source travels as whether it is the flag: a default's source
	// (a cgroup's file) is not known on other nodes.
	var mine [3]int64
	if over == worst[0] {
		mine = [3]int64{g.limit, g.floor, 0}
		if g.from == FlagLimitSource {
			mine[2] = 1
		}
	}
	its, err := c.AllreduceInt64(comm.Max, mine[:])
	if err != nil {
		return err
	}
	e := g.outgrown(phase, worst[0], g.advice, stopped)
	e.limit, e.floor, e.flag = its[0], its[1], worst[1]
	if over != worst[0] {
		e.from = "" // another process's default: its source is not known here
		if its[2] == 1 {
			e.from = FlagLimitSource
		}
	}
	return &AgreedError{Err: e, Together: true}
}

// flag is the --memory-limit this guard's node needs when its process
// reached rss (0: within its limit) and needs advice: what the phases
// after this one need is not known, so at least a quarter more than rss,
// and the start's high estimate; for every busy analysis process of the
// node.
func (g memoryGuard) flag(rss, advice int64) int64 {
	return max(rss+rss/4, advice) * max(g.nodeProcs, 1)
}

// outgrown is the error of this guard's process reaching rss in phase,
// advising at least advice for a process.
func (g memoryGuard) outgrown(phase string, rss, advice int64, stopped bool) *outgrownError {
	return &outgrownError{phase: phase, rss: rss, limit: g.limit, floor: g.floor, flag: g.flag(rss, advice), stopped: stopped, oneEach: g.oneEach, from: g.from}
}

// outgrownError is a resident set above the memory limit in a phase, seen
// inside it (stopped: exceeded, or check at a release point) or at its
// end (check); flag is the --memory-limit it advises.
type outgrownError struct {
	phase                   string
	rss, limit, floor, flag int64
	stopped, oneEach        bool
	from                    string // the limit's source; "": not known
}

func (e *outgrownError) Error() string {
	where := ""
	if e.stopped {
		where = "; stopped there"
	}
	floor := ""
	if e.floor > 0 {
		floor = fmt.Sprintf("its code and libraries' %s included; ", report.Bytes(e.floor))
	}
	return fmt.Sprintf("the analysis outgrew its memory limit in the %s phase: the process reached %s, above its limit of %s (%s%s)%s: run with --memory-limit %s or more%s",
		e.phase, report.Bytes(e.rss), report.Bytes(e.limit), floor, limitShare(e.from), where, report.Bytes(e.flag), moreRanks(e.oneEach))
}

// Package driver runs the analysis pipeline on one analysis rank: open the
// trace, partition its processes over the ranks, load this rank's share,
// synchronise clocks, exchange cross-rank edges, simulate, find the critical
// path and reduce everything to the report on rank 0. It holds no analysis
// of its own; it sequences the packages that do, over a comm.Comm, so the
// same code runs on goroutines (inproc) and under mpirun (mpi).
package driver

import (
	"bufio"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/ptrace-dev/ptrace/clocksync"
	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/critpath"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/internal/procmem"
	"github.com/ptrace-dev/ptrace/internal/spill"
	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/partition"
	"github.com/ptrace-dev/ptrace/reduce"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
	"github.com/ptrace-dev/ptrace/waitstate"
)

// Options configure an analysis.
type Options struct {
	Dir     string
	Salvage bool // keep what precedes a truncated or corrupt file tail
	Strict  bool // turn tolerated problems (warnings) into errors
	// ForceMix analyses files whose run ids differ (files of different
	// runs in one directory) with a warning instead of refusing them.
	ForceMix bool
	// NoClockSync uses timestamps as recorded (traces from one shared
	// clock); violations are still counted. Report method "none".
	NoClockSync bool
	// Clock holds the CLC parameters; the zero value means
	// clocksync.DefaultOptions().
	Clock clocksync.Options
	// WholeRun accounts every process's whole trace; by default the
	// analysis window runs from the first exit from MPI_Init to the last
	// entry into MPI_Finalize, as TALP measures (traces without MPI are
	// analysed whole either way).
	WholeRun bool
	// NoInstrumentationCorrection keeps the collector's recording cost in
	// the work it was recorded in (see sim/instrument.go).
	NoInstrumentationCorrection bool
	// SyncRuntimeAsWork books the runtime's code inside barriers,
	// taskwaits and taskgroups, outside their waits, as work, as POT does,
	// instead of overhead (see sim/runtime.go).
	SyncRuntimeAsWork bool
	// Window, when set, limits the analysis to a part of the run, in ns
	// after the trace's first event (cut to the trace); it replaces the
	// default window.
	Window *Window
	// Progress, when set, is called on rank 0 with the current phase and
	// the fraction of it done.
	Progress func(phase string, frac float64)
	// Path, when set, receives on rank 0 the whole critical path in time
	// order, packed, to be read once the analysis is done (for
	// --critical-path FILE; it moves O(path length) data to rank 0).
	// Every rank must set it or none.
	Path *report.PathSource
	// Stats, when set, receives on rank 0 how the run went (phase times,
	// per-rank memory). Every rank must set it or none.
	Stats *RunStats
	// MemoryLimit is the memory this rank may use, in bytes (0: no
	// limit): its share of the Go runtime's memory limit, which the
	// caller set (debug.SetMemoryLimit) to the process's limit less
	// MemoryFloor. A rank whose processes would not fit keeps no events
	// in memory even with HoldEvents (Notice says so on rank 0).
	MemoryLimit int64
	// MemoryGuard says that the analysis runs under a memory limit
	// although this rank has none of its own (an MPI rank that owns no
	// process takes no share of its node's): it takes the guard's
	// collective checks with the ranks that have one, never over. Every
	// rank with MemoryLimit 0 must set it when any rank has a limit.
	MemoryGuard bool
	// MemoryFloor is what the process holds outside the Go runtime
	// (procmem.Floor: its code and libraries): the heap guard holds the
	// process's resident set to the Go runtime's limit and it (the
	// process's share of --memory-limit), and the limits the errors
	// advise add it.
	MemoryFloor int64
	// MemoryLimitFrom says where the process's limit came from, for the
	// messages of a refusal or a stop: "--memory-limit", or the default's
	// source (a cgroup's limit file, the machine's memory); "": not said.
	MemoryLimitFrom string
	// NodeProcesses is how many analysis processes share the node's
	// --memory-limit (0: one): the limits the errors advise are the
	// node's, a process's need times it.
	NodeProcesses int
	// HoldEvents keeps each process's encoded events in memory from the
	// load to its simulation (about the traces' bytes) instead of reading
	// them from the files again on the passes after the load (LoadOptions.
	// Stream, the default): each file is read once, for that memory, which
	// the peak pays in full (the simulation starts with every process's
	// events held). Worth it where a second read is slow, say a parallel
	// file system whose pages the node evicted.
	HoldEvents bool
	// Notice, when set, receives on rank 0 what the user should know about
	// how the analysis runs (not what it found).
	Notice func(string)
	// Note, when set, receives on rank 0 remarks on how the analysis runs
	// that a quiet run (-q) leaves out: ranks that own no process.
	Note func(string)
	// AfterPhase, when set, is called on every rank after each phase ends
	// (for --memprofile: the heap as each phase leaves it).
	AfterPhase func(rank int, phase string)
	// GC sets the collector's growth during the critical path (the zero
	// value leaves it as it is, say as the user's GOGC set it).
	GC GCPercents
	// Workers is how many cores this rank may keep busy at once: its share
	// of the cores of its node. Above 1, the work of one process spreads
	// over goroutines where it can (the load decodes the chunks of a file
	// on Workers goroutines). Results do not depend on it.
	Workers int
}

// GCPercents are the garbage collector's settings (runtime/debug.
// SetGCPercent) for the analysis: Normal for every phase but the
// simulation of task-heavy traces, the MPI wait states and the critical
// path, which run at Simulate, WaitStates and CriticalPath (the wait
// states and the critical path make their large arrays in a few steps,
// each mostly live to the phase's end, so a lower growth costs them
// little and holds their peak lower; a task-heavy simulation's tables
// grow steadily to its peak, where the collector's growth is the garbage
// on top of them: run.taskHeavy). Zero fields change nothing.
type GCPercents struct{ Normal, Simulate, WaitStates, CriticalPath int }

// BytesPerTraceByte is what an analysis holds at its peak per byte of the
// trace files it owns, with the events in memory (measured on the gen
// workloads, docs/PERFORMANCE.md); the events themselves are one of them.
const BytesPerTraceByte = 8

// Window is a part of the run, in ns after the trace's first event.
type Window struct{ StartNS, EndNS int64 }

// maxListedWarnings bounds the warnings listed in the report.
const maxListedWarnings = 20

// forcedGCMin is the size of a rank's traces from which Run collects
// after each phase: a fuzzing input of a few KB wants none, the stop
// hook's 7 MB trace at 2 ranks (3.5 MB a rank) 2–5 MiB less max RSS
// with them (37.5–40.0 MiB without, 35.2–35.4 with, 3 runs each).
const forcedGCMin = 1 << 20

// collect runs a garbage collection, once for the process's in-process
// ranks, when the rank's traces are forcedGCMin or more: after each phase,
// and inside the phases that drop much at one point (the match, the wait
// states).
func (r *run) collect() error { return comm.PerProcess(r.c, r.owned >= forcedGCMin, runtime.GC) }

// release returns the hook a collective phase calls on every rank where
// it drops its largest tables (graph.MatchOptions.Release,
// waitstate.Analysis.Release): the collection, and under a memory limit
// the heap guard's check, so that a phase whose first part took the
// process above the limit stops there, on every rank, rather than make
// its next tables beside what it holds and run on to its end (the match
// of a 1.5 M-event pipeline trace reached 27.2 MiB under a limit of 23.9
// before it stopped at its end, 24.5 now; forty-third round).
func (r *run) release(phase string) func() error {
	check := r.limitCheck(phase)
	return func() error {
		if err := r.collect(); err != nil || check == nil {
			return err
		}
		return check()
	}
}

// limitCheck returns, under a memory limit, the check a collective
// phase's local loop makes on every rank at fixed points
// (comm.Checkpoints): the heap guard's, which stops the phase there
// on every rank when the process went above the limit; nil without a
// limit. Unlike release it does not collect: the guard reads the
// resident set's peak.
func (r *run) limitCheck(phase string) func() error {
	if !r.guarded() || r.guard.hs == nil {
		return nil
	}
	return func() error { return r.guard.check(r.c, phase, procmem.Peak(), true) }
}

// bounded returns how phase's exchanges along the edges run: under a
// memory limit checked after each batch (limitCheck), in batches of a
// sixteenth of the rank's share, between 256 KiB and graph.EdgeBatchBytes
// (4 MiB): a batch's buffers, a rank's sent and received, are how far the
// phase goes past the limit before a check sees it (the clock sync of
// gen nearest --radix 64 at two ranks stopped 3.3 MiB above a limit of
// 37 MiB in its first batch). Without a limit, as ever.
func (r *run) bounded(phase string) graph.Bounded {
	b := graph.Bounded{Check: r.limitCheck(phase)}
	if lim := r.opts.MemoryLimit; lim > 0 {
		b.Batch = int(min(max(lim/16, 256<<10), graph.EdgeBatchBytes))
	}
	return b
}

// guarded reports whether the analysis runs under a memory limit, on
// this rank or another (Options.MemoryGuard): the guard's checks are
// collective, taken on every rank or none.
func (r *run) guarded() bool { return r.opts.MemoryLimit > 0 || r.opts.MemoryGuard }

// phaseGC sets the collector's growth to percent for a phase (GCPercents)
// and returns what sets it back to Normal; with either 0 it changes
// nothing.
func (r *run) phaseGC(percent int) (restore func()) {
	normal := r.opts.GC.Normal
	if percent <= 0 || normal <= 0 {
		return func() {}
	}
	debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(normal) }
}

// Run analyses opts.Dir on this rank. Rank 0 returns the report; other ranks
// return nil. Every rank returns an error if any rank failed: the failing
// rank its own, the others a *comm.AbortError naming it.
func Run(c comm.Comm, opts Options) (*report.Report, error) {
	r := &run{c: c, opts: opts}
	defer r.closeSpill()
	phases := []struct {
		name string
		fn   func() error
	}{
		{"open", r.openDir},
		{"load", func() error {
			if err := agree(c, r.load()); err != nil {
				return err
			}
			if err := agree(c, r.cutGaps()); err != nil {
				return err
			}
			if err := agreed(r.convertedOverLimit()); err != nil {
				return err
			}
			return r.checkMemory()
		}},
		// match, clocksync and exchange are collective and fail on every
		// rank or on none, so their errors are agreed already.
		{"match", func() error { return agreed(r.match()) }},
		{"clocksync", func() error { return agreed(r.clocksync()) }},
		{"exchange", func() error { return agreed(r.exchange()) }},
		{"summarize", func() error { return agree(c, r.summarize()) }},
		// The wait states before the simulation: the matching and the
		// MPI calls they read are gone before the simulation's tables
		// grow.
		{"wait states", r.waitStates},
		{"simulate", r.simulate},
		{"anomalies", r.anomalies},
		{"critical path", r.criticalPath},
	}
	var times, decoded, heaps, lives, rss []int64
	var hs *heapSampler
	r.guard = newMemoryGuard(nil, opts.MemoryFloor)
	r.guard.nodeProcs = int64(max(opts.NodeProcesses, 1))
	r.guard.from = opts.MemoryLimitFrom
	if opts.Stats != nil || r.guarded() {
		hs = startHeapSampler(uint64(r.guard.limit))
		defer hs.stop()
		r.guard.hs = hs
	}
	for _, ph := range phases {
		start := time.Now()
		before := r.decoded()
		r.progress(ph.name, 0)
		if err := ph.fn(); err != nil {
			return nil, err
		}
		r.progress(ph.name, 1)
		times = append(times, int64(time.Since(start)))
		// A phase drops what only it read (the events, the MPI calls of the
		// wait states, the matching); GOGC's next cycle comes only once the
		// heap grows 25 % past the live heap measured before the drop, so
		// the next phase would map fresh pages beside the garbage instead
		// of reusing it. The heap is pointer-free arrays: a collection here
		// costs a few milliseconds and takes 15–25 MB off the peak RSS. One
		// collection for the process, not one per in-process rank: the
		// stop hook's trace 224 → 216 ms a run. A rank whose traces are
		// smaller than forcedGCMin wants none: what its phases drop is
		// smaller still, and the collection costs what the whole process
		// holds (ten collections were 36 ms of a 37 ms analysis of a few
		// hundred events in a fuzzing worker holding 105 MB).
		if err := r.collect(); err != nil {
			return nil, err
		}
		if opts.AfterPhase != nil {
			opts.AfterPhase(c.Rank(), ph.name)
		}
		decoded = append(decoded, r.decoded()-before)
		if hs != nil {
			peak, live := hs.phasePeak()
			heaps = append(heaps, int64(peak))
			lives = append(lives, int64(live))
			rssPeak := procmem.Peak()
			rss = append(rss, rssPeak)
			if r.guarded() {
				if rssPeak == 0 {
					rssPeak = int64(live) // no /proc: as the sampler does
				}
				if err := r.guard.check(c, ph.name, rssPeak, false); err != nil {
					return nil, err
				}
			}
		}
	}
	if opts.Stats != nil {
		names := make([]string, len(phases))
		for i, ph := range phases {
			names[i] = ph.name
		}
		if err := r.gatherStats(opts.Stats, names, times, decoded, heaps, lives, rss); err != nil {
			return nil, err
		}
	}
	return r.rep, nil
}

// decoded returns the events this rank's processes decoded so far.
func (r *run) decoded() int64 {
	var n int64
	for _, p := range r.procs {
		n += p.Decoded
	}
	return n
}

// RunStats describes how an analysis ran (not what it found), for --stats:
// phase times (slowest rank), each rank's peak heap and its process's
// resident set. Under inproc all ranks share one process, so the heap and
// resident-set figures are the process's.
type RunStats struct {
	Ranks int
	// The assignment of processes to ranks: fewest and most processes on
	// one rank that owns any, and the largest rank's event load over the
	// mean of those ranks (1 is perfect balance); Idle ranks own none
	// (more ranks than processes).
	MinProcs, MaxProcs int
	Imbalance          float64
	Idle               int
	Phases             []PhaseStat
	PeakHeap           []uint64 // per rank, the highest heap of any phase
	// PeakLive is, per rank, the highest live heap of any phase (what a
	// collection found live: the analysis's data without its garbage),
	// and Estimate the heap the rank's analysis was estimated to need
	// after the load (low and high, --memory-limit's estimate).
	PeakLive []uint64
	Estimate [][2]int64
	// MaxRSS is, per rank, its process's resident-set high-water mark at
	// the end (0 where the system does not give it).
	MaxRSS []uint64
	// Scratch is, per rank, the bytes it wrote to its scratch file in
	// $TMPDIR (what the memory figures do not hold: 0 where none could be
	// made, as on a tmpfs).
	Scratch []int64
	// Limit is, per rank, its process's memory limit (its share of
	// --memory-limit, the floor included; 0: none), and Workers the cores
	// it was given (Options.Workers): what a node's busy analysis
	// processes divided among themselves.
	Limit   []int64
	Workers []int
}

// PhaseStat is one phase's wall time on the slowest rank, the events each
// rank decoded in it and each rank's peak heap during it (live objects,
// sampled every few milliseconds; under inproc, the shared process's).
type PhaseStat struct {
	Name     string
	MaxNS    int64
	Events   []int64  // per rank
	PeakHeap []uint64 // per rank
	// MaxRSS is, per rank, its process's resident-set high-water mark at
	// the end of the phase: the phase where it grows set the peak.
	MaxRSS []uint64
}

// statsRow is one rank's per-phase figures, gathered to rank 0.
type statsRow struct {
	Events  []int64
	Heap    []int64
	Live    []int64
	RSS     []int64
	Est     [2]int64
	Scratch int64
	Limit   int64
	Workers int64
}

func (r *run) gatherStats(st *RunStats, names []string, times, decoded, heaps, lives, rss []int64) error {
	mx, err := r.c.ReduceInt64(0, comm.Max, times)
	if err != nil {
		return err
	}
	lo, hi := r.memoryEstimate()
	var scratch int64
	if r.spill != nil {
		scratch = r.spill.Size()
	}
	rows, err := reduce.GatherRows(r.c, []statsRow{{Events: decoded, Heap: heaps, Live: lives, RSS: rss, Est: [2]int64{lo, hi}, Scratch: scratch, Limit: r.guard.limit, Workers: int64(r.opts.Workers)}})
	if err != nil {
		return err
	}
	if r.c.Rank() == 0 {
		st.Ranks = r.c.Size()
		if p := r.plan; p != nil {
			st.Imbalance, st.Idle = p.Imbalance(), p.Ranks()-p.Busy()
			st.MinProcs, st.MaxProcs = len(r.dir.Files), 0
			for k := range p.Busy() {
				lo, hi := p.Range(k)
				st.MinProcs, st.MaxProcs = min(st.MinProcs, hi-lo), max(st.MaxProcs, hi-lo)
			}
		}
		st.PeakHeap, st.MaxRSS = make([]uint64, len(rows)), make([]uint64, len(rows))
		st.PeakLive, st.Estimate = make([]uint64, len(rows)), make([][2]int64, len(rows))
		st.Scratch = make([]int64, len(rows))
		st.Limit, st.Workers = make([]int64, len(rows)), make([]int, len(rows))
		for k, row := range rows {
			st.Limit[k], st.Workers[k] = row.Limit, int(row.Workers)
			for _, v := range row.Live {
				st.PeakLive[k] = max(st.PeakLive[k], uint64(v))
			}
			st.Estimate[k], st.Scratch[k] = row.Est, row.Scratch
		}
		st.Phases = make([]PhaseStat, len(mx))
		for i, v := range mx {
			ps := PhaseStat{Name: names[i], MaxNS: v, Events: make([]int64, len(rows)), PeakHeap: make([]uint64, len(rows)), MaxRSS: make([]uint64, len(rows))}
			for k, row := range rows {
				ps.Events[k] = row.Events[i]
				ps.PeakHeap[k] = uint64(row.Heap[i])
				st.PeakHeap[k] = max(st.PeakHeap[k], ps.PeakHeap[k])
				if i < len(row.RSS) {
					ps.MaxRSS[k] = uint64(row.RSS[i])
					st.MaxRSS[k] = max(st.MaxRSS[k], ps.MaxRSS[k])
				}
			}
			st.Phases[i] = ps
		}
	}
	return nil
}

// run is one rank's state through the pipeline.
type run struct {
	// spill holds the fragment nodes' attributes and weights from the
	// simulation to the critical path (spillFrags), and what a phase
	// parks; nil until the first is spilled, and after a failure to make
	// it or write to it.
	spill       *spill.File
	spillFailed bool

	c     comm.Comm
	opts  Options
	guard memoryGuard
	dir   dirInfo
	plan  *partition.Plan
	lo    int   // first owned process
	owned int64 // bytes of the owned processes' files
	procs []*trace.Process
	// archive is the OTF2 archive this rank's processes come from, opened
	// at the first of them (nil for a ptrace trace).
	archive *otf2.Archive
	// convw buffers the conversion's writes into the load's pipe, for
	// every OTF2 process of the rank in turn.
	convw *bufio.Writer
	// otf2Rows says, per owned OTF2 process, what its conversion left out.
	otf2Rows []otf2Row
	// cut is the union of the OTF2 processes' recording gaps (cutGaps).
	cut []otf2.Gap
	rep *report.Report // rank 0 only
	// costKey names the tasks' cost attribute if the trace has one.
	costKey string
	// cp holds, per owned process, its fragment and task graphs for the
	// critical path.
	cp []*critpath.Proc
	// tasks holds, per owned process, its task table for the anomalies
	// phase, which drops it.
	tasks []taskTable
	// anom is the anomalies' test of every task, finished after the
	// critical path (finishAnomalies).
	anom anomalyTest

	first, last int64 // global time window, known after summarize
	traceFirst  int64 // the trace's first event

	matching *graph.Matching
	clock    *clocksync.Local
	// edges holds, per owned process, the predecessors of its
	// receive-like events with their final timestamps (the simulator's
	// and the critical path's cross-process input).
	edges []graph.RemoteEdges
	// lrSources holds, per owned process, the events Late Receiver
	// edges leave from (waitStates), for the simulation's fragments.
	lrSources [][]sim.EventRef
	// polls holds, per owned process, its polled requests for the
	// fragment pass (waitstate.Analysis.PollRefs), until its simulation.
	polls [][]sim.PollRef
	// waits is the MPI wait-state section (rank 0), which the simulate
	// phase completes with the OpenMP waits.
	waits *report.WaitStates
	// scans are the event scans the passes share from process to process.
	scans trace.Scans
	// simSpare and ompSpare carry a simulation's task table, edge pool and
	// dependence tracker to the rank's next process, and are dropped with
	// the simulate phase.
	simSpare sim.Spare
	ompSpare ompt.Spare
	preds    critpath.PredBuf // PredTimes' lists, reused from process to process
}

// dirInfo is what rank 0 learns about the trace directory and broadcasts.
type dirInfo struct {
	Err      string
	Path     string
	Files    []trace.FileInfo
	Producer string
	Command  []string
	RunID    string   // rank 0's run id, which every file must share
	Version  int      // rank 0's format version, which every file of the run must share
	Warnings []string // tolerated problems of the listing
	OTF2     bool     // Path is an OTF2 archive, Files its processes
	Notes    []string // what the archive holds that the analysis leaves out
}

func (r *run) progress(phase string, frac float64) {
	if r.c.Rank() == 0 && r.opts.Progress != nil {
		r.opts.Progress(phase, frac)
	}
}

// openDir lists the trace on rank 0 only (one metadata scan, not one per
// rank) and shares the listing.
func (r *run) openDir() error {
	if r.c.Rank() == 0 {
		d, notes, err := openTrace(r.opts.Dir, r.opts.MemoryLimit)
		if err != nil {
			r.dir.Err = err.Error()
		} else {
			r.dir.Path, r.dir.Files, r.dir.Notes = d.Path, d.Files, notes
			r.dir.RunID, r.dir.Warnings, r.dir.Version = d.RunID, d.Warnings, d.Version
			if r.opts.Strict && len(d.Warnings) > 0 {
				r.dir.Err = d.Warnings[0] + " (--strict)"
			}
			if d.Manifest != nil {
				r.dir.Producer, r.dir.Command = d.Manifest.Producer, d.Manifest.Command
				r.dir.OTF2 = d.Manifest.Format == otf2Format
			}
		}
	}
	if err := reduce.Broadcast(r.c, &r.dir); err != nil {
		return err
	}
	if r.dir.Err != "" {
		if r.c.Rank() == 0 {
			return &AgreedError{Err: errors.New(r.dir.Err)}
		}
		return &AgreedError{Err: &comm.AbortError{Rank: 0, Err: errors.New(r.dir.Err)}}
	}
	weights := make([]int64, len(r.dir.Files))
	for i, f := range r.dir.Files {
		weights[i] = f.Events
		if weights[i] == 0 {
			weights[i] = f.Bytes
		}
	}
	plan, err := partition.Assign(weights, r.c.Size())
	if err != nil {
		// Every rank computed the same plan from the same listing, so every
		// rank fails here alike.
		return &AgreedError{Err: err}
	}
	r.plan = plan
	r.guard.oneEach = plan.Ranks() >= len(weights)
	if busy := plan.Busy(); busy < plan.Ranks() && r.c.Rank() == 0 && r.opts.Note != nil {
		r.opts.Note(idleNote(plan.Ranks(), busy))
	}
	return nil
}

// idleNote says which ranks idle: those past the trace's processes take
// part in every collective step with nothing of their own, and the
// report is the same as with one rank a process.
func idleNote(ranks, busy int) string {
	procs := "processes"
	if busy == 1 {
		procs = "process"
	}
	idle := fmt.Sprintf("ranks %d–%d have", busy, ranks-1)
	if ranks-busy == 1 {
		idle = fmt.Sprintf("rank %d has", busy)
	}
	return fmt.Sprintf("%d analysis ranks for %d %s: %s no process to analyse and idle", ranks, busy, procs, idle)
}

// load reads this rank's processes, and nothing else.
func (r *run) load() error {
	lo, hi := r.plan.Range(r.c.Rank())
	r.lo = lo
	var owned int64
	for i := lo; i < hi; i++ {
		owned += r.dir.Files[i].Bytes
	}
	r.owned = owned
	// Until the census gives an estimate (checkMemory), a stop advises
	// what the events would take held in memory.
	r.guard.advice = r.processNeed(owned * BytesPerTraceByte)
	tooBig := r.opts.MemoryLimit > 0 && owned*BytesPerTraceByte > r.opts.MemoryLimit
	stream := !r.opts.HoldEvents || tooBig
	if tooBig && r.opts.HoldEvents && r.c.Rank() == 0 && r.opts.Notice != nil {
		r.opts.Notice(fmt.Sprintf("rank 0's %s of trace need about %s in memory, over its limit of %s: reading events from disk on every pass (--memory-limit)",
			report.Bytes(owned), report.Bytes(owned*BytesPerTraceByte), report.Bytes(r.opts.MemoryLimit)))
	}
	var bufs trace.LoadBuffers // the files' loads share their buffers
	for i := lo; i < hi; i++ {
		opts := trace.LoadOptions{Salvage: r.opts.Salvage, Stream: stream, Buffers: &bufs, Workers: r.opts.Workers}
		if !r.dir.OTF2 {
			// Files of one run come from one writer: a header whose version
			// differs is damaged, refused before its chunks are decoded
			// with the wrong coding.
			opts.RunID, opts.Version = r.dir.RunID, r.dir.Version
		}
		p, err := r.loadProcess(i, opts)
		if err != nil {
			return fmt.Errorf("rank %d: %w", i, salvageHint(err, r.opts.Salvage))
		}
		if p.Header.Rank != i {
			return fmt.Errorf("rank %d: %s: header says rank %d", i, p.File, p.Header.Rank)
		}
		if p.Header.NRanks != len(r.dir.Files) {
			return fmt.Errorf("rank %d: %s: header says %d ranks, the trace has %d", i, p.File, p.Header.NRanks, len(r.dir.Files))
		}
		if err := trace.SameRun(r.dir.RunID, r.dirPath(0), p.Header, p.File); err != nil {
			if !r.opts.ForceMix {
				return fmt.Errorf("rank %d: %w", i, err)
			}
			p.Warnings = append(p.Warnings, fmt.Sprintf("%v (--force-mix)", err))
		}
		if r.opts.Strict && len(p.Warnings) > 0 {
			return fmt.Errorf("rank %d: %s (--strict)", i, p.Warnings[0])
		}
		r.procs = append(r.procs, p)
		r.progress("load", float64(i-lo+1)/float64(hi-lo))
	}
	return nil
}

// match builds the happened-before graph of the owned processes.
func (r *run) match() error {
	m, err := graph.Match(r.c, r.plan, r.procs, graph.MatchOptions{MaxListed: maxListedWarnings, Scans: &r.scans,
		// The join's records are about half the phase's peak: collected
		// before the edges' lists and the DAG's arrays are made, these take
		// their place (spread: 325 → 282 MiB, mpi 163–183 → 151 MiB;
		// docs/PERFORMANCE.md, twenty-fourth round).
		Release: r.release("match"),
		// Under a memory limit, checks along the scan too: it makes most
		// of the phase's growth before the first Release.
		Check: r.limitCheck("match"),
		// Only the matching reads the logs: each goes once its process
		// is scanned.
		DropCommLogs: true})
	if err != nil {
		return err
	}
	r.matching = m
	return r.strictWarnings(m.Warnings.First)
}

// clocksync corrects the timestamps in place (or only counts violations).
func (r *run) clocksync() error {
	o := r.opts.Clock
	if o == (clocksync.Options{}) {
		o = clocksync.DefaultOptions()
	}
	var err error
	if r.opts.NoClockSync {
		r.clock, err = clocksync.Census(r.c, r.matching, o)
	} else {
		r.clock, err = clocksync.SyncBounded(r.c, r.matching, o, r.bounded("clocksync"))
	}
	if err != nil {
		return r.explainCycle(err)
	}
	return r.strictWarnings(r.clock.Warnings)
}

// maxCycleCauses bounds the matching's warnings a cycle's error lists.
const maxCycleCauses = 4

// explainCycle adds to a happened-before cycle what the matching found
// wrong: a message or collective call missing from one process's trace
// shifts the pairing of every later one on its channel or communicator,
// and a pair that runs backwards against a synchronizing collective
// closes a cycle that names neither. The matching's warnings name the
// processes whose counts differ. Collective: every rank of a replay
// returns the same *graph.CycleError.
func (r *run) explainCycle(err error) error {
	var ce *graph.CycleError
	if !errors.As(err, &ce) || r.matching == nil {
		return err
	}
	mine := []byte(strings.Join(r.matching.Warnings.First, "\n"))
	all, gerr := r.c.Gatherv(0, mine)
	var msg []byte
	if r.c.Rank() == 0 && gerr == nil {
		var causes []string
		for _, b := range all {
			if len(b) > 0 {
				causes = append(causes, strings.Split(string(b), "\n")...)
			}
		}
		if n := len(causes); n > maxCycleCauses {
			causes = append(causes[:maxCycleCauses], fmt.Sprintf("%d more", n-maxCycleCauses))
		}
		msg = []byte(strings.Join(causes, "; "))
	}
	msg, berr := r.c.Bcast(0, msg)
	if gerr != nil || berr != nil {
		return err
	}
	if len(msg) == 0 {
		return fmt.Errorf("%w (every message and collective call pairs up: the recorded order of the events is impossible, a trace damaged within?)", err)
	}
	return fmt.Errorf("%w; the analysis cannot go on: messages pair in order on their channel, and collective calls on their communicator, so an event missing from one process's trace pairs every later one with the wrong partner, against the order the collectives impose; the matching found: %s", err, msg)
}

// exchange hands every owned process its cross-process predecessors with
// their final timestamps, and checks the synchronization on them.
func (r *run) exchange() error {
	// The replays are done: the DAG's inputs go before the edges' rows are
	// made (8 bytes a node and 4 an edge: 34 MB of the phase's peak on
	// spread); the exchange sends along the outputs.
	r.matching.DAG.DropInputs()
	edges, err := graph.ExchangeEdgesBounded(r.c, r.matching, r.clock.NodeTime(r.matching), r.bounded("exchange"))
	if err != nil {
		return err
	}
	r.edges = edges
	r.clock.CountAfter(r.matching, edges)
	r.clock.NodeTimes = nil // the edges carry what the passes after need
	r.matching.DropSyncColumns()
	return nil
}

// waitStates records the MPI calls of every owned process (a walk of the
// threads that make them), charges them to Scalasca's wait-state patterns
// and keeps the section for the report (none when the window holds no MPI
// call). The matching is done with afterwards.
func (r *run) waitStates() error {
	if err := r.window(); err != nil {
		return err
	}
	// A trace without MPI has no wait state to find: its communication
	// nodes, if any, are remote task dependences, which no MPI pattern
	// reads, yet recording and replaying them held 100 MiB over the
	// match's peak on the 10 M-event spread trace.
	var mpi int64
	for _, p := range r.procs {
		k := &p.Census.Kinds
		mpi += k[trace.MPIEnter] + k[trace.MPISend] + k[trace.MPIRecv] + k[trace.CollBegin] + k[trace.CollEnd] + k[trace.CollStart] + k[trace.CollComplete]
	}
	all, err := r.c.AllreduceInt64(comm.Sum, []int64{mpi})
	if err != nil {
		return err
	}
	if all[0] == 0 {
		r.matching = nil
		r.lrSources = make([][]sim.EventRef, len(r.procs))
		return nil
	}
	// The process's setting, as the critical path's.
	defer r.phaseGC(r.opts.GC.WaitStates)()
	// The wait states do not read the predecessors' times: they wait in
	// the spill file (where one can be written) until the phase's end.
	// Nor the rows while they record the calls and walk the matched
	// edges: Analyze reads those back.
	for i := range r.edges {
		r.park(r.edges[i].ParkPredTimes)
		r.park(r.edges[i].ParkRows)
	}
	a := waitstate.New(r.matching)
	a.Release = r.release("wait states")
	a.Check = r.limitCheck("wait states")
	a.Spill = r.spiller()
	if !a.ReadsRecorded() {
		r.matching.DropRecorded()
	}
	// Nor do they walk the matched edges until their analysis: the
	// matching's DAG waits in the spill file while they record the calls
	// (4.9 MB of the 10 M-event halo's phase peak); Analyze reads it back.
	r.park(r.matching.DAG.Park)
	var failure error
	// The recording grows with every process (a quarter of the phase's
	// peak on 16 processes of nonblocking collectives): under a limit it
	// is checked as it goes, on every rank.
	checks := comm.Checkpoints{Check: a.Check}
	for i, p := range r.procs {
		if err := a.Record(i, p, r.timebase(i), &r.scans); err != nil {
			failure = fmt.Errorf("rank %d: wait states: %w", p.Header.Rank, err)
			break
		}
		r.progress("wait states", float64(i+1)/float64(len(r.procs)))
		if err := checks.After(i, len(r.procs)); err != nil {
			return err
		}
	}
	if err := checks.Finish(); err != nil {
		return err
	}
	// The recording read the nodes' recorded times (those of the threads
	// it did not decode); what follows does not.
	r.matching.DropRecorded()
	if err := agree(r.c, failure); err != nil {
		return err
	}
	// Nor their kinds, threads and events until the matched edges are
	// walked: Analyze reads them back.
	r.park(r.matching.ParkColumns)

	// The analysis holds the matching from here, and lets it go once it
	// has found what the delay costs' tasks need of it, before the
	// phase's peak.
	r.matching = nil
	rows, causes, delays, err := a.Analyze(r.c, r.plan, r.edges, r.first, r.last)
	if err != nil {
		return agreed(err)
	}
	// What the analysis left out of a damaged file, per rank in rank (so
	// process) order.
	ws, err := reduce.GatherRows(r.c, []rankWarnings{{Count: a.Warn.Total(), First: a.Warn.Examples}})
	if err != nil {
		return err
	}
	for _, w := range ws {
		addWarnings(r.rep, w.Count, w.First)
	}
	var back error
	for i := range r.edges {
		if err := r.edges[i].UnparkPredTimes(); err != nil {
			back = fmt.Errorf("rank %d: wait states: %w", r.c.Rank(), err)
			break
		}
	}
	if err := agree(r.c, back); err != nil {
		return err
	}
	// A send that waited for its receiver (Late Receiver) depends on the
	// receive's start: an edge of the critical path into the sender, from
	// an event of the receiver's that the simulation must give a node.
	r.lrSources = make([][]sim.EventRef, len(r.procs))
	r.polls = make([][]sim.PollRef, len(r.procs))
	for i := range r.procs {
		r.polls[i] = a.PollRefs(i)
		if i < len(r.edges) {
			r.edges[i].AppendRows(a.LateReceiverEdges(i))
		}
		r.lrSources[i] = a.LateReceiverSources(i)
	}
	if r.c.Rank() == 0 {
		r.waits = waitstate.Report(rows, causes, delays)
	}
	return nil
}

// criticalPath hands the critical path (critpath.Analyze) the owned
// processes' graphs and cross-process edges, and puts its sections into
// the report.
func (r *run) criticalPath() error {
	// The process's setting: every rank sets the same, at its own start
	// and end of the phase (under inproc the ranks share it, and end the
	// phase together within a collective or two).
	defer r.phaseGC(r.opts.GC.CriticalPath)()
	in := &critpath.Input{Comm: r.c, Owners: r.plan, First: r.lo, Procs: r.cp, Edges: r.edges,
		RunTimeNS: r.last - r.first, WindowStartNS: r.first, Path: r.opts.Path != nil, AfterTaskGraph: r.joinAnomalies, Check: r.limitCheck("critical path")}
	if r.spill != nil {
		in.Spill = r.spill
	}
	// The phase drops the graphs' and the edges' arrays as it goes: no
	// reference here may keep them.
	r.cp, r.edges = nil, nil
	defer r.joinAnomalies() // an error before the task graph's end
	res, err := critpath.Analyze(in)
	if err == nil {
		err = r.finishAnomalies()
	}
	if err != nil || r.c.Rank() != 0 {
		return err
	}
	r.rep.CriticalPath, r.rep.Graph = res.CriticalPath, res.Graph
	addWarnings(r.rep, res.Warnings.Count, res.Warnings.First)
	if r.opts.Path != nil {
		*r.opts.Path = res.Path
	}
	return nil
}

// strictWarnings turns warnings into an agreed error under --strict. The
// warnings of a collective phase may sit on some ranks only, so the
// decision is agreed here.
func (r *run) strictWarnings(ws []string) error {
	var err error
	if r.opts.Strict && len(ws) > 0 {
		err = fmt.Errorf("rank %d: %s (--strict)", r.c.Rank(), ws[0])
	}
	return comm.Agree(r.c, err)
}

// timebase returns the corrected times of owned process i (nil before
// clocksync or without correction).
func (r *run) timebase(i int) *trace.Timebase {
	if r.clock == nil || i >= len(r.clock.Timebases) {
		return nil
	}
	return r.clock.Timebases[i]
}

func (r *run) dirPath(i int) string {
	return filepath.Join(r.dir.Path, r.dir.Files[i].File)
}

// procRow is the per-process summary every rank sends to rank 0.
type procRow struct {
	Rank     int
	Host     string
	Threads  int
	Events   int64
	First    int64
	Last     int64
	Warnings []string
	Partial  bool
	NoDeps   bool    // tasks, but a format without dependences (OTF2)
	OTF2     otf2Row // what an OTF2 conversion left out
	OpenMP   bool    // parallel regions, implicit or explicit tasks
	User     bool    // threads the program started itself (trace.ThreadUser)
	NoLines  bool    // the program's code locations have no line table
}

// noLines reports whether the program was compiled without -g: some code
// address of its own (not of a shared library, such as the OpenMP
// runtime's for taskloop) resolved to a function but to no source line.
func noLines(t *trace.Tables) bool {
	for i := range t.Locations {
		l := &t.Locations[i]
		if l.Module != "" && l.Func != "" && !l.HasLine() && !strings.Contains(filepath.Base(l.Module), ".so") {
			return true
		}
	}
	return false
}

// openMPUsed reports whether a process used OpenMP: a parallel region, an
// explicit task, or an implicit task besides the initial one (which the
// OTF2 conversion gives every process, as an OpenMP runtime gives its
// initial thread; Score-P's archives of pure MPI programs are not OpenMP).
func openMPUsed(c *trace.Census) bool {
	return c.Kinds[trace.ParallelBegin]+c.Kinds[trace.TaskCreate] > 0 || c.Kinds[trace.ImplicitTaskBegin] > 1
}

// userThreads reports whether a process has threads it started itself.
func userThreads(t *trace.Tables) bool {
	for _, th := range t.Threads {
		if th.Type == trace.ThreadUser {
			return true
		}
	}
	return false
}

func (r *run) summarize() error {
	rows := make([]procRow, len(r.procs))
	for i, p := range r.procs {
		first, last := p.TimeRange(r.timebase(i))
		rows[i] = procRow{Rank: p.Header.Rank, Host: p.Header.Host, Threads: p.NumThreads(), Events: p.NumEvents(), First: first, Last: last, Warnings: p.Warnings, Partial: p.Partial,
			NoDeps: p.Header.Producer == otf2.Producer && p.Census.Kinds[trace.TaskCreate] > 0, NoLines: noLines(&p.Tables),
			OpenMP: openMPUsed(&p.Census), User: userThreads(&p.Tables)}
		if i < len(r.otf2Rows) {
			rows[i].OTF2 = r.otf2Rows[i]
		}
	}
	// Every rank makes every collective call before any returns: a decode
	// error is rank 0's alone and must not leave the others waiting.
	all, err := reduce.GatherRows(r.c, rows)
	ms, err2 := r.c.AllreduceInt64(comm.Sum, r.matching.Stats.Vector())
	clockRows, err3 := reduce.GatherRows(r.c, r.clock.Procs)
	// Warnings of the collective phases, per rank in rank (so process)
	// order.
	mine := append(append([]string(nil), r.matching.Warnings.First...), r.clock.Warnings...)
	extra, err4 := reduce.GatherRows(r.c, []rankWarnings{{Count: r.matching.Warnings.Count + int64(len(r.clock.Warnings)), First: mine}})
	if err := errors.Join(err, err2, err3, err4); err != nil || r.c.Rank() != 0 {
		return err
	}
	rep := &report.Report{Schema: report.SchemaVersion}
	r.rep = rep
	t := &rep.Trace
	t.Dir = r.dir.Path
	t.Producer, t.Command = r.dir.Producer, r.dir.Command
	t.Processes = len(all)
	addWarnings(rep, int64(len(r.dir.Warnings)), r.dir.Warnings)
	t.Notes = append(t.Notes, r.dir.Notes...)
	hosts := map[string]bool{}
	openmp, timed := false, false
	for i, row := range all {
		t.Threads += row.Threads
		t.Events += row.Events
		t.Bytes += r.dir.Files[i].Bytes
		if row.Events > 0 { // a process without events has no time range
			if !timed || row.First < t.FirstNS {
				t.FirstNS = row.First
			}
			if !timed || row.Last > t.LastNS {
				t.LastNS = row.Last
			}
			timed = true
		}
		hosts[row.Host] = true
		t.Partial = t.Partial || row.Partial
		openmp = openmp || row.OpenMP
		t.UserThreads = t.UserThreads || row.User
		t.TaskWorkers = t.TaskWorkers || row.OTF2.Workers > 0
		if row.NoDeps && !slices.Contains(t.Unavailable, "task_dependences") {
			t.Unavailable = append(t.Unavailable, "task_dependences")
		}
		if row.NoLines && !slices.Contains(t.Unavailable, "source_lines") {
			t.Unavailable = append(t.Unavailable, "source_lines")
		}
		addWarnings(rep, int64(len(row.Warnings)), row.Warnings)
	}
	t.DurationNS = t.LastNS - t.FirstNS
	t.Hosts = len(hosts)
	t.NoOpenMP = !openmp
	if r.dir.OTF2 {
		conv := make([]otf2Row, len(all))
		for i := range all {
			conv[i] = all[i].OTF2
		}
		t.Notes = append(t.Notes, otf2Notes(conv)...)
	}
	for _, rw := range extra {
		addWarnings(rep, rw.Count, rw.First)
	}
	rep.ClockSync = clockReport(clocksync.Summarize(r.clock.Method, r.clock.Options, clockRows), graph.MatchStatsFrom(ms))
	return nil
}

// addWarnings counts n tolerated problems in the report, listing the first.
func addWarnings(rep *report.Report, n int64, list []string) {
	if n == 0 {
		return
	}
	w := rep.Trace.Warnings
	if w == nil {
		w = &report.Warnings{}
		rep.Trace.Warnings = w
	}
	w.Count += n
	for _, s := range list {
		if len(w.First) < maxListedWarnings {
			w.First = append(w.First, s)
		}
	}
}

// rankWarnings are the warnings one rank's collective phases listed.
type rankWarnings struct {
	Count int64
	First []string
}

// clockReport renders the clock synchronization summary as the report's
// section.
func clockReport(s *clocksync.Summary, ms graph.MatchStats) *report.ClockSync {
	cs := &report.ClockSync{
		Method:                 s.Method,
		Messages:               ms.Messages,
		RemoteDependences:      ms.RemoteDeps,
		Collectives:            ms.Collectives,
		ViolationsBefore:       s.ViolationsBefore,
		ViolationsInterpolated: s.ViolationsInterpolated,
		ViolationsAfter:        s.ViolationsAfter,
		MaxCorrectionNS:        s.MaxCorrectionNS,
		MeanCorrectionNS:       s.MeanCorrectionNS,
		MinLatencyNS:           s.Options.MinLatencyNS,
		Gamma:                  s.Options.Gamma,
		DeltaNS:                s.Options.DeltaNS,
		UnmatchedSends:         ms.UnmatchedSends,
		UnmatchedReceives:      ms.UnmatchedRecvs,
		UnmatchedDependences:   ms.UnmatchedDepOuts + ms.UnmatchedDepIns,
		UnmatchedCollectives:   ms.BadCollectives,
		PerProcess:             make([]report.ClockProcess, len(s.PerProcess)),
	}
	for i, p := range s.PerProcess {
		cs.PerProcess[i] = report.ClockProcess{Rank: p.Rank, OffsetSource: p.OffsetSource, OffsetInitNS: p.OffsetInitNS,
			OffsetFinalNS: p.OffsetFinalNS, DriftPPM: p.DriftPPM, MaxCorrectionNS: p.MaxCorrectionNS,
			Violations: p.ViolationsBefore, ViolationsInterpolated: p.ViolationsInterpolated}
	}
	return cs
}

// agree makes every rank learn whether any rank failed (comm.Agree) and
// marks the outcome as agreed. The failing ranks return their own errors,
// the others an AbortError carrying the first failing rank's message, so
// no rank goes on alone into a collective that would never complete.
func agree(c comm.Comm, err error) error {
	var ae *comm.AbortError
	if errors.As(err, &ae) {
		return err // the communicator already failed; collectives would too
	}
	if err := comm.Agree(c, err); err != nil {
		return &AgreedError{Err: err}
	}
	return nil
}

// AgreedError is an error every rank knows about: the failing rank returns
// its own, the others an AbortError naming it. The job can end cleanly
// (no MPI_Abort) since no rank is left waiting in a collective.
type AgreedError struct {
	Err error
	// Together: every rank returns this error alike, reached at one
	// collective point (the heap guard's check): no rank failed alone.
	Together bool
}

func (e *AgreedError) Error() string { return e.Err.Error() }
func (e *AgreedError) Unwrap() error { return e.Err }

// Together reports whether err is one every rank reached together
// (AgreedError.Together), not one rank's. The guard's stop inside a
// phase's loop (match, exchange, wait states) comes back wrapped again by
// the phase's agreed or agree, so every AgreedError of the chain is
// looked at, not only the outermost.
func Together(err error) bool {
	for {
		var ae *AgreedError
		if !errors.As(err, &ae) {
			return false
		}
		if ae.Together {
			return true
		}
		err = ae.Err
	}
}

// IsAgreed reports whether err was agreed on by all ranks.
func IsAgreed(err error) bool {
	var ae *AgreedError
	return errors.As(err, &ae)
}

// agreed marks an error of a collective phase, which every rank returns
// alike, as agreed.
func agreed(err error) error {
	if err == nil {
		return nil
	}
	return &AgreedError{Err: err}
}

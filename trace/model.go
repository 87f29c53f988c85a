// Package trace owns ptrace's data model (processes, threads, events, string,
// location and communicator tables) and its on-disk format: a directory with
// one msgpack file per traced process plus a manifest. It provides a streaming
// reader (one chunk at a time, bounded memory), a writer, whole-process loading
// and validation with errors that name file and byte offset.
//
// The format is specified in docs/trace-format.md; Version is its number.
package trace

import (
	"fmt"
	"strconv"
)

// Format names and versions this package reads and writes.
const (
	FormatName = "ptrace"
	Version    = 4 // written; mpi_enter carries the call site (3: arguments coded two back)
	MinVersion = 1 // oldest version read
)

// MaxThreads bounds thread indices of one process, so a corrupt index cannot
// make readers allocate per-thread state without limit.
const MaxThreads = 1 << 16

// Header describes one traced process. It is the first frame of its file.
type Header struct {
	Format    string   `msgpack:"format"`
	Version   int      `msgpack:"version"`
	Rank      int      `msgpack:"rank"`
	NRanks    int      `msgpack:"nranks"`
	Host      string   `msgpack:"host"`
	PID       int      `msgpack:"pid"`
	Command   []string `msgpack:"command"`
	ClockUnit string   `msgpack:"clock_unit"`   // always "ns" (versions 1 and 2)
	ClockSrc  string   `msgpack:"clock_source"` // e.g. "CLOCK_MONOTONIC", "synthetic"
	Producer  string   `msgpack:"producer"`     // "ptrace-collector 0.1", "ptrace gen"
	Runtime   string   `msgpack:"runtime"`      // OpenMP runtime description if known
	StartNS   int64    `msgpack:"start_ns"`     // wall-clock start, for display only
	// RunID identifies the run (version 2): every process of one run
	// carries the same value, 32 hex digits of a 128-bit random number
	// agreed at MPI_Init. Empty in version 1 files.
	RunID string `msgpack:"run_id"`
	// Optional, written by the collector (docs/trace-format.md): what
	// stamped the events ("tsc": the invariant TSC, converted to ns of
	// clock_source by the collector; "clock_gettime"), the TSC rate of the
	// start-up calibration, and the cost of recording one event measured at
	// start-up, which the analysis' instrumentation correction subtracts.
	TimestampCounter string `msgpack:"timestamp_counter,omitempty"`
	TSCHz            int64  `msgpack:"tsc_hz,omitempty"`
	EventCostNS      int64  `msgpack:"event_cost_ns,omitempty"`
}

// Thread types as OMPT numbers them (ompt_thread_t).
const (
	ThreadInitial = 1
	ThreadWorker  = 2
	ThreadOther   = 3
	// ThreadUnknown marks a thread of no OpenMP runtime ptrace models (a
	// pthread or a runtime helper of an OTF2 archive): it is simulated for
	// its MPI and regions but left out of the breakdown and POP.
	ThreadUnknown = 4
	// ThreadUser marks a thread the program started itself (pthread_create,
	// std::thread) that no OpenMP runtime runs: from its thread_begin to its
	// thread_end it runs the program's code, work outside MPI and outside
	// its waits for other threads (SyncThreadJoin). Not an OMPT number.
	ThreadUser = 5
)

// SyncThreadJoin is the sync_kind of a thread's wait for another thread to
// end (pthread_join, std::thread::join): sync_begin, sync_wait_begin,
// sync_wait_end, sync_end with parallel 0, the call site as loc, and as
// task the index + 1 of the thread joined (0 when unknown).
// Not an OMPT number: OMPT's kinds are 1–10, and ptrace's own start at 256.
const SyncThreadJoin = 256

// SyncCondWait and SyncThreadBarrier are the sync_kinds of a thread blocked
// on a condition variable (pthread_cond_wait, pthread_cond_timedwait,
// std::condition_variable) and in a barrier of the program's own threads
// (pthread_barrier_wait): the same four events, parallel 0, the call site
// as loc, and as task the condition variable's or barrier's identity (its
// address; 0 when unknown). Like a join, a wait for other threads.
// SyncCondSignal is a pthread_cond_signal or _broadcast of the program: a
// sync_begin and a sync_end at one time, task the condition variable's
// identity; no wait, the point a woken waiter's continuation follows.
const (
	SyncCondWait      = 257
	SyncThreadBarrier = 258
	SyncCondSignal    = 259
)

// SyncWorkerIdle is the sync_kind of a worker thread of a task runtime
// (HPX, TBB, Kokkos, Charm++ …: a thread that runs the runtime's tasks as
// code regions, with neither OpenMP nor thread-creation records) between
// two of its tasks: waiting for work (starvation, or the scheduler's
// own time: a trace of the tasks alone does not tell them apart). The
// same four events as a join, parallel 0, task 0, loc the place holder
// "(waiting for work)". A wait for other threads, like a join.
const SyncWorkerIdle = 260

// SyncNamesObject reports whether the task argument of a sync event of
// this kind names a condition variable or barrier (kinds 257–259), not a
// task.
func SyncNamesObject(kind int64) bool { return kind > SyncThreadJoin && kind <= SyncCondSignal }

// ThreadSync reports whether kind is one of the program's own waits for
// other threads (join, condition variable, barrier), not OpenMP's.
func ThreadSync(kind int64) bool {
	return kind >= SyncThreadJoin && kind <= SyncThreadBarrier || kind == SyncWorkerIdle
}

// MutexPthread is the mutex_kind of a POSIX threads mutex
// (pthread_mutex_lock, pthread_mutex_trylock, and pthread_cond_wait's
// reacquisition of its mutex): mutex_acquire at the call, mutex_acquired
// at the acquisition, mutex_released at the unlock, as for an OpenMP lock.
// Not an OMPT number: OMPT's kinds are 1–7, and ptrace's own start at 256.
const MutexPthread = 256

// Thread is one entry of the thread table; Index is what chunks and ids refer to.
type Thread struct {
	Index int    `msgpack:"index"`
	TID   int64  `msgpack:"tid"`
	Type  int    `msgpack:"type"`
	Name  string `msgpack:"name"`
	// Creator is the index + 1 of the thread that started this one, for a
	// thread of type user (pthread_create); 0 when unknown.
	Creator int `msgpack:"creator,omitempty"`
}

// Location is a source location events refer to by id (task constructs,
// parallel regions, sync constructs). Collectors record the code address;
// File/Line/Col are filled when debug information resolved it.
type Location struct {
	ID     int    `msgpack:"id"`
	Addr   uint64 `msgpack:"addr"`
	Module string `msgpack:"module"`
	Offset uint64 `msgpack:"offset"`
	Func   string `msgpack:"func"`
	File   string `msgpack:"file"`
	Line   int    `msgpack:"line"`
	Col    int    `msgpack:"col"`
	// Approx marks a position that is not the address's own: its line
	// table had no line there (optimised code), so File:Line are the
	// enclosing function's (Func) own line.
	Approx bool `msgpack:"approx,omitempty"`
	// FuncOffset is the address's offset from the start of Func (0:
	// unknown), which tells apart code locations of one function when
	// there is no line table: "main+0x4f" (from version 4).
	FuncOffset uint64 `msgpack:"func_offset,omitempty"`
}

// Communicator is one entry of the communicator table. Events refer to it by
// Index (local to the file); ID identifies the same communicator in every
// member's file (0 is MPI_COMM_WORLD). Its members, world ranks in
// comm-rank order, are either listed (Members) or, more compactly, given
// as strided runs (Runs, see RankRuns); use Size, Member and IndexOf, which
// read either form. Readers keep the compact form, so a process of a
// 100 000-rank run does not hold 100 000 members per communicator.
type Communicator struct {
	Index   int
	ID      int64
	Name    string
	Members []int
	Runs    RankRuns
}

// Communicator ids that are not an MPI communicator's own: a window's
// entry (its collectives are matched per window: the collector's and the
// OTF2 conversion's RmaWin entries) has CommWindow set; the copy the OTF2
// conversion makes of a communicator or window entry for each stretch
// recorded between recording gaps (otf2/gaps.go) has CommStretch set and
// the stretch in bits 32–59. The collector's own ids stay below 2⁵⁷
// ((world rank + 1) << 32 | a counter) or have bit 62 set (MPI_Comm_idup)
// or bit 59 (an MPI 4.0 persistent collective's own entry).
const (
	CommStretch int64 = 1 << 60
	CommWindow  int64 = 1 << 61
)

// CommLabel names communicator id for messages: the id, a window's entry
// as such, and for a stretch's copy the entry it copies and the stretch.
func CommLabel(id int64) string {
	if id > 0 && id&CommStretch != 0 {
		base := id&(1<<32-1) | id&CommWindow
		return fmt.Sprintf("%s (recorded stretch %d)", CommLabel(base), id>>32&(1<<28-1)+1)
	}
	if id > 0 && id&CommWindow != 0 && id&(1<<62) == 0 {
		return fmt.Sprintf("window %d", id&^CommWindow)
	}
	return strconv.FormatInt(id, 10)
}

// RankRuns spells a member list as runs, flat triples (first, count,
// stride): members first, first+stride, … (count of them), run after run.
// MPI_COMM_WORLD is one run (0, nranks, 1); a column of a process grid one
// run with the row length as stride.
type RankRuns []int

// Size returns the number of members.
func (c *Communicator) Size() int {
	if c.Runs == nil {
		return len(c.Members)
	}
	n := 0
	for k := 0; k+2 < len(c.Runs); k += 3 {
		n += c.Runs[k+1]
	}
	return n
}

// Member returns the world rank of communicator rank i (-1 outside).
func (c *Communicator) Member(i int) int {
	if c.Runs == nil {
		if i >= 0 && i < len(c.Members) {
			return c.Members[i]
		}
		return -1
	}
	if i < 0 {
		return -1
	}
	for k := 0; k+2 < len(c.Runs); k += 3 {
		if i < c.Runs[k+1] {
			return c.Runs[k] + i*c.Runs[k+2]
		}
		i -= c.Runs[k+1]
	}
	return -1
}

// IndexOf returns the communicator rank of world rank r (-1: not a member).
func (c *Communicator) IndexOf(r int) int {
	if c.Runs == nil {
		for i, m := range c.Members {
			if m == r {
				return i
			}
		}
		return -1
	}
	base := 0
	for k := 0; k+2 < len(c.Runs); k += 3 {
		first, n, stride := c.Runs[k], c.Runs[k+1], c.Runs[k+2]
		d := r - first
		if d == 0 && n > 0 {
			return base
		}
		if stride != 0 && d%stride == 0 {
			if q := d / stride; q > 0 && q < n {
				return base + q
			}
		}
		base += n
	}
	return -1
}

// Contains reports whether world rank r is a member.
func (c *Communicator) Contains(r int) bool { return c.IndexOf(r) >= 0 }

// MemberList returns the members as a list (for small communicators and
// tests: it allocates Size() ints). Runs a reader did not check (a writer's
// input) are expanded to at most MaxRanks members.
func (c *Communicator) MemberList() []int {
	if c.Runs == nil {
		return c.Members
	}
	var out []int
	for k := 0; k+2 < len(c.Runs); k += 3 {
		for j := 0; j < c.Runs[k+1] && len(out) < MaxRanks; j++ {
			out = append(out, c.Runs[k]+j*c.Runs[k+2])
		}
	}
	return out
}

// Compress returns the runs of a member list, greedily: a run extends while
// the difference between neighbours stays the same. A repeated member is a
// run of its own.
func Compress(members []int) RankRuns {
	var out RankRuns
	for i := 0; i < len(members); {
		stride, j := 1, i+1
		if j < len(members) {
			stride = members[j] - members[i]
		}
		for j < len(members) && members[j]-members[j-1] == stride {
			j++
		}
		if stride == 0 {
			j, stride = i+1, 1
		}
		out = append(out, members[i], j-i, stride)
		i = j
	}
	return out
}

// ClockOffset is one measurement of this process's clock against rank 0's:
// at local time LocalNS, rank 0's clock read LocalNS+OffsetNS, with the given
// uncertainty (half the best round trip). When is "init" or "finalize".
type ClockOffset struct {
	When     string `msgpack:"when"`
	LocalNS  int64  `msgpack:"local_ns"`
	OffsetNS int64  `msgpack:"offset_ns"`
	ErrorNS  int64  `msgpack:"error_ns"`
}

// End is the last frame of a complete file: per-thread event counts let a
// reader tell a finished trace from one cut short.
type End struct {
	Events    []int64 `msgpack:"events"` // per thread index
	Chunks    int64   `msgpack:"chunks"`
	Dropped   int64   `msgpack:"dropped"` // events the collector could not record
	Truncated bool    `msgpack:"truncated"`
	TSCHz     int64   `msgpack:"tsc_hz,omitempty"` // TSC rate over the whole run (optional)
}

// Tables holds everything of a process but its events. Tables arrive in
// frames anywhere in the file (a collector learns strings as it runs).
type Tables struct {
	Strings      []string
	Threads      []Thread
	Locations    []Location
	Comms        []Communicator
	ClockOffsets []ClockOffset
	End          *End // nil when the file has no end frame
}

// String returns string id or a placeholder for an id outside the table.
func (t *Tables) String(id int64) string {
	if id >= 0 && id < int64(len(t.Strings)) {
		return t.Strings[id]
	}
	return "<undefined string>"
}

// CallSiteName names an MPI call: "MPI_Send at file:line:col" (or at
// function+offset without a line table), the function alone when the
// call's location fn is unknown (−1, or the collector's empty location).
func CallSiteName(t *Tables, fn, loc int64) string {
	name := t.String(fn)
	if site := t.SiteName(loc); site != "" {
		return name + " at " + site
	}
	return name
}

// SiteName names a code location, "" when it is unknown (−1, outside the
// table, or an entry without address or position).
func (t *Tables) SiteName(loc int64) string {
	if loc < 0 || loc >= int64(len(t.Locations)) {
		return ""
	}
	if n := t.Locations[loc].Name(); n != "<unknown>" {
		return n
	}
	return ""
}

// HasLine reports whether the location names a source line: false for one
// resolved without a line table (function+offset) or not at all.
func (l *Location) HasLine() bool { return l.File != "" }

// LocationName returns "file:line:col" for a location id, "function+0xoff"
// when it was resolved without a line table, or a module+offset form when
// it was not resolved.
func (t *Tables) LocationName(id int64) string {
	if id < 0 || id >= int64(len(t.Locations)) {
		return "<unknown>"
	}
	return t.Locations[id].Name()
}

// Name renders a location the way reports group tasks by construct.
func (l *Location) Name() string {
	switch {
	case l.Approx && l.File != "" && l.Func != "":
		return l.Func + " at " + l.File + ":" + strconv.Itoa(l.Line) + " (approximate)"
	case l.File != "" && l.Col > 0:
		return l.File + ":" + strconv.Itoa(l.Line) + ":" + strconv.Itoa(l.Col)
	case l.File != "":
		return l.File + ":" + strconv.Itoa(l.Line)
	case l.Func != "" && l.FuncOffset > 0:
		// no line table (compiled without -g): the offset keeps apart
		// the constructs of one function
		return l.Func + "+0x" + strconv.FormatUint(l.FuncOffset, 16)
	case l.Func != "":
		return l.Func
	case l.Module != "":
		return l.Module + "+0x" + strconv.FormatUint(l.Offset, 16)
	case l.Addr != 0:
		return "0x" + strconv.FormatUint(l.Addr, 16)
	}
	return "<unknown>"
}

// CommByIndex returns the communicator with table index i.
func (t *Tables) CommByIndex(i int64) (*Communicator, bool) {
	if i >= 0 && i < int64(len(t.Comms)) && t.Comms[i].Index == int(i) {
		return &t.Comms[i], true
	}
	for k := range t.Comms {
		if int64(t.Comms[k].Index) == i {
			return &t.Comms[k], true
		}
	}
	return nil, false
}

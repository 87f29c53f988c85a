// Package trace owns ptrace's data model (processes, threads, events, string,
// location and communicator tables) and its on-disk format: a directory with
// one msgpack file per traced process plus a manifest. It provides a streaming
// reader (one chunk at a time, bounded memory), a writer, whole-process loading
// and validation with errors that name file and byte offset.
//
// The format is specified in docs/trace-format.md; Version is its number.
package trace

import "strconv"

// Format names and versions this package reads and writes.
const (
	FormatName = "ptrace"
	Version    = 1
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
	ClockUnit string   `msgpack:"clock_unit"`   // always "ns" in version 1
	ClockSrc  string   `msgpack:"clock_source"` // e.g. "CLOCK_MONOTONIC", "synthetic"
	Producer  string   `msgpack:"producer"`     // "ptrace-collector 0.1", "ptrace gen"
	Runtime   string   `msgpack:"runtime"`      // OpenMP runtime description if known
	StartNS   int64    `msgpack:"start_ns"`     // wall-clock start, for display only
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
)

// Thread is one entry of the thread table; Index is what chunks and ids refer to.
type Thread struct {
	Index int    `msgpack:"index"`
	TID   int64  `msgpack:"tid"`
	Type  int    `msgpack:"type"`
	Name  string `msgpack:"name"`
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
}

// Communicator is one entry of the communicator table. Events refer to it by
// Index (local to the file); ID identifies the same communicator in every
// member's file (0 is MPI_COMM_WORLD), Members are world ranks in comm-rank order.
type Communicator struct {
	Index   int    `msgpack:"index"`
	ID      int64  `msgpack:"id"`
	Name    string `msgpack:"name"`
	Members []int  `msgpack:"members"`
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

// LocationName returns "file:line:col" for a location id, or a module+offset
// form when the location was not resolved.
func (t *Tables) LocationName(id int64) string {
	if id < 0 || id >= int64(len(t.Locations)) {
		return "<unknown>"
	}
	return t.Locations[id].Name()
}

// Name renders a location the way reports group tasks by construct.
func (l *Location) Name() string {
	switch {
	case l.File != "" && l.Col > 0:
		return l.File + ":" + strconv.Itoa(l.Line) + ":" + strconv.Itoa(l.Col)
	case l.File != "":
		return l.File + ":" + strconv.Itoa(l.Line)
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

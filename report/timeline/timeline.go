// Package timeline exports a ptrace trace as a Chrome trace-event JSON file,
// the format Perfetto UI (ui.perfetto.dev) and chrome://tracing open: one
// process per rank, one track per thread, task parts named by their
// construct, parallel regions, sync regions and MPI calls as nested slices,
// flow arrows for task dependences (runtime-reported task_dependence edges
// and remote_dep_out → remote_dep_in) and MPI messages (mpi_send →
// mpi_recv, matched per (communicator, source, destination, tag) in
// order), timestamps mapped onto rank 0's clock by a ClockModel, and the
// critical path on a track of its own.
//
// The export streams: each process file is read chunk by chunk twice (the
// first pass collects the tables, which may follow the events that use
// them, and the dependence edges) and events are written as they are
// decoded. Memory is bounded and independent of the number of events:
//
//   - per exported process, from the first pass to its export: its string,
//     location, thread and communicator tables (small), the construct of
//     each explicit task as runs of consecutive ids per creating thread
//     (one entry per change of construct) and the runtime-reported
//     dependence edges not yet drawn; runs and edges of all processes
//     together are capped (Options.MaxRuns, Options.MaxEdges), beyond
//     which names fall back to "task" and arrows are dropped, counted;
//   - for the process being written: one counter per (communicator, peer,
//     tag) for message matching and per thread the stack of open slices;
//   - the critical-path segments given (O(path length)).
//
// Message matching counts sends and receives in each process's file order,
// which is time order when one thread per process exchanges messages with
// a given peer and tag (the usual MPI_THREAD_FUNNELED/SERIALIZED case);
// with several threads sending to the same peer and tag concurrently an
// arrow may join the wrong pair. Cutting the export with a time window
// leaves arrows whose other end is outside the window without that end.
package timeline

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ptrace-dev/ptrace/clocksync"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// Options select and tune an export. Zero values export everything.
type Options struct {
	// Ranks to export (nil: all). Arrows to ranks not exported are left out.
	Ranks []int
	// Window limits the export to [Start, End] ns after the trace's
	// origin (the first event on the reference clock, ts 0 in the output).
	Window *Window
	// Clock maps local timestamps to the reference clock (default:
	// Interpolation with AlignStarts).
	Clock ClockModel
	// CriticalPath segments (reference-clock ns, the report's time base)
	// are drawn on a "critical path" track of their rank, linked by arrows.
	CriticalPath []report.PathNode
	// MaxRuns and MaxEdges bound the index kept between the two passes,
	// over all exported processes together (defaults 1<<20 construct runs
	// and 1<<19 dependence edges, about 100 MB in the worst case).
	MaxRuns, MaxEdges int
	// Progress, when set, is called with the phase and the fraction done.
	Progress func(phase string, frac float64)
}

// Window is a time range in ns after the trace's origin.
type Window struct{ Start, End int64 }

// Stats summarises an export.
type Stats struct {
	Processes     int
	EventsRead    int64
	EventsWritten int64
	Flows         int64 // arrows drawn (s/f pairs started)
	DroppedEdges  int64 // task dependences not drawn (MaxEdges reached)
	UnknownTasks  int64 // task parts whose construct was not recorded (MaxRuns reached)
	UnmatchedEnds int64 // end events without their begin on that thread
	OriginNS      int64 // reference time shown as ts 0
}

// critTID is the track id of the critical path in each rank's process: far
// above thread indices (< 65536) so it never collides with a thread.
const critTID = 1 << 20

// Export writes the timeline of the trace in dir to w.
func Export(w io.Writer, dir string, o Options) (*Stats, error) {
	if o.MaxRuns <= 0 {
		o.MaxRuns = 1 << 20
	}
	if o.MaxEdges <= 0 {
		o.MaxEdges = 1 << 19
	}
	d, err := trace.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	ranks := o.Ranks
	if ranks == nil {
		for r := 0; r < d.NRanks(); r++ {
			ranks = append(ranks, r)
		}
	}
	selected := map[int]bool{}
	for _, r := range ranks {
		if r < 0 || r >= d.NRanks() {
			return nil, fmt.Errorf("rank %d: the trace has ranks 0..%d", r, d.NRanks()-1)
		}
		selected[r] = true
	}
	ranks = ranks[:0:0]
	for r := range selected {
		ranks = append(ranks, r)
	}
	slices.Sort(ranks)

	// Progress counts bytes: each selected file is read twice.
	var total, done int64
	for _, r := range ranks {
		total += 2 * max(d.Files[r].Bytes, 1)
	}
	prog := func(phase string, read int64) {
		if o.Progress != nil {
			o.Progress(phase, float64(done+read)/float64(max(total, 1)))
		}
	}
	bud := &budget{runs: o.MaxRuns, edges: o.MaxEdges}

	// First pass: index every selected process (tables, constructs, edges,
	// time range) so that clocks and the origin are known before writing.
	st := &Stats{Processes: len(ranks)}
	clock := o.Clock
	var hdr0 trace.Header // rank 0's, whose clock the others may read
	if clock == nil {
		first, h, err := firstEvent(d.FilePath(0))
		if err != nil {
			return nil, err
		}
		clock, hdr0 = Interpolation{AlignStarts: true, ReferenceStartNS: first}, h
	}
	type indexed struct {
		ix *index
		m  Mapping
	}
	idx := make(map[int]*indexed, len(ranks))
	origin := int64(math.MaxInt64)
	for _, r := range ranks {
		path := d.FilePath(r)
		ix, err := indexProcess(path, bud, func(read int64) { prog(fmt.Sprintf("scan rank %d", r), read) })
		if err != nil {
			return nil, err
		}
		done += max(d.Files[r].Bytes, 1)
		same := r != 0 && clocksync.SameClock(&hdr0, &ix.header)
		m, err := clock.Process(ProcessClock{Rank: r, Offsets: ix.tables.ClockOffsets, FirstNS: ix.firstNS, LastNS: ix.lastNS, SameClock: same})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		idx[r] = &indexed{ix, m}
		if ix.events > 0 {
			origin = min(origin, m.Map(0, ix.firstNS))
		}
		st.DroppedEdges += ix.edges.dropped
		st.EventsRead += ix.events
	}
	if origin == math.MaxInt64 {
		origin = 0
	}
	st.OriginNS = origin

	out := newJSONOut(w)
	out.origin = origin
	if err := out.header(); err != nil {
		return nil, err
	}
	win := Window{Start: math.MinInt64, End: math.MaxInt64}
	if o.Window != nil {
		win = Window{Start: origin + o.Window.Start, End: origin + o.Window.End}
	}
	// Second pass: export each process, then drop its index.
	for _, r := range ranks {
		path := d.FilePath(r)
		p := &proc{out: out, rank: r, ix: idx[r].ix, m: idx[r].m, win: win, selected: selected, st: st,
			names: map[int64][]byte{}, threads: map[int]*threadState{}, msgs: map[msgKey]int64{}}
		if err := p.export(path, func(read int64) { prog(fmt.Sprintf("export rank %d", r), read) }); err != nil {
			return nil, err
		}
		delete(idx, r)
		done += max(d.Files[r].Bytes, 1)
	}
	if err := writePath(out, o.CriticalPath, selected, win, st); err != nil {
		return nil, err
	}
	if err := out.footer(); err != nil {
		return nil, err
	}
	st.EventsWritten = out.n
	return st, nil
}

// firstEvent returns the earliest timestamp in a process file, and its
// header. It reads until every thread that has events has shown its first
// chunk, which in practice is the beginning of the file.
func firstEvent(path string) (int64, trace.Header, error) {
	f, err := trace.OpenRegular(path)
	if err != nil {
		return 0, trace.Header{}, err
	}
	defer f.Close()
	rd, err := trace.NewReader(f, path)
	if err != nil {
		return 0, trace.Header{}, err
	}
	first := int64(math.MaxInt64)
	seen := map[int]bool{}
	for c, err := range rd.Chunks() {
		if err != nil {
			return 0, trace.Header{}, err
		}
		if len(c.Events) > 0 {
			first = min(first, c.Events[0].Time)
		}
		// A thread's first chunk holds its earliest event; once every
		// thread of the table has been seen, later chunks cannot be earlier.
		seen[c.Thread] = true
		if n := len(rd.Tables().Threads); n > 0 && len(seen) >= n {
			break
		}
	}
	if first == math.MaxInt64 {
		return 0, rd.Header(), nil
	}
	return first, rd.Header(), nil
}

// writePath draws the critical path: per rank, a track of X slices in time
// order (overlaps clipped so the track stays well nested), linked by
// arrows from each segment to the next.
func writePath(out *jsonOut, segs []report.PathNode, selected map[int]bool, win Window, st *Stats) error {
	if len(segs) == 0 {
		return nil
	}
	type seg struct {
		i          int
		start, end int64
	}
	byRank := map[int][]seg{}
	for i, s := range segs {
		if !selected[s.Rank] {
			continue
		}
		a, b := max(s.StartNS, win.Start, out.origin), min(s.StartNS+s.DurNS, win.End)
		if b < a {
			continue
		}
		byRank[s.Rank] = append(byRank[s.Rank], seg{i, a, b})
	}
	ranks := make([]int, 0, len(byRank))
	for r := range byRank {
		ranks = append(ranks, r)
	}
	slices.Sort(ranks)
	// Clip each rank's segments so its track stays well nested.
	drawn := map[int]seg{}
	for _, r := range ranks {
		ss := byRank[r]
		slices.SortStableFunc(ss, func(a, b seg) int { return cmp.Compare(a.start, b.start) })
		prevEnd := int64(math.MinInt64)
		for _, s := range ss {
			s.start = max(s.start, prevEnd)
			s.end = max(s.end, s.start)
			prevEnd = s.end
			drawn[s.i] = s
		}
	}
	// A track's events: its slices and the arrow ends inside them (at their
	// middle), in time order, slices first at equal times.
	type item struct {
		ts    int64
		seg   int  // segment index
		ph    byte // 'X', 's' or 'f'
		arrow int  // arrow number (index of the arrow's target segment)
	}
	items := map[int][]item{}
	for i, s := range drawn {
		items[segs[i].Rank] = append(items[segs[i].Rank], item{ts: s.start, seg: i, ph: 'X'})
	}
	for i := 1; i < len(segs); i++ {
		a, okA := drawn[i-1]
		b, okB := drawn[i]
		if !okA || !okB {
			continue
		}
		items[segs[i-1].Rank] = append(items[segs[i-1].Rank], item{ts: (a.start + a.end) / 2, seg: i - 1, ph: 's', arrow: i})
		items[segs[i].Rank] = append(items[segs[i].Rank], item{ts: (b.start + b.end) / 2, seg: i, ph: 'f', arrow: i})
		st.Flows++
	}
	for _, r := range ranks {
		out.begin('M', r+1, critTID)
		out.str("name", "thread_name")
		out.args()
		out.argStr(true, "name", "critical path")
		out.endArgs()
		if err := out.end(); err != nil {
			return err
		}
		out.begin('M', r+1, critTID)
		out.str("name", "thread_sort_index")
		out.args()
		out.argNum(true, "sort_index", -1)
		out.endArgs()
		if err := out.end(); err != nil {
			return err
		}
		its := items[r]
		slices.SortFunc(its, func(a, b item) int {
			return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.ph, b.ph), cmp.Compare(a.arrow, b.arrow)) // 'X' < 'f' < 's' in ASCII
		})
		for _, it := range its {
			if it.ph != 'X' {
				if err := flow(out, it.ph, r+1, critTID, it.ts-out.origin, flowID('c', int64(it.arrow), 0, 0, 0, 0), "critical_path", "critical path"); err != nil {
					return err
				}
				continue
			}
			s, n := drawn[it.seg], segs[it.seg]
			name := n.Construct
			if name == "" {
				name = n.Kind
			}
			out.begin('X', r+1, critTID)
			out.ts("ts", s.start-out.origin)
			out.ts("dur", s.end-s.start)
			out.str("name", name)
			out.str("cat", "critical_path")
			out.str("cname", "terrible")
			out.args()
			out.argStr(true, "kind", n.Kind)
			out.argNum(false, "thread", int64(n.Thread))
			out.argNum(false, "segment", int64(it.seg))
			out.endArgs()
			if err := out.end(); err != nil {
				return err
			}
		}
	}
	return nil
}

// flow writes one end of an arrow. "f" binds to the enclosing slice
// (bp "e"), as "s" always does.
func flow(out *jsonOut, ph byte, pid, tid int, ts int64, id uint64, cat, name string) error {
	out.begin(ph, pid, tid)
	out.ts("ts", ts)
	out.num("id", int64(id))
	out.str("cat", cat)
	out.str("name", name)
	if ph == 'f' {
		out.str("bp", "e")
	}
	return out.end()
}

// flowID hashes an arrow's identity (FNV-1a) to an id below 2^53, so
// JavaScript viewers read it exactly.
func flowID(kind byte, a, b, c, d, e int64) uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) {
		for i := 0; i < 8; i++ {
			h ^= v & 0xff
			h *= 1099511628211
			v >>= 8
		}
	}
	mix(uint64(kind))
	for _, v := range []int64{a, b, c, d, e} {
		mix(uint64(v))
	}
	return h & (1<<53 - 1)
}

// ParseWindow parses "T0:T1" (either side may be empty) where each bound
// is a Go duration ("15ms", "1.5s") or an integer number of ns.
func ParseWindow(s string) (*Window, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("window %q: want T0:T1, e.g. 10ms:20ms", s)
	}
	w := &Window{Start: 0, End: math.MaxInt64 / 2}
	var err error
	if a != "" {
		if w.Start, err = parseNS(a); err != nil {
			return nil, fmt.Errorf("window %q: %w", s, err)
		}
	}
	if b != "" {
		if w.End, err = parseNS(b); err != nil {
			return nil, fmt.Errorf("window %q: %w", s, err)
		}
	}
	if w.End < w.Start {
		return nil, fmt.Errorf("window %q: end before start", s)
	}
	return w, nil
}

func parseNS(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	d, err := time.ParseDuration(s)
	return int64(d), err
}

// ParseRanks parses a rank list such as "0,3,8-11".
func ParseRanks(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("rank list %q: bad rank %q", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("rank list %q: bad range %q", s, part)
			}
		}
		for r := a; r <= b; r++ {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("rank list %q is empty", s)
	}
	return out, nil
}

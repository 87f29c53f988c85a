package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Process is one loaded trace file: header, tables and its events kept as
// the encoded chunks of the file (about 9 bytes an event), not as decoded
// rows. Passes read the events through scans (ThreadScan, BackScan) that
// decode one chunk at a time into reused buffers, so memory stays about the
// size of the file whatever the number of passes.
//
// LoadProcess validates every chunk once (decoding, time order) and takes
// the Census on the way; a scan of a loaded process cannot fail.
type Process struct {
	File   string
	Header Header
	Tables
	// Events holds each thread's events by thread index (the thread table
	// is Tables.Threads).
	Events []ThreadEvents
	Census Census
	// Warnings counts problems loading tolerated (see LoadOptions).
	Warnings []string
	// Decoded counts the events decoded so far, the load's own decode
	// included: what each pass over the events costs (--stats).
	Decoded int64
	// Partial is set when events are missing: no end frame, a salvaged
	// tail or cut thread, counts disagreeing with the end frame, events
	// the collector dropped.
	Partial bool
	// stream: chunks are read from File on every decode.
	stream bool
}

// ThreadEvents is one thread's events, in encoded chunks.
type ThreadEvents struct {
	N           int64 // events
	First, Last int64 // recorded times of the first and last event (N > 0)
	chunks      []storedChunk
}

// storedChunk is one chunk frame's payload (an alias into the process's
// arena, or nil when the process streams from its file) and where it sits
// in its thread and in the file.
type storedChunk struct {
	payload []byte
	first   int64 // index in the thread of its first event
	n       int32
	size    int32 // payload bytes
	off     int64 // file offset of the frame
}

// EventRef names one event of a process with its recorded time.
type EventRef struct {
	Thread int32
	Index  int64
	Time   int64
}

// Census is what one validating decode learns about a process, so that
// passes can size their tables, and skip scans for kinds that do not occur,
// without reading the events again.
type Census struct {
	Kinds      [NumKinds]int64 // events per kind
	DepEntries int64           // dependence entries of all task_dependences events
	// MaxSeq is, per id thread (IDThread of an id), the highest sequence
	// number of the task ids task_create and implicit_task begin carry.
	// Ids are claims: a table may be sized by MaxSeq only where the events
	// of that thread can justify it.
	MaxSeq []int64
	// MPI calls bounding the analysis window: per MPI function (string id),
	// the first mpi_exit of each thread and the last mpi_enter of each
	// thread. Few functions and threads call MPI, so these stay small.
	FirstExit map[int64][]EventRef
	LastEnter map[int64][]EventRef
	// RemoteIn counts, per task id, the remote_dep_in events naming it:
	// the remote dependences a task waits for, known before it is
	// simulated (sparse: only tasks of distributed task runtimes).
	RemoteIn map[int64]int32
}

// LoadOptions tune LoadProcess.
type LoadOptions struct {
	// Salvage keeps the events before a truncated or corrupt tail (as a
	// crashed collector may leave) and records a warning instead of failing.
	Salvage bool
	// Stream keeps only the chunks' positions in memory: every pass reads
	// them from the file again (checking each frame's CRC, so a file that
	// changed since the load is an error, not wrong results). Memory then
	// holds no event at all, for traces larger than the memory granted.
	Stream bool
}

// LoadProcess reads a whole process file into memory, keeping its chunks
// encoded. Events of each thread must be in time order; the first violation
// is an error naming the event's byte offset. A file without an end frame
// loads with a warning.
func LoadProcess(path string, opts LoadOptions) (*Process, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(0)
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	p, err := load(f, path, size, opts)
	if err == nil && opts.Stream {
		p.stream = true
	}
	return p, err
}

// LoadProcessReader is LoadProcess on a stream (a converted file, a test's
// buffer); name is used in errors.
func LoadProcessReader(r io.Reader, name string, opts LoadOptions) (*Process, error) {
	return load(r, name, 0, opts)
}

func load(in io.Reader, path string, size int64, opts LoadOptions) (*Process, error) {
	r, err := NewReader(in, path)
	if err != nil {
		return nil, err
	}
	p := &Process{File: path, Header: r.Header()}
	a := arena{block: arenaBlock(size)}
	if opts.Stream && size == 0 {
		return nil, fmt.Errorf("%s: streaming needs a regular file", path)
	}
	var slog *SalvageLog
	if opts.Salvage {
		slog = &SalvageLog{File: path}
	}
	var c Chunk
	for {
		err := r.NextChunk(&c)
		if err == io.EOF {
			break
		}
		if err != nil {
			if opts.Salvage {
				slog.Note("salvage: kept the %d events before a damaged part and dropped the rest of the file: %v", p.NumEvents(), err)
				break
			}
			return nil, err
		}
		payload := r.lastPayload
		size := int32(len(payload))
		if opts.Stream {
			payload = nil
		} else {
			payload = a.copy(payload)
		}
		if err := p.addChunk(&c, payload, size, r.LastFrameOffset(), slog); err != nil {
			return nil, err
		}
	}
	p.Tables = *r.Tables()
	if !r.Complete() {
		p.Partial = true
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s: no end frame: the traced program did not finish writing its trace (crash or kill?); analysing the %d events present", path, p.NumEvents()))
	} else if e := p.Tables.End; e != nil {
		present := make([]int64, len(p.Events))
		for t := range p.Events {
			present[t] = p.Events[t].N
		}
		for _, m := range CountMismatches(e, present) {
			err := &FormatError{File: path, Offset: r.LastFrameOffset(), Frame: FrameEnd,
				Err: fmt.Errorf("thread %d: end frame counts %d events, file holds %d", m.Thread, m.Claimed, m.Present)}
			if slog == nil {
				return nil, err
			}
			if !slog.IsCut(m.Thread) { // a cut thread's count is off by its cut
				slog.Note("salvage: %v", err)
			}
		}
		if e.Dropped > 0 {
			p.Partial = true
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s: the collector dropped %d events (buffer full?)", path, e.Dropped))
		}
	}
	if slog != nil {
		p.Warnings = append(p.Warnings, slog.Warnings()...)
		p.Partial = p.Partial || slog.Partial()
	}
	return p, nil
}

// arena holds the chunk payloads of one process in large blocks: one
// allocation per block instead of one per chunk, and no copying growth.
type arena struct {
	block int
	cur   []byte
}

// arenaBlock picks the block size: the whole file when its size is known
// and moderate (one allocation, no slack), else 4 MiB.
func arenaBlock(size int64) int {
	if size > 0 && size <= 64<<20 {
		return int(size)
	}
	return 4 << 20
}

func (a *arena) copy(b []byte) []byte {
	if len(b) > cap(a.cur)-len(a.cur) {
		a.cur = make([]byte, 0, max(a.block, len(b)))
	}
	n := len(a.cur)
	a.cur = append(a.cur, b...)
	return a.cur[n:len(a.cur):len(a.cur)]
}

// addChunk checks the decoded chunk c (time order against the thread's
// previous events), adds it to the census and stores its payload. A
// salvaging load (slog set) cuts a thread at an event going back in time
// instead of failing: the stored chunk then counts only the events before
// the cut, and the thread's later chunks are dropped.
func (p *Process) addChunk(c *Chunk, payload []byte, size int32, frameOff int64, slog *SalvageLog) error {
	for len(p.Events) <= c.Thread {
		p.Events = append(p.Events, ThreadEvents{})
	}
	te := &p.Events[c.Thread]
	if slog != nil && slog.IsCut(c.Thread) {
		slog.Drop(c.Thread, len(c.Events))
		return nil
	}
	last := int64(math.MinInt64)
	if te.N > 0 {
		last = te.Last
	}
	if cut := TimeOrderCut(c.Events, last); cut < len(c.Events) {
		err := TimeOrderError(p.File, c, cut, te.N, last)
		if slog == nil {
			return err
		}
		slog.Cut(c.Thread, err, len(c.Events)-cut)
		c.Events = c.Events[:cut]
	}
	if len(c.Events) == 0 {
		return nil
	}
	cs := &p.Census
	for i := range c.Events {
		e := &c.Events[i]
		last = e.Time
		cs.Kinds[e.Kind]++
		switch e.Kind {
		case TaskCreate:
			cs.noteID(e.Args[0])
		case ImplicitTaskBegin:
			cs.noteID(e.Args[1])
		case TaskDeps:
			cs.DepEntries += e.Args[1]
		case MPIExit:
			cs.firstExit(int32(c.Thread), te.N+int64(i), e)
		case MPIEnter:
			cs.lastEnter(int32(c.Thread), te.N+int64(i), e)
		case RemoteDepIn:
			if cs.RemoteIn == nil {
				cs.RemoteIn = map[int64]int32{}
			}
			cs.RemoteIn[e.Args[0]]++
		}
	}
	if te.N == 0 {
		te.First = c.Events[0].Time
	}
	te.Last = last
	te.chunks = append(te.chunks, storedChunk{payload: payload, first: te.N, n: int32(len(c.Events)), size: size, off: frameOff})
	te.N += int64(len(c.Events))
	p.Decoded += int64(len(c.Events))
	return nil
}

func (cs *Census) noteID(id int64) {
	if id <= 0 {
		return
	}
	t := IDThread(id)
	if t >= MaxThreads {
		return
	}
	for len(cs.MaxSeq) <= t {
		cs.MaxSeq = append(cs.MaxSeq, 0)
	}
	cs.MaxSeq[t] = max(cs.MaxSeq[t], IDSeq(id))
}

func (cs *Census) firstExit(th int32, idx int64, e *Event) {
	if cs.FirstExit == nil {
		cs.FirstExit = map[int64][]EventRef{}
	}
	refs := cs.FirstExit[e.Args[0]]
	for _, r := range refs {
		if r.Thread == th {
			return
		}
	}
	cs.FirstExit[e.Args[0]] = append(refs, EventRef{Thread: th, Index: idx, Time: e.Time})
}

func (cs *Census) lastEnter(th int32, idx int64, e *Event) {
	if cs.LastEnter == nil {
		cs.LastEnter = map[int64][]EventRef{}
	}
	refs := cs.LastEnter[e.Args[0]]
	for i := range refs {
		if refs[i].Thread == th {
			refs[i] = EventRef{Thread: th, Index: idx, Time: e.Time}
			return
		}
	}
	cs.LastEnter[e.Args[0]] = append(refs, EventRef{Thread: th, Index: idx, Time: e.Time})
}

// NumEvents returns the number of events of all threads.
func (p *Process) NumEvents() int64 {
	var n int64
	for i := range p.Events {
		n += p.Events[i].N
	}
	return n
}

// NumThreads returns the number of thread slots (the highest thread index
// with events, plus one).
func (p *Process) NumThreads() int { return len(p.Events) }

// TimeRange returns the first and last timestamps of the process under tb
// (nil: as recorded); 0, 0 if it has no events. A thread's corrected times
// keep its order, so its first and last events bound it.
func (p *Process) TimeRange(tb *Timebase) (first, last int64) {
	seen := false
	for th := range p.Events {
		te := &p.Events[th]
		if te.N == 0 {
			continue
		}
		a, b := tb.At(th, 0, te.First), tb.At(th, te.N-1, te.Last)
		if !seen || a < first {
			first = a
		}
		if !seen || b > last {
			last = b
		}
		seen = true
	}
	return first, last
}

// MPIWindow returns the part of the process between MPI initialization and
// finalization, under tb: the last exit from MPI_Init or MPI_Init_thread and
// the first entry into MPI_Finalize. Where the process has no such call the
// bound is its first (last) timestamp, so a trace without MPI keeps its
// whole range; found says whether either call bounds the window. Like TALP,
// the analysis measures this window: the MPI runtime's start-up and
// shutdown are not the application's to tune.
func (p *Process) MPIWindow(tb *Timebase) (begin, end int64, found bool) {
	begin, end = p.TimeRange(tb)
	initEnd, finBegin := int64(-1<<62), int64(1<<62)
	any := false
	for i, s := range p.Strings {
		switch s {
		case "MPI_Init", "MPI_Init_thread":
			any = true
			for _, r := range p.Census.FirstExit[int64(i)] {
				initEnd = max(initEnd, tb.At(int(r.Thread), r.Index, r.Time))
			}
		case "MPI_Finalize":
			any = true
			for _, r := range p.Census.LastEnter[int64(i)] {
				finBegin = min(finBegin, tb.At(int(r.Thread), r.Index, r.Time))
			}
		}
	}
	if !any {
		return begin, end, false
	}
	if initEnd >= begin && initEnd <= end {
		begin, found = initEnd, true
	}
	if finBegin <= end && finBegin >= begin {
		end, found = finBegin, true
	}
	return begin, end, found
}

// decodeStored decodes stored chunk k of thread th into c. Every stored
// chunk decoded once at load; when it is read from the file again, a frame
// that changed or vanished is an error naming the file and offset.
func (p *Process) decodeStored(th, k int, c *Chunk, sc *scratch) error {
	sk := &p.Events[th].chunks[k]
	payload := sk.payload
	if p.stream {
		var err error
		if payload, err = p.reread(sk, sc); err != nil {
			return err
		}
	}
	var cols chunkColumns
	if err := parseChunk(payload, &cols); err != nil {
		return &FormatError{File: p.File, Offset: sk.off, Frame: FrameChunk, Err: err}
	}
	if err := decodeColumns(&cols, c, sc); err != nil {
		return chunkError(p.File, sk.off, &cols, err)
	}
	if len(c.Events) < int(sk.n) {
		return &FormatError{File: p.File, Offset: sk.off, Frame: FrameChunk, Err: errors.New("chunk changed since it was loaded")}
	}
	c.Events = c.Events[:sk.n] // a salvaging load may have cut the chunk
	c.Offset = sk.off + frameHeaderLen + int64(cols.kindsPos)
	p.Decoded += int64(sk.n)
	return nil
}

// reread reads the frame of sk from the file into sc's buffer and checks
// that it is still the frame the load decoded.
func (p *Process) reread(sk *storedChunk, sc *scratch) ([]byte, error) {
	changed := func(format string, args ...any) error {
		return &FormatError{File: p.File, Offset: sk.off, Frame: FrameChunk,
			Err: fmt.Errorf("the file changed since it was loaded: "+format, args...)}
	}
	f, err := os.Open(p.File)
	if err != nil {
		return nil, fmt.Errorf("re-reading events: %w", err)
	}
	defer f.Close()
	n := frameHeaderLen + int(sk.size)
	if cap(sc.frame) < n {
		sc.frame = make([]byte, n)
	}
	buf := sc.frame[:n]
	if _, err := f.ReadAt(buf, sk.off); err != nil {
		return nil, changed("%v", err)
	}
	kind, crc, length, err := parseFrameHeader(buf)
	if err != nil {
		return nil, changed("%v", err)
	}
	payload := buf[frameHeaderLen:]
	if kind != FrameChunk || length != uint32(sk.size) || frameCRC(kind, payload) != crc {
		return nil, changed("%s frame of %d bytes where a chunk of %d was", kind, length, sk.size)
	}
	return payload, nil
}

// Streaming reports whether the process reads its events from its file on
// every pass.
func (p *Process) Streaming() bool { return p.stream }

// ThreadScan walks one thread's events forward, decoding a chunk at a time
// into buffers it reuses. Times are corrected by its Timebase (nil: as
// recorded).
//
//	s := p.Scan(th, tb)
//	for s.Next() { e := s.Event() … }
//
// Event and Deps stay valid until the next call to Next. Ahead looks at
// the events after the current one, within the current and the next chunk.
type ThreadScan struct {
	p    *Process
	th   int
	tb   *Timebase
	k    int // chunk index of cur, −1 before the first
	cur  Chunk
	i    int // position of the current event in cur
	nx   Chunk
	nxOK bool // nx holds chunk k+1
	sc   scratch
	err  error
}

// Scan returns a scan of thread th's events (an empty scan for a thread
// index without events).
func (p *Process) Scan(th int, tb *Timebase) *ThreadScan {
	s := &ThreadScan{}
	s.Reset(p, th, tb)
	return s
}

// Scans recycles thread scans, whose decode buffers (two chunks of events
// and the column scratch, about 0.6 MB at the default chunk size) would
// otherwise be allocated for every thread of every process in every pass.
// The zero value is ready; a nil *Scans allocates each scan. Not safe for
// concurrent use: each analysis rank has its own.
type Scans struct{ free []*ThreadScan }

// Get returns a scan of thread th of p, recycled when one is free.
func (sp *Scans) Get(p *Process, th int, tb *Timebase) *ThreadScan {
	if sp == nil || len(sp.free) == 0 {
		return p.Scan(th, tb)
	}
	s := sp.free[len(sp.free)-1]
	sp.free = sp.free[:len(sp.free)-1]
	s.Reset(p, th, tb)
	return s
}

// Put returns scans for reuse; they must not be used after.
func (sp *Scans) Put(scans ...*ThreadScan) {
	if sp == nil {
		return
	}
	for _, s := range scans {
		if s != nil {
			s.p, s.tb = nil, nil
			sp.free = append(sp.free, s)
		}
	}
}

// Reset makes s a new scan of thread th, keeping its buffers.
func (s *ThreadScan) Reset(p *Process, th int, tb *Timebase) {
	s.p, s.th, s.tb = p, th, tb
	s.k, s.i, s.nxOK, s.err = -1, 0, false, nil
	s.cur.Events = s.cur.Events[:0]
}

// Next moves to the next event; false at the end (or on Err).
func (s *ThreadScan) Next() bool {
	s.i++
	if s.i < len(s.cur.Events) {
		return true
	}
	if s.th >= len(s.p.Events) || s.err != nil {
		return false
	}
	chunks := s.p.Events[s.th].chunks
	if s.k+1 >= len(chunks) {
		s.i = len(s.cur.Events)
		return false
	}
	s.k++
	if s.nxOK {
		s.cur, s.nx = s.nx, s.cur
		s.nxOK = false
	} else if !s.decode(s.k, &s.cur) {
		return false
	}
	s.i = 0
	return len(s.cur.Events) > 0
}

func (s *ThreadScan) decode(k int, c *Chunk) bool {
	if err := s.p.decodeCorrected(s.th, k, c, &s.sc, s.tb); err != nil {
		s.err = err
		return false
	}
	return true
}

// decodeCorrected decodes stored chunk k of thread th into c with its
// times corrected by tb: what every scan reads.
func (p *Process) decodeCorrected(th, k int, c *Chunk, sc *scratch, tb *Timebase) error {
	if err := p.decodeStored(th, k, c, sc); err != nil {
		return err
	}
	tb.apply(th, p.Events[th].chunks[k].first, c.Events)
	return nil
}

// Err returns the error that ended the scan early, if any.
func (s *ThreadScan) Err() error { return s.err }

// Event returns the current event.
func (s *ThreadScan) Event() *Event { return &s.cur.Events[s.i] }

// Index returns the current event's index in its thread.
func (s *ThreadScan) Index() int64 { return s.p.Events[s.th].chunks[s.k].first + int64(s.i) }

// Deps returns the dependence list of the current event (task_dependences).
func (s *ThreadScan) Deps() []Dep { return s.cur.Events[s.i].Deps(s.cur.Deps) }

// Offset returns the file offset of the current event's kind byte.
func (s *ThreadScan) Offset() int64 { return s.cur.Offset + int64(s.i) }

// Ahead returns the j-th event after the current one (j ≥ 1) and its
// dependence list, looking no further than the next chunk; ok is false
// beyond.
func (s *ThreadScan) Ahead(j int) (e *Event, deps []Dep, ok bool) {
	if i := s.i + j; i < len(s.cur.Events) {
		e := &s.cur.Events[i]
		return e, e.Deps(s.cur.Deps), true
	}
	i := s.i + j - len(s.cur.Events)
	if !s.nxOK {
		if s.k+1 >= len(s.p.Events[s.th].chunks) || !s.decode(s.k+1, &s.nx) {
			return nil, nil, false
		}
		s.nxOK = true
	}
	if i < len(s.nx.Events) {
		e := &s.nx.Events[i]
		return e, e.Deps(s.nx.Deps), true
	}
	return nil, nil, false
}

// BackScan walks one thread's events backward from a given index.
type BackScan struct {
	p   *Process
	th  int
	tb  *Timebase
	k   int // chunk index of cur
	cur Chunk
	i   int // position in cur of the current event
	sc  scratch
	err error
}

// ScanBack returns a backward scan of thread th whose first Prev moves to
// event end−1.
func (p *Process) ScanBack(th int, end int64, tb *Timebase) *BackScan {
	s := &BackScan{p: p, th: th, tb: tb, k: -1}
	if th >= len(p.Events) {
		return s
	}
	te := &p.Events[th]
	end = min(max(end, 0), te.N)
	if end == 0 {
		return s
	}
	// The chunk holding end−1, positioned one past it.
	k := len(te.chunks) - 1
	for k > 0 && te.chunks[k].first > end-1 {
		k--
	}
	if !s.decode(k) {
		return s
	}
	s.i = int(end - te.chunks[k].first)
	return s
}

func (s *BackScan) decode(k int) bool {
	if err := s.p.decodeCorrected(s.th, k, &s.cur, &s.sc, s.tb); err != nil {
		s.err = err
		return false
	}
	s.k = k
	return true
}

// Prev moves to the previous event; false before the first.
func (s *BackScan) Prev() bool {
	if s.k < 0 {
		return false
	}
	if s.i > 0 {
		s.i--
		return true
	}
	for s.k > 0 {
		if !s.decode(s.k - 1) {
			s.k = -1
			return false
		}
		if len(s.cur.Events) > 0 {
			s.i = len(s.cur.Events) - 1
			return true
		}
	}
	s.k = -1
	return false
}

// Event returns the current event.
func (s *BackScan) Event() *Event { return &s.cur.Events[s.i] }

// Index returns the current event's index in its thread.
func (s *BackScan) Index() int64 { return s.p.Events[s.th].chunks[s.k].first + int64(s.i) }

// Err returns the error that ended the scan early, if any.
func (s *BackScan) Err() error { return s.err }

// Rows is a process spelled out as decoded rows, for tools that edit
// traces (tests, the value fuzzer, the robustness harness): read a file as
// rows, change them, write them back. Events[th] are thread th's events in
// time order; a TaskDeps event's Args[1] entries start at Args[2] in
// Deps[th]. No analysis holds a process this way.
type Rows struct {
	Header Header
	Tables Tables
	Events [][]Event
	Deps   [][]Dep
}

// ReadRows loads a process file as rows (recorded times).
func ReadRows(path string) (*Rows, error) {
	p, err := LoadProcess(path, LoadOptions{})
	if err != nil {
		return nil, err
	}
	return p.Rows(), nil
}

// Rows decodes the whole process as rows (recorded times).
func (p *Process) Rows() *Rows {
	r := &Rows{Header: p.Header, Tables: p.Tables, Events: make([][]Event, p.NumThreads()), Deps: make([][]Dep, p.NumThreads())}
	for th := range r.Events {
		r.Events[th], r.Deps[th] = p.Decode(th, nil)
	}
	return r
}

// WriteFile writes the rows as a trace file; chunkEvents > 0 sets the
// events per chunk (the writer's default otherwise).
func (r *Rows) WriteFile(path string, chunkEvents int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := r.Write(bw, chunkEvents); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Write encodes the rows as a trace file into out (see WriteFile).
func (r *Rows) Write(out io.Writer, chunkEvents int) error {
	h, t := r.Header, &r.Tables
	if h.Format == "" {
		h.Format = FormatName
	}
	if h.Version == 0 {
		h.Version = Version
	}
	if h.ClockUnit == "" {
		h.ClockUnit = "ns"
	}
	w, err := NewWriter(out, h)
	if err != nil {
		return err
	}
	w.SetChunkEvents(chunkEvents)
	for _, s := range t.Strings {
		w.String(s)
	}
	for _, th := range t.Threads {
		w.SetThread(th)
	}
	for _, l := range t.Locations {
		w.AddLocation(l)
	}
	for _, c := range t.Comms {
		w.AddComm(c)
	}
	for _, o := range t.ClockOffsets {
		w.AddClockOffset(o)
	}
	for th, evs := range r.Events {
		var d []Dep
		if th < len(r.Deps) {
			d = r.Deps[th]
		}
		for i := range evs {
			e := &evs[i]
			if e.Kind == TaskDeps {
				if err := w.EmitDeps(th, e.Time, e.Args[0], e.Deps(d)); err != nil {
					return err
				}
				continue
			}
			if err := w.Emit(th, e); err != nil {
				return err
			}
		}
	}
	return w.Close()
}

// NewProcess builds an in-memory process from rows, encoding them as the
// writer would (for tests and converters); tables come from t as given.
func NewProcess(h Header, t Tables, events [][]Event, deps [][]Dep) (*Process, error) {
	pr, pw := io.Pipe()
	bw := bufio.NewWriter(pw)
	errc := make(chan error, 1)
	rows := &Rows{Header: h, Tables: t, Events: events, Deps: deps}
	go func() {
		errc <- rows.Write(bw, 0)
		pw.CloseWithError(bw.Flush())
	}()
	p, err := LoadProcessReader(pr, "memory", LoadOptions{})
	pr.CloseWithError(io.ErrClosedPipe)
	if werr := <-errc; werr != nil {
		return nil, werr
	}
	if err != nil {
		return nil, err
	}
	p.Tables = mergeTables(p.Tables, t)
	return p, nil
}

// mergeTables keeps what the written tables lost (thread entries the
// writer derives) while taking the caller's communicators and offsets as
// given.
func mergeTables(got, want Tables) Tables {
	want.End = got.End
	if len(want.Threads) == 0 {
		want.Threads = got.Threads
	}
	if len(want.Strings) == 0 {
		want.Strings = got.Strings
	}
	return want
}

// Decode returns thread th's events under tb as rows, with the dependence
// lists their TaskDeps events index (Args[2] into the returned deps), for
// tests and small tools: it allocates the whole thread, which no analysis
// pass does.
func (p *Process) Decode(th int, tb *Timebase) ([]Event, []Dep) {
	if th >= len(p.Events) {
		return nil, nil
	}
	evs := make([]Event, 0, p.Events[th].N)
	var deps []Dep
	for s := p.Scan(th, tb); s.Next(); {
		e := *s.Event()
		if e.Kind == TaskDeps {
			d := s.Deps()
			e.Args[2] = int64(len(deps))
			deps = append(deps, d...)
		}
		evs = append(evs, e)
	}
	return evs, deps
}

// ReleaseEvents drops the process's events (its chunks and their arena)
// once no pass needs them; tables, census and counts stay.
func (p *Process) ReleaseEvents() {
	for th := range p.Events {
		p.Events[th].chunks = nil
	}
}

package trace

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"unsafe"
)

// Process is one loaded trace file: header, tables and its events kept as
// the encoded chunks of the file (about 9 bytes an event), not as decoded
// rows. Passes read the events through scans (ThreadScan, a window of
// events at a time) that decode into reused buffers, so memory stays about the size of the file whatever the number
// of passes.
//
// LoadProcess validates every chunk once (decoding, time order) and takes
// the Census on the way; a scan of a loaded process cannot fail.
type Process struct {
	File string
	// EvtDir, for a process converted from an OTF2 archive, is its event
	// files' directory as warnings name it (traces): thread t's events
	// are EvtDir/L.evt, L its location (the thread table's tid).
	EvtDir string
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
	// file is File held open while fileUsers scans re-read its frames
	// (acquireFile).
	file      *os.File
	fileUsers int
	// commLog: every thread's communication events are in its log
	// (commlog.go); commBytes is the logs' size, payload the chunks'.
	// commCap is the file's size when known: the log's bound from the
	// start, whatever the order of the threads' chunks in the file.
	commLog                     bool
	commBytes, payload, commCap int64
}

// commLogShift bounds the communication logs: a quarter of the file's
// bytes (file bytes >> commLogShift), past which the matching decodes.
const commLogShift = 2

// ThreadEvents is one thread's events, in encoded chunks.
type ThreadEvents struct {
	N           int64 // events
	First, Last int64 // recorded times of the first and last event (N > 0)
	// Comm counts the thread's communication events (mpi_send, mpi_recv,
	// coll_begin, coll_end, remote_dep_out, remote_dep_in): a pass that
	// reads only those skips the threads without any.
	Comm int64
	// MPI counts the thread's mpi_enter events: with Comm, which threads
	// a pass over MPI calls reads.
	MPI int64
	// Parallel counts the thread's parallel_begin events: the threads a
	// pass reads to name the regions other threads work in.
	Parallel int64
	chunks   []storedChunk
	comm     commLog // the communication events, while the process keeps the log
}

// storedChunk is one chunk frame's payload (an alias into the process's
// arena, or nil when the process streams from its file) and where it sits
// in its thread and in the file.
type storedChunk struct {
	payload []byte
	first   int64 // index in the thread of its first event
	n       int32
	size    int32  // payload bytes
	off     int64  // file offset of the frame
	crc     uint32 // the frame's checksum at load: a re-read must find the same frame
	deps    bool   // it holds a task_dependences event (EachDeps)
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
	// MPI calls bounding the analysis window, once the load is done: the
	// first exit from MPI_Init or MPI_Init_thread and the last entry into
	// MPI_Finalize, of each thread that made them.
	InitExit      []EventRef
	FinalizeEnter []EventRef
	// During the load, per MPI function (string id: the names may come
	// after the calls), the first mpi_exit and the last mpi_enter of each
	// thread; few functions call MPI, so a list searched from the one
	// found last beats a map for every MPI event.
	exits, enters []fnRefs
	// RemoteIn lists the task id of every remote_dep_in event, in file
	// order: the remote dependences each task waits for, known before it
	// is simulated (only distributed task runtimes have any; 8 bytes an
	// event where a map of counts took 20–40).
	RemoteIn []int64
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
	// Buffers, when set, lends the load its read and decode buffers and
	// gets them back (set it to share them between the files a rank loads
	// one after another).
	Buffers *LoadBuffers
	// Workers is how many goroutines may decode the file's chunks while
	// the loading one reads the frames and takes the decoded chunks in
	// file order (decodePipe); 0 or 1 decodes on the loading goroutine.
	// The result is the same either way.
	Workers int
	// pipeFrom is the smallest file that decodes on workers (0:
	// pipeMinBytes), lowered by tests.
	pipeFrom int64
	// RunID and Version, when Version > 0, are the run's (its first
	// file's header): a file of that run whose header gives another
	// version is damaged and refused before its chunks are read, which
	// that version's coding would misread or fail on at some event.
	RunID   string
	Version int
}

// LoadBuffers are a load's read buffer and decode buffers, kept for the
// next load: each file's load made its own (a read buffer of up to 1 MiB,
// a chunk's decoded events, the decoder's value windows), a quarter of the
// allocations of a trace of thousands of small processes.
type LoadBuffers struct {
	br      *bufio.Reader
	chunk   Chunk
	scratch scratch
	// names interns the processes' table and header strings: the files of
	// one run repeat the same function names, host names and command
	// line, and thousands of copies of each were a fifth of the small
	// objects the garbage collector marks on every cycle. prev is the
	// string table of the process loaded last, which the next one's
	// usually repeats entry for entry: compared first, without hashing.
	names map[string]string
	prev  []string
	// jobs are the chunk buffers of a load that decodes on workers.
	jobs []*pipeJob
}

// intern returns the copy of s the buffers keep.
func (lb *LoadBuffers) intern(s string) string {
	if v, ok := lb.names[s]; ok {
		return v
	}
	if lb.names == nil {
		lb.names = map[string]string{}
	}
	lb.names[s] = s
	return s
}

// internTables makes p's strings the interned copies.
func (lb *LoadBuffers) internTables(p *Process) {
	h := &p.Header
	for _, f := range []*string{&h.Format, &h.Host, &h.ClockUnit, &h.ClockSrc, &h.Producer, &h.Runtime, &h.RunID, &h.TimestampCounter} {
		*f = lb.intern(*f)
	}
	for i := range h.Command {
		h.Command[i] = lb.intern(h.Command[i])
	}
	for i, v := range p.Strings {
		if i < len(lb.prev) && lb.prev[i] == v {
			p.Strings[i] = lb.prev[i]
		} else {
			p.Strings[i] = lb.intern(v)
		}
	}
	lb.prev = p.Strings
	for i := range p.Threads {
		p.Threads[i].Name = lb.intern(p.Threads[i].Name)
	}
	for i := range p.Locations {
		l := &p.Locations[i]
		l.Module, l.Func, l.File = lb.intern(l.Module), lb.intern(l.Func), lb.intern(l.File)
	}
	for i := range p.Comms {
		p.Comms[i].Name = lb.intern(p.Comms[i].Name)
	}
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
	// A reader that knows its length (a bytes.Buffer of a converted OTF2
	// process) sizes the read buffer and the arena like a file: not 1 MiB
	// and 4 MiB for a process of a few KB.
	if opts.Stream {
		return nil, fmt.Errorf("%s: streaming needs a regular file", name)
	}
	var size int64
	if l, ok := r.(interface{ Len() int }); ok {
		size = int64(l.Len())
	}
	return load(r, name, size, opts)
}

func load(in io.Reader, path string, size int64, opts LoadOptions) (*Process, error) {
	lb := opts.Buffers
	r, err := newReaderWith(in, path, readBufferFor(size), lb)
	if err != nil {
		return nil, err
	}
	c := &Chunk{}
	if lb != nil {
		c = &lb.chunk
		// The buffers go back whatever happens: the reader's are its own
		// from here, and the next load resets them.
		defer func() { lb.br, lb.scratch = r.r, r.scratch }()
	}
	if h := r.Header(); opts.Version > 0 && h.RunID == opts.RunID && h.Version != opts.Version {
		return nil, &FormatError{File: path, Offset: 0, Frame: FrameHeader,
			Err: fmt.Errorf("header field version is %d, the run's is %d (same run id): a damaged header", h.Version, opts.Version)}
	}
	p := &Process{File: path, Header: r.Header(), commLog: true, commCap: size}
	a := newArena(size)
	if opts.Stream && size == 0 {
		return nil, fmt.Errorf("%s: streaming needs a regular file", path)
	}
	var slog *SalvageLog
	if opts.Salvage {
		slog = &SalvageLog{File: path}
	}
	var src chunkSource = readerSource{r, c}
	if pipeFrom := cmp.Or(opts.pipeFrom, pipeMinBytes); opts.Workers > 1 && size >= pipeFrom {
		jobs := new([]*pipeJob)
		if lb != nil {
			jobs = &lb.jobs
		}
		src = newDecodePipe(r, opts.Workers, jobs)
	}
	defer src.close()
	for {
		c, payload, frameOff, crc, err := src.next()
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
		size := int32(len(payload))
		if opts.Stream {
			payload = nil
		} else {
			payload = a.copy(payload)
		}
		stored, err := p.addChunk(c, payload, size, frameOff, crc, slog)
		if err != nil {
			return nil, err
		}
		if stored {
			a.placed(c.Thread, len(p.Events[c.Thread].chunks)-1, len(payload))
		}
	}
	a.trim(p)
	p.Tables = *r.Tables()
	p.Census.settleMPI(p.Strings)
	if lb != nil {
		lb.internTables(p)
	}
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
// A reader of unknown length (a process converted from OTF2 as it is
// read) starts with a small block and doubles it up to 4 MiB (grow), so a
// process of a few KB does not hold 4 MiB.
type arena struct {
	block int
	grow  bool
	cur   []byte
	// last lists the chunks in the current block (thread, chunk index,
	// offset), when the blocks grow.
	last [][3]int
}

const (
	arenaMin = 4 << 10
	arenaMax = 4 << 20
)

// newArena picks the block size: the whole file when its size is known
// and moderate (one allocation, no slack), else 4 MiB, or growing blocks
// when the size is unknown (0).
func newArena(size int64) arena {
	switch {
	case size <= 0:
		return arena{block: arenaMin, grow: true}
	case size <= 64<<20:
		return arena{block: int(size)}
	}
	return arena{block: arenaMax}
}

func (a *arena) copy(b []byte) []byte {
	if len(b) > cap(a.cur)-len(a.cur) {
		if a.grow && a.cur != nil {
			a.block = min(2*a.block, arenaMax)
		}
		a.cur = make([]byte, 0, max(a.block, len(b)))
		a.last = a.last[:0]
	}
	n := len(a.cur)
	a.cur = append(a.cur, b...)
	return a.cur[n:len(a.cur):len(a.cur)]
}

// placed notes that the payload copy returned last, n bytes, is thread
// th's chunk i (addChunk stored it), for trim.
func (a *arena) placed(th, i, n int) {
	if a.grow && n > 0 {
		a.last = append(a.last, [3]int{th, i, len(a.cur) - n})
	}
}

// trim moves the growing arena's last block, which may be up to half
// unused, into one of its exact size, and points the chunks placed there
// at it: a converted process's chunks then hold their bytes and no more.
func (a *arena) trim(p *Process) {
	if !a.grow || cap(a.cur)-len(a.cur) <= len(a.cur)/8 {
		return
	}
	exact := make([]byte, len(a.cur))
	copy(exact, a.cur)
	for _, ref := range a.last {
		ch := &p.Events[ref[0]].chunks[ref[1]]
		off, n := ref[2], len(ch.payload)
		ch.payload = exact[off : off+n : off+n]
	}
	a.cur, a.last = exact, nil
}

// addChunk checks the decoded chunk c (time order against the thread's
// previous events), adds it to the census and stores its payload. A
// salvaging load (slog set) cuts a thread at an event going back in time
// instead of failing: the stored chunk then counts only the events before
// the cut, and the thread's later chunks are dropped. stored reports
// whether it became the thread's last stored chunk.
func (p *Process) addChunk(c *Chunk, payload []byte, size int32, frameOff int64, crc uint32, slog *SalvageLog) (stored bool, err error) {
	for len(p.Events) <= c.Thread {
		p.Events = append(p.Events, ThreadEvents{})
	}
	te := &p.Events[c.Thread]
	if slog != nil && slog.IsCut(c.Thread) {
		slog.Drop(c.Thread, len(c.Events))
		return false, nil
	}
	last := int64(math.MinInt64)
	if te.N > 0 {
		last = te.Last
	}
	if cut := TimeOrderCut(c.Events, last); cut < len(c.Events) {
		err := TimeOrderError(p.File, c, cut, te.N, last)
		if slog == nil {
			return false, err
		}
		slog.Cut(c.Thread, err, len(c.Events)-cut)
		c.Events = c.Events[:cut]
	}
	if len(c.Events) == 0 {
		return false, nil
	}
	cs := &p.Census
	hasDeps := false
	p.payload += int64(size)
	for i := range c.Events {
		e := &c.Events[i]
		last = e.Time
		cs.Kinds[e.Kind]++
		comm := IsComm(e.Kind)
		if comm {
			te.Comm++
		} else if e.Kind == MPIEnter {
			te.MPI++
		} else if e.Kind == ParallelBegin {
			te.Parallel++
		}
		if p.commLog {
			if !comm {
				te.comm.other(e.Time)
			} else if p.commBytes += int64(te.comm.add(te.N+int64(i), e)); p.commBytes > max(p.payload, p.commCap)>>commLogShift+4<<10 {
				p.DropCommLog() // mostly communication: the matching decodes it
			}
		}
		switch e.Kind {
		case TaskCreate:
			cs.noteID(e.Args[0])
		case ImplicitTaskBegin:
			cs.noteID(e.Args[1])
		case TaskDeps:
			cs.DepEntries += e.Args[1]
			hasDeps = true
		case MPIExit:
			noteCall(&cs.exits, int32(c.Thread), te.N+int64(i), e, false)
		case MPIEnter:
			noteCall(&cs.enters, int32(c.Thread), te.N+int64(i), e, true)
		case RemoteDepIn:
			cs.RemoteIn = append(cs.RemoteIn, e.Args[0])
		}
	}
	if te.N == 0 {
		te.First = c.Events[0].Time
	}
	te.Last = last
	te.chunks = append(te.chunks, storedChunk{payload: payload, first: te.N, n: int32(len(c.Events)), size: size, off: frameOff, crc: crc, deps: hasDeps})
	te.N += int64(len(c.Events))
	p.Decoded += int64(len(c.Events))
	return true, nil
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

// fnRefs are the MPI calls of one function the census keeps, one per
// thread.
type fnRefs struct {
	fn   int64
	refs []EventRef
}

// refsOf returns the entry of fn in *l, adding it if need be.
func refsOf(l *[]fnRefs, fn int64) *fnRefs {
	for i := len(*l) - 1; i >= 0; i-- {
		if (*l)[i].fn == fn {
			return &(*l)[i]
		}
	}
	*l = append(*l, fnRefs{fn: fn})
	return &(*l)[len(*l)-1]
}

// noteCall records MPI call e, event idx of thread th, in l: each
// thread's first call of the function, or with latest its latest.
func noteCall(l *[]fnRefs, th int32, idx int64, e *Event, latest bool) {
	f := refsOf(l, e.Args[0])
	ref := EventRef{Thread: th, Index: idx, Time: e.Time}
	for i := range f.refs {
		if f.refs[i].Thread == th {
			if latest {
				f.refs[i] = ref
			}
			return
		}
	}
	f.refs = append(f.refs, ref)
}

// IsMPIInit reports whether MPI function fn initializes MPI. Its last
// exit and MPI_Finalize's first entry bound the analysis window
// (MPIWindow).
func IsMPIInit(fn string) bool { return fn == "MPI_Init" || fn == "MPI_Init_thread" }

// IsMPIFinalize reports whether fn is MPI_Finalize.
func IsMPIFinalize(fn string) bool { return fn == "MPI_Finalize" }

// IsMPITest reports whether fn tests requests without blocking
// (MPI_Test, MPI_Testany, MPI_Testsome, MPI_Testall): the calls that
// poll a request (mpi_polled).
func IsMPITest(fn string) bool {
	return fn == "MPI_Test" || fn == "MPI_Testany" || fn == "MPI_Testsome" || fn == "MPI_Testall"
}

// IsMPISetup reports whether fn starts or ends MPI (MPI_Init,
// MPI_Init_thread, MPI_Finalize): a process's own time there is no
// communication of the program's (start-up, shut-down).
func IsMPISetup(fn string) bool { return IsMPIInit(fn) || IsMPIFinalize(fn) }

// settleMPI keeps, once the names are known, the calls that bound the
// analysis window and drops the others.
func (cs *Census) settleMPI(names []string) {
	name := func(fn int64) string {
		if fn < 0 || fn >= int64(len(names)) {
			return ""
		}
		return names[fn]
	}
	cs.InitExit, cs.FinalizeEnter = nil, nil
	for _, f := range cs.exits {
		if IsMPIInit(name(f.fn)) {
			cs.InitExit = append(cs.InitExit, f.refs...)
		}
	}
	for _, f := range cs.enters {
		if IsMPIFinalize(name(f.fn)) {
			cs.FinalizeEnter = append(cs.FinalizeEnter, f.refs...)
		}
	}
	cs.exits, cs.enters = nil, nil
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
	for _, s := range p.Strings {
		if IsMPIInit(s) || IsMPIFinalize(s) {
			any = true
		}
	}
	for _, r := range p.Census.InitExit {
		initEnd = max(initEnd, tb.At(int(r.Thread), r.Index, r.Time))
	}
	for _, r := range p.Census.FinalizeEnter {
		finBegin = min(finBegin, tb.At(int(r.Thread), r.Index, r.Time))
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

// storedColumns parses a stored chunk's columns from its payload, re-read
// from the file when the process streams.
func (p *Process) storedColumns(sk *storedChunk, cols *chunkColumns, sc *scratch) error {
	payload := sk.payload
	if p.stream {
		var err error
		if payload, err = p.reread(sk, sc); err != nil {
			return err
		}
	}
	if err := parseChunk(payload, p.Header.Version, cols); err != nil {
		return &FormatError{File: p.File, Offset: sk.off, Frame: FrameChunk, Err: err}
	}
	return nil
}

// decodeStored decodes stored chunk k of thread th into c. Every stored
// chunk decoded once at load; when it is read from the file again, a frame
// that changed or vanished is an error naming the file and offset.
func (p *Process) decodeStored(th, k int, c *Chunk, sc *scratch) error {
	sk := &p.Events[th].chunks[k]
	var cols chunkColumns
	if err := p.storedColumns(sk, &cols, sc); err != nil {
		return err
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

// decodeCorrected decodes the whole of stored chunk k of thread th into c
// with its times corrected by tb (Decode).
func (p *Process) decodeCorrected(th, k int, c *Chunk, sc *scratch, tb *Timebase) error {
	if err := p.decodeStored(th, k, c, sc); err != nil {
		return err
	}
	tb.apply(th, p.Events[th].chunks[k].first, c.Events)
	return nil
}

// reread reads the frame of sk from the file into sc's buffer and checks
// that it is still the frame the load decoded.
func (p *Process) reread(sk *storedChunk, sc *scratch) ([]byte, error) {
	changed := func(format string, args ...any) error {
		return &FormatError{File: p.File, Offset: sk.off, Frame: FrameChunk,
			Err: fmt.Errorf("the file changed since it was loaded: "+format, args...)}
	}
	if sc.held != p {
		sc.release()
		if err := p.acquireFile(); err != nil {
			return nil, err
		}
		sc.held = p
	}
	f := p.file
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
	if crc != sk.crc {
		// A valid chunk, but not the one loaded (the file was rewritten).
		return nil, changed("a chunk frame with checksum %08x where the loaded one had %08x", crc, sk.crc)
	}
	return payload, nil
}

// acquireFile opens the process's file for a scan that re-reads its
// frames, or counts one more user of the file already open: the scans of
// a process (one per thread, possibly hundreds) share one descriptor, so
// the open files are the processes being read, whatever their threads. A
// process is read by one goroutine at a time (its analysis rank).
func (p *Process) acquireFile() error {
	if p.fileUsers == 0 {
		f, err := os.Open(p.File)
		if err != nil {
			return fmt.Errorf("re-reading events: %w", err)
		}
		p.file = f
	}
	p.fileUsers++
	return nil
}

// releaseFile ends a scan's use of the file; the last closes it.
func (p *Process) releaseFile() {
	if p.fileUsers--; p.fileUsers == 0 {
		p.file.Close() // read only: nothing to lose
		p.file = nil
	}
}

// Streaming reports whether the process reads its events from its file on
// every pass.
func (p *Process) Streaming() bool { return p.stream }

// HeldBytes returns the bytes of encoded events the process holds in
// memory: its chunks' payloads, none when it streams them from its file.
// A process converted from OTF2 holds its converted events, a few times
// fewer bytes than the archive's.
func (p *Process) HeldBytes() int64 {
	if p.stream {
		return 0
	}
	return p.payload
}

// ThreadScan walks one thread's events forward. Times are corrected by its
// Timebase (nil: as recorded).
//
//	s := p.Scan(th, tb)
//	for s.Next() { e := s.Event() … }
//	scans.Put(s) // a streaming process's file is closed with its last scan
//
// It decodes a window of events at a time (256, fewer for a process of
// more than 8 threads: scanWindowFor), continuing in the same chunk when
// the window is consumed (the decoder keeps its place in the chunk's
// streams), so its buffers hold about a window of events whatever the
// chunk size (about 27 KB for 256). Ahead looks at the events after
// the current one, up to the end of the next chunk; it decodes further and
// grows the window as needed, which only an unusually long lookahead makes
// larger than a few more events.
//
// What Event, Deps and Ahead return stays valid, and unchanged, until the
// next call to Next: a window that grows moves to a larger array, but the
// old one keeps the events already handed out. Next reuses the window.
type ThreadScan struct {
	p   *Process
	th  int
	tb  *Timebase
	win []Event // decoded events; the current one is win[i]
	dep []Dep   // dependence lists of win's task_dependences events
	i   int
	// lim is where Next leaves its fast path: the window's end, the next
	// chunk's first event in the window, or the point where a window
	// grown by Ahead slides back to the front of its array.
	lim int
	// segs are the chunks whose events the window holds, in order; cs is
	// the current event's. k, base and off are the current segment's
	// chunk, index offset (Index = base + i) and kinds offset.
	segs      []winSeg
	cs        int
	k         int
	base, off int64
	// The decoder stands in chunk dk (−1 before the first).
	dk  int
	sc  scratch
	err error
	// window is the events decoded at a time (scanWindowFor), args the
	// args values.
	window, args int
}

// winSeg is a run of the window's events from one chunk.
type winSeg struct {
	pos   int   // position in the window of its first event
	k     int   // chunk
	first int64 // index in the thread of the event at pos
	off   int64 // file offset of that event's kind byte
}

const (
	// scanWindow is the most events a ThreadScan decodes at a time: small
	// enough that a scan per thread costs little memory (about 27 KB each),
	// large enough that the per-window work (a call, the stream setup)
	// vanishes against the events'. A multiple of 4 (the streams'
	// control-byte groups).
	scanWindow = 256
	// scanBudget is the events the scans of one process's threads hold
	// together at most, down to minScanWindow a thread: the simulation and
	// the match keep a scan per thread, and 64 threads' full windows were
	// 3.5 MB a process, more than the events of a small one.
	scanBudget    = 8 * scanWindow
	minScanWindow = 32
	// scanAhead is the events Ahead decodes when it reaches past the
	// window: OMPT's dependences follow a task creation within a few
	// events, and a small step keeps the slide of the window's tail small.
	scanAhead = 16
	// scanArgs is the args values the decoder decodes at a time per event
	// of the window (1024 for a full one).
	scanArgs = 4
)

// scanWindowFor returns the window of a scan of a thread of a process of
// the given number of threads: scanWindow up to 8 threads, then
// scanBudget shared, a multiple of 4 no smaller than minScanWindow.
func scanWindowFor(threads int) int {
	return max(minScanWindow, min(scanWindow, scanBudget/max(threads, 1))&^3)
}

// Scan returns a scan of thread th's events (an empty scan for a thread
// index without events).
func (p *Process) Scan(th int, tb *Timebase) *ThreadScan {
	s := &ThreadScan{}
	s.Reset(p, th, tb)
	return s
}

// Scans recycles thread scans, whose decode buffers (about 27 KB) would
// otherwise be allocated for every thread of every process in every pass.
// The zero value is ready; a nil *Scans allocates each scan.
// Not safe for concurrent use: each analysis rank has its own.
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
	for _, s := range scans {
		if s != nil {
			s.sc.release() // a nil Scans too: the file is done with
		}
	}
	if sp == nil {
		return
	}
	for _, s := range scans {
		if s != nil {
			// Drop what points into the process: its chunks' payloads
			// (the arena ReleaseEvents gives back) and the timebase.
			s.p, s.tb, s.sc.dec.cols = nil, nil, chunkColumns{}
			sp.free = append(sp.free, s)
		}
	}
}

// Reset makes s a new scan of thread th, keeping its buffers.
func (s *ThreadScan) Reset(p *Process, th int, tb *Timebase) {
	if s.p != p {
		s.sc.release()
	}
	s.p, s.th, s.tb = p, th, tb
	s.window = scanWindowFor(p.NumThreads())
	s.args = scanArgs * s.window
	s.win, s.dep, s.segs = s.win[:0], s.dep[:0], s.segs[:0]
	s.i, s.lim, s.cs, s.k, s.base, s.off = 0, 0, 0, -1, 0, 0
	s.dk, s.err = -1, nil
	s.sc.dec.n, s.sc.dec.i, s.sc.dec.cols = 0, 0, chunkColumns{}
	s.trim()
}

// Next moves to the next event; false at the end (or on Err).
func (s *ThreadScan) Next() bool {
	s.i++
	if s.i < s.lim {
		return true
	}
	return s.next()
}

// next is Next's slow path: a segment boundary, the slide of a grown
// window, or a new window.
func (s *ThreadScan) next() bool {
	if s.i < len(s.win) {
		if len(s.win) > s.window && s.i >= s.slideAt() {
			s.slide()
		}
		for s.cs+1 < len(s.segs) && s.segs[s.cs+1].pos <= s.i {
			s.cs++
		}
		s.enter()
		return true
	}
	// The window is consumed: decode the next one in its place.
	s.win, s.dep, s.segs, s.cs, s.i, s.lim = s.win[:0], s.dep[:0], s.segs[:0], 0, 0, 0
	if s.err != nil || s.th >= len(s.p.Events) {
		return false
	}
	s.trim()
	if !s.sc.dec.done() {
		// The decoder's chunk goes on.
		s.addSeg(s.dk)
	}
	if !s.decode(s.window, len(s.p.Events[s.th].chunks)) || len(s.win) == 0 {
		s.win = s.win[:0]
		return false
	}
	s.enter()
	return true
}

// enter caches the current segment and sets where Next's fast path ends.
func (s *ThreadScan) enter() {
	g := &s.segs[s.cs]
	s.k, s.base, s.off = g.k, g.first-int64(g.pos), g.off-int64(g.pos)
	s.lim = len(s.win)
	if s.cs+1 < len(s.segs) {
		s.lim = min(s.lim, s.segs[s.cs+1].pos)
	}
	if len(s.win) > s.window {
		s.lim = min(s.lim, s.slideAt())
	}
}

// slideAt is where a window grown past its size slides: once the events
// consumed outnumber those left, so sliding costs at most a copy per event
// consumed, however far Ahead looked.
func (s *ThreadScan) slideAt() int { return max(s.window, (len(s.win)+1)/2) }

// slide moves the window's events from the current one to the front of its
// array, with their dependence lists (a window Ahead grew past its size
// stays that small).
func (s *ThreadScan) slide() {
	i := s.i
	tail := s.win[i:]
	d0 := len(s.dep)
	for x := range tail {
		if tail[x].Kind == TaskDeps {
			d0 = int(tail[x].Args[2])
			break
		}
	}
	if d0 > 0 {
		for x := range tail {
			if tail[x].Kind == TaskDeps {
				tail[x].Args[2] -= int64(d0)
			}
		}
		s.dep = s.dep[:copy(s.dep, s.dep[d0:])]
	}
	s.win = s.win[:copy(s.win, tail)]
	// Keep the segment of the current event and the later ones.
	for s.cs+1 < len(s.segs) && s.segs[s.cs+1].pos <= i {
		s.cs++
	}
	s.segs = s.segs[:copy(s.segs, s.segs[s.cs:])]
	for x := range s.segs {
		s.segs[x].pos -= i
	}
	s.cs, s.i = 0, 0
}

// trim drops buffers that an unusual lookahead or dependence list grew
// (or a scan of a process with fewer threads left), so a scan keeps about
// its window of events.
func (s *ThreadScan) trim() {
	if cap(s.win) > 4*s.window {
		s.win = nil
	}
	if cap(s.dep) > 4*s.window {
		s.dep = nil
	}
	d := &s.sc.dec
	if cap(d.av) > 4*s.args && d.done() {
		d.av = nil
	}
	if s.win == nil {
		s.win = make([]Event, 0, s.window+2*scanAhead)
	}
}

// addSeg notes that the window's next events come from chunk k, from the
// decoder's position.
func (s *ThreadScan) addSeg(k int) {
	sk := &s.p.Events[s.th].chunks[k]
	i := int64(s.sc.dec.i)
	s.segs = append(s.segs, winSeg{pos: len(s.win), k: k, first: sk.first + i,
		off: sk.off + frameHeaderLen + int64(s.sc.dec.cols.kindsPos) + i})
}

// decode appends up to w events to the window, opening the chunk after the
// decoder's when its chunk is done and that chunk is below maxk. It
// reports whether it decoded any.
func (s *ThreadScan) decode(w, maxk int) bool {
	for s.sc.dec.done() {
		k := s.dk + 1
		if s.err != nil || k >= maxk || k >= len(s.p.Events[s.th].chunks) {
			return false
		}
		if err := s.p.openStored(s.th, k, &s.sc, s.args); err != nil {
			s.err = err
			return false
		}
		s.dk = k
		s.addSeg(k)
	}
	d := &s.sc.dec
	sk := &s.p.Events[s.th].chunks[s.dk]
	first, idx := len(s.win), sk.first+int64(d.i)
	win, dep, err := d.next(s.win, s.dep, w)
	s.win, s.dep = win, dep
	if err != nil {
		s.sc.dec.n = 0 // dead
		s.err = chunkError(s.p.File, sk.off, &d.cols, err)
		return false
	}
	s.tb.apply(s.th, idx, s.win[first:])
	s.p.Decoded += int64(len(s.win) - first)
	return len(s.win) > first
}

// Err returns the error that ended the scan early, if any.
func (s *ThreadScan) Err() error { return s.err }

// Event returns the current event.
func (s *ThreadScan) Event() *Event { return &s.win[s.i] }

// Index returns the current event's index in its thread.
func (s *ThreadScan) Index() int64 { return s.base + int64(s.i) }

// Deps returns the dependence list of the current event (task_dependences).
func (s *ThreadScan) Deps() []Dep { return s.win[s.i].Deps(s.dep) }

// Offset returns the file offset of the current event's kind byte.
func (s *ThreadScan) Offset() int64 { return s.off + int64(s.i) }

// Ahead returns the j-th event after the current one (j ≥ 1) and its
// dependence list, looking no further than the end of the next chunk; ok
// is false beyond.
func (s *ThreadScan) Ahead(j int) (e *Event, deps []Dep, ok bool) {
	x := s.i + j
	if x >= len(s.win) {
		if j < 1 || s.i >= len(s.win) {
			return nil, nil, false
		}
		for x >= len(s.win) {
			// Whole groups of 4, as the streams are laid out.
			w := max(scanAhead, (x+1-len(s.win)+3)&^3)
			if !s.decode(w, s.k+2) {
				return nil, nil, false
			}
		}
	}
	e = &s.win[x]
	return e, e.Deps(s.dep), true
}

// bufferBytes returns the bytes of the buffers the scan holds: its window
// of events, their dependence lists and the decoder's column scratch (and,
// for a streaming process, the re-read frame).
func (s *ThreadScan) bufferBytes() int {
	d := &s.sc.dec
	return cap(s.win)*int(unsafe.Sizeof(Event{})) + cap(s.dep)*int(unsafe.Sizeof(Dep{})) +
		cap(s.segs)*int(unsafe.Sizeof(winSeg{})) + 8*cap(d.av) + cap(s.sc.frame)
}

// openStored starts the decoder of sc on stored chunk k of thread th. Every
// stored chunk decoded once at load; when it is read from the file again, a
// frame that changed or vanished is an error naming the file and offset.
func (p *Process) openStored(th, k int, sc *scratch, ablock int) error {
	sk := &p.Events[th].chunks[k]
	var cols chunkColumns
	if err := p.storedColumns(sk, &cols, sc); err != nil {
		return err
	}
	if err := sc.dec.open(&cols, int(sk.n), ablock); err != nil {
		return chunkError(p.File, sk.off, &cols, err)
	}
	if cols.n < int64(sk.n) {
		return &FormatError{File: p.File, Offset: sk.off, Frame: FrameChunk, Err: errors.New("chunk changed since it was loaded")}
	}
	return nil
}

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
	t := &r.Tables
	w, err := NewWriter(out, r.Header) // it fills in Format, Version and ClockUnit
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
// pass does. It decodes whole chunks, apart from the scans' windows, so
// tests can check one against the other.
func (p *Process) Decode(th int, tb *Timebase) ([]Event, []Dep) {
	if th >= len(p.Events) {
		return nil, nil
	}
	evs := make([]Event, 0, p.Events[th].N)
	var deps []Dep
	var c Chunk
	var sc scratch
	defer sc.release()
	for k := range p.Events[th].chunks {
		if p.decodeCorrected(th, k, &c, &sc, tb) != nil {
			break // only a streaming process whose file changed
		}
		for _, e := range c.Events {
			if e.Kind == TaskDeps {
				d := e.Deps(c.Deps)
				e.Args[2] = int64(len(deps))
				deps = append(deps, d...)
			}
			evs = append(evs, e)
		}
	}
	return evs, deps
}

// EachDeps calls fn with the dependence list of every task_dependences
// event of thread th, in order, decoding only the chunks that hold one
// (the load marked them): a task trace's other chunks, its tasks' starts
// and ends on every thread, are not read. Its buffers are a scan's of sp
// (nil: its own). It returns the first error of a chunk read again from
// its file (a streaming process's file changed).
func (p *Process) EachDeps(th int, sp *Scans, fn func(deps []Dep)) error {
	if th >= len(p.Events) {
		return nil
	}
	s := sp.Get(p, th, nil)
	c := Chunk{Events: s.win[:0], Deps: s.dep[:0]}
	var err error
	for k := range p.Events[th].chunks {
		if !p.Events[th].chunks[k].deps {
			continue
		}
		if err = p.decodeStored(th, k, &c, &s.sc); err != nil {
			break
		}
		for i := range c.Events {
			if e := &c.Events[i]; e.Kind == TaskDeps {
				fn(e.Deps(c.Deps))
			}
		}
	}
	s.win, s.dep = c.Events[:0], c.Deps[:0] // grown, for the scan's next use
	sp.Put(s)
	return err
}

// ReleaseEvents drops the process's events (its chunks and their arena)
// once no pass needs them; tables, counts and the census but for its
// per-event list (RemoteIn) stay.
func (p *Process) ReleaseEvents() {
	for th := range p.Events {
		p.Events[th].chunks = nil
	}
	p.Census.RemoteIn = nil // the simulation's input, like the events
}

// EventFile names the file that holds thread th's events, for a warning a
// user can follow: the rank file's name (rank-00001.ptrace), or for a
// process converted from OTF2 its location's event file (traces/1.evt).
func (p *Process) EventFile(th int) string {
	if p.EvtDir != "" {
		for _, t := range p.Threads {
			if t.Index == th {
				return p.EvtDir + "/" + strconv.FormatInt(t.TID, 10) + ".evt"
			}
		}
		return p.EvtDir
	}
	return filepath.Base(p.File)
}

package trace

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/vmihailenco/msgpack/v5"
)

// DefaultChunkEvents is how many events a writer puts in one chunk. Chunks of
// this size decode in a few hundred microseconds and keep reader memory small.
const DefaultChunkEvents = 4096

// Writer writes one process's trace file. Events are appended per thread and
// must be in time order within a thread; tables may be added at any time and
// are written before the chunks that follow them and again, completed, at
// Close. A Writer is not safe for concurrent use.
type Writer struct {
	w      *bufio.Writer
	closer io.Closer
	name   string

	chunkEvents int
	nranks      int // world size of the header, for MPI_COMM_WORLD
	version     int // format version of the header
	threads     []*chunkEncoder
	counts      []int64
	nchunks     int64
	dropped     int64

	strings        map[string]int64
	stringList     []string
	stringsWritten int

	tables  Tables
	payload []byte
	// stream-vbyte buffers, reused from chunk to chunk
	dtCtrl, dtData, argsCtrl, argsData []byte
	frame                              []byte
	err                                error
}

// Create creates path and writes the header frame.
func Create(path string, h Header) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(f, h)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	w.closer = f
	w.name = path
	return w, nil
}

// NewWriter writes the header frame to out and returns a Writer. Format,
// Version and ClockUnit are filled in when empty.
func NewWriter(out io.Writer, h Header) (*Writer, error) {
	if h.Format == "" {
		h.Format = FormatName
	}
	if h.Version == 0 {
		h.Version = Version
	}
	if h.ClockUnit == "" {
		h.ClockUnit = "ns"
	}
	// A large buffer for a file; none of its own (NewWriterSize returns
	// a large enough bufio.Writer as it is) over a writer that buffers
	// already or is memory: a process converted in memory or a small
	// file written through Rows.WriteFile allocated 1 MiB for it.
	size := 1 << 20
	switch out.(type) {
	case *bufio.Writer, *bytes.Buffer:
		size = 4 << 10
	}
	w := &Writer{
		w:           bufio.NewWriterSize(out, size),
		name:        "trace",
		chunkEvents: DefaultChunkEvents,
		nranks:      h.NRanks,
		version:     h.Version,
		strings:     make(map[string]int64),
	}
	w.writeMsgpack(FrameHeader, &h)
	return w, w.err
}

// SetChunkEvents changes the number of events per chunk (for tests and tools).
func (w *Writer) SetChunkEvents(n int) {
	if n > 0 {
		w.chunkEvents = n
	}
}

// String interns s in the string table and returns its id.
func (w *Writer) String(s string) int64 {
	if id, ok := w.strings[s]; ok {
		return id
	}
	id := int64(len(w.stringList))
	w.strings[s] = id
	w.stringList = append(w.stringList, s)
	return id
}

// SetThread adds or replaces a thread-table entry.
func (w *Writer) SetThread(t Thread) {
	for i := range w.tables.Threads {
		if w.tables.Threads[i].Index == t.Index {
			w.tables.Threads[i] = t
			return
		}
	}
	w.tables.Threads = append(w.tables.Threads, t)
}

// AddLocation adds a location and returns its id (its index in the table).
func (w *Writer) AddLocation(l Location) int64 {
	l.ID = len(w.tables.Locations)
	w.tables.Locations = append(w.tables.Locations, l)
	return int64(l.ID)
}

// AddComm adds a communicator; its Index must be the next free index.
func (w *Writer) AddComm(c Communicator) {
	w.tables.Comms = append(w.tables.Comms, c)
}

// AddClockOffset records a clock-offset measurement.
func (w *Writer) AddClockOffset(o ClockOffset) {
	w.tables.ClockOffsets = append(w.tables.ClockOffsets, o)
}

// AddDropped records events a collector could not keep.
func (w *Writer) AddDropped(n int64) { w.dropped += n }

func (w *Writer) thread(t int) *chunkEncoder {
	for len(w.threads) <= t {
		w.threads = append(w.threads, &chunkEncoder{thread: len(w.threads), alt: altOf(w.version), na: nargsOf(w.version)})
		w.counts = append(w.counts, 0)
	}
	return w.threads[t]
}

// Emit appends e to thread t's events. For TaskDeps use EmitDeps.
func (w *Writer) Emit(t int, e *Event) error {
	if w.err != nil {
		return w.err
	}
	if !e.Kind.Valid() {
		return fmt.Errorf("emit: invalid event kind %d", e.Kind)
	}
	if t < 0 || t >= MaxThreads {
		return fmt.Errorf("emit: thread index %d out of range", t)
	}
	c := w.thread(t)
	c.add(e, nil)
	w.counts[t]++
	if c.n >= w.chunkEvents {
		w.flushThread(c)
	}
	return w.err
}

// E is Emit with the arguments spelled out.
func (w *Writer) E(t int, k Kind, time int64, args ...int64) error {
	e := Event{Time: time, Kind: k}
	copy(e.Args[:], args)
	return w.Emit(t, &e)
}

// EmitDeps appends a TaskDeps event for task with its dependence list.
func (w *Writer) EmitDeps(t int, time, task int64, deps []Dep) error {
	if w.err != nil {
		return w.err
	}
	if len(deps) > maxListLen {
		return fmt.Errorf("emit: %d dependences exceed the limit %d", len(deps), maxListLen)
	}
	if t < 0 || t >= MaxThreads {
		return fmt.Errorf("emit: thread index %d out of range", t)
	}
	c := w.thread(t)
	e := Event{Time: time, Kind: TaskDeps}
	e.Args[0] = task
	c.add(&e, deps)
	w.counts[t]++
	if c.n >= w.chunkEvents {
		w.flushThread(c)
	}
	return w.err
}

// Flush writes every thread's pending events as chunks.
func (w *Writer) Flush() error {
	for _, c := range w.threads {
		if c.n > 0 {
			w.flushThread(c)
		}
	}
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

func (w *Writer) flushThread(c *chunkEncoder) {
	w.writeStrings()
	w.dtCtrl, w.dtData = svbAppend(w.dtCtrl[:0], w.dtData[:0], c.dt)
	w.argsCtrl, w.argsData = svbAppend(w.argsCtrl[:0], w.argsData[:0], c.args)
	p := w.payload[:0]
	p = mpAppendMapLen(p, 10)
	p = mpAppendStr(p, "thread")
	p = mpAppendInt(p, int64(c.thread))
	p = mpAppendStr(p, "seq")
	p = mpAppendInt(p, c.seq)
	p = mpAppendStr(p, "n")
	p = mpAppendInt(p, int64(c.n))
	p = mpAppendStr(p, "t0")
	p = mpAppendInt(p, c.t0)
	p = mpAppendStr(p, "nargs")
	p = mpAppendInt(p, int64(len(c.args)))
	p = mpAppendStr(p, "kinds")
	p = mpAppendBin(p, c.kinds)
	p = mpAppendStr(p, "dt_ctrl")
	p = mpAppendBin(p, w.dtCtrl)
	p = mpAppendStr(p, "dt_data")
	p = mpAppendBin(p, w.dtData)
	p = mpAppendStr(p, "args_ctrl")
	p = mpAppendBin(p, w.argsCtrl)
	p = mpAppendStr(p, "args_data")
	p = mpAppendBin(p, w.argsData)
	w.payload = p
	w.writeFrame(FrameChunk, p)
	c.seq++
	w.nchunks++
	c.reset()
}

func (w *Writer) writeStrings() {
	if w.stringsWritten == len(w.stringList) {
		return
	}
	w.writeMsgpack(FrameStrings, &stringsFrame{Base: w.stringsWritten, Values: w.stringList[w.stringsWritten:]})
	w.stringsWritten = len(w.stringList)
}

type stringsFrame struct {
	Base   int      `msgpack:"base"`
	Values []string `msgpack:"values"`
}

type threadsFrame struct {
	Threads []Thread `msgpack:"threads"`
}

type locationsFrame struct {
	Locations []Location `msgpack:"locations"`
}

type clockFrame struct {
	Offsets []ClockOffset `msgpack:"offsets"`
}

func (w *Writer) writeMsgpack(kind FrameKind, v any) {
	if w.err != nil {
		return
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		w.err = fmt.Errorf("encode %s frame: %w", kind, err)
		return
	}
	w.writeFrame(kind, buf.Bytes())
}

func (w *Writer) writeFrame(kind FrameKind, payload []byte) {
	if w.err != nil {
		return
	}
	if len(payload) > MaxFrameLen {
		w.err = fmt.Errorf("%s frame of %d bytes exceeds the limit %d", kind, len(payload), MaxFrameLen)
		return
	}
	w.frame = appendFrameHeader(w.frame[:0], kind, payload)
	if _, err := w.w.Write(w.frame); err != nil {
		w.err = err
		return
	}
	if _, err := w.w.Write(payload); err != nil {
		w.err = err
	}
}

// Close flushes all events, writes the tables and the end frame, and closes
// the file when the Writer created it.
func (w *Writer) Close() error {
	for _, c := range w.threads {
		if c.n > 0 {
			w.flushThread(c)
		}
	}
	w.writeStrings()
	// Every thread that has events gets a table entry, so readers can check
	// references even when the producer forgot one.
	named := make([]bool, len(w.threads)) // a set: a quadratic search hurt at 10^4 threads
	for _, t := range w.tables.Threads {
		if t.Index >= 0 && t.Index < len(named) {
			named[t.Index] = true
		}
	}
	for i := range w.threads {
		if !named[i] {
			w.tables.Threads = append(w.tables.Threads, Thread{Index: i, Type: ThreadOther})
		}
	}
	if len(w.tables.Threads) > 0 {
		w.writeMsgpack(FrameThreads, &threadsFrame{Threads: w.tables.Threads})
	}
	if len(w.tables.Locations) > 0 {
		w.writeMsgpack(FrameLocations, &locationsFrame{Locations: w.tables.Locations})
	}
	if len(w.tables.Comms) > 0 {
		f := commsFrame{Comms: make([]commWire, len(w.tables.Comms))}
		for i := range w.tables.Comms {
			f.Comms[i] = commToWire(&w.tables.Comms[i], w.nranks, w.version)
		}
		w.writeMsgpack(FrameComms, &f)
	}
	if len(w.tables.ClockOffsets) > 0 {
		w.writeMsgpack(FrameClock, &clockFrame{Offsets: w.tables.ClockOffsets})
	}
	w.writeMsgpack(FrameEnd, &End{Events: w.counts, Chunks: w.nchunks, Dropped: w.dropped})
	if w.err == nil {
		w.err = w.w.Flush()
	}
	if w.closer != nil {
		if err := w.closer.Close(); err != nil && w.err == nil {
			w.err = err
		}
		w.closer = nil
	}
	return w.err
}

// Events returns how many events were emitted so far on all threads.
func (w *Writer) Events() int64 {
	var n int64
	for _, c := range w.counts {
		n += c
	}
	return n
}

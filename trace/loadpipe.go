package trace

import (
	"io"
	"sync"
)

// chunkSource hands a load its chunks in file order: the chunk, its
// encoded payload (valid until the next call), its frame's offset and
// checksum; io.EOF after the last frame.
type chunkSource interface {
	next() (c *Chunk, payload []byte, frameOff int64, crc uint32, err error)
	close()
}

// readerSource reads and decodes each chunk on the calling goroutine.
type readerSource struct {
	r *Reader
	c *Chunk
}

func (s readerSource) next() (*Chunk, []byte, int64, uint32, error) {
	if err := s.r.NextChunk(s.c); err != nil {
		return nil, nil, 0, 0, err
	}
	return s.c, s.r.lastPayload, s.r.lastOff, s.r.lastCRC, nil
}

func (readerSource) close() {}

// pipeMinBytes is the smallest file whose load decodes on other
// goroutines: below it the load takes milliseconds either way.
const pipeMinBytes = 1 << 20

// decodePipe decodes a file's chunks on worker goroutines while the
// caller's goroutine reads the frames (the reads, checksums and sequence
// checks stay in file order there) and takes the decoded chunks back in
// file order: a load on several cores, whose result and errors are the
// one-goroutine load's. A chunk's events depend on no other frame
// (decodeChunkColumns), so only the order of their use matters. The table
// frames read ahead wait in the ring too and reach the reader's tables as
// the load takes them: a chunk that fails to decode stops a salvaging load
// with the tables of the frames before it, not of those read past it.
type decodePipe struct {
	r    *Reader
	jobs chan *pipeJob
	// ring holds the chunks in flight in file order: ring[head] is the
	// next one out, n of them are in flight.
	ring    []*pipeJob
	head, n int
	// events counts the events of the chunks in flight: a frame is read
	// only while they are fewer than pipeEvents, so the decoded chunks in
	// flight hold at most that many events plus one chunk's (a file's
	// chunk may claim tens of millions, as many as its bytes allow).
	events int64
	stop   bool // a frame failed to read, or the file ended
	ended  bool // the end frame was read
	wg     sync.WaitGroup
}

// pipeEvents bounds the events of the chunks in flight (a chunk of ptrace's
// writers has 4096 or 16384).
const pipeEvents = 1 << 18

// pipeJob is one frame in flight: a chunk the workers decode, or a table
// frame read ahead (kind), absorbed when the load takes it.
type pipeJob struct {
	kind     FrameKind
	c        Chunk
	cols     chunkColumns
	payload  []byte // the frame's payload, copied out of the read buffer
	frameOff int64
	crc      uint32
	events   int64 // counted in decodePipe.events while in flight
	err      error
	done     chan struct{} // a value when c (or err) is ready
}

// pipeWorkers is the most goroutines a load decodes on: the loading one's
// share of a chunk (reading, checksum, census) costs about half its decode
// (on the 10 M-event lean stencil, 0.12 s against 0.23 s), so beyond two
// to four decoders they wait for it, each holding its buffers.
const pipeWorkers = 4

// newDecodePipe starts workers decoding goroutines for r (at most
// pipeWorkers), with up to twice as many chunks in flight (their buffers
// kept in jobs across loads).
func newDecodePipe(r *Reader, workers int, jobs *[]*pipeJob) *decodePipe {
	workers = min(workers, pipeWorkers)
	depth := 2 * workers
	for len(*jobs) < depth {
		*jobs = append(*jobs, &pipeJob{done: make(chan struct{}, 1)})
	}
	d := &decodePipe{r: r, jobs: make(chan *pipeJob, depth), ring: (*jobs)[:depth]}
	for _, j := range d.ring {
		j.err = nil
		for len(j.done) > 0 {
			<-j.done
		}
	}
	for range workers {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			var sc scratch
			for j := range d.jobs {
				if err := decodeChunkColumns(r.name, j.frameOff, &j.cols, &j.c, &sc); err != nil {
					j.err = chunkFrameError(r.name, j.frameOff, err)
				}
				j.done <- struct{}{}
			}
		}()
	}
	return d
}

// fill reads frames until the ring is full, handing each chunk to the
// workers; a failed read (or the end) takes its place in the ring, after
// the chunks before it.
func (d *decodePipe) fill() {
	for !d.stop && d.n < len(d.ring) && (d.n == 0 || d.events < pipeEvents) {
		j := d.ring[(d.head+d.n)%len(d.ring)]
		d.n++
		j.events = 0
		if err := d.read(j); err != nil {
			j.err, d.stop = err, true
			j.done <- struct{}{}
			return
		}
		if j.kind != FrameChunk {
			j.done <- struct{}{}
			continue
		}
		j.events = max(j.cols.n, 0)
		d.events += j.events
		d.jobs <- j
	}
}

// read reads the next frame into j (Reader.nextFrame): a chunk, its
// columns parsed on the job's own copy of the payload, or a table frame,
// kept for next to absorb in its turn.
func (d *decodePipe) read(j *pipeJob) error {
	r := d.r
	kind, payload, err := r.nextFrame(&j.cols, d.ended)
	if err != nil {
		return err
	}
	j.kind, j.frameOff, j.crc = kind, r.lastOff, r.lastCRC
	// The payload aliases the read buffer, which the next frame
	// overwrites; a chunk's columns, which alias it too, are parsed again
	// on the copy (the same bytes, so the same columns).
	j.payload = append(j.payload[:0], payload...)
	if kind == FrameChunk {
		return parseChunk(j.payload, r.hdr.Version, &j.cols)
	}
	d.ended = d.ended || kind == FrameEnd
	return nil
}

func (d *decodePipe) next() (*Chunk, []byte, int64, uint32, error) {
	for {
		d.fill() // the slot the previous call returned is free again
		if d.n == 0 {
			return nil, nil, 0, 0, io.EOF
		}
		j := d.ring[d.head]
		<-j.done
		d.head = (d.head + 1) % len(d.ring)
		d.n--
		d.events -= j.events
		if j.err != nil {
			d.stop, d.n = true, 0 // nothing after a failure is used
			return nil, nil, 0, 0, j.err
		}
		if j.kind == FrameChunk {
			return &j.c, j.payload, j.frameOff, j.crc, nil
		}
		if err := d.r.absorb(j.kind, j.payload); err != nil {
			d.stop, d.n = true, 0
			return nil, nil, 0, 0, d.r.errAt(j.frameOff, j.kind, "%v", err)
		}
	}
}

// close stops the workers once the chunks in flight are decoded.
func (d *decodePipe) close() {
	close(d.jobs)
	d.wg.Wait()
}

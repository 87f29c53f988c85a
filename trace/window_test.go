package trace

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// windowEvents returns n events of every kind in turn with, now and then,
// a long dependence list (more values than the decoder's args window) and
// a task creation followed by a long run of attributes (a lookahead that
// reaches far).
// windowChunk writes the n events of windowEvents(seed, n) as one chunk
// and returns its payload and columns.
func windowChunk(t *testing.T, seed int64, n int) ([]byte, chunkColumns) {
	t.Helper()
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{NRanks: 1})
	w.SetChunkEvents(n)
	evs, deps := windowEvents(seed, n)
	writeEvents(t, w, 0, evs, deps)
	w.Close()
	payload := chunkPayload(t, buf.Bytes())
	var cols chunkColumns
	if err := parseChunk(payload, Version, &cols); err != nil {
		t.Fatal(err)
	}
	return payload, cols
}

func windowEvents(seed int64, n int) ([]Event, [][]Dep) {
	rng := newRand(seed)
	evs, deps := randomEvents(rng, n)
	for i := 0; i+600 < len(evs); i += 3001 {
		if evs[i].Kind == TaskDeps || i%2 == 0 {
			evs[i].Kind = TaskDeps
			deps[i] = nil
			for d := 0; d < 700; d++ { // 1400 values: more than a full window's args block (1024)
				deps[i] = append(deps[i], Dep{Addr: rng.Uint64() >> rng.Intn(64), Type: uint8(1 + rng.Intn(7))})
			}
			continue
		}
		evs[i].Kind = TaskCreate
		for j := i + 1; j < i+600; j++ {
			evs[j] = Event{Time: evs[i].Time, Kind: TaskAttr, Args: [MaxArgs]int64{evs[i].Args[0], 3, int64(j)}}
			deps[j] = nil
		}
	}
	return evs, deps
}

// windowFile writes threads of windowEvents in chunks of chunkEvents.
func windowFile(t *testing.T, chunkEvents int, sizes ...int) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{NRanks: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.SetChunkEvents(chunkEvents)
	for th, n := range sizes {
		e, d := windowEvents(int64(20+th), n)
		writeEvents(t, w, th, e, d)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("w%d.ptrace", chunkEvents))
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// kindOffsets returns, per thread, the file offset of each event's kind
// byte, from the whole-chunk decode of the streaming reader.
func kindOffsets(t *testing.T, path string) [][]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := NewReader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	var offs [][]int64
	var c Chunk
	for r.NextChunk(&c) == nil {
		for len(offs) <= c.Thread {
			offs = append(offs, nil)
		}
		for i := range c.Events {
			offs[c.Thread] = append(offs[c.Thread], c.Offset+int64(i))
		}
	}
	return offs
}

// TestScanWindows: a scan that decodes windows gives exactly the events of
// the whole-chunk decode (p.Decode), with the same indices, offsets,
// dependence lists and corrected times, whatever the chunk size; Ahead
// sees exactly as far as the end of the next chunk; and what Event and
// Ahead returned stays unchanged while Ahead decodes further.
func TestScanWindows(t *testing.T) {
	for _, chunk := range []int{7, 256, 1001, 4096, 16384} {
		path := windowFile(t, chunk, 40000, 3, 0, 9000)
		offs := kindOffsets(t, path)
		for _, stream := range []bool{false, true} {
			p, err := LoadProcess(path, LoadOptions{Stream: stream})
			if err != nil {
				t.Fatal(err)
			}
			tb := NewTimebase(-500, 1<<40, 3e-5, p.NumThreads())
			tb.SetCorrection(0, 17, p.Events[0].N, 99)
			tb.SetCorrection(3, 4000, p.Events[3].N, -7)
			for _, tb := range []*Timebase{nil, tb} {
				name := fmt.Sprintf("chunk %d stream %v timebase %v", chunk, stream, tb != nil)
				for th := 0; th < p.NumThreads(); th++ {
					checkWindowScan(t, name, p, th, tb, offs)
				}
			}
		}
	}
}

// TestScanWindowsManyThreads: a process of many threads scans each in a
// smaller window (scanWindowFor), with the same events, indices, offsets,
// dependence lists and lookahead as the whole-chunk decode.
func TestScanWindowsManyThreads(t *testing.T) {
	sizes := make([]int, 64) // windows of 32 events
	sizes[0], sizes[5], sizes[63] = 20000, 700, 3001
	for _, chunk := range []int{7, 4096} {
		path := windowFile(t, chunk, sizes...)
		offs := kindOffsets(t, path)
		for _, stream := range []bool{false, true} {
			p, err := LoadProcess(path, LoadOptions{Stream: stream})
			if err != nil {
				t.Fatal(err)
			}
			if w := p.Scan(0, nil).window; w != 32 {
				t.Fatalf("%d threads: window of %d events, want 32", p.NumThreads(), w)
			}
			for _, th := range []int{0, 5, 63} {
				checkWindowScan(t, fmt.Sprintf("64 threads, chunk %d stream %v", chunk, stream), p, th, nil, offs)
			}
		}
	}
	// The smaller window is what a scan holds between lookaheads: thread
	// 0's events alone in a process, and among 64 threads.
	held := func(sizes ...int) int {
		p, err := LoadProcess(windowFile(t, 16384, sizes...), LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s := p.Scan(0, nil)
		for i := 0; i < 5000 && s.Next(); i++ {
		}
		return cap(s.win)
	}
	if one, many := held(20000), held(sizes...); one != scanWindow+2*scanAhead || many != 32+2*scanAhead {
		t.Errorf("window arrays of %d events alone, %d among 64 threads: want %d and %d", one, many, scanWindow+2*scanAhead, 32+2*scanAhead)
	}
	for _, c := range []struct{ threads, window int }{{0, 256}, {1, 256}, {8, 256}, {9, 224}, {16, 128}, {63, 32}, {64, 32}, {1000, 32}} {
		if w := scanWindowFor(c.threads); w != c.window {
			t.Errorf("%d threads: window %d, want %d", c.threads, w, c.window)
		}
	}
}

func checkWindowScan(t *testing.T, name string, p *Process, th int, tb *Timebase, offs [][]int64) {
	t.Helper()
	want, wdeps := p.Decode(th, tb)
	// end[i] is one past the last event of the chunk after event i's.
	end := make([]int64, len(want))
	chunks := p.Events[th].chunks
	for k, sk := range chunks {
		next := sk.first + int64(sk.n)
		if k+1 < len(chunks) {
			next = chunks[k+1].first + int64(chunks[k+1].n)
		}
		for i := sk.first; i < sk.first+int64(sk.n); i++ {
			end[i] = next
		}
	}
	same := func(g *Event, gd []Dep, i int64) bool {
		w := want[i]
		if w.Kind == TaskDeps {
			if !reflect.DeepEqual(append([]Dep{}, gd...), append([]Dep{}, w.Deps(wdeps)...)) {
				return false
			}
			c := *g
			c.Args[2] = w.Args[2]
			return c == w
		}
		return *g == w
	}
	s := p.Scan(th, tb)
	i := int64(0)
	for ; s.Next(); i++ {
		if i >= int64(len(want)) {
			t.Fatalf("%s thread %d: more events than the %d decoded", name, th, len(want))
		}
		e := s.Event()
		if s.Index() != i || s.Offset() != offs[th][i] || !same(e, s.Deps(), i) {
			t.Fatalf("%s thread %d event %d (index %d, offset %d want %d): %+v, want %+v", name, th, i, s.Index(), s.Offset(), offs[th][i], *e, want[i])
		}
		held := *e
		// Short lookaheads at every event, a far one now and then (past
		// the next chunk's end, growing the window).
		js := []int{1, 2, 3}
		if i%97 == 0 || want[i].Kind == TaskCreate {
			js = append(js, 40, 300, 5000, 40000)
		}
		var got []*Event
		var gotv []Event
		for _, j := range js {
			a, ad, ok := s.Ahead(j)
			if wantOK := i+int64(j) < end[i]; ok != wantOK {
				t.Fatalf("%s thread %d event %d: Ahead(%d) ok=%v, want %v", name, th, i, j, ok, wantOK)
			}
			if ok {
				if !same(a, ad, i+int64(j)) {
					t.Fatalf("%s thread %d event %d: Ahead(%d) = %+v, want %+v", name, th, i, j, *a, want[i+int64(j)])
				}
				got, gotv = append(got, a), append(gotv, *a)
			}
		}
		if *e != held {
			t.Fatalf("%s thread %d event %d: the current event changed under Ahead", name, th, i)
		}
		for x := range got {
			if *got[x] != gotv[x] {
				t.Fatalf("%s thread %d event %d: an event Ahead returned changed under a later Ahead", name, th, i)
			}
		}
	}
	if err := s.Err(); err != nil || i != int64(len(want)) {
		t.Fatalf("%s thread %d: %d events (%v), want %d", name, th, i, err, len(want))
	}
	if s.Next() {
		t.Fatalf("%s thread %d: Next after the end", name, th)
	}
	if _, _, ok := s.Ahead(1); ok {
		t.Fatalf("%s thread %d: Ahead after the end", name, th)
	}
}

// TestScanBufferBytes: a scan's buffers stay far below a chunk's worth of
// decoded events (16384 × 56 bytes) when it reads 16384-event chunks with
// the simulator's lookahead, and keep that size when recycled.
func TestScanBufferBytes(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{NRanks: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.SetChunkEvents(16384)
	evs, deps := randomEvents(newRand(31), 3*16384+100)
	writeEvents(t, w, 0, evs, deps)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p, err := LoadProcessReader(&buf, "b", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := p.Events[0].chunks[0].n; n != 16384 {
		t.Fatalf("chunk of %d events", n)
	}
	const limit = 64 << 10
	var pool Scans
	for round := 0; round < 2; round++ {
		s := pool.Get(p, 0, nil)
		n, most := 0, 0
		for ; s.Next(); n++ {
			if s.Event().Kind == TaskCreate {
				for j := 1; j <= 4; j++ {
					s.Ahead(j)
				}
			}
			most = max(most, s.bufferBytes())
		}
		if n != len(evs) || s.Err() != nil {
			t.Fatalf("%d events (%v), want %d", n, s.Err(), len(evs))
		}
		t.Logf("round %d: at most %d buffer bytes", round, most)
		if most > limit {
			t.Fatalf("a scan of 16384-event chunks holds %d buffer bytes, more than %d", most, limit)
		}
		pool.Put(s)
		if s.sc.dec.cols.kinds != nil || s.sc.dec.cols.argsData != nil {
			t.Fatal("a recycled scan keeps the process's chunk payload alive")
		}
	}
	// A lookahead to the end of the next chunk grows the window for a
	// while; a new window gives the memory back.
	s := p.Scan(0, nil)
	s.Next()
	if _, _, ok := s.Ahead(2*16384 - 1); !ok {
		t.Fatal("Ahead cannot reach the end of the next chunk")
	}
	if s.bufferBytes() < 16384*56 {
		t.Fatalf("a window holding two chunks takes %d bytes", s.bufferBytes())
	}
	for s.Next() && s.Index() < 3*16384 {
	}
	if b := s.bufferBytes(); b > limit {
		t.Fatalf("after a far lookahead the scan keeps %d buffer bytes", b)
	}
}

// windowDecode decodes cols with the chunk decoder a window of w events at
// a time, decoding args ablock values at a time, and returns the events
// and dependence lists (Args[2] indexing the concatenated lists) and the
// first error.
func windowDecode(cols *chunkColumns, w, ablock int) ([]Event, []Dep, error) {
	var d chunkDecoder
	if err := d.open(cols, int(cols.n), ablock); err != nil {
		return nil, nil, err
	}
	var all []Event
	var allDeps []Dep
	var win []Event
	var dep []Dep
	for !d.done() {
		var err error
		win, dep, err = d.next(win[:0], dep[:0], w)
		for _, e := range win {
			if e.Kind == TaskDeps {
				dl := e.Deps(dep)
				e.Args[2] = int64(len(allDeps))
				allDeps = append(allDeps, dl...)
			}
			all = append(all, e)
		}
		if err != nil {
			return all, allDeps, err
		}
	}
	return all, allDeps, nil
}

// TestWindowValidation: decoding a chunk a window at a time reports every
// problem the whole-chunk decode reports, with the same event, column and
// position (so the same file offset), whichever window it falls in; and
// the events before it are the whole-chunk decode's. Inputs: the chunk
// decoder's fuzz corpus and mutations of a valid chunk.
func TestWindowValidation(t *testing.T) {
	var inputs [][]byte
	dir := filepath.Join("testdata", "fuzz", "FuzzChunkPayload")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range ents {
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		lit := strings.TrimSuffix(strings.TrimPrefix(lines[len(lines)-1], "[]byte("), ")")
		v, err := strconv.Unquote(lit)
		if err != nil {
			t.Fatalf("%s: %v", de.Name(), err)
		}
		inputs = append(inputs, []byte(v))
	}
	valid, vcols := windowChunk(t, 41, 5000)
	inputs = append(inputs, valid)
	rng := newRand(43)
	for x := 0; x < 400; x++ {
		b := append([]byte(nil), valid...)
		// Flip bytes inside the kinds or args columns, where errors name
		// an event; sometimes one byte, sometimes several.
		col := [][]byte{vcols.kinds, vcols.argsCtrl, vcols.argsData, vcols.dtCtrl}[x%4]
		base, size := cap(valid)-cap(col), len(col) // col aliases valid
		for f := 0; f <= x%5; f++ {
			b[base+rng.Intn(max(size, 1))] ^= byte(1 + rng.Intn(255))
		}
		inputs = append(inputs, b)
	}
	failed, later := 0, 0
	for n, in := range inputs {
		var cols chunkColumns
		if parseChunk(in, Version, &cols) != nil {
			continue
		}
		var c Chunk
		var sc scratch
		whole := decodeColumns(&cols, &c, &sc)
		if whole != nil {
			failed++
			if ce := (*columnError)(nil); errors.As(whole, &ce) && ce.event >= 256 {
				later++ // beyond the first of the scans' windows
			}
		}
		for _, win := range []struct{ events, args int }{{4, 4}, {8, 12}, {256, 1024}, {1 << 30, 1 << 30}} {
			got, gdeps, err := windowDecode(&cols, win.events, win.args)
			if fmt.Sprint(err) != fmt.Sprint(whole) ||
				fmt.Sprint(chunkError("f", 100, &cols, err)) != fmt.Sprint(chunkError("f", 100, &cols, whole)) {
				t.Fatalf("input %d, windows of %v: error %v, whole-chunk decode %v", n, win, err, whole)
			}
			var ce *columnError
			if err != nil && !errors.As(err, &ce) {
				t.Fatalf("input %d: %T is no column error", n, err)
			}
			if whole != nil {
				continue
			}
			if len(got) != len(c.Events) {
				t.Fatalf("input %d, windows of %v: %d events, want %d", n, win, len(got), len(c.Events))
			}
			for i := range got {
				if got[i] != c.Events[i] {
					t.Fatalf("input %d, windows of %v: event %d %+v, want %+v", n, win, i, got[i], c.Events[i])
				}
			}
			if !reflect.DeepEqual(gdeps, c.Deps) && len(gdeps)+len(c.Deps) > 0 {
				t.Fatalf("input %d, windows of %v: dependence lists differ", n, win)
			}
		}
	}
	if failed < len(inputs)/2 || later < len(inputs)/8 {
		t.Fatalf("only %d of %d inputs fail to decode, %d after event 256: the mutations miss the columns", failed, len(inputs), later)
	}
	t.Logf("%d inputs, %d rejected, %d after event 256", len(inputs), failed, later)
}

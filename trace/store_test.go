package trace

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// storeFile writes a two-thread file with small chunks (so scans cross
// chunk boundaries) and returns its path and the events written.
func storeFile(t *testing.T) (string, [][]Event, [][][]Dep) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{NRanks: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.SetChunkEvents(7)
	var evs [][]Event
	var deps [][][]Dep
	for th := 0; th < 2; th++ {
		e, d := randomEvents(newRand(int64(10+th)), 5*int(NumKinds))
		writeEvents(t, w, th, e, d)
		evs, deps = append(evs, e), append(deps, d)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.ptrace")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, evs, deps
}

// checkScan compares a forward scan of every thread with the written events.
func checkScan(t *testing.T, p *Process, evs [][]Event, deps [][][]Dep) {
	t.Helper()
	for th := range evs {
		i := 0
		s := p.Scan(th, nil)
		for ; s.Next(); i++ {
			g, w := *s.Event(), evs[th][i]
			if s.Index() != int64(i) {
				t.Fatalf("thread %d: index %d at event %d", th, s.Index(), i)
			}
			if w.Kind == TaskDeps {
				if !reflect.DeepEqual(append([]Dep{}, s.Deps()...), append([]Dep{}, deps[th][i]...)) {
					t.Fatalf("thread %d event %d: deps %v, want %v", th, i, s.Deps(), deps[th][i])
				}
				g.Args[1], g.Args[2] = 0, 0
			}
			if g != w {
				t.Fatalf("thread %d event %d: %+v, want %+v", th, i, g, w)
			}
			// Lookahead sees the next events, across the chunk boundary.
			for j := 1; j <= 9; j++ {
				a, _, ok := s.Ahead(j)
				if want := i+j < len(evs[th]); ok != want && (ok || j <= 7) {
					t.Fatalf("thread %d event %d: Ahead(%d) ok=%v", th, i, j, ok)
				}
				if ok && (a.Kind != evs[th][i+j].Kind || a.Time != evs[th][i+j].Time) {
					t.Fatalf("thread %d event %d: Ahead(%d) = %s at %d, want %s", th, i, j, a.Kind, a.Time, evs[th][i+j].Kind)
				}
			}
		}
		if err := s.Err(); err != nil || i != len(evs[th]) {
			t.Fatalf("thread %d: %d events (%v), want %d", th, i, err, len(evs[th]))
		}
	}
}

func TestStoreScans(t *testing.T) {
	path, evs, deps := storeFile(t)
	for _, stream := range []bool{false, true} {
		p, err := LoadProcess(path, LoadOptions{Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		if p.Streaming() != stream || p.NumEvents() != int64(len(evs[0])+len(evs[1])) {
			t.Fatalf("stream %v: %d events", stream, p.NumEvents())
		}
		checkScan(t, p, evs, deps)
		var kinds [NumKinds]int64
		for th := range evs {
			for _, e := range evs[th] {
				kinds[e.Kind]++
			}
		}
		if p.Census.Kinds != kinds {
			t.Fatalf("census kinds %v, want %v", p.Census.Kinds, kinds)
		}
	}
}

// TestStreamFileChanged: a pass that re-reads a file that changed or
// vanished since the load fails with the file and offset, no panic.
func TestStreamFileChanged(t *testing.T) {
	path, _, _ := storeFile(t)
	p, err := LoadProcess(path, LoadOptions{Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Each pass puts its scans back, as the analysis does: the file they
	// held open is closed, and the next pass opens it again.
	var pool Scans
	var scanErr error
	for th := 0; th < p.NumThreads() && scanErr == nil; th++ {
		s := pool.Get(p, th, nil)
		for s.Next() {
		}
		scanErr = s.Err()
		pool.Put(s)
	}
	if scanErr == nil || !strings.Contains(scanErr.Error(), "changed since it was loaded") || !strings.Contains(scanErr.Error(), path) {
		t.Fatalf("changed file: %v", scanErr)
	}
	checkVanished(t, &pool, p, "vanished file")
}

// checkVanished removes p's file and checks that a pass reading thread 0
// from pool fails with "re-reading events" (what errors name, what).
func checkVanished(t *testing.T, pool *Scans, p *Process, what string) {
	t.Helper()
	os.Remove(p.File)
	s := pool.Get(p, 0, nil)
	for s.Next() {
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "re-reading events") {
		t.Fatalf("%s: %v", what, err)
	}
	pool.Put(s)
}

func TestTimebase(t *testing.T) {
	path, evs, _ := storeFile(t)
	p, err := LoadProcess(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := p.Events[1].N
	tb := NewTimebase(1000, evs[1][0].Time, 1e-4, p.NumThreads())
	tb.SetCorrection(1, 3, n, 0) // zero costs nothing
	if tb.Bytes() != 0 {
		t.Fatalf("a zero correction allocated %d bytes", tb.Bytes())
	}
	tb.SetCorrection(1, 3, n, 17)
	tb.SetCorrection(1, 5, n, 1<<40) // beyond int32: the column widens
	rows, _ := p.Decode(1, tb)
	for i, e := range evs[1] {
		got := rows[i].Time
		want := e.Time + 1000 + int64(float64(e.Time-evs[1][0].Time)*1e-4+0.5)
		switch i {
		case 3:
			want += 17
		case 5:
			want += 1 << 40
		}
		if got != want || tb.At(1, int64(i), e.Time) != want {
			t.Fatalf("event %d: %d (At %d), want %d", i, got, tb.At(1, int64(i), e.Time), want)
		}
	}
	if first, _ := p.TimeRange(nil); first != min(evs[0][0].Time, evs[1][0].Time) {
		t.Fatalf("time range starts at %d", first)
	}
}

// TestNewProcess: the in-memory builder round-trips rows and tables.
func TestNewProcess(t *testing.T) {
	e, d := randomEvents(newRand(4), 3*int(NumKinds))
	var flat []Dep
	for i := range e {
		if e[i].Kind == TaskDeps {
			e[i].Args[1], e[i].Args[2] = int64(len(d[i])), int64(len(flat))
			flat = append(flat, d[i]...)
		}
	}
	tables := Tables{Strings: []string{"a", "b"}, Comms: []Communicator{{Index: 0, ID: 0, Members: []int{0}}}}
	p, err := NewProcess(Header{Rank: 0, NRanks: 1}, tables, [][]Event{e}, [][]Dep{flat})
	if err != nil {
		t.Fatal(err)
	}
	got, gd := p.Decode(0, nil)
	if !reflect.DeepEqual(got, e) || !reflect.DeepEqual(gd, flat) || !reflect.DeepEqual(p.Strings, tables.Strings) {
		t.Fatal("NewProcess does not round-trip its rows")
	}
}

// TestStreamFileRewritten: a file rewritten with a frame that is valid on
// its own (its checksum matches its new payload) but is not the chunk that
// was loaded is a change too: the re-read compares the load's checksum.
func TestStreamFileRewritten(t *testing.T) {
	path, _, _ := storeFile(t)
	p, err := LoadProcess(path, LoadOptions{Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	sk := p.Events[0].chunks[0]
	b, _ := os.ReadFile(path)
	frame := b[sk.off : sk.off+frameHeaderLen+int64(sk.size)]
	payload := frame[frameHeaderLen:]
	payload[len(payload)-1] ^= 0x01
	copy(frame, appendFrameHeader(nil, FrameChunk, payload))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s := p.Scan(0, nil)
	for s.Next() {
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "where the loaded one had") || !strings.Contains(err.Error(), path) {
		t.Fatalf("rewritten chunk: %v", err)
	}
}

// TestStreamScansCloseFiles: the scans of a streaming process share its
// file, open from the first re-read while they read it (one pread a
// chunk, one descriptor whatever the threads), and give it back when they
// are put back in their pool or move to another process, so open files
// never pile up across passes, and a pass after the file vanished fails
// with its name even though an earlier one read it.
func TestStreamScansCloseFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	path, evs, _ := storeFile(t)
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	// The descriptors open on this file: another test's file that a
	// finalizer closes meanwhile does not count.
	fds := func() int {
		es, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range es {
			if to, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && to == abs {
				n++
			}
		}
		return n
	}
	p, err := LoadProcess(path, LoadOptions{Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	base := fds()
	var pool Scans
	for pass := range 3 {
		scans := make([]*ThreadScan, p.NumThreads())
		for th := range scans {
			scans[th] = pool.Get(p, th, nil)
			n := 0
			for scans[th].Next() {
				n++
			}
			if err := scans[th].Err(); err != nil || n != len(evs[th]) {
				t.Fatalf("pass %d thread %d: %d events (%v), want %d", pass, th, n, err, len(evs[th]))
			}
		}
		if got := fds(); got != base+1 {
			t.Fatalf("pass %d: %d open files while %d scans read, want %d (one for the process)", pass, got, len(scans), base+1)
		}
		pool.Put(scans...)
		if got := fds(); got != base {
			t.Fatalf("pass %d: %d open files after the scans were put back, want %d", pass, got, base)
		}
	}
	checkVanished(t, &pool, p, "vanished file after three passes")
}

// TestLoadUnknownLength: a reader that does not say its length (a
// process converted from OTF2 while it is read) is loaded into growing
// blocks, the last trimmed to its bytes, and gives the events a file
// gives, for every chunk count from one to hundreds.
func TestLoadUnknownLength(t *testing.T) {
	rng := newRand(9)
	for _, chunk := range []int{1, 7, 300, DefaultChunkEvents} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, Header{Rank: 0, NRanks: 1, ClockSrc: "synthetic"})
		if err != nil {
			t.Fatal(err)
		}
		w.SetChunkEvents(chunk)
		var want [2][]Event
		for th := range 2 {
			want[th], _ = randomEvents(rng, 2000+th)
			for i := range want[th] {
				if want[th][i].Kind == TaskDeps {
					want[th][i].Kind = TaskCreate // no dependence lists to compare
				}
			}
			writeEvents(t, w, th, want[th], nil)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		// struct{ io.Reader } hides bytes.Reader's Len.
		p, err := LoadProcessReader(struct{ io.Reader }{bytes.NewReader(data)}, "pipe", LoadOptions{})
		if err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		q, err := LoadProcessReader(bytes.NewReader(data), "sized", LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for th := range 2 {
			got, _ := p.Decode(th, nil)
			ref, _ := q.Decode(th, nil)
			if !reflect.DeepEqual(got, ref) || len(got) != len(want[th]) {
				t.Fatalf("chunk %d thread %d: %d events from the pipe, %d from the sized reader, %d written", chunk, th, len(got), len(ref), len(want[th]))
			}
		}
	}
}

// TestArenaTrim: a growing arena doubles its blocks from 4 KiB, and trim
// leaves its last block exactly full with every chunk's bytes intact,
// those of earlier blocks untouched.
func TestArenaTrim(t *testing.T) {
	rng := newRand(5)
	a := newArena(0)
	p := &Process{Events: make([]ThreadEvents, 3)}
	var want [][]byte
	var where [][2]int
	blocks := 0
	for i := range 500 {
		b := make([]byte, 1+rng.Intn(3000))
		rng.Read(b)
		before := cap(a.cur)
		got := a.copy(b)
		if cap(a.cur) != before || i == 0 {
			blocks++
		}
		th := rng.Intn(3)
		p.Events[th].chunks = append(p.Events[th].chunks, storedChunk{payload: got})
		a.placed(th, len(p.Events[th].chunks)-1, len(got))
		want = append(want, b)
		where = append(where, [2]int{th, len(p.Events[th].chunks) - 1})
	}
	if blocks < 5 || a.block > arenaMax {
		t.Fatalf("%d blocks, the last of %d bytes: not growing from %d", blocks, a.block, arenaMin)
	}
	last := append([][3]int(nil), a.last...)
	a.trim(p)
	for _, ref := range last { // the last block's chunks now lie in the exact one
		if got := p.Events[ref[0]].chunks[ref[1]].payload; &got[0] != &a.cur[ref[2]] {
			t.Fatalf("chunk %v still in the untrimmed block", ref)
		}
	}
	if len(last) == 0 || len(a.cur) != cap(a.cur) {
		t.Errorf("last block %d bytes used of %d after trim", len(a.cur), cap(a.cur))
	}
	for k, w := range where {
		if got := p.Events[w[0]].chunks[w[1]].payload; !bytes.Equal(got, want[k]) {
			t.Fatalf("chunk %d: bytes changed by trim", k)
		}
	}
}

// TestEventDepsOutOfRange: an event whose list offset and count lie
// outside its deps, including a pair whose sum wraps past the largest
// int64, has no list (a fuzzed trace's panic in Rows.Write).
func TestEventDepsOutOfRange(t *testing.T) {
	deps := make([]Dep, 4)
	for _, c := range []struct{ n, off int64 }{
		{-1, 0}, {1, -1}, {5, 0}, {1, 4}, {0, 5},
		{math.MaxInt64 - 2, 25}, {25, math.MaxInt64 - 2}, {math.MaxInt64, math.MaxInt64},
	} {
		e := Event{Kind: TaskDeps, Args: [MaxArgs]int64{1, c.n, c.off}}
		if d := e.Deps(deps); d != nil {
			t.Errorf("count %d at %d: a list of %d, want none", c.n, c.off, len(d))
		}
	}
	e := Event{Kind: TaskDeps, Args: [MaxArgs]int64{1, 2, 2}}
	if d := e.Deps(deps); len(d) != 2 {
		t.Errorf("count 2 at 2 of 4: a list of %d", len(d))
	}
}

package trace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/ptrace-dev/ptrace/internal/fuzzbound"
)

// fixCRCs rewrites the checksum of every frame whose prefix parses, so the
// fuzzer's mutations reach the payload decoders instead of dying at the CRC.
func fixCRCs(b []byte) []byte {
	b = append([]byte(nil), b...)
	for p := 0; p+frameHeaderLen <= len(b); {
		kind, _, n, err := parseFrameHeader(b[p:])
		if err != nil {
			break
		}
		end := p + frameHeaderLen + int(n)
		if end > len(b) || end < p {
			break
		}
		binary.BigEndian.PutUint32(b[p+3:], frameCRC(kind, b[p+frameHeaderLen:end]))
		p = end
	}
	return b
}

// randomTrace is a file of n random events of every kind on thread 0 of a
// process of a run of nranks (a fuzz seed).
func randomTrace(tb testing.TB, nranks int, seed int64, n int) []byte {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{NRanks: nranks})
	evs, deps := randomEvents(newRand(seed), n)
	writeEvents(tb, w, 0, evs, deps)
	w.Close()
	return buf.Bytes()
}

// FuzzReader feeds arbitrary bytes (with checksums repaired) to the streaming
// reader. It must return an error or data, never panic, hang or allocate
// without bound.
func FuzzReader(f *testing.F) {
	f.Add(smallTrace(f))
	f.Add(randomTrace(f, 1, 3, 2*int(NumKinds)))
	f.Fuzz(func(t *testing.T, data []byte) {
		data = fixCRCs(data)
		r, err := NewReader(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		var c Chunk
		for i := 0; i < 1<<16; i++ {
			err := r.NextChunk(&c)
			if err == io.EOF || err != nil {
				return
			}
			for j := range c.Events {
				c.Events[j].Deps(c.Deps)
			}
		}
	})
}

// TestMain bounds fuzzing's minimisation (internal/fuzzbound).
func TestMain(m *testing.M) {
	fuzzbound.Apply()
	os.Exit(m.Run())
}

// tinyTrace is a valid process of a few hundred bytes: one thread that
// creates and runs two tasks, one with a dependence, and an MPI send.
func tinyTrace(tb testing.TB) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{NRanks: 2})
	if err != nil {
		tb.Fatal(err)
	}
	w.SetChunkEvents(4)
	loc := w.AddLocation(Location{File: "x.c", Line: 1})
	it := MakeID(0, 1)
	w.E(0, ImplicitTaskBegin, 1, 0, it, 1, 0, 1)
	for i := int64(1); i <= 2; i++ {
		task := MakeID(0, i+1)
		w.E(0, TaskCreate, 10*i, task, it, 4, loc)
		w.EmitDeps(0, 10*i, task, []Dep{{Addr: 0x10, Type: DepInout}})
		w.E(0, TaskSchedule, 10*i+1, it, 7, task)
		w.E(0, TaskSchedule, 10*i+5, task, 1, it)
	}
	w.E(0, MPISend, 40, 1, 7, 0, 8, 0)
	w.E(0, ImplicitTaskEnd, 50, 0, it, 1, 0, 1)
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzLoad loads arbitrary bytes (checksums repaired) as a process, as the
// analysis does: an error or a process, never a panic; and a process's
// communication log holds exactly its threads' communication events, with
// their indices, times and leading arguments, as a decode finds them.
// Its seeds are small (a few hundred bytes to 1.5 KB): the inputs the
// fuzzer mutates and minimises stay as small, so it executes thousands
// of them a second (docs/PERFORMANCE.md).
func FuzzLoad(f *testing.F) {
	f.Add(tinyTrace(f))
	f.Add(randomTrace(f, 4, 5, int(NumKinds)))
	f.Fuzz(func(t *testing.T, data []byte) {
		data = fixCRCs(data)
		opts := LoadOptions{Salvage: len(data)%2 == 0}
		p, err := LoadProcessReader(bytes.NewReader(data), "fuzz", opts)
		// Decoding on workers changes nothing, errors included.
		opts.Workers, opts.pipeFrom = 2, 1
		q, qerr := LoadProcessReader(bytes.NewReader(data), "fuzz", opts)
		if (err == nil) != (qerr == nil) || err != nil && err.Error() != qerr.Error() {
			t.Fatalf("error %v on workers, %v on the loading goroutine", qerr, err)
		}
		if err == nil && !reflect.DeepEqual(p, q) {
			t.Fatalf("the process loaded on workers differs (%d / %d events)", q.NumEvents(), p.NumEvents())
		}
		// Nor does a reader that does not say its length (a process
		// converted from OTF2 as it is read: growing arena blocks, the last
		// trimmed): the same error, or the same events and census.
		opts.Workers, opts.pipeFrom = 0, 0
		u, uerr := LoadProcessReader(struct{ io.Reader }{bytes.NewReader(data)}, "fuzz", opts)
		if (err == nil) != (uerr == nil) || err != nil && err.Error() != uerr.Error() {
			t.Fatalf("error %v from a reader of unknown length, %v from a sized one", uerr, err)
		}
		if err == nil {
			if u.Census.Kinds != p.Census.Kinds || u.NumThreads() != p.NumThreads() {
				t.Fatalf("census %v from a reader of unknown length, %v from a sized one", u.Census.Kinds, p.Census.Kinds)
			}
			for th := range p.NumThreads() {
				a, ad := p.Decode(th, nil)
				b, bd := u.Decode(th, nil)
				if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(ad, bd) {
					t.Fatalf("thread %d: events from a reader of unknown length differ", th)
				}
			}
		}
		if err != nil || !p.HasCommLog() {
			return
		}
		for th := range p.NumThreads() {
			rows, _ := p.Decode(th, nil)
			sc, _ := p.CommScan(th)
			for i := range rows {
				if !IsComm(rows[i].Kind) {
					continue
				}
				if !sc.Next() {
					t.Fatalf("thread %d: the log ends before event %d", th, i)
				}
				e := sc.Event()
				if sc.Index() != int64(i) || e.Time != rows[i].Time || e.Kind != rows[i].Kind || [CommArgs]int64(e.Args[:CommArgs]) != [CommArgs]int64(rows[i].Args[:CommArgs]) {
					t.Fatalf("thread %d: logged %d %+v, event %d is %+v", th, sc.Index(), *e, i, rows[i])
				}
			}
			if sc.Next() {
				t.Fatalf("thread %d: the log has more events than the thread", th)
			}
		}
	})
}

// chunkPayload returns the payload of the first chunk frame of a file.
func chunkPayload(tb testing.TB, file []byte) []byte {
	for _, off := range frameOffsets(file) {
		kind, _, n, _ := parseFrameHeader(file[off:])
		if kind == FrameChunk {
			return append([]byte(nil), file[off+frameHeaderLen:off+frameHeaderLen+int(n)]...)
		}
	}
	tb.Fatal("no chunk frame")
	return nil
}

// FuzzChunkPayload targets the hand-written chunk decoder directly.
func FuzzChunkPayload(f *testing.F) {
	f.Add(chunkPayload(f, randomTrace(f, 1, 5, 3*int(NumKinds))))
	f.Fuzz(func(t *testing.T, payload []byte) {
		// Both codings of the arguments: version 2's and version 3's.
		for _, version := range []int{2, Version} {
			r := &Reader{name: "fuzz"}
			r.hdr.Version = version
			var c Chunk
			if r.checkChunk(payload, &r.cols) != nil {
				continue
			}
			// decodeColumns's first try skips the data streams' lengths:
			// what it returns must be what the decode with every check in
			// its order returns.
			err := decodeChunkColumns(r.name, r.lastOff, &r.cols, &c, &r.scratch)
			checkedMatches(t, r.name, r.lastOff, &r.cols, &c, err)
			if err != nil {
				continue
			}
			for j := range c.Events {
				if !c.Events[j].Kind.Valid() {
					t.Fatalf("version %d: decoded invalid kind %d", version, c.Events[j].Kind)
				}
				if c.Events[j].Kind == TaskDeps && c.Events[j].Deps(c.Deps) == nil && c.Events[j].Args[1] > 0 {
					t.Fatalf("version %d: dependence range outside the chunk", version)
				}
			}
		}
	})
}

// checkedMatches fails t unless err and c (decodeChunkColumns's result on
// cols, name and off) are what the chunk decoder returns with every
// check made first (open, then next over the whole chunk).
func checkedMatches(t *testing.T, name string, off int64, cols *chunkColumns, c *Chunk, err error) {
	t.Helper()
	var d chunkDecoder
	want := d.open(cols, int(cols.n), int(cols.nargs))
	var evs []Event
	var deps []Dep
	if want == nil {
		evs, deps, want = d.next(nil, nil, d.n)
	}
	if want != nil {
		want = chunkError(name, off, cols, want)
	}
	if fmt.Sprint(err) != fmt.Sprint(want) {
		t.Fatalf("decode: %v; with every check first: %v", err, want)
	}
	if err != nil {
		return
	}
	if len(evs) != len(c.Events) || (len(deps)+len(c.Deps) > 0 && !reflect.DeepEqual(deps, c.Deps)) {
		t.Fatalf("decode: %d events, %d dependences; with every check first: %d, %d", len(c.Events), len(c.Deps), len(evs), len(deps))
	}
	for i := range evs {
		if evs[i] != c.Events[i] {
			t.Fatalf("event %d: %+v; with every check first: %+v", i, c.Events[i], evs[i])
		}
	}
}

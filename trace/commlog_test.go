package trace_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unsafe"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/trace"
)

// TestCommLog: the load logs each thread's communication events with their
// indices, times and leading arguments; a process that is mostly
// communication drops it, a streamed one sooner.
func TestCommLog(t *testing.T) {
	dir := t.TempDir()
	if _, err := gen.Generate(dir, gen.Config{Workload: "spread", Ranks: 2, Threads: 3, Width: 12, Steps: 6, Radix: 3, LatencyNS: 500, Jitter: 0.2}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rank-00000.ptrace")
	p, err := trace.LoadProcess(path, trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.HasCommLog() {
		t.Fatal("no communication log")
	}
	logged := 0
	for th := range p.NumThreads() {
		rows, _ := p.Decode(th, nil)
		sc, ok := p.CommScan(th)
		if !ok {
			t.Fatalf("thread %d: no scan", th)
		}
		for i, e := range rows {
			switch e.Kind {
			case trace.MPISend, trace.MPIRecv, trace.CollBegin, trace.CollEnd, trace.RemoteDepOut, trace.RemoteDepIn:
			default:
				continue
			}
			if !sc.Next() {
				t.Fatalf("thread %d: the log ends before event %d", th, i)
			}
			g := sc.Event()
			if sc.Index() != int64(i) || g.Time != e.Time || g.Kind != e.Kind || [trace.CommArgs]int64(g.Args[:trace.CommArgs]) != [trace.CommArgs]int64(e.Args[:trace.CommArgs]) {
				t.Fatalf("thread %d: logged %d %+v, event %d is %+v", th, sc.Index(), *g, i, e)
			}
			logged++
		}
		if sc.Next() {
			t.Fatalf("thread %d: the log has more events than the thread", th)
		}
	}
	if logged == 0 {
		t.Fatal("the trace has no communication event")
	}

	// Streaming keeps the log too (the matching would re-read the file),
	// within the same bound.
	s, err := trace.LoadProcess(path, trace.LoadOptions{Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if !s.HasCommLog() {
		t.Fatal("a streamed load of a task trace kept no communication log")
	}
	hdir := t.TempDir()
	if _, err := gen.Generate(hdir, gen.Config{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 2000}); err != nil {
		t.Fatal(err)
	}
	hpath := filepath.Join(hdir, "rank-00000.ptrace")
	if h, err := trace.LoadProcess(hpath, trace.LoadOptions{}); err != nil || !h.HasCommLog() {
		t.Fatalf("halo in memory: no communication log (%v)", err)
	}
	if h, err := trace.LoadProcess(hpath, trace.LoadOptions{Stream: true}); err != nil || !h.HasCommLog() {
		t.Fatalf("halo streamed: no communication log (%v)", err)
	}

	// Sends only: the log outgrows a quarter of the chunks' bytes.
	rows := make([]trace.Event, 5000)
	for i := range rows {
		rows[i] = trace.Event{Time: int64(i) * 1000, Kind: trace.MPISend, Args: [trace.MaxArgs]int64{1, int64(i), 0, 8, int64(i)}}
	}
	q, err := trace.NewProcess(trace.Header{Rank: 0, NRanks: 2}, trace.Tables{}, [][]trace.Event{rows}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q.HasCommLog() {
		t.Fatal("a process of sends only kept its communication log")
	}
}

// Loads sharing their buffers (LoadBuffers) give what fresh loads give, file
// after file: larger and smaller files, many threads and few, a truncated
// file salvaged, a corrupt one refused (and what it left in the buffers
// forgotten).
func TestLoadBuffersSameProcess(t *testing.T) {
	var files []string
	for k, cfg := range []gen.Config{
		{Workload: "stencil", Ranks: 2, Threads: 4, Width: 32, Steps: 30, Jitter: 0.2},
		{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 40},
		{Workload: "untied", Ranks: 1, Threads: 3, Steps: 20},
	} {
		dir := filepath.Join(t.TempDir(), "tr")
		if _, err := gen.Generate(dir, cfg); err != nil {
			t.Fatal(err)
		}
		for r := range max(cfg.Ranks, 1) {
			files = append(files, filepath.Join(dir, trace.FileName(r)))
		}
		if k == 0 {
			b, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			cut, bad := filepath.Join(t.TempDir(), "cut.ptrace"), filepath.Join(t.TempDir(), "bad.ptrace")
			if os.WriteFile(cut, b[:len(b)*2/3], 0o644) != nil || os.WriteFile(bad, append(b[:len(b)/2:len(b)/2], 0xff, 0xff, 0xff), 0o644) != nil {
				t.Fatal("writing damaged copies")
			}
			files = append(files, cut, bad)
		}
	}
	files = append(files, files[0]) // the first again, after the others
	var bufs trace.LoadBuffers
	// Equal strings of the processes loaded with shared buffers are one
	// copy (LoadBuffers interns them).
	copies := map[string]*byte{}
	interned := func(f, s string) {
		if s == "" {
			return
		}
		if p, ok := copies[s]; ok && p != unsafe.StringData(s) {
			t.Fatalf("%s: %q is a second copy with shared buffers", f, s)
		}
		copies[s] = unsafe.StringData(s)
	}
	for _, f := range files {
		opts := trace.LoadOptions{Salvage: filepath.Base(f) == "cut.ptrace"}
		want, werr := trace.LoadProcess(f, opts)
		opts.Buffers = &bufs
		got, gerr := trace.LoadProcess(f, opts)
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("%s: error %v with shared buffers, %v without", f, gerr, werr)
		}
		if werr != nil {
			continue
		}
		for _, s := range got.Strings {
			interned(f, s)
		}
		interned(f, got.Header.Host)
		interned(f, got.Header.RunID)
		if got.NumEvents() != want.NumEvents() || !reflect.DeepEqual(got.Census, want.Census) ||
			!reflect.DeepEqual(got.Tables, want.Tables) || !reflect.DeepEqual(got.Warnings, want.Warnings) {
			t.Fatalf("%s: the process loaded with shared buffers differs (events %d / %d)", f, got.NumEvents(), want.NumEvents())
		}
		for th := range want.NumThreads() {
			g, w := got.Scan(th, nil), want.Scan(th, nil)
			for w.Next() {
				if !g.Next() || *g.Event() != *w.Event() || !reflect.DeepEqual(g.Deps(), w.Deps()) {
					t.Fatalf("%s: thread %d: event %d differs with shared buffers", f, th, w.Index())
				}
			}
			if g.Next() {
				t.Fatalf("%s: thread %d: more events with shared buffers", f, th)
			}
		}
	}
}

// CommLabel reads a per-stretch copy's id (otf2/gaps.go) as its
// communicator or window and stretch, a window's entry as a window, and
// leaves every other id as it is: the collector's, whose creator's rank
// sits above bit 32 (it read them as stretches once), and MPI_Comm_idup's.
func TestCommLabel(t *testing.T) {
	for id, want := range map[int64]string{0: "0", 7: "7", -1: "-1",
		trace.CommStretch | 1<<32: "0 (recorded stretch 2)", trace.CommStretch | 3<<32 | 5: "5 (recorded stretch 4)",
		trace.CommWindow | 3: "window 3", trace.CommStretch | trace.CommWindow | 1<<32 | 3: "window 3 (recorded stretch 2)",
		1 << 32: "4294967296", 4<<32 | 0x80000001: "19327352833", 1<<62 | 12345: "4611686018427400249"} {
		if got := trace.CommLabel(id); got != want {
			t.Errorf("CommLabel(%d) = %q, want %q", id, got, want)
		}
	}
}

package trace

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// randomEvents returns n events of every kind in turn, with arguments that
// exercise each field encoding (negative deltas, large values, zero).
func randomEvents(rng *rand.Rand, n int) ([]Event, [][]Dep) {
	evs := make([]Event, n)
	deps := make([][]Dep, n)
	t := rng.Int63n(1 << 40)
	for i := range evs {
		k := Kind(1 + i%int(NumKinds-1))
		t += rng.Int63n(100000)
		e := Event{Time: t, Kind: k}
		s := schemas[k]
		for j, f := range s.Fields {
			switch f {
			case FInt:
				e.Args[j] = rng.Int63n(1<<20) - 1<<19
			case FTask, FParallel, FRequest:
				e.Args[j] = MakeID(rng.Intn(64), 1+rng.Int63n(1<<30))
			default:
				e.Args[j] = rng.Int63n(1 << uint(rng.Intn(62)+1))
			}
		}
		if s.List {
			m := rng.Intn(5)
			for d := 0; d < m; d++ {
				deps[i] = append(deps[i], Dep{Addr: rng.Uint64(), Type: uint8(1 + rng.Intn(7))})
			}
		}
		evs[i] = e
	}
	return evs, deps
}

func writeEvents(t testing.TB, w *Writer, thread int, evs []Event, deps [][]Dep) {
	t.Helper()
	for i := range evs {
		var err error
		if evs[i].Kind == TaskDeps {
			err = w.EmitDeps(thread, evs[i].Time, evs[i].Args[0], deps[i])
		} else {
			err = w.Emit(thread, &evs[i])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestRoundTripEveryKind(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	// Every version this package writes codes the arguments its own way
	// (version 3 against the event two back of each kind; version 4 adds
	// mpi_enter's call site, which older versions read as unknown, −1).
	for _, tc := range []struct{ version, chunk int }{{1, 1000}, {2, 7}, {2, DefaultChunkEvents}, {3, 1}, {3, 7}, {3, 1000}, {3, DefaultChunkEvents},
		{4, 1}, {4, 7}, {4, 1000}, {4, DefaultChunkEvents}} {
		chunk := tc.chunk
		var buf bytes.Buffer
		w, err := NewWriter(&buf, Header{Version: tc.version, Rank: 2, NRanks: 4, Host: "node1", PID: 42, Command: []string{"./app", "-n", "3"}, ClockSrc: "synthetic"})
		if err != nil {
			t.Fatal(err)
		}
		w.SetChunkEvents(chunk)
		var want [3][]Event
		var wantDeps [3][][]Dep
		for th := 0; th < 3; th++ {
			want[th], wantDeps[th] = randomEvents(rng, 3*int(NumKinds)+th)
			writeEvents(t, w, th, want[th], wantDeps[th])
			w.SetThread(Thread{Index: th, TID: int64(1000 + th), Type: ThreadWorker})
		}
		w.String("MPI_Send")
		w.AddLocation(Location{File: "a.c", Line: 3, Col: 5})
		w.AddComm(Communicator{Index: 0, ID: 0, Name: "MPI_COMM_WORLD", Members: []int{0, 1, 2, 3}})
		w.AddClockOffset(ClockOffset{When: "init", LocalNS: 5, OffsetNS: -7, ErrorNS: 1})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "p.ptrace")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := LoadProcess(path, LoadOptions{})
		if err != nil {
			t.Fatalf("version %d chunk %d: %v", tc.version, chunk, err)
		}
		if p.Header.Version != tc.version {
			t.Errorf("version %d written, %d read", tc.version, p.Header.Version)
		}
		if len(p.Warnings) != 0 {
			t.Errorf("warnings: %v", p.Warnings)
		}
		if p.Header.Rank != 2 || p.Header.NRanks != 4 || p.Header.Host != "node1" || !reflect.DeepEqual(p.Header.Command, []string{"./app", "-n", "3"}) {
			t.Errorf("header %+v", p.Header)
		}
		for th := 0; th < 3; th++ {
			got, gotDeps := p.Decode(th, nil)
			if len(got) != len(want[th]) {
				t.Fatalf("thread %d: %d events, want %d", th, len(got), len(want[th]))
			}
			for i := range got {
				g, e := got[i], want[th][i]
				if e.Kind == TaskDeps {
					if !reflect.DeepEqual(append([]Dep{}, g.Deps(gotDeps)...), append([]Dep{}, wantDeps[th][i]...)) {
						t.Fatalf("thread %d event %d deps %v, want %v", th, i, g.Deps(gotDeps), wantDeps[th][i])
					}
					g.Args[1], g.Args[2] = 0, 0
				}
				if e.Kind == MPIEnter && tc.version < 4 {
					e.Args[1] = -1
				}
				if g != e {
					t.Fatalf("version %d chunk %d thread %d event %d (%s):\n got %+v\nwant %+v", tc.version, chunk, th, i, e.Kind, g, e)
				}
			}
		}
		if len(p.Strings) != 1 || p.Strings[0] != "MPI_Send" || p.LocationName(0) != "a.c:3:5" || len(p.Comms) != 1 || len(p.ClockOffsets) != 1 || len(p.Threads) != 3 {
			t.Errorf("tables: %+v", p.Tables)
		}
	}
}

// smallTrace writes a valid two-thread file with a few chunks.
func smallTrace(t testing.TB) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Rank: 0, NRanks: 1, ClockSrc: "synthetic"})
	if err != nil {
		t.Fatal(err)
	}
	w.SetChunkEvents(5)
	loc := w.AddLocation(Location{File: "x.c", Line: 1})
	for th := 0; th < 2; th++ {
		w.SetThread(Thread{Index: th, Type: ThreadWorker})
		it := MakeID(th, 1)
		w.E(th, ThreadBegin, 0, ThreadWorker)
		w.E(th, ImplicitTaskBegin, 1, 0, it, 2, int64(th), 2)
		for i := int64(1); i <= 6; i++ {
			task := MakeID(th, i+1)
			w.E(th, TaskCreate, 10*i, task, it, 4, loc)
			w.EmitDeps(th, 10*i, task, []Dep{{Addr: 0x1000 + uint64(i), Type: DepInout}})
			w.E(th, TaskSchedule, 10*i+1, it, 7, task)
			w.E(th, TaskSchedule, 10*i+5, task, 1, it)
		}
		w.E(th, ImplicitTaskEnd, 100, 0, it, 2, int64(th), 2)
		w.E(th, ThreadEnd, 101)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A worker's task_schedule events alternate between its implicit task and
// explicit tasks another thread created (ids 2^40 apart): version 3 codes
// each against the one two back, so the pair of ids costs a byte or two
// instead of 16.
func TestVersion3CodesAlternationCompactly(t *testing.T) {
	size := func(version int) int {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, Header{Version: version, ClockSrc: "synthetic"})
		if err != nil {
			t.Fatal(err)
		}
		implicit := int64(1)<<40 | 1
		for i := int64(0); i < 4096; i++ {
			explicit := 100 + i // created by thread 0
			tm := 1000 * (i + 1)
			if err := w.E(1, TaskSchedule, tm, implicit, 7, explicit); err != nil {
				t.Fatal(err)
			}
			if err := w.E(1, TaskSchedule, tm+500, explicit, 1, implicit); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Len()
	}
	v2, v3 := size(2), size(3)
	if v3*3 > v2 {
		t.Errorf("version 3: %d bytes, version 2: %d; want under a third", v3, v2)
	}
}

func TestValidateClean(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.ptrace")
	os.WriteFile(path, smallTrace(t), 0o644)
	ps, st, err := ValidateFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 0 {
		t.Fatalf("problems on a clean file: %v", ps)
	}
	if st.Events != 2*(4+6*4) || st.Threads != 2 {
		t.Errorf("stats %+v", st)
	}
}

// frameOffsets returns the offset of every frame of a valid file.
func frameOffsets(b []byte) []int {
	var offs []int
	for p := 0; p+frameHeaderLen <= len(b); {
		offs = append(offs, p)
		_, _, n, err := parseFrameHeader(b[p:])
		if err != nil {
			panic(err)
		}
		p += frameHeaderLen + int(n)
	}
	return offs
}

func loadBytes(t *testing.T, b []byte, opts LoadOptions) (*Process, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.ptrace")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return LoadProcess(path, opts)
}

// validateBytes validates the process file b, as a file.
func validateBytes(t *testing.T, b []byte) ([]Problem, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.ptrace")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ps, _, err := ValidateFile(path)
	return ps, err
}

func TestTruncatedEverywhere(t *testing.T) {
	b := smallTrace(t)
	offs := frameOffsets(b)
	boundary := map[int]bool{}
	for _, o := range offs {
		boundary[o] = true
	}
	for cut := 0; cut < len(b); cut++ {
		p, err := loadBytes(t, b[:cut], LoadOptions{})
		switch {
		case cut == 0:
			if err == nil || !strings.Contains(err.Error(), "empty file") {
				t.Fatalf("cut 0: %v", err)
			}
		case boundary[cut] && cut > offs[0]:
			// A cut at a frame boundary is a readable, incomplete trace.
			if err != nil {
				t.Fatalf("cut at boundary %d: %v", cut, err)
			}
			if len(p.Warnings) == 0 || !strings.Contains(p.Warnings[0], "no end frame") {
				t.Fatalf("cut at boundary %d: no incomplete-trace warning: %v", cut, p.Warnings)
			}
		default:
			var fe *FormatError
			if !errors.As(err, &fe) || !errors.Is(err, ErrTruncated) {
				t.Fatalf("cut %d: want truncation FormatError, got %v", cut, err)
			}
			if fe.Offset < 0 || fe.Offset > int64(cut) {
				t.Fatalf("cut %d: offset %d outside the file", cut, fe.Offset)
			}
			if !strings.Contains(err.Error(), "p.ptrace: offset ") {
				t.Fatalf("cut %d: error does not name file and offset: %v", cut, err)
			}
			// Salvage keeps what came before.
			if cut > offs[1] {
				if _, err := loadBytes(t, b[:cut], LoadOptions{Salvage: true}); err != nil {
					t.Fatalf("cut %d salvage: %v", cut, err)
				}
			}
		}
	}
}

func TestFlippedBytes(t *testing.T) {
	b := smallTrace(t)
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < len(b); i++ {
		c := append([]byte(nil), b...)
		c[i] ^= byte(1 + rng.Intn(255))
		_, err := loadBytes(t, c, LoadOptions{})
		if err == nil {
			t.Fatalf("flip at %d not detected", i)
		}
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("flip at %d: error without offset: %v", i, err)
		}
	}
}

func TestWrongVersionAndFormat(t *testing.T) {
	for _, h := range []Header{{Format: "ptrace", Version: 99, ClockUnit: "ns"}, {Format: "otf2", Version: 1, ClockUnit: "ns"}, {Format: "ptrace", Version: 1, ClockUnit: "ticks"}} {
		var buf bytes.Buffer
		w := &Writer{w: bufioWriter(&buf)}
		w.writeMsgpack(FrameHeader, &h)
		w.w.Flush()
		_, err := NewReader(bytes.NewReader(buf.Bytes()), "v.ptrace")
		if err == nil {
			t.Fatalf("header %+v accepted", h)
		}
		if !strings.Contains(err.Error(), "v.ptrace: offset 0 (header frame)") {
			t.Errorf("error lacks location: %v", err)
		}
	}
	if _, err := NewReader(strings.NewReader("hello, this is not a trace"), "x"); err == nil || !strings.Contains(err.Error(), "not a ptrace frame") {
		t.Errorf("garbage: %v", err)
	}
}

func TestUnknownKind(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{NRanks: 1})
	w.E(0, ThreadBegin, 5, 1)
	w.E(0, ThreadEnd, 6)
	c := w.threads[0]
	c.kinds[1] = 200 // a kind from the future
	w.Close()
	_, err := loadBytes(t, buf.Bytes(), LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "unknown event kind 200") {
		t.Fatalf("got %v", err)
	}
	var fe *FormatError
	errors.As(err, &fe)
	// The offset points at the kind byte itself.
	if buf.Bytes()[fe.Offset] != 200 {
		t.Errorf("offset %d does not point at the bad kind byte", fe.Offset)
	}
}

func TestTimeGoesBack(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{NRanks: 1})
	w.E(0, ThreadBegin, 50, 1)
	w.E(0, ThreadEnd, 40)
	w.Close()
	_, err := loadBytes(t, buf.Bytes(), LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "goes back in time") {
		t.Fatalf("got %v", err)
	}
	ps, err := validateBytes(t, buf.Bytes())
	if err != nil || len(ps) != 1 || !strings.Contains(ps[0].Message, "goes back in time") {
		t.Fatalf("validate: %v %v", ps, err)
	}
}

// OMPT's dependence types are accepted, omp_all_memory's among them (LLVM
// 17's libomp and later report it, the collector records earlier ones'
// so); other numbers are problems.
func TestValidateDepTypes(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{NRanks: 1})
	w.SetThread(Thread{Index: 0, Type: ThreadInitial})
	w.E(0, ThreadBegin, 0, 1)
	w.E(0, TaskCreate, 1, MakeID(0, 1), 0, 4, 0)
	w.EmitDeps(0, 2, MakeID(0, 1), []Dep{{Addr: 64, Type: DepIn}, {Addr: 128, Type: DepInoutset}, {Type: DepOutAllMemory},
		{Addr: ^uint64(0), Type: DepInoutAllMemory}, {Addr: 192, Type: 0}, {Addr: 256, Type: 8}, {Addr: 320, Type: 36}})
	w.Close()
	ps, err := validateBytes(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range ps {
		if strings.Contains(p.Message, "unknown type") {
			msgs = append(msgs, p.Message)
		}
	}
	want := []string{"dependence 4 has unknown type 0", "dependence 5 has unknown type 8", "dependence 6 has unknown type 36"}
	if len(msgs) != len(want) {
		t.Fatalf("problems %q, want %q", msgs, want)
	}
	for i := range want {
		if !strings.HasSuffix(msgs[i], want[i]) {
			t.Errorf("problem %q, want %q", msgs[i], want[i])
		}
	}
}

// TestValidateNonblockingCollectives: a coll_complete must complete a
// request some coll_start of the file began, on any thread.
func TestValidateNonblockingCollectives(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{NRanks: 1})
	w.SetThread(Thread{Index: 0, Type: ThreadInitial})
	w.SetThread(Thread{Index: 1, Type: ThreadUser})
	w.AddComm(Communicator{Index: 0, ID: 0, Members: []int{0}})
	w.E(0, ThreadBegin, 0, 1)
	w.E(1, ThreadBegin, 0, 5)
	w.E(1, CollComplete, 30, 4, 0, -1, 8, MakeID(0, 1)) // thread 0's start, later in the file
	w.E(0, CollStart, 10, 4, 0, -1, 8, MakeID(0, 1))
	w.E(0, CollComplete, 40, 1, 0, -1, 0, MakeID(0, 2)) // never started
	w.E(0, CollComplete, 50, 1, 0, -1, 0, -7)
	w.Close()
	ps, err := validateBytes(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range ps {
		if strings.Contains(p.Message, "coll_") {
			msgs = append(msgs, p.Message)
		}
	}
	want := []string{"request 0x2 has no coll_start", "request -0x7 has no coll_start"}
	if len(msgs) != len(want) {
		t.Fatalf("problems %q, want %q", msgs, want)
	}
	for i := range want {
		if !strings.HasSuffix(msgs[i], want[i]) {
			t.Errorf("problem %q, want %q", msgs[i], want[i])
		}
	}
}

func TestValidateReferences(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{NRanks: 1})
	w.SetThread(Thread{Index: 0, Type: ThreadInitial})
	w.E(0, ThreadBegin, 0, 1)
	w.E(0, MPIEnter, 1, 3)                        // string 3 undefined
	w.E(0, TaskSchedule, 2, MakeID(0, 9), 1, 0)   // task never created
	w.E(0, MPISend, 3, 1, 0, 5, 8, 0)             // comm 5 undefined
	w.E(0, TaskCreate, 4, MakeID(0, 1), 0, 4, 17) // location 17 undefined
	w.Close()
	ps, err := validateBytes(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range ps {
		msgs = append(msgs, p.Message)
		if p.Offset <= 0 {
			t.Errorf("problem without offset: %v", p)
		}
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"undefined string 3", "never created", "undefined communicator 5", "undefined location 17"} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
}

// A join's task argument (sync kind 256) names the thread joined, index
// + 1: no task id, checked against the thread table, as the table's
// creators are.
func TestValidateThreadJoin(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{NRanks: 1})
	w.SetThread(Thread{Index: 0, Type: ThreadInitial})
	w.SetThread(Thread{Index: 1, Type: ThreadUser, Creator: 1})
	w.SetThread(Thread{Index: 2, Type: ThreadUser, Creator: 9})
	w.E(0, ThreadBegin, 0, 1)
	w.E(1, ThreadBegin, 1, ThreadUser)
	w.E(2, ThreadBegin, 1, ThreadUser)
	w.E(1, ThreadEnd, 2)
	w.E(2, ThreadEnd, 2)
	for i, joined := range []int64{2, 0, 7} { // thread 1, unknown, no thread 6
		at := int64(3 + 2*i)
		w.E(0, SyncBegin, at, SyncThreadJoin, 0, joined, -1)
		w.E(0, SyncWaitBegin, at, SyncThreadJoin, 0, joined)
		w.E(0, SyncWaitEnd, at+1, SyncThreadJoin, 0, joined)
		w.E(0, SyncEnd, at+1, SyncThreadJoin, 0, joined, -1)
	}
	w.Close()
	ps, err := validateBytes(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range ps {
		msgs = append(msgs, p.Message)
	}
	want := []string{"thread 2: its creator, thread 8, has no thread-table entry",
		"thread 0: sync_begin: the thread joined, 7 − 1, has no thread-table entry",
		"thread 0: sync_wait_begin: the thread joined, 7 − 1, has no thread-table entry",
		"thread 0: sync_wait_end: the thread joined, 7 − 1, has no thread-table entry",
		"thread 0: sync_end: the thread joined, 7 − 1, has no thread-table entry"}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
}

func TestMissingRank(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []int{0, 2} {
		f, _ := os.Create(filepath.Join(dir, FileName(r)))
		w, _ := NewWriter(f, Header{Rank: r, NRanks: 3})
		w.Close()
		f.Close()
	}
	_, err := OpenDir(dir)
	if !errors.Is(err, ErrMissingRank) || !strings.Contains(err.Error(), "rank 1") {
		t.Fatalf("got %v", err)
	}
}

func TestStreamingReaderBoundedBuffers(t *testing.T) {
	b := smallTrace(t)
	r, err := NewReader(bytes.NewReader(b), "s")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for c, err := range r.Chunks() {
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Events) > 5 {
			t.Fatalf("chunk of %d events, writer was set to 5", len(c.Events))
		}
		n += len(c.Events)
	}
	if n != 2*(4+6*4) || !r.Complete() {
		t.Fatalf("%d events, complete=%v", n, r.Complete())
	}
}

func bufioWriter(w io.Writer) *bufio.Writer { return bufio.NewWriter(w) }

func newRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }

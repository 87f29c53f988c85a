package otf2

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptrace-dev/ptrace/trace"
)

// Trust: what an archive claims is checked before it is believed. These
// tests edit the hand-encoded archive (encode_test.go).

func wantErrHas(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one with %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

// convertAllIn converts every process of the archive at anchor and returns
// the warnings.
func convertAllIn(anchor string) ([]string, error) {
	a, err := Open(anchor)
	if err != nil {
		return nil, err
	}
	_, ws := a.Warnings()
	for i := 0; i < a.NumProcesses(); i++ {
		st, err := a.Convert(i, io.Discard)
		if err != nil {
			return ws, err
		}
		ws = append(ws, st.Warnings...)
	}
	return ws, nil
}

// withTimeout fails the test when fn does not return in time (a FIFO
// would block it forever).
func withTimeout(t *testing.T, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("hangs")
		return nil
	}
}

func TestNotRegularFiles(t *testing.T) {
	for _, name := range []string{"traces.otf2", "traces.def", "traces/0.def", "traces/1.evt"} {
		t.Run("fifo "+name, func(t *testing.T) {
			dir := t.TempDir()
			anchor := oldArchive(t, dir)
			p := filepath.Join(dir, name)
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
			err := withTimeout(t, func() error { _, err := convertAllIn(anchor); return err })
			wantErrHas(t, err, p, "not a regular file")
		})
	}
	t.Run("symlink to /dev/zero", func(t *testing.T) {
		dir := t.TempDir()
		anchor := oldArchive(t, dir)
		p := filepath.Join(dir, "traces.def")
		os.Remove(p)
		if err := os.Symlink("/dev/zero", p); err != nil {
			t.Skip(err)
		}
		err := withTimeout(t, func() error { _, err := convertAllIn(anchor); return err })
		wantErrHas(t, err, p)
	})
}

// replace swaps the first record of type typ for e.
func replace(typ uint8, e *enc) func([]defRec) []defRec {
	return func(recs []defRec) []defRec {
		for i := range recs {
			if recs[i].t == typ {
				recs[i].e = e
				break
			}
		}
		return recs
	}
}

func TestImplausibleClock(t *testing.T) {
	for _, res := range []uint64{0, math.MaxUint64 - 1, 1 << 62} {
		dir := t.TempDir()
		anchor := editedArchive(t, dir, replace(gdClockProperties, (&enc{}).c(res).c(0).c(1)))
		_, err := Open(anchor)
		wantErrHas(t, err, filepath.Join(dir, "traces.def"), "timer resolution")
	}
}

func TestUndefinedReferences(t *testing.T) {
	t.Run("region name", func(t *testing.T) {
		// MPI_Init's name refers to string 123456: a counted warning, and
		// the region is named by its id, not silently unnamed.
		anchor := editedArchive(t, t.TempDir(), replace(gdRegion,
			(&enc{}).c(0).c(123456).c(0).u8(0).c(14).c(0).c(0).c(1).u8(roleFunction).u8(paradigmMPI).c(0)))
		a, err := Open(anchor)
		if err != nil {
			t.Fatal(err)
		}
		n, ws := a.Warnings()
		if n != 1 || !strings.Contains(ws[0], "region 0 refers to undefined string 123456") {
			t.Errorf("warnings %d %q", n, ws)
		}
		if r := a.Defs.Region(0); r == nil || r.Name != "<region 0>" {
			t.Errorf("region 0: %+v", r)
		}
	})
	t.Run("communicator group", func(t *testing.T) {
		// MPI_COMM_WORLD's group is undefined: a warning, and its messages
		// are skipped with a warning naming the event file and offset.
		ws, err := convertAllIn(editedArchive(t, t.TempDir(), replace(gdComm, (&enc{}).c(0).c(11).c(77).c(math.MaxUint32))))
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(ws, "\n")
		for _, want := range []string{"communicator 0 refers to undefined group 77", "0.evt: offset", "not an MPI communicator"} {
			if !strings.Contains(all, want) {
				t.Errorf("warnings lack %q:\n%s", want, all)
			}
		}
	})
	t.Run("group of ranks outside the world", func(t *testing.T) {
		ws, err := convertAllIn(editedArchive(t, t.TempDir(), func(recs []defRec) []defRec {
			for i := range recs {
				if recs[i].t == gdGroup && i > 0 && recs[i-1].t == gdGroup {
					recs[i].e = (&enc{}).c(1).c(12).u8(4).c(2).c(0).c(5) // ranks 0 and 5 of 2
				}
			}
			return recs
		}))
		if err != nil {
			t.Fatal(err)
		}
		if all := strings.Join(ws, "\n"); !strings.Contains(all, "names ranks outside the 2-rank world") {
			t.Errorf("warnings:\n%s", all)
		}
	})
}

func TestTimesBeforeGlobalOffset(t *testing.T) {
	// A global offset after the first events: they are clamped to 0 and
	// counted, naming the file and offset; no negative time reaches the
	// converted stream.
	anchor := editedArchive(t, t.TempDir(), replace(gdClockProperties, (&enc{}).c(1_000_000_000).c(3500).c(100_000)))
	a, err := Open(anchor)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	st, err := a.Convert(0, &buf)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(st.Warnings, "\n")
	if !strings.Contains(all, "0.evt: offset") || !strings.Contains(all, "precedes the archive's global offset") {
		t.Errorf("warnings:\n%s", all)
	}
}

func TestEventCountMismatch(t *testing.T) {
	// The location definitions claim 999 events: the files' framing
	// decides, with a warning (APEX writes such counts).
	anchor := editedArchive(t, t.TempDir(), func(recs []defRec) []defRec {
		for i := range recs {
			if recs[i].t == gdLocation {
				r := uint64(0)
				if recs[i].e.b[0] != 0 {
					r = 1
				}
				recs[i].e = (&enc{}).c(r).c(10).u8(locationTypeCPU).c(999).c(r)
			}
		}
		return recs
	})
	ws, err := convertAllIn(anchor)
	if err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(ws, "\n"); !strings.Contains(all, "the location definition counts 999") {
		t.Errorf("warnings:\n%s", all)
	}
}

func TestDefinitionMemoryLimit(t *testing.T) {
	// 200 000 strings of 24 bytes: about 6 MB of definitions.
	const n = 200_000
	anchor := editedArchive(t, t.TempDir(), func(recs []defRec) []defRec {
		for i := 0; i < n; i++ {
			recs = append(recs, defRec{gdString, (&enc{}).c(uint64(1000 + i)).str("a string of 24 bytes....")})
		}
		return recs
	})
	_, err := OpenWith(anchor, Options{MemoryLimit: 1 << 20})
	wantErrHas(t, err, "traces.def", "--memory-limit")
	a, err := Open(anchor)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(filepath.Join(filepath.Dir(anchor), "traces.def"))
	if a.Defs.Memory > 3*st.Size() {
		t.Errorf("definitions of %d bytes hold %d bytes", st.Size(), a.Defs.Memory)
	}
}

// TestMillionLocations: a million locations (a million MPI processes of
// one thread, 20 MB of definitions) open within a bounded heap, far from
// the gigabyte they once took, and within the estimate charged against
// --memory-limit.
func TestMillionLocations(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 20 MB of definitions")
	}
	const n = 1_000_000
	dir := t.TempDir()
	anchor := editedArchive(t, dir, func(recs []defRec) []defRec {
		var out []defRec
		for _, r := range recs {
			switch r.t {
			case gdLocationGroup, gdLocation, gdGroup, gdComm:
				continue
			}
			out = append(out, r)
		}
		for i := uint64(0); i < n; i++ {
			out = append(out, defRec{gdString, (&enc{}).c(100 + i).str("MPI Rank " + itoa(i))})
			out = append(out, defRec{gdLocationGroup, (&enc{}).c(i).c(100 + i).u8(lgTypeProcess).c(0)})
			out = append(out, defRec{gdLocation, (&enc{}).c(i).c(10).u8(locationTypeCPU).c(100).c(i)})
		}
		return out
	})
	st, err := os.Stat(filepath.Join(dir, "traces.def"))
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	a, err := OpenWith(anchor, Options{MemoryLimit: 512 << 20})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	heap := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
	t.Logf("%d processes, %d bytes of definitions, %d bytes of heap, %d estimated", a.NumProcesses(), st.Size(), heap, a.Defs.Memory)
	if a.NumProcesses() != n {
		t.Errorf("%d processes, want %d", a.NumProcesses(), n)
	}
	if heap > 4*st.Size() || heap > a.Defs.Memory {
		t.Errorf("a million locations hold %d bytes of heap for %d bytes of definitions (estimated %d)", heap, st.Size(), a.Defs.Memory)
	}
	runtime.KeepAlive(a)
	// Under a limit below what they need, they are refused while read.
	_, err = OpenWith(anchor, Options{MemoryLimit: 64 << 20})
	wantErrHas(t, err, "traces.def", "--memory-limit")
}

func itoa(i uint64) string {
	var b [20]byte
	p := len(b)
	for {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[p:])
		}
	}
}

// TestThreadOfNoOpenMP: a CPU location that joins no OpenMP team (a
// pthread) is a thread of type unknown: its regions are converted, its
// time is left out of the breakdown, and a note says so.
func TestThreadOfNoOpenMP(t *testing.T) {
	a, err := Open(pthreadArchive(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if p := a.Process(0); p.Threads != 2 {
		t.Fatalf("process 0: %+v, want 2 threads", p)
	}
	var buf bytes.Buffer
	st, err := a.Convert(0, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if st.Unmodelled != 1 || len(st.Notes) != 1 || st.Regions != 4 {
		t.Errorf("unmodelled %d, regions %d, notes %q; want 1 thread, 4 region records, 1 note", st.Unmodelled, st.Regions, st.Notes)
	}
	p, err := trace.LoadProcessReader(&buf, "converted", trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	types := map[int]int{}
	for _, th := range p.Tables.Threads {
		types[th.Index] = th.Type
	}
	if types[0] != trace.ThreadInitial || types[1] != trace.ThreadUnknown {
		t.Errorf("thread types %v, want initial and unknown", types)
	}
}

// TestSalvageEvents: an event file cut inside a record fails the
// conversion with its file and offset; with Options.Salvage the location
// keeps the records before the cut, and a missing event file is a location
// without events, each one warning, the same in both passes.
func TestSalvageEvents(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(p string) error
	}{
		{"cut", func(p string) error {
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, st.Size()-3) // inside the last records
		}},
		{"missing", os.Remove},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			anchor := oldArchive(t, dir)
			evt := filepath.Join(dir, "traces", "1.evt")
			if err := c.damage(evt); err != nil {
				t.Fatal(err)
			}
			a, err := Open(anchor)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Convert(1, io.Discard); err == nil || !strings.Contains(err.Error(), evt) {
				t.Fatalf("without salvage: %v, want an error naming %s", err, evt)
			}
			a, err = OpenWith(anchor, Options{Salvage: true})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			st, err := a.Convert(1, &buf)
			if err != nil {
				t.Fatalf("with salvage: %v", err)
			}
			if st.Salvaged != 1 || len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], evt) || !strings.Contains(st.Warnings[0], "--salvage") {
				t.Errorf("salvaged %d, warnings %q; want 1 naming %s", st.Salvaged, st.Warnings, evt)
			}
			p, err := trace.LoadProcessReader(&buf, "converted", trace.LoadOptions{})
			if err != nil {
				t.Fatalf("the salvaged conversion does not load: %v", err)
			}
			if c.name == "cut" && p.NumEvents() == 0 {
				t.Error("the records before the cut are lost")
			}
		})
	}
}

// TestAnchorSubstrates: an archive whose files are not one per location
// (Score-P's SIONlib containers, OTF2's substrate NONE) or compressed is
// refused with what it is and, for SIONlib, how to record one ptrace reads.
func TestAnchorSubstrates(t *testing.T) {
	for _, c := range []struct {
		at   int
		v    byte
		want string
	}{
		{28, 2, "SCOREP_TRACING_USE_SION=false"},
		{28, 3, "substrate NONE"},
		{28, 9, "file substrate 9 is not supported"},
		{29, 2, "compressed archives (compression 2"},
	} {
		dir := t.TempDir()
		anchor := oldArchive(t, dir)
		b, err := os.ReadFile(anchor)
		if err != nil {
			t.Fatal(err)
		}
		if b[28] != substratePOSIX || b[29] != compressionNone {
			t.Fatal("the hand encoder's anchor moved its substrate")
		}
		b[c.at] = c.v
		if err := os.WriteFile(anchor, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = Open(anchor)
		wantErrHas(t, err, anchor, c.want)
	}
}

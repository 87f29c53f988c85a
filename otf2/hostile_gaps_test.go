package otf2

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptrace-dev/ptrace/trace"
)

// Trust for the records of today's additions (gaps.go, the buffer
// flushes): their counts are claims of the file, and no count makes the
// conversion quadratic.

// rank0Archive writes oldArchive with a second code region (id 6, "old.c"'s
// user function) and rank 0's event file (and, when ld is set, its local
// definitions) written by ev (ld): at(ns) stamps a record ns after the
// global offset.
func rank0Archive(t testing.TB, ev func(at func(ns uint64) *file), ld func(f *file)) string {
	dir := t.TempDir()
	anchor := editedArchive(t, dir, func(r []defRec) []defRec {
		return append(r, defRec{gdRegion, (&enc{}).c(6).c(6).c(0).u8(0).c(14).c(0).c(0).c(6).u8(roleFunction).u8(paradigmUser).c(0)})
	})
	const chunk = 256 << 10
	f := newFile(chunk)
	ev(func(ns uint64) *file { return f.time(1000 + ns) })
	if err := os.WriteFile(filepath.Join(dir, "traces", "0.evt"), f.bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if ld != nil {
		g := newFile(chunk)
		ld(g)
		if err := os.WriteFile(filepath.Join(dir, "traces", "0.def"), g.bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return anchor
}

// convertTimed converts rank 0 of the archive and fails when it takes over
// 3 s (each case is ~0.1 s; each took 17 s or more before its fix).
func convertTimed(t *testing.T, anchor string) *Stats {
	t.Helper()
	a, err := Open(anchor)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	st, err := a.Convert(0, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("conversion took %v", d)
	}
	return st
}

const hostileN = 200_000

// A deep stack of code regions never left, and as many Leaves of a code
// region that is not open: each Leave scanned the whole stack for its
// Enter (pass 1's code-region stack, gaps.go).
func TestUnmatchedLeavesLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 400 k records")
	}
	convertTimed(t, rank0Archive(t, func(at func(uint64) *file) {
		for i := uint64(0); i < hostileN; i++ {
			at(10+i).single(EvEnter, (&enc{}).c(5))
		}
		for i := uint64(0); i < hostileN; i++ {
			at(10+hostileN+i).single(EvLeave, (&enc{}).c(6))
		}
	}, nil))
}

// Many recording gaps, then many code regions entered after all of them
// and never left, with recording switched off once more at the end: each
// region looked through every Off before its own.
func TestUnleftRegionsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 600 k records")
	}
	st := convertTimed(t, rank0Archive(t, func(at func(uint64) *file) {
		for i := uint64(0); i < hostileN; i++ {
			at(10+2*i).rec(EvMeasurementOnOff, (&enc{}).u8(measurementOff))
			at(11+2*i).rec(EvMeasurementOnOff, (&enc{}).u8(measurementOn))
		}
		for i := uint64(0); i < hostileN; i++ {
			at(10+2*hostileN+i).single(EvEnter, (&enc{}).c(5))
		}
		at(10+3*hostileN).rec(EvMeasurementOnOff, (&enc{}).u8(measurementOff))
		at(20+3*hostileN).single(EvEnter, (&enc{}).c(6))
	}, nil))
	want := "(200000 regions never left after recording was switched off in all)"
	found := false
	for _, w := range st.Warnings {
		found = found || strings.Contains(w, want)
	}
	if !found || len(st.Gaps) != hostileN+1 {
		t.Errorf("%d gaps, warnings %q; want %d gaps and %q", len(st.Gaps), st.Warnings, hostileN+1, want)
	}
}

// Buffer flushes whose stop time lies beyond the last of many clock
// intervals: each flush walked the timeline's cursor over every interval
// to its stop time, and the next record walked it back.
func TestFlushStopTimesLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 200 k records")
	}
	convertTimed(t, rank0Archive(t, func(at func(uint64) *file) {
		for i := uint64(0); i < hostileN; i++ {
			at(10+i).rec(EvBufferFlush, (&enc{}).full(math.MaxUint64-5))
		}
	}, func(g *file) {
		for i := uint64(0); i < hostileN; i++ {
			g.rec(ldClockOffset, (&enc{}).full(1000+10*i).c(0).full(0))
		}
	}))
}

// A flush's stop time is corrected in the interval that holds it, as a
// record at that time would be, and leaves the records' own correction
// alone.
func TestFlushStopTimeInterval(t *testing.T) {
	// offset 0 at tick 0, +100 at 1000, +100 at 2000: a slope of 0.1, then none
	offs := []ClockOffset{{Time: 0}, {Time: 1000, Offset: 100}, {Time: 2000, Offset: 100}}
	var st Stats
	tl := newTimeline(clock{res: 1_000_000_000}, offs, "f", &st)
	if got := tl.ns(500, "f", 0); got != 550 {
		t.Fatalf("record at 500: %d, want 550", got)
	}
	for _, c := range []struct {
		stop uint64
		want int64
	}{{1500, 1600}, {800, 880}, {100, 550}, {math.MaxUint64, 550}} {
		if got := tl.attrNS(c.stop, 550); got != c.want {
			t.Errorf("stop %d: %d, want %d", c.stop, got, c.want)
		}
		if tl.cur != 0 {
			t.Errorf("stop %d: the records' cursor moved to interval %d", c.stop, tl.cur)
		}
	}
	if got := tl.ns(1500, "f", 0); got != 1600 {
		t.Errorf("record at 1500: %d, want 1600", got)
	}
}

// Many recording gaps in a process of many communicators: each stretch's
// copy of a communicator is made when a record uses it, not for every
// stretch and communicator (2 000 gaps of 51 communicators made 102 k
// copies; 20 k gaps a table over the trace's limit, the conversion
// refused). A send after the last gap goes on its communicator's copy of
// that stretch, and a collective there on another's.
func TestManyGapsFewCopies(t *testing.T) {
	const gaps = 2000
	dir := t.TempDir()
	anchor := editedArchive(t, dir, func(r []defRec) []defRec {
		for id := uint64(1); id <= 50; id++ {
			// a child of MPI_COMM_WORLD: its id is OTF2's + 1
			r = append(r, defRec{gdComm, (&enc{}).c(id).c(11).c(1).c(0)})
		}
		return r
	})
	f := newFile(256 << 10)
	at := func(ns uint64) *file { return f.time(1000 + ns) }
	at(0).single(EvEnter, (&enc{}).c(0))
	at(1000).single(EvLeave, (&enc{}).c(0))
	for i := uint64(0); i < gaps; i++ {
		at(2000+10*i).rec(EvMeasurementOnOff, (&enc{}).u8(measurementOff))
		at(2005+10*i).rec(EvMeasurementOnOff, (&enc{}).u8(measurementOn))
	}
	end := uint64(2000 + 10*gaps)
	at(end).single(EvEnter, (&enc{}).c(1))
	at(end+10).rec(EvMpiSend, (&enc{}).c(1).c(0).c(7).c(42))
	at(end+20).single(EvLeave, (&enc{}).c(1))
	at(end+30).single(EvEnter, (&enc{}).c(3))
	at(end+30).rec(EvMpiCollectiveBegin, &enc{})
	at(end+40).rec(EvMpiCollectiveEnd, (&enc{}).u8(11).c(7).c(math.MaxUint32).c(8).c(8))
	at(end+50).single(EvLeave, (&enc{}).c(3))
	at(end+1000).single(EvEnter, (&enc{}).c(4))
	at(end+2000).single(EvLeave, (&enc{}).c(4))
	if err := os.WriteFile(filepath.Join(dir, "traces", "0.evt"), f.bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Open(anchor)
	if err != nil {
		t.Fatal(err)
	}
	st, err := a.Convert(0, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Gaps) != gaps {
		t.Fatalf("%d gaps, want %d", len(st.Gaps), gaps)
	}
	var b bytes.Buffer
	if _, err := a.ConvertCut(0, &b, MergeGaps(st.Gaps)); err != nil {
		t.Fatal(err)
	}
	p, err := trace.LoadProcessReader(&b, "rank 0", trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Comms) != 51+2 {
		t.Errorf("%d communicators, want the 51 and the 2 copies used", len(p.Comms))
	}
	var comms []int64
	sc := p.Scan(0, nil)
	for sc.Next() {
		e := sc.Event()
		ci := map[trace.Kind]int{trace.MPISend: 2, trace.CollBegin: 1}
		if k, ok := ci[e.Kind]; ok {
			cm, ok := p.CommByIndex(e.Args[k])
			if !ok {
				t.Fatalf("%s on communicator %d, which the table lacks", e.Kind, e.Args[k])
			}
			comms = append(comms, cm.ID&^trace.CommStretch>>32, cm.ID&(1<<32-1))
		}
	}
	if want := []int64{gaps, 0, gaps, 8}; !slices.Equal(comms, want) {
		t.Errorf("send and collective on (stretch, communicator) %v, want %v", comms, want)
	}
}

// gapsArchive writes oldArchive with rank 0's events replaced: MPI_Init
// 0–1000, then n recording gaps of 5 ns every 10 ns from 2000, then
// MPI_Finalize 1000 ns after the last. Rank 1 is oldArchive's.
func gapsArchive(t testing.TB, dir string, n uint64) string {
	anchor := oldArchive(t, dir)
	f := newFile(256 << 10)
	at := func(ns uint64) *file { return f.time(1000 + ns) }
	at(0).single(EvEnter, (&enc{}).c(0))
	at(1000).single(EvLeave, (&enc{}).c(0))
	for i := uint64(0); i < n; i++ {
		at(2000+10*i).rec(EvMeasurementOnOff, (&enc{}).u8(measurementOff))
		at(2005+10*i).rec(EvMeasurementOnOff, (&enc{}).u8(measurementOn))
	}
	at(3000+10*n).single(EvEnter, (&enc{}).c(4))
	at(4000+10*n).single(EvLeave, (&enc{}).c(4))
	if err := os.WriteFile(filepath.Join(dir, "traces", "0.evt"), f.bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return anchor
}

// Code regions 5 and 6 entered in turn, then as many Leaves of 5: each
// Leave keeps the regions entered after its region's innermost entry open
// (nesting.go), so each wrote them all again, a quadratic output (a stream
// of 10¹⁰ events from 400 k records); only a Leave within maxRenest
// regions of the top is re-nested, the others are skipped.
func TestRenestBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 400 k records")
	}
	const n = hostileN / 2
	anchor := rank0Archive(t, func(at func(uint64) *file) {
		for i := uint64(0); i < n; i++ {
			at(10+2*i).single(EvEnter, (&enc{}).c(5))
			at(11+2*i).single(EvEnter, (&enc{}).c(6))
		}
		for i := uint64(0); i < n; i++ {
			at(10+2*n+i).single(EvLeave, (&enc{}).c(5))
		}
	}, nil)
	a, err := Open(anchor)
	if err != nil {
		t.Fatal(err)
	}
	var cw countingWriter
	start := time.Now()
	if _, err := a.Convert(0, &cw); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second || cw.n > 64<<20 {
		t.Errorf("conversion took %v and wrote %d bytes", d, cw.n)
	}
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(b []byte) (int, error) { w.n += int64(len(b)); return len(b), nil }

// A team end and a join whose team begin and fork the archive lacks
// (recording switched on inside a team of one: its fork fell into the gap)
// are skipped with a counted warning naming the file and offset, not
// silently.
func TestOrphanTeamEndJoin(t *testing.T) {
	st := convertTimed(t, rank0Archive(t, func(at func(uint64) *file) {
		at(10).single(EvEnter, (&enc{}).c(5))
		at(20).rec(EvThreadTeamEnd, (&enc{}).c(0))
		at(30).rec(EvThreadJoin, (&enc{}).u8(paradigmOpenMP))
		at(40).single(EvLeave, (&enc{}).c(5))
	}, nil))
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "0.evt: offset ") ||
		!strings.Contains(st.Warnings[0], "ThreadTeamEnd without its ThreadTeamBegin") || !strings.Contains(st.Warnings[0], "(2 records without their") {
		t.Errorf("warnings %q, want one naming the team end, counting it and the join", st.Warnings)
	}
}

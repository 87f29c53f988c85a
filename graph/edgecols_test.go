package graph

import (
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// edgeRow is one row of RemoteEdges, whole.
type edgeRow struct {
	th, pproc, pth int32
	ev, pev, pt    int64
	kind, pkind    trace.Kind
}

// randomRow returns a row whose values are mostly what a trace gives
// (small threads and ranks, nearby events and times) and sometimes any
// int64 or int32 at all.
func randomRow(rng *rand.Rand, k int) edgeRow {
	wild := func(near int64) int64 {
		switch rng.IntN(40) {
		case 0:
			return math.MinInt64 + rng.Int64N(3)
		case 1:
			return math.MaxInt64 - rng.Int64N(3)
		case 2:
			return rng.Int64()
		}
		return near
	}
	small := func(n int) int32 {
		switch rng.IntN(40) {
		case 0:
			return math.MaxInt32 - rng.Int32N(2)
		case 1:
			return math.MinInt32 + rng.Int32N(2)
		}
		return rng.Int32N(int32(n))
	}
	return edgeRow{
		th: small(4), pproc: max(small(300), 0), pth: small(4),
		ev: wild(int64(k) * 5), pev: wild(int64(k)*5 + rng.Int64N(2000) - 1000), pt: wild(int64(k)*1000 - rng.Int64N(1e6)),
		kind: trace.Kind(rng.IntN(int(trace.NumKinds))), pkind: trace.Kind(rng.IntN(int(trace.NumKinds))),
	}
}

// randomEdges returns n rows of randomRow appended, and the rows.
func randomEdges(rng *rand.Rand, n int) (*RemoteEdges, []edgeRow) {
	r := &RemoteEdges{}
	want := make([]edgeRow, n)
	for k := range want {
		want[k] = randomRow(rng, k)
		w := &want[k]
		r.Append(w.th, w.ev, w.kind, w.pproc, w.pth, w.pev, w.pkind, w.pt)
	}
	return r, want
}

func (r *RemoteEdges) row(k int) edgeRow {
	return edgeRow{r.ThreadAt(k), r.PredProcAt(k), r.PredThreadAt(k), r.EventAt(k), r.PredEventAt(k), r.PredTimeAt(k), r.KindAt(k), r.PredKindAt(k)}
}

// TestRemoteEdgesExact: whatever a row holds (any int64 event or time,
// any thread or rank, more kind pairs than a byte names) reads back
// exactly, appended (a Late Receiver's rows) or made as the exchange
// makes them (own time first, the predecessor set later, in any order).
func TestRemoteEdgesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	const n = 5000
	want := make([]edgeRow, n)
	var a RemoteEdges
	for k := range want {
		want[k] = randomRow(rng, k)
		w := &want[k]
		a.Append(w.th, w.ev, w.kind, w.pproc, w.pth, w.pev, w.pkind, w.pt)
	}
	// The exchange's way: the rows first, each block's time base its
	// first row's own time, then the predecessors in no order.
	var b RemoteEdges
	b.Reserve(n)
	for k := range want {
		w := &want[k]
		b.thread.Append(int64(w.th))
		b.event.Append(w.ev)
		b.kinds.Append(w.kind, 0)
		b.predProc.Append(0)
		b.predThread.Append(0)
		b.predEvent.appendUnset()
		b.predTime.Append(int64(k) * 1000)
	}
	for k := range n {
		if b.PredProcAt(k) != -1 {
			t.Fatalf("row %d has predecessor %d before any is set", k, b.PredProcAt(k))
		}
	}
	for _, k := range rng.Perm(n) {
		w := &want[k]
		b.setPred(k, &pred{time: w.pt, proc: w.pproc, thread: w.pth, event: w.pev, kind: w.pkind, ok: true})
	}
	for _, r := range []*RemoteEdges{&a, &b} {
		if r.Len() != n {
			t.Fatalf("%d rows, want %d", r.Len(), n)
		}
		for k := range want {
			if got := r.row(k); got != want[k] {
				t.Fatalf("row %d: %+v, want %+v", k, got, want[k])
			}
		}
	}
	// Rows appended to rows whose times went keep none; the others stay.
	b.DropPredTimes()
	b.AppendRows(&a)
	if b.HasPredTimes() || b.Len() != 2*n {
		t.Fatalf("after DropPredTimes and AppendRows: times %v, %d rows", b.HasPredTimes(), b.Len())
	}
	for k := range 2 * n {
		w, g := want[k%n], b.row2(k)
		w.pt = 0
		if g != w {
			t.Fatalf("row %d: %+v, want %+v", k, g, w)
		}
	}
}

// row2 is row without the predecessor's time.
func (r *RemoteEdges) row2(k int) edgeRow {
	return edgeRow{r.ThreadAt(k), r.PredProcAt(k), r.PredThreadAt(k), r.EventAt(k), r.PredEventAt(k), 0, r.KindAt(k), r.PredKindAt(k)}
}

// TestRemoteEdgesDropUnmatched: the rows without a predecessor go, the
// others keep their values and order.
func TestRemoteEdgesDropUnmatched(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 2))
	const n = 1000
	var r RemoteEdges
	var kept []edgeRow
	for k := range n {
		w := randomRow(rng, k)
		if k%7 == 3 {
			w.pproc = -1
		} else {
			kept = append(kept, w)
		}
		r.Append(w.th, w.ev, w.kind, w.pproc, w.pth, w.pev, w.pkind, w.pt)
	}
	r.dropUnmatched()
	if r.Len() != len(kept) {
		t.Fatalf("%d rows, want %d", r.Len(), len(kept))
	}
	for k := range kept {
		if got := r.row(k); got != kept[k] {
			t.Fatalf("row %d: %+v, want %+v", k, got, kept[k])
		}
	}
}

// memSpill is a Spiller in memory; failRead makes its reads fail, and
// so does countReads once okReads of them were served.
type memSpill struct {
	b          []byte
	failRead   bool
	countReads bool
	okReads    int
}

func (m *memSpill) Append(p []byte) (int64, error) {
	at := int64(len(m.b))
	m.b = append(m.b, p...)
	return at, nil
}

func (m *memSpill) ReadAt(p []byte, off int64) (int, error) {
	if m.countReads {
		if m.okReads == 0 {
			return 0, errors.New("I/O error")
		}
		m.okReads--
	}
	if m.failRead || off+int64(len(p)) > int64(len(m.b)) {
		return 0, io.ErrUnexpectedEOF
	}
	return copy(p, m.b[off:]), nil
}

// TestRemoteEdgesPark: the predecessors' times parked in a spill file
// read back exactly (those kept aside too), the other columns meanwhile
// unchanged; a failed read back is an error, not wrong times.
func TestRemoteEdgesPark(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 3))
	const n = 3000
	r, want := randomEdges(rng, n)
	f := &memSpill{}
	f.Append(make([]byte, 17)) // not at the file's start
	if err := r.ParkPredTimes(f); err != nil {
		t.Fatal(err)
	}
	if r.predTime.off != nil || len(f.b) < 17+4*n {
		t.Fatalf("parked: %d offsets in memory, %d bytes in the file", len(r.predTime.off), len(f.b))
	}
	for k := range want {
		w := want[k]
		w.pt = 0
		if got := r.row2(k); got != w {
			t.Fatalf("row %d while parked: %+v, want %+v", k, got, w)
		}
	}
	if err := r.UnparkPredTimes(); err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if got := r.row(k); got != want[k] {
			t.Fatalf("row %d: %+v, want %+v", k, got, want[k])
		}
	}
	f.failRead = true
	if err := r.ParkPredTimes(f); err != nil {
		t.Fatal(err)
	}
	if err := r.UnparkPredTimes(); err == nil {
		t.Fatal("a failed read back gave no error")
	}
}

// TestRemoteEdgesParkRows: the rows' columns parked in a spill file read
// back exactly (values kept aside and wide kind pairs too), whether the
// predecessors' times are parked beside them or not; rows append after;
// a failed read back is an error; rows too few to be worth the file stay.
func TestRemoteEdgesParkRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 7))
	for _, n := range []int{10, 3000, 9000} {
		r, want := randomEdges(rng, n)
		f := &memSpill{}
		f.Append(make([]byte, 5))
		withTimes := n == 9000
		if withTimes {
			if err := r.ParkPredTimes(f); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.ParkRows(f); err != nil {
			t.Fatal(err)
		}
		if parked := r.rowsParked; parked != (n > 10) {
			t.Fatalf("%d rows: parked %v", n, parked)
		}
		if r.Len() != n {
			t.Fatalf("%d rows parked: Len %d", n, r.Len())
		}
		if n > 10 && (r.kinds.code != nil || r.thread.Bytes() != 0 || r.predEvent.off.Bytes() != 0) {
			t.Fatalf("%d rows parked, still in memory", n)
		}
		if err := r.UnparkRows(); err != nil {
			t.Fatal(err)
		}
		if withTimes {
			if err := r.UnparkPredTimes(); err != nil {
				t.Fatal(err)
			}
		}
		checkRowsAppend(t, r, want, rng)
		if n > 10 {
			if err := r.ParkRows(f); err != nil {
				t.Fatal(err)
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Error("an append to parked rows did not panic")
					}
				}()
				r.Append(0, 0, 0, 0, 0, 0, 0, 0)
			}()
			f.failRead = true
			if err := r.UnparkRows(); err == nil {
				t.Fatal("a failed read back gave no error")
			}
		}
	}
}

// fullSpill is a memSpill whose appends fail once left of them were
// served (a full disk): a park that fails midway.
type fullSpill struct {
	memSpill
	left int
}

func (f *fullSpill) Append(p []byte) (int64, error) {
	if f.left == 0 {
		return 0, errors.New("no space left on device")
	}
	f.left--
	return f.memSpill.Append(p)
}

// TestRemoteEdgesParkRowsFull: rows whose park fails after some of their
// columns went to the file (each of its six writes failing in turn) are
// an error, yet UnparkRows brings those back and keeps the others: every
// row reads as before, and rows append after.
func TestRemoteEdgesParkRowsFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 11))
	for left := 0; left <= 6; left++ {
		r, want := randomEdges(rng, 3000)
		f := &fullSpill{left: left}
		err := r.ParkRows(f)
		if (err != nil) != (left < 6) {
			t.Fatalf("%d writes served: ParkRows err = %v", left, err)
		}
		if r.Len() != len(want) {
			t.Fatalf("%d writes served: Len %d, want %d", left, r.Len(), len(want))
		}
		if err := r.UnparkRows(); err != nil {
			t.Fatalf("%d writes served: UnparkRows: %v", left, err)
		}
		for k := range want {
			if got := r.row(k); got != want[k] {
				t.Fatalf("%d writes served: row %d: %+v, want %+v", left, k, got, want[k])
			}
		}
		extra := randomRow(rng, len(want))
		r.Append(extra.th, extra.ev, extra.kind, extra.pproc, extra.pth, extra.pev, extra.pkind, extra.pt)
		if got := r.row(len(want)); got != extra {
			t.Fatalf("%d writes served: appended after: %+v, want %+v", left, got, extra)
		}
	}
}

// TestRemoteEdgesUnparkPreds: parked rows' predecessors read back alone
// answer PredProcAt, PredThreadAt and PredEventAt while the rest stays
// parked; ParkRows parks them again (even when they alone are under
// rowsParkMin, as a process's of 3000 rows: the rows were worth the
// file), and UnparkRows brings back every column after; a failed read of
// the predecessors is an error.
func TestRemoteEdgesUnparkPreds(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 13))
	for _, n := range []int{3000, 9000} {
		r, want := randomEdges(rng, n)
		if n == 3000 {
			// A trace's rows: a byte a thread, rank and kind pair, 2 for
			// each event (8 bytes a row, 4 of them the predecessors').
			r, want = &RemoteEdges{}, make([]edgeRow, n)
			for k := range want {
				want[k] = edgeRow{th: 0, ev: int64(k), kind: trace.MPIRecv, pproc: 1, pth: 0, pev: int64(k), pkind: trace.MPISend, pt: int64(k)}
				w := &want[k]
				r.Append(w.th, w.ev, w.kind, w.pproc, w.pth, w.pev, w.pkind, w.pt)
			}
			if pb := r.predProc.Bytes() + r.predThread.Bytes() + r.predEvent.off.Bytes(); r.rowBytes() < rowsParkMin || pb >= rowsParkMin {
				t.Fatalf("%d rows of %d bytes, %d of predecessors", n, r.rowBytes(), pb)
			}
		}
		f := &memSpill{}
		if err := r.ParkRows(f); err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			if err := r.UnparkPreds(); err != nil {
				t.Fatal(err)
			}
			if r.thread.Bytes() != 0 || r.event.off.Bytes() != 0 || r.kinds.code != nil {
				t.Fatalf("%d rows, round %d: the rows' own columns came back with the predecessors", n, round)
			}
			for k := range want {
				w := want[k]
				if pp, pth, pev := r.PredProcAt(k), r.PredThreadAt(k), r.PredEventAt(k); pp != w.pproc || pth != w.pth || pev != w.pev {
					t.Fatalf("%d rows, round %d, row %d: predecessor %d %d %d, want %d %d %d", n, round, k, pp, pth, pev, w.pproc, w.pth, w.pev)
				}
			}
			if err := r.ParkRows(f); err != nil {
				t.Fatal(err)
			}
			if b := r.predProc.Bytes() + r.predThread.Bytes() + r.predEvent.off.Bytes(); b != 0 {
				t.Fatalf("%d rows, round %d: %d bytes of predecessors still in memory after ParkRows", n, round, b)
			}
		}
		if err := r.UnparkPreds(); err != nil {
			t.Fatal(err)
		}
		if err := r.UnparkRows(); err != nil {
			t.Fatal(err)
		}
		if r.rowsParked || r.thread.Parked() || r.predProc.Parked() || r.kindsPk != nil {
			t.Fatalf("%d rows: still parked after UnparkRows", n)
		}
		checkRowsAppend(t, r, want, rng)
		if err := r.ParkRows(f); err != nil {
			t.Fatal(err)
		}
		f.failRead = true
		if err := r.UnparkPreds(); err == nil {
			t.Fatalf("%d rows: a failed read of the predecessors gave no error", n)
		}
	}
}

// checkRowsAppend checks that r holds the rows want, then that a row
// appended after them reads back.
func checkRowsAppend(t *testing.T, r *RemoteEdges, want []edgeRow, rng *rand.Rand) {
	t.Helper()
	n := len(want)
	for k := range want {
		if got := r.row(k); got != want[k] {
			t.Fatalf("%d rows, row %d: %+v, want %+v", n, k, got, want[k])
		}
	}
	extra := randomRow(rng, n)
	r.Append(extra.th, extra.ev, extra.kind, extra.pproc, extra.pth, extra.pev, extra.pkind, extra.pt)
	if got := r.row(n); got != extra {
		t.Fatalf("%d rows: appended after: %+v, want %+v", n, got, extra)
	}
}

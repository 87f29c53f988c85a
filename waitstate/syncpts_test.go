package waitstate

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// The points' columns (and their encoding before applyNotes) give back every field of every point exactly:
// small and wide values, a thread past a byte, an event past 32 bits,
// MPI_Init's (the largest index) among a thread's growing ones, waits and
// completions kept in the wide map (wideMark), sets and lists in with;
// and the columns of a one-thread process of growing calls and events
// and small fields are under half of the 24-byte points.
func TestSyncCols(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var ss []syncPt
	ev := int64(0)
	for k := range 5000 {
		ev += 1 + r.Int64N(6)
		s := syncPt{call: int32(k), th: uint16(k / 2000), with: int32(r.IntN(64)) - 2, pat: Pattern(r.IntN(int(NumPatterns)))}
		switch k % 500 {
		case 0:
			s.th, s.call = 40000, math.MaxInt32
			ev = 1<<39 + int64(k)
		case 7:
			ev = evMax // MPI_Init's
		case 9:
			s.with = math.MinInt32
		}
		s.evLo, s.evHi = uint32(ev), uint8(ev>>32)
		s.wait, s.compl = int32(r.Int64N(1<<20)), int32(r.Int64N(300))
		if k%97 == 0 {
			s.wait, s.compl = wideMark, math.MaxInt32
		}
		ss = append(ss, s)
	}
	// Encoded as addSyncs keeps a process's own points: the same back.
	if got := readPts(appendPts(nil, ss), nil); !slices.Equal(got, ss) {
		t.Error("points encoded and read back differ")
	}
	c := makeSyncCols(ss)
	if c.len() != len(ss) {
		t.Fatalf("%d points, want %d", c.len(), len(ss))
	}
	for j := range ss {
		got := c.at(int32(j))
		if got != ss[j] {
			t.Fatalf("point %d: %+v, want %+v", j, got, ss[j])
		}
		if c.callAt(int32(j)) != ss[j].call || c.thAt(int32(j)) != ss[j].th || c.eventAt(int32(j)) != ss[j].event() {
			t.Fatalf("point %d: call, thread or event wrong", j)
		}
		if want := causeOf(&ss[j]); c.causeAt(int32(j)) != want {
			t.Fatalf("point %d: cause %d, want %d", j, c.causeAt(int32(j)), want)
		}
	}
	// A one-thread process: calls and events growing, small fields.
	ss = ss[:0]
	ev = 0
	for k := range 100000 {
		ev += 2 + int64(k%5)
		ss = append(ss, syncPt{call: int32(k), with: int32(k % 64), wait: int32(k % 100000), compl: int32(k % 1000), evLo: uint32(ev), pat: LateSender})
	}
	c = makeSyncCols(ss)
	if n := c.bytes(); n > 12*len(ss) {
		t.Errorf("columns of %d points are %d bytes, want at most 12 a point", len(ss), n)
	}
	for j := range ss {
		if c.at(int32(j)) != ss[j] {
			t.Fatalf("point %d differs", j)
		}
	}
}

// A notification reads back as written, at the ends of each field's
// range and with a Late Receiver's flagged thread; one cut short anywhere
// is refused.
func TestNotes(t *testing.T) {
	vals := []noteVal{
		{0, 0, 0, noteSend, 0, 0},
		{63, 2 | lrFlag, 150_000, noteRecv, 17, 5_000_000_000},
		{math.MaxInt32, -1, math.MinInt64, noteLatest, -1, math.MinInt64},
		{-5, math.MaxInt32, math.MaxInt64, noteRoot, math.MaxInt32, math.MaxInt64},
	}
	var b []byte
	for _, x := range vals {
		b = appendNote(b, x.proc, x.th, x.ev, x.kind, x.from, x.t)
	}
	if n := len(appendNote(nil, 63, 0|lrFlag, 150_000, noteRecv, 17, 5_000_000_000)); n > 13 {
		t.Errorf("a pure-MPI notification is %d bytes, want at most 13", n)
	}
	for k := 0; k < len(b); {
		x, n := readNote(b[k:])
		if n == 0 {
			t.Fatalf("note at %d refused", k)
		}
		if m := noteLen(b[k:]); m != n {
			t.Errorf("note at %d: length %d, read %d", k, m, n)
		}
		if x != vals[0] {
			t.Errorf("note at %d: %+v, want %+v", k, x, vals[0])
		}
		vals = vals[1:]
		for cut := 0; cut < n; cut++ {
			if noteLen(b[k:k+cut]) != 0 {
				t.Errorf("note at %d cut to %d bytes has a length", k, cut)
			}
			if _, m := readNote(b[k : k+cut]); m != 0 {
				t.Errorf("note at %d cut to %d bytes read as %d", k, cut, m)
			}
		}
		k += n
	}
	if len(vals) != 0 {
		t.Errorf("%d notes not read", len(vals))
	}
	// A varint of more than 32 bits where 32 are read.
	bad := appendNote(nil, 0, 0, 0, 0, 0, 0)
	bad = append([]byte{0xff, 0xff, 0xff, 0xff, 0x7f}, bad[1:]...)
	if _, n := readNote(bad); n != 0 {
		t.Error("a process past 32 bits read")
	}
}

// sortSyncs is a stable sort by thread, call and event, whatever runs
// its input has: long or short ones on either side of a merge.
func TestSortSyncsStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := &delays{}
	for n := range 300 {
		ss := make([]syncPt, n)
		up := rng.IntN(4) // how often a point goes on its run: of 4
		for j := range ss {
			// with is the input order, which the sort keeps among equals.
			ss[j] = syncPt{th: uint16(rng.IntN(2)), call: int32(rng.IntN(6)) - 2, evLo: uint32(rng.IntN(4)), evHi: uint8(rng.IntN(2)), with: int32(j)}
			if j > 0 && rng.IntN(4) < up {
				p := ss[j-1]
				ss[j] = syncPt{th: p.th, call: p.call + int32(rng.IntN(2)), evLo: p.evLo + uint32(rng.IntN(2)), evHi: p.evHi, with: int32(j)}
			}
		}
		want := slices.Clone(ss)
		slices.SortStableFunc(want, func(x, y syncPt) int {
			return cmp.Or(cmp.Compare(x.th, y.th), cmp.Compare(x.call, y.call), cmp.Compare(x.event(), y.event()))
		})
		d.sortSyncs(ss)
		if !slices.Equal(ss, want) {
			t.Fatalf("%d points: sortSyncs %v, want %v", n, ss, want)
		}
	}
}

// tasksBelow and syncCols.below find what a bisection finds, whatever
// their hint: before the answer, on it, after it, out of range; on keys
// with repeats (a waiter's several points, a call's several points).
func TestGallopSearches(t *testing.T) {
	for n := 0; n <= 40; n++ {
		ts := make([]task, n)
		ss := make([]syncPt, n)
		for j := range n {
			// Two items a key, the waiter or thread changing every 6.
			ts[j] = makeTask(int32(j), int32(j/6), int32(j/2), LateSender)
			ss[j] = syncPt{th: uint16(j / 6), call: int32(j / 2), evLo: uint32(j)}
		}
		cs := makeSyncCols(ss)
		for x := -1; x <= n/2+1; x++ {
			key := waitKey(int32(x/3), int32(x))
			ans := sort.Search(n, func(j int) bool { return waitKey(ts[j].waiter(), ts[j].wsync) >= key })
			skey := uint64(uint16(x/3))<<32 | uint64(uint32(int32(x)))
			sans := sort.Search(n, func(j int) bool { return uint64(ss[j].th)<<32|uint64(uint32(ss[j].call)) >= skey })
			for hint := -2; hint <= n+2; hint++ {
				if got := tasksBelow(ts, hint, key); got != ans {
					t.Fatalf("tasks: n %d, key %d, hint %d: got %d, want %d", n, x, hint, got, ans)
				}
				if got := cs.below(hint, skey); got != sans {
					t.Fatalf("points: n %d, key %d, hint %d: got %d, want %d", n, x, hint, got, sans)
				}
			}
		}
	}
}

package waitstate

import (
	"math"
	"runtime"
	"testing"
	"unsafe"

	"github.com/ptrace-dev/ptrace/trace"
)

// A progress point and its member's rank travel as one value whose
// maximum is the latest point, on a tie the lowest rank: exact over a
// trace's span, coarsened (never wrapped, never negative) over the
// span of corrupt clocks.
func TestProgScale(t *testing.T) {
	s := newProgScale(true, -5, 1_000_000, 3)
	if s.sh != 0 || s.rb != 2 {
		t.Fatalf("scale %+v, want no shift and 2 rank bits", s)
	}
	for _, at := range []int64{-5, 0, 7, 1_000_000} {
		for r := int32(0); r <= 3; r++ {
			if got := s.dec(s.enc(at, r)); got != (progVal{at, r}) {
				t.Errorf("%d of rank %d: back as %+v", at, r, got)
			}
		}
	}
	if s.enc(8, 3) <= s.enc(7, 0) || s.enc(7, 0) <= s.enc(7, 1) {
		t.Errorf("the later point, on a tie the lower rank, is not the larger value")
	}
	for _, c := range []struct{ lo, hi, top int64 }{
		{math.MinInt64, math.MaxInt64, trace.MaxRanks - 1},
		{math.MinInt64 + 1, 0, 1},
		{0, math.MaxInt64, 0},
	} {
		s := newProgScale(true, c.lo, c.hi, c.top)
		lo, hi := s.enc(c.lo, int32(c.top)), s.enc(c.hi, 0)
		if lo < 0 || hi < lo || hi == math.MaxInt64 {
			t.Errorf("%+v: values %d and %d, want 0 ≤ lo ≤ hi < MaxInt64", c, lo, hi)
		}
		for _, at := range []int64{c.lo, c.hi, c.lo/2 + c.hi/2} {
			p := s.dec(s.enc(at, 0))
			if p.rank != 0 || p.at > at || uint64(at)-uint64(p.at) >= 1<<s.sh {
				t.Errorf("%+v: %d back as %+v (shift %d)", c, at, p, s.sh)
			}
		}
	}
	// No point at all: the span is empty.
	if s := newProgScale(true, math.MaxInt64, math.MinInt64+1, 0); s.sh != 0 {
		t.Errorf("no points: scale %+v", s)
	}
}

// A completion's progress value is the latest point of those it learns,
// on a tie of the lowest rank, whether the process's values are kept in
// a slice (completions a quarter or more of its nodes) or a map; the
// slice takes 8 bytes a node (a map took 63 a completion: 16 MB of the
// wait states' peak on 16 processes of nonblocking collectives), and
// the per-collective records 16 bytes each.
func TestNodeValsProgress(t *testing.T) {
	s := newProgScale(true, 0, 1<<40, 15)
	const n = 1 << 16
	for _, dense := range []bool{true, false} {
		nv := makeNodeVals(n)
		if dense {
			nv.progDense = n
		}
		want := map[int]progVal{}
		type val struct {
			j int
			x int64
		}
		var vals []val
		x := uint64(1)
		for k := 0; k < 4*n; k++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			j := int(x % n)
			if !dense && j%3 != 0 {
				continue // sparse
			}
			p := progVal{at: int64((x >> 20) % 1000), rank: int32((x >> 8) % 16)}
			if q, ok := want[j]; !ok || p.later(q) {
				want[j] = p
			}
			vals = append(vals, val{j, s.enc(p.at, p.rank)})
		}
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		for _, v := range vals {
			nv.maxProg(v.j, v.x)
		}
		runtime.ReadMemStats(&ms1)
		for j := range n {
			got, ok := nv.progAt(j, &s)
			w, wok := want[j]
			if ok != wok || got != w {
				t.Fatalf("dense %v: node %d: %+v %v, want %+v %v", dense, j, got, ok, w, wok)
			}
		}
		if b := ms1.TotalAlloc - ms0.TotalAlloc; dense && b > 8*n+4096 {
			t.Errorf("dense values: %d bytes allocated for %d nodes, want 8 a node", b, n)
		}
	}
	if a, b := unsafe.Sizeof(progPt{}), unsafe.Sizeof(progDone{}); a != 16 || b != 16 {
		t.Errorf("a progress point takes %d bytes, its completion %d: want 16", a, b)
	}
}

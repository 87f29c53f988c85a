package sim

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// EventNodes finds every event it was given, across its blocks, and none
// it was not; its segments are never copied as it grows, and Trim keeps
// what Get finds.
func TestEventNodes(t *testing.T) {
	var m EventNodes
	const perThread = 3*maxEventSeg/4 + 77
	for i := int64(0); i < perThread; i++ {
		for th := 0; th < 3; th++ {
			if th == 1 && i%2 == 0 {
				continue // thread 1 maps its odd events only
			}
			m.Add(th, 10+3*i, int32(th*1_000_000+int(i)))
		}
		if i == 1 {
			defer func(first *byte) {
				if &m.threads[0].segs[0][0] != first {
					t.Error("thread 0's first segment moved as the list grew")
				}
			}(&m.threads[0].segs[0][0])
		}
	}
	check := func(when string) {
		t.Helper()
		if got, want := m.Len(), 2*perThread+perThread/2; got != want {
			t.Errorf("%s: Len %d, want %d", when, got, want)
		}
		for th := 0; th < 3; th++ {
			for i := int64(0); i < perThread; i++ {
				n, ok := m.Get(th, 10+3*i)
				want := !(th == 1 && i%2 == 0)
				if ok != want || (ok && n != int32(th*1_000_000+int(i))) {
					t.Fatalf("%s: thread %d event %d: got (%d, %v), want mapped %v", when, th, 10+3*i, n, ok, want)
				}
				if _, ok := m.Get(th, 11+3*i); ok {
					t.Fatalf("%s: thread %d event %d was never added but maps", when, th, 11+3*i)
				}
			}
			for _, idx := range []int64{-1, 0, 9, 10 + 3*perThread} {
				if _, ok := m.Get(th, idx); ok {
					t.Fatalf("%s: thread %d event %d maps", when, th, idx)
				}
			}
		}
		if _, ok := m.Get(3, 10); ok {
			t.Errorf("%s: a thread without events maps", when)
		}
	}
	check("before Trim")
	m.Trim()
	check("after Trim")
	bytes := 0
	for th, l := range m.threads {
		for k, s := range l.segs {
			if cap(s) > maxEventSeg {
				t.Errorf("thread %d segment %d holds %d bytes, want at most %d", th, k, cap(s), maxEventSeg)
			}
			bytes += cap(s)
		}
		if last := l.segs[len(l.segs)-1]; cap(last)-len(last) > len(last)/8 {
			t.Errorf("thread %d: %d spare bytes after Trim", th, cap(last)-len(last))
		}
		bytes += cap(l.blocks) * int(unsafe.Sizeof(eventBlock{}))
	}
	// Entries 3 apart with values 1 apart: two bytes each and a block's
	// start, under 3 bytes an entry (two columns took 8).
	if per := float64(bytes) / float64(m.Len()); per > 3 {
		t.Errorf("%.2f bytes an entry, want under 3", per)
	}
}

// Events 2^32 or more apart in one thread (a corrupt trace's indices, or a
// thread of billions of events) and values that jump across the int32
// range are found, in one block or several.
func TestEventNodesFarApart(t *testing.T) {
	var m EventNodes
	idx := []int64{5, 6, 5 + 1<<32, 7 + 1<<32, 1 << 40, 1<<40 + 1<<33}
	val := func(k int) int32 { return int32(k) * (1<<31 - 1) * int32(1-2*(k%2)) }
	for rep := range 2 * eventBlockLen {
		for k, i := range idx {
			m.Add(0, i+int64(rep)<<50, val(k))
		}
	}
	for rep := range 2 * eventBlockLen {
		for k, i := range idx {
			if n, ok := m.Get(0, i+int64(rep)<<50); !ok || n != val(k) {
				t.Errorf("event %d: (%d, %v), want %d", i, n, ok, val(k))
			}
		}
	}
	for _, i := range []int64{4, 7, 6 + 1<<32, 1<<40 + 1, 1<<40 + 1<<32 + 6, 1 << 62} {
		if n, ok := m.Get(0, i); ok {
			t.Errorf("event %d never added maps to %d", i, n)
		}
	}
}

// An EventCursor answers as Get does whatever the order of its lookups:
// in increasing order per thread (its fast path, across blocks), with
// small and large steps back, of events never added, and across the far
// blocks of events 2^32 apart.
func TestEventCursorIsGet(t *testing.T) {
	var m EventNodes
	rng := rand.New(rand.NewPCG(3, 4))
	var all [3][]int64
	for th := range 3 {
		idx := int64(rng.IntN(5))
		for range 100*eventBlockLen + 7 {
			idx += 1 + int64(rng.IntN(4))
			if rng.IntN(2000) == 0 {
				idx += 1 << 32 // a far block
			}
			m.Add(th, idx, int32(rng.IntN(1<<20)))
			all[th] = append(all[th], idx)
		}
	}
	c := m.Cursor()
	same := func(th int, idx int64) {
		t.Helper()
		n, ok := c.Get(th, idx)
		wn, wok := m.Get(th, idx)
		if n != wn || ok != wok {
			t.Fatalf("thread %d event %d: cursor (%d, %v), Get (%d, %v)", th, idx, n, ok, wn, wok)
		}
	}
	for k := range all[0] { // interleaved threads, increasing, and the gaps between
		for th := range 4 {
			if th < 3 {
				same(th, all[th][k])
				same(th, all[th][k]+1)
			} else {
				same(th, int64(k))
			}
		}
	}
	for range 20000 { // mostly forward, sometimes back
		th := rng.IntN(3)
		k := rng.IntN(len(all[th]))
		same(th, all[th][k]+int64(rng.IntN(3))-1)
		for range rng.IntN(12) {
			k = min(k+rng.IntN(3), len(all[th])-1)
			same(th, all[th][k])
		}
	}
	for _, idx := range []int64{-1, 0, 1 << 62} {
		same(0, idx)
	}
	same(-1, 5)
}

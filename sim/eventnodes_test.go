package sim

import "testing"

// EventNodes finds every event it was given, across its blocks, and none
// it was not; its blocks are never copied as it grows, and Trim keeps
// what Get finds.
func TestEventNodes(t *testing.T) {
	var m EventNodes
	const perThread = 3*maxEventBlock + 77
	for i := int64(0); i < perThread; i++ {
		for th := 0; th < 3; th++ {
			if th == 1 && i%2 == 0 {
				continue // thread 1 maps its odd events only
			}
			m.Add(th, 10+3*i, int32(th*1_000_000+int(i)))
		}
		if i == 0 {
			defer func(first *int64) {
				if &m.threads[0][0].index[0] != first {
					t.Error("thread 0's first block moved as the list grew")
				}
			}(&m.threads[0][0].index[0])
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
	for th, bs := range m.threads {
		for k, b := range bs {
			if cap(b.index) > maxEventBlock {
				t.Errorf("thread %d block %d holds %d entries, want at most %d", th, k, cap(b.index), maxEventBlock)
			}
		}
		if last := bs[len(bs)-1]; cap(last.index)-len(last.index) > len(last.index)/8 {
			t.Errorf("thread %d: %d spare entries after Trim", th, cap(last.index)-len(last.index))
		}
	}
}

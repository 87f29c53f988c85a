package trace

import (
	"math/rand/v2"
	"testing"
)

// TestCommLogBlocks: a log of many entries, wide and narrow, spans blocks
// of every size up to commBlockMax, and its scan reads back every entry
// across the blocks' ends.
func TestCommLogBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var l commLog
	var want []Event
	var idx []int64
	i, tm := int64(0), int64(0)
	for n := range 40000 {
		i += 1 + r.Int64N(5)
		tm += r.Int64N(1000)
		e := Event{Time: tm, Kind: MPISend}
		for j := range CommArgs {
			e.Args[j] = r.Int64N(200) - 100
			if n%7 == 0 {
				e.Args[j] = r.Int64() - r.Int64() // the widest varints
			}
		}
		l.add(i, &e)
		want, idx = append(want, e), append(idx, i)
	}
	// packed.Blocks' largest block is 64 KiB.
	if blocks := l.blocks.List(); len(blocks) < 6 || cap(blocks[len(blocks)-2]) != 64<<10 {
		t.Fatalf("%d blocks, the last full one of %d bytes: the log did not grow to its largest blocks", len(blocks), cap(blocks[len(blocks)-2]))
	}
	p := &Process{Events: []ThreadEvents{{comm: l}}, commLog: true}
	s, ok := p.CommScan(0)
	if !ok {
		t.Fatal("no scan")
	}
	for k, e := range want {
		if !s.Next() {
			t.Fatalf("the scan ends at entry %d of %d", k, len(want))
		}
		if g := s.Event(); s.Index() != idx[k] || g.Time != e.Time || g.Kind != e.Kind || g.Args != e.Args {
			t.Fatalf("entry %d: index %d %+v, want %d %+v", k, s.Index(), *g, idx[k], e)
		}
	}
	if s.Next() {
		t.Fatal("the scan reads past the last entry")
	}
}

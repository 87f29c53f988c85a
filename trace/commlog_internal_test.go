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

// TestCommLogNonblockingCollectives: a coll_start's and a coll_complete's
// log entries keep, past the leading arguments, whether their byte count
// is positive (1 or 0) and their request, whatever its width.
func TestCommLogNonblockingCollectives(t *testing.T) {
	var l commLog
	var want []Event
	for i, e := range []Event{
		{Time: 10, Kind: CollStart, Args: [MaxArgs]int64{4, 1, -1, 800, MakeID(3, 7)}},
		{Time: 20, Kind: CollBegin, Args: [MaxArgs]int64{1, 0, -1, 0, 0}},
		{Time: 30, Kind: CollComplete, Args: [MaxArgs]int64{4, 1, -1, 0, MakeID(3, 7)}},
		{Time: 40, Kind: CollStart, Args: [MaxArgs]int64{2, 0, 5, 0, -1 << 63}},
		{Time: 50, Kind: CollComplete, Args: [MaxArgs]int64{2, 0, 5, 1 << 40, 1<<63 - 1}},
	} {
		l.add(int64(i), &e)
		if e.Kind != CollBegin && e.Args[3] > 0 {
			e.Args[3] = 1
		}
		want = append(want, e)
	}
	want[1].Args[3], want[1].Args[4] = 0, 0
	p := &Process{Events: []ThreadEvents{{comm: l}}, commLog: true}
	s, _ := p.CommScan(0)
	for k, e := range want {
		if !s.Next() {
			t.Fatalf("the scan ends at entry %d", k)
		}
		if g := s.Event(); g.Kind != e.Kind || g.Args != e.Args {
			t.Errorf("entry %d: %+v, want %+v", k, *g, e)
		}
	}
	if s.Next() {
		t.Fatal("the scan reads past the last entry")
	}
}

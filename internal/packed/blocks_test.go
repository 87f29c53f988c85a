package packed

import (
	"bytes"
	"testing"
)

// TestBlocks: entries written through Room and Wrote come back from List
// in order, each whole in one block, and the blocks grow to maxBlock.
func TestBlocks(t *testing.T) {
	var b Blocks
	var want [][]byte
	for i := range 20000 {
		e := bytes.Repeat([]byte{byte(i)}, 1+i%13)
		cur := b.Room(len(e))
		if cap(cur)-len(cur) < len(e) {
			t.Fatalf("entry %d: Room(%d) left %d bytes", i, len(e), cap(cur)-len(cur))
		}
		b.Wrote(append(cur, e...))
		want = append(want, e)
	}
	var got []byte
	largest, k := 0, 0
	for bi, blk := range b.List() {
		got = append(got, blk...)
		largest = max(largest, cap(blk))
		for rest := blk; len(rest) > 0; k++ {
			if k >= len(want) || len(want[k]) > len(rest) || !bytes.Equal(rest[:len(want[k])], want[k]) {
				t.Fatalf("block %d: entry %d is not whole in it", bi, k)
			}
			rest = rest[len(want[k]):]
		}
	}
	if k != len(want) || !bytes.Equal(got, bytes.Join(want, nil)) {
		t.Fatal("the blocks do not hold the entries in order")
	}
	if largest != maxBlock || b.Bytes() < len(got) {
		t.Fatalf("largest block %d bytes (want %d), %d bytes held for %d written", largest, maxBlock, b.Bytes(), len(got))
	}
}

package packed

// Blocks is a stream's layout for callers that encode their own entries
// (the load's communication log, a replay's evaluation order): bytes in
// blocks that are never copied once written, the first small and each
// next twice the last up to maxBlock, no entry across two. Room hands out
// the block being written with room for one more entry; Wrote takes it
// back with the entry appended, one store of the slice an entry. The zero
// Blocks is empty.
type Blocks struct{ s stream }

// Room returns the block being written, with at least n bytes free after
// its length (a new block when the current one has fewer).
func (b *Blocks) Room(n int) []byte {
	if cur := b.s.cur; cap(cur)-len(cur) >= n {
		return cur // inlined: most entries fit
	}
	return b.newBlock(n)
}

// newBlock is Room's slow path, kept out of line so that Room inlines.
//
//go:noinline
func (b *Blocks) newBlock(n int) []byte {
	b.s.room(n)
	return b.s.cur
}

// Put1 appends a one-byte entry when the block being written has room for
// it, and reports whether it did (else the caller goes through Room): a
// call small enough to inline into a loop that writes one entry a step.
func (b *Blocks) Put1(x byte) bool {
	if len(b.s.cur) < cap(b.s.cur) {
		// An append to the slice it is stored back to stores its length
		// only, not its array: no write barrier (below).
		b.s.cur = append(b.s.cur, x)
		b.s.curN++
		return true
	}
	return false
}

// Wrote takes back the block Room returned, with one entry appended
// (within the room asked for: the same array). It stores the new length
// only: storing the slice stored its array's pointer too, a write barrier
// while the collector marks, whose buffer's flushes looked the array up
// again (Task Bench stencil_1d: 510 000 barriers, about 140 instructions
// each, in the critical path's evaluation order and the load's
// communication log).
func (b *Blocks) Wrote(cur []byte) {
	b.s.cur = b.s.cur[:len(cur)]
	b.s.curN++
}

// List returns the blocks in order, the one being written last: a new
// slice of the blocks themselves (not of blocks streamed to a file and
// not in memory: StreamTo, Block).
func (b *Blocks) List() [][]byte {
	return append(b.s.full[:len(b.s.full):len(b.s.full)], b.s.cur)
}

// NumBlocks returns the number of blocks List would return.
func (b *Blocks) NumBlocks() int { return len(b.s.full) + 1 }

// Block returns block k of those List would return: from memory, or,
// for one StreamTo wrote to its file, read back into *buf (grown to its
// length), so that a reader of the blocks one at a time holds one (a
// backward replay reading the forward's order from its end).
func (b *Blocks) Block(k int, buf *[]byte) ([]byte, error) {
	s := &b.s
	switch {
	case k == len(s.full):
		return s.cur, nil
	case s.full[k] != nil || !s.inFile(k):
		return s.full[k], nil
	}
	return s.readBlock(k, buf)
}

// Bytes returns the memory the blocks hold.
func (b *Blocks) Bytes() int { return b.s.bytes() }

// StreamTo makes the blocks go to f as they fill (Pairs.StreamTo), for
// a list read long after it is written, if at all (a forward replay's
// order, which a backward replay reads only where the tie log filled):
// they are read back one at a time (Block); List returns only those in
// memory.
func (b *Blocks) StreamTo(f Spiller) {
	if f != nil && b.s.out == nil {
		b.s.out = &outFile{f: f}
	}
}

package graph

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ptrace-dev/ptrace/trace"
)

// The join's records (matchChannels) are varints written straight into
// hash partitions of the channel as the scan goes: the join then reads
// each partition's receives and sends in sequence, so nothing indexes a
// record and a record need not have a fixed size. A point-to-point record
// takes about 6 bytes and a remote dependence's about 10 (its tasks' ids),
// where a receive took 24 bytes, a send 29 and the partitions' indices 4
// each (the twenty-ninth round, docs/PERFORMANCE.md).
//
// A record is, in varints: the change of its sequence number from the
// previous record of its partition (a receive's number among the rank's
// receives, a send's node: both grow along the scan) shifted left by one,
// with the low bit set for a remote dependence; the channel's source and
// destination processes and its two key halves; for a send from another
// rank, the rank. The sends to another rank travel in its scan order, with
// the change of the node from the previous send to that rank.

// maxRecLen bounds an encoded record: five varints of at most 32 bits, or
// of 64 bits for the key halves, and a rank.
const maxRecLen = 4*binary.MaxVarintLen32 + 2*binary.MaxVarintLen64

// recParts holds records in partitions, each a list of chunks of one
// size filled in order, carved from blocks that grow geometrically: no
// partition is copied as it grows, and a record never straddles two
// chunks, so a partition reads as a list of whole records.
type recParts struct {
	chunk int
	parts [][][]byte // per partition: its chunks, each as long as its records
	last  []int64    // per partition: the sequence number of its last record
	block []byte     // room for the next chunks
	nblk  int        // chunks in the next block
}

// newRecParts makes np partitions of chunks of the given size, taken
// from blocks of nblk chunks at first.
func newRecParts(np, chunk, nblk int) *recParts {
	return &recParts{chunk: chunk, parts: make([][][]byte, np), last: make([]int64, np), nblk: nblk}
}

// room returns partition g's last chunk with room for a record of need
// bytes.
func (r *recParts) room(g, need int) []byte {
	cs := r.parts[g]
	if n := len(cs); n > 0 && cap(cs[n-1])-len(cs[n-1]) >= need {
		return cs[n-1]
	}
	if len(r.block) < r.chunk {
		r.block = make([]byte, r.nblk*r.chunk)
		r.nblk = min(2*r.nblk, 256)
	}
	c := r.block[:0:r.chunk]
	r.block = r.block[r.chunk:]
	r.parts[g] = append(cs, c)
	return c
}

// put appends to partition g a record of sequence number seq (non
// decreasing in a partition unless signed), rank < 0 for none.
func (r *recParts) put(g int, seq int64, signed bool, k *chanKey, rank int32) {
	c := r.room(g, maxRecLen)
	d := seq - r.last[g]
	r.last[g] = seq
	var head uint64
	if signed {
		head = uint64(d<<1) ^ uint64(d>>63) // zigzag
	} else {
		head = uint64(d)
	}
	c = appendRec(c, head, k, rank)
	cs := r.parts[g]
	cs[len(cs)-1] = c
}

// appendRec encodes a record whose sequence change is head.
func appendRec(c []byte, head uint64, k *chanKey, rank int32) []byte {
	c = appendUvarint(c, head<<1|uint64(k.typ-recP2P))
	c = appendUvarint(c, uint64(uint32(k.src)))
	c = appendUvarint(c, uint64(uint32(k.dst)))
	c = appendUvarint(c, uint64(k.a<<1^k.a>>63)) // zigzag, as binary.AppendVarint
	c = appendUvarint(c, uint64(k.b<<1^k.b>>63))
	if rank >= 0 {
		c = appendUvarint(c, uint64(rank))
	}
	return c
}

// appendUvarint is binary.AppendUvarint with the one-byte case inline.
func appendUvarint(c []byte, v uint64) []byte {
	if v < 0x80 {
		return append(c, byte(v))
	}
	return binary.AppendUvarint(c, v)
}

// errRec is a record that does not decode: truncated, or a field out of
// range.
var errRec = fmt.Errorf("malformed record")

// recReader decodes records in sequence: buf[at:] is left to read.
type recReader struct {
	buf []byte
	at  int
	err error
}

// fail stops the reader at a malformed record.
func (r *recReader) fail() {
	r.err, r.at = errRec, len(r.buf)
}

// fields reads len(f) varints into f, the one-byte ones inline: one
// call a record, not one a field.
func (r *recReader) fields(f []uint64) {
	b, at := r.buf, r.at
	for i := range f {
		if at < len(b) && b[at] < 0x80 {
			f[i] = uint64(b[at])
			at++
			continue
		}
		v, n := binary.Uvarint(b[at:])
		if n <= 0 {
			r.fail()
			clear(f)
			return
		}
		f[i] = v
		at += n
	}
	r.at = at
}

// unzig decodes a zigzag varint.
func unzig(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// next decodes a record into k and returns its sequence change (zigzag
// decoded when signed) and its rank (if withRank).
func (r *recReader) next(k *chanKey, signed, withRank bool) (d int64, rank int32) {
	var f [6]uint64
	n := 5
	if withRank {
		n = 6
	}
	r.fields(f[:n])
	h := f[0]
	k.typ = int32(recP2P + h&1)
	h >>= 1
	if signed {
		d = unzig(h)
	} else {
		d = int64(h)
	}
	if f[1] > math.MaxUint32 || f[2] > math.MaxUint32 || f[5] > math.MaxInt32 {
		r.fail()
	}
	k.src, k.dst = int32(uint32(f[1])), int32(uint32(f[2]))
	k.a, k.b = unzig(f[3]), unzig(f[4])
	return d, int32(f[5])
}

// partReader reads partition g's records in order.
type partReader struct {
	chunks [][]byte
	recReader
	seq int64
}

func (r *recParts) reader(g int) partReader { return partReader{chunks: r.parts[g]} }

// more reports whether a record is left.
func (p *partReader) more() bool {
	for p.at == len(p.buf) && len(p.chunks) > 0 {
		p.buf, p.at, p.chunks = p.chunks[0], 0, p.chunks[1:]
	}
	return p.at < len(p.buf)
}

// chunkFor returns a chunk size for partitions expected to hold about
// bytes each: an eighth of that (the last chunk of each is half empty on
// average), a power of two in [256, 16 KiB].
func chunkFor(bytes int) int {
	c := 256
	for c < bytes/8 && c < 16<<10 {
		c *= 2
	}
	return c
}

// wireOut concatenates the records to one destination, chunk after chunk,
// into one buffer, and releases the chunks.
func (r *recParts) wireOut() []byte {
	n := 0
	for _, c := range r.parts[0] {
		n += len(c)
	}
	if n == 0 {
		return nil
	}
	buf := make([]byte, 0, n)
	for _, c := range r.parts[0] {
		buf = append(buf, c...)
	}
	r.parts, r.block = nil, nil
	return buf
}

// joinRecs routes the channels' records as the scan makes them: a
// receive, or a send to a process of this rank, into this rank's
// partitions; a send to another rank into that rank's stream.
type joinRecs struct {
	bits   uint
	k, me  int
	owners Owners
	recvs  *recParts   // the receives, numbered in scan order
	sends  *recParts   // the sends to this rank's processes (with their rank when k > 1)
	out    []*recParts // per other rank: the sends to its processes, in scan order
	nrecv  int64       // receives so far
}

// perPart is the records a partition of the join holds: its channels'
// table fits in cache.
const perPart = 2048

// newJoinRecs sizes the partitions for about nrecv receives and nsend
// sends (the census's bounds; the sends that arrive from other ranks are
// about as many as those that leave).
func newJoinRecs(k, me int, owners Owners, nrecv, nsend int) *joinRecs {
	bits := uint(0)
	for (nrecv+nsend)>>bits > perPart {
		bits++
	}
	np := 1 << bits
	// About 9 bytes a record.
	j := &joinRecs{bits: bits, k: k, me: me, owners: owners,
		recvs: newRecParts(np, chunkFor(9*nrecv/np), 4), sends: newRecParts(np, chunkFor(9*nsend/np), 4)}
	if k > 1 {
		j.out = make([]*recParts, k)
	}
	return j
}

// part returns the partition of channel k.
func (j *joinRecs) part(k *chanKey) int {
	if j.bits == 0 {
		return 0
	}
	return int(chanHash(k) >> (64 - j.bits))
}

// recv adds a receive of channel k (whose dst is its process).
func (j *joinRecs) recv(k *chanKey) {
	j.recvs.put(j.part(k), j.nrecv, false, k, -1)
	j.nrecv++
}

// send adds a send of channel k from node.
func (j *joinRecs) send(k *chanKey, node int32) {
	if j.k == 1 {
		j.sends.put(j.part(k), int64(node), true, k, -1)
		return
	}
	d := j.owners.Owner(int(k.dst))
	if d == j.me {
		j.sends.put(j.part(k), int64(node), true, k, int32(d))
		return
	}
	if j.out[d] == nil {
		j.out[d] = newRecParts(1, 16<<10, 1)
	}
	j.out[d].put(0, int64(node), false, k, -1)
}

// wire returns the streams to the other ranks, releasing them.
func (j *joinRecs) wire() [][]byte {
	bufs := make([][]byte, j.k)
	wireEach(bufs, j.out)
	return bufs
}

// wireEach puts each destination's records in one buffer of bufs (none
// for a nil one), releasing them.
func wireEach(bufs [][]byte, out []*recParts) {
	for d, p := range out {
		if p != nil {
			bufs[d], out[d] = p.wireOut(), nil
		}
	}
}

// arrive adds the sends that arrived from rank q to this rank's
// partitions, checking every record.
func (j *joinRecs) arrive(q int, buf []byte) error {
	r := recReader{buf: buf}
	var k chanKey
	node := int64(0)
	for r.at < len(r.buf) {
		at := r.at
		d, _ := r.next(&k, false, false)
		if r.err == nil && d > math.MaxInt32-node {
			r.fail()
		}
		if r.err != nil {
			return fmt.Errorf("rank %d: graph: %w among the sends from rank %d, at byte %d", j.me, r.err, q, at)
		}
		node += d
		j.sends.put(j.part(&k), node, true, &k, int32(q))
	}
	return nil
}

// joinFrom is each receive's sender once joined (by number): its node, −1
// while unmatched, −2 − node for a message within one process; and its
// rank when k > 1, a byte while k ≤ 256.
type joinFrom struct {
	node  []int32
	rank8 []uint8
	rank  []int32
}

func newJoinFrom(n, k int) *joinFrom {
	f := &joinFrom{node: make([]int32, n)}
	for i := range f.node {
		f.node[i] = -1
	}
	switch {
	case k > 256:
		f.rank = make([]int32, n)
	case k > 1:
		f.rank8 = make([]uint8, n)
	}
	return f
}

func (f *joinFrom) set(i int64, rank, node int32, self bool) {
	if self {
		node = -2 - node
	}
	f.node[i] = node
	switch {
	case f.rank != nil:
		f.rank[i] = rank
	case f.rank8 != nil:
		f.rank8[i] = uint8(rank)
	}
}

// at returns receive i's sender's rank and node, self whether it is
// within one process, ok false when it is unmatched.
func (f *joinFrom) at(i int) (rank, node int32, self, ok bool) {
	node = f.node[i]
	switch {
	case node == -1:
		return 0, 0, false, false
	case node < -1:
		node, self = -2-node, true
	}
	switch {
	case f.rank != nil:
		rank = f.rank[i]
	case f.rank8 != nil:
		rank = int32(f.rank8[i])
	}
	return rank, node, self, true
}

// maxCollLen bounds an encoded collective record: its kind, seven varints
// of at most 32 bits, three of 64 and the payload byte's.
const maxCollLen = 1 + 7*binary.MaxVarintLen32 + 3*binary.MaxVarintLen64 + 2

// collOut holds the collective members' records to each rank, in scan
// order, each destination's in chunks until wire.
type collOut struct {
	owners Owners
	out    []*recParts
}

func newCollOut(k int, owners Owners) *collOut {
	return &collOut{owners: owners, out: make([]*recParts, k)}
}

// coll adds a member's record, for the rank holding its coordinator. The
// record is, after its kind, in varints: the member's index in the
// communicator and the instance (first, as the grouping reads them
// alone), the communicator, the member's process, the communicator's
// size, the operation, the root + 1, the coordinator, the coll_begin node
// and how far after it the coll_end node is.
func (o *collOut) coll(c *collRec) {
	d := 0
	if len(o.out) > 1 {
		d = o.owners.Owner(int(c.coord))
	}
	if o.out[d] == nil {
		o.out[d] = newRecParts(1, 16<<10, 1)
	}
	p := o.out[d]
	b := p.room(0, maxCollLen)
	b = append(b, recColl)
	b = binary.AppendUvarint(b, uint64(uint32(c.memberIdx)))
	b = binary.AppendUvarint(b, uint64(c.inst))
	b = binary.AppendVarint(b, c.comm)
	b = binary.AppendVarint(b, int64(c.member))
	b = binary.AppendUvarint(b, uint64(uint32(c.nmembers)))
	b = binary.AppendVarint(b, c.op)
	b = binary.AppendUvarint(b, uint64(uint32(c.root+1)))
	b = binary.AppendVarint(b, int64(c.coord))
	b = binary.AppendUvarint(b, uint64(uint32(c.begin)))
	b = binary.AppendUvarint(b, uint64(uint32(c.end-c.begin)))
	b = binary.AppendUvarint(b, uint64(c.payload))
	p.parts[0][len(p.parts[0])-1] = b
}

// wire returns the records to each rank, each in one buffer, releasing
// the chunks.
func (o *collOut) wire() [][]byte {
	bufs := make([][]byte, len(o.out))
	wireEach(bufs, o.out)
	return bufs
}

// coll decodes a collective member's record (its kind byte first) sent by
// rank, checking every field.
func (r *recReader) coll(rank int32) collRec {
	if r.at >= len(r.buf) {
		r.fail()
		return collRec{}
	}
	r.at++
	var f [11]uint64
	r.fields(f[:])
	c := collRec{memberIdx: int32(f[0]), inst: int64(f[1]), comm: unzig(f[2]), member: int32(unzig(f[3])),
		nmembers: int32(f[4]), op: unzig(f[5]), root: int32(f[6]) - 1, coord: int32(unzig(f[7])),
		begin: int32(f[8]), end: int32(f[8] + f[9]), rank: rank, payload: uint8(f[10])}
	in32 := func(v int64) bool { return v >= math.MinInt32 && v <= math.MaxInt32 }
	if f[0] > math.MaxInt32 || f[1] > math.MaxInt64 || !in32(unzig(f[3])) || f[4] > math.MaxInt32 || f[6] > math.MaxInt32 ||
		!in32(unzig(f[7])) || f[8] > math.MaxInt32 || f[9] > math.MaxInt32-f[8] || f[10] > uint64(trace.CollSends|trace.CollReceives|payloadNoEnd) {
		r.fail()
		return collRec{}
	}
	return c
}

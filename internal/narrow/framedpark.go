package narrow

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/ptrace-dev/ptrace/internal/packed"
)

// parkedFramed is where Park wrote a Framed column: its headers from at,
// then its words.
type parkedFramed struct {
	f     packed.Spiller
	at    int64
	heads int
	words *packed.ParkedBytes
}

// framedChunk is the headers Park writes and Unpark reads at a time.
const framedChunk = 4096

// blocksChunk is the headers Blocks reads from the file at a time, with
// the words they span: at most 8 KiB of headers and 256 KiB of words.
const blocksChunk = 512

// parkMin is the least memory a column must hold for Park to write it: a
// small process's few run times are not worth the file's calls (16 384
// processes of a halo exchange on one rank).
const parkMin = 16 << 10

// Park writes the column to f and drops it from memory until Unpark, for
// a while nothing reads it (a process's task run times, through the
// critical path's replays: 1 MB of BOTS health's peak); a column of less
// than 16 KiB stays. Len still answers; At must not be called while
// parked. On an error it stays. A column parked in f before and read
// back since is there already (it never changes): Park drops it again
// without writing it.
func (c *Framed) Park(f packed.Spiller) error {
	if c.park != nil || c.Bytes() < parkMin {
		return nil
	}
	if c.filed != nil && c.filed.f == f {
		c.park, c.heads, c.words = c.filed, nil, nil
		return nil
	}
	w := packed.NewAppender(f)
	buf := make([]byte, 0, 16*min(framedChunk, len(c.heads)))
	for i := 0; i < len(c.heads); i += framedChunk {
		buf = buf[:0]
		for _, h := range c.heads[i:min(i+framedChunk, len(c.heads))] {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(h.base))
			buf = binary.LittleEndian.AppendUint32(buf, h.at)
			buf = binary.LittleEndian.AppendUint32(buf, uint32(h.width))
		}
		if err := w.Append(buf); err != nil {
			return err
		}
	}
	words, err := packed.ParkSlice(f, c.words)
	if err != nil {
		return err
	}
	c.park = &parkedFramed{f: f, at: w.Start(), heads: len(c.heads), words: words}
	c.heads, c.words = nil, nil
	return nil
}

// Unpark reads back the column Park wrote (nothing for one not parked).
func (c *Framed) Unpark() error {
	p := c.park
	if p == nil {
		return nil
	}
	heads := make([]framedHead, p.heads)
	var buf []byte
	for i := 0; i < len(heads); i += framedChunk {
		if err := p.readHeads(i, heads[i:min(i+framedChunk, len(heads))], &buf); err != nil {
			return err
		}
	}
	words, err := packed.ReadSlice[uint64](p.words)
	if err != nil {
		return fmt.Errorf("narrow: reading back a parked column: %w", err)
	}
	c.heads, c.words, c.park, c.filed = heads, words, nil, p
	return nil
}

// Blocks calls fn with the column's values in order, a block of at most
// 64 at a time (vals is reused; first is vals[0]'s index). A parked
// column is read from the file a piece at a time and stays parked: a
// pass that makes something of the values beside which the whole column
// would not fit (the critical path's weight store, whose fill was its
// peak).
func (c *Framed) Blocks(fn func(first int, vals []int64)) error {
	var buf [framedBlock]int64
	p := c.park
	if p == nil {
		for b, h := range c.heads {
			vals := buf[:min(framedBlock, c.n-b*framedBlock)]
			h.decode(c.words[h.at:], vals)
			fn(b*framedBlock, vals)
		}
		return nil
	}
	var r parkedChunk
	for k := 0; k*blocksChunk < p.heads; k++ {
		if err := r.read(p, k); err != nil {
			return err
		}
		for j := range r.heads {
			first := (k*blocksChunk + j) * framedBlock
			vals := buf[:min(framedBlock, c.n-first)]
			r.decode(j, vals)
			fn(first, vals)
		}
	}
	return nil
}

// Gather sets out[k] to value idx[k], for indices in ascending order (a
// repeat is fine). A parked column is read from the file only where the
// indices fall, a chunk of headers and their words at a time, and stays
// parked: a few values looked up while the column waits there (the task
// graph's latency nodes read their receives' weights).
func (c *Framed) Gather(idx []int, out []int64) error {
	if len(out) < len(idx) {
		return fmt.Errorf("narrow: %d values gathered into %d", len(idx), len(out))
	}
	for k, i := range idx {
		if i < 0 || i >= c.n || k > 0 && i < idx[k-1] {
			return fmt.Errorf("narrow: gathering value %d (index %d) of %d, after %d", i, k, c.n, idx[max(k-1, 0)])
		}
	}
	p := c.park
	if p == nil {
		for k, i := range idx {
			out[k] = c.At(i)
		}
		return nil
	}
	var r parkedChunk
	for k := 0; k < len(idx); {
		chunk := idx[k] / framedBlock / blocksChunk
		if err := r.read(p, chunk); err != nil {
			return err
		}
		for ; k < len(idx) && idx[k]/framedBlock/blocksChunk == chunk; k++ {
			out[k] = r.at(idx[k] - chunk*blocksChunk*framedBlock)
		}
	}
	return nil
}

// readHeads reads the len(dst) headers from header first on of the
// column parked at p into dst, through *raw (grown to their bytes).
func (p *parkedFramed) readHeads(first int, dst []framedHead, raw *[]byte) error {
	b := slices.Grow((*raw)[:0], 16*len(dst))[:16*len(dst)]
	*raw = b
	at := p.at + 16*int64(first)
	if err := packed.ReadFull(p.f, b, at); err != nil {
		return fmt.Errorf("narrow: reading a parked column (%d bytes at offset %d of the spill file): %w", len(b), at, err)
	}
	for j := range dst {
		dst[j] = framedHead{base: int64(binary.LittleEndian.Uint64(b[16*j:])), at: binary.LittleEndian.Uint32(b[16*j+8:]), width: uint8(binary.LittleEndian.Uint32(b[16*j+12:]))}
	}
	return nil
}

// parkedChunk holds a chunk of a parked column's headers (blocksChunk, the
// last fewer) and the words they span, read from its file.
type parkedChunk struct {
	raw   []byte
	heads []framedHead
	words []uint64
	lo    int // the chunk's first word in the column
}

// read reads chunk k of the column parked at p.
func (r *parkedChunk) read(p *parkedFramed, k int) error {
	first := k * blocksChunk
	n := min(blocksChunk, p.heads-first)
	r.heads = slices.Grow(r.heads[:0], n)[:n]
	if err := p.readHeads(first, r.heads, &r.raw); err != nil {
		return err
	}
	// The headers' words, and the two past the last that decode may read
	// (both for a block of width 0; the column has two spare).
	nw := p.words.Len() / 8
	last := r.heads[n-1]
	lo, hi := int(r.heads[0].at), int(last.at)+int(last.width)+2
	if lo > hi || hi > nw {
		return fmt.Errorf("narrow: a parked column's headers name words [%d, %d) of %d", lo, hi, nw)
	}
	r.words = slices.Grow(r.words[:0], hi-lo)[:hi-lo]
	if err := packed.ReadSliceAt(p.words, r.words, lo); err != nil {
		return fmt.Errorf("narrow: reading a parked column: %w", err)
	}
	r.lo = lo
	return nil
}

// decode unpacks block j of the chunk into dst (its values).
func (r *parkedChunk) decode(j int, dst []int64) {
	h := r.heads[j]
	h.decode(r.words[int(h.at)-r.lo:], dst)
}

// at returns value i of the chunk.
func (r *parkedChunk) at(i int) int64 {
	h := &r.heads[i/framedBlock]
	return h.valueIn(r.words, uint(int(h.at)-r.lo), uint(i%framedBlock))
}

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
	buf := make([]byte, 16*min(framedChunk, p.heads))
	at := p.at
	for i := 0; i < len(heads); i += framedChunk {
		hs := heads[i:min(i+framedChunk, len(heads))]
		b := buf[:16*len(hs)]
		if err := packed.ReadFull(p.f, b, at); err != nil {
			return fmt.Errorf("narrow: reading back a parked column (%d bytes at offset %d of the spill file): %w", len(b), at, err)
		}
		at += int64(len(b))
		for k := range hs {
			hs[k] = framedHead{base: int64(binary.LittleEndian.Uint64(b[16*k:])), at: binary.LittleEndian.Uint32(b[16*k+8:]), width: uint8(binary.LittleEndian.Uint32(b[16*k+12:]))}
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
	nw := p.words.Len() / 8
	raw := make([]byte, 16*min(blocksChunk, p.heads))
	heads := make([]framedHead, 0, min(blocksChunk, p.heads))
	var words []uint64
	at := p.at
	for i := 0; i < p.heads; i += blocksChunk {
		heads = heads[:min(blocksChunk, p.heads-i)]
		b := raw[:16*len(heads)]
		if err := packed.ReadFull(p.f, b, at); err != nil {
			return fmt.Errorf("narrow: reading a parked column (%d bytes at offset %d of the spill file): %w", len(b), at, err)
		}
		at += int64(len(b))
		for k := range heads {
			heads[k] = framedHead{base: int64(binary.LittleEndian.Uint64(b[16*k:])), at: binary.LittleEndian.Uint32(b[16*k+8:]), width: uint8(binary.LittleEndian.Uint32(b[16*k+12:]))}
		}
		// The headers' words, and the two past the last that decode may
		// read (both for a block of width 0; the column has two spare).
		lo, last := int(heads[0].at), heads[len(heads)-1]
		hi := int(last.at) + int(last.width) + 2
		if lo > hi || hi > nw {
			return fmt.Errorf("narrow: a parked column's headers name words [%d, %d) of %d", lo, hi, nw)
		}
		words = slices.Grow(words[:0], hi-lo)[:hi-lo]
		if err := packed.ReadSliceAt(p.words, words, lo); err != nil {
			return fmt.Errorf("narrow: reading a parked column: %w", err)
		}
		for k, h := range heads {
			first := (i + k) * framedBlock
			vals := buf[:min(framedBlock, c.n-first)]
			h.decode(words[int(h.at)-lo:], vals)
			fn(first, vals)
		}
	}
	return nil
}

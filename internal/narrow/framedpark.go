package narrow

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/ptrace-dev/ptrace/internal/packed"
)

// parkedFramed is where Park wrote a Framed column: its headers, then
// its words, from at.
type parkedFramed struct {
	f             io.ReaderAt
	at            int64
	heads, nwords int
}

// framedChunk is the headers or words Park writes at a time.
const framedChunk = 4096

// parkMin is the least memory a column must hold for Park to write it: a
// small process's few run times are not worth the file's calls (16 384
// processes of a halo exchange on one rank).
const parkMin = 16 << 10

// Park writes the column to f and drops it from memory until Unpark, for
// a while nothing reads it (a process's task run times, through the
// critical path's replays: 1 MB of BOTS health's peak); a column of less
// than 16 KiB stays. Len still answers; At must not be called while
// parked. On an error it stays.
func (c *Framed) Park(f packed.Spiller) error {
	if c.park != nil || c.Bytes() < parkMin {
		return nil
	}
	w := packed.NewAppender(f)
	buf := make([]byte, 0, 16*min(framedChunk, max(len(c.heads), len(c.words)/2)))
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
	for i := 0; i < len(c.words); i += 2 * framedChunk {
		buf = buf[:0]
		for _, x := range c.words[i:min(i+2*framedChunk, len(c.words))] {
			buf = binary.LittleEndian.AppendUint64(buf, x)
		}
		if err := w.Append(buf); err != nil {
			return err
		}
	}
	c.park = &parkedFramed{f: f, at: w.Start(), heads: len(c.heads), nwords: len(c.words)}
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
	words := make([]uint64, p.nwords)
	buf := make([]byte, 16*min(framedChunk, max(p.heads, p.nwords/2+1)))
	at := p.at
	read := func(b []byte) error {
		if err := packed.ReadFull(p.f, b, at); err != nil {
			return fmt.Errorf("narrow: reading back a parked column (%d bytes at offset %d of the spill file): %w", len(b), at, err)
		}
		at += int64(len(b))
		return nil
	}
	for i := 0; i < len(heads); i += framedChunk {
		hs := heads[i:min(i+framedChunk, len(heads))]
		b := buf[:16*len(hs)]
		if err := read(b); err != nil {
			return err
		}
		for k := range hs {
			hs[k] = framedHead{base: int64(binary.LittleEndian.Uint64(b[16*k:])), at: binary.LittleEndian.Uint32(b[16*k+8:]), width: uint8(binary.LittleEndian.Uint32(b[16*k+12:]))}
		}
	}
	for i := 0; i < len(words); i += 2 * framedChunk {
		ws := words[i:min(i+2*framedChunk, len(words))]
		b := buf[:8*len(ws)]
		if err := read(b); err != nil {
			return err
		}
		for k := range ws {
			ws[k] = binary.LittleEndian.Uint64(b[8*k:])
		}
	}
	c.heads, c.words, c.park = heads, words, nil
	return nil
}

package narrow

import (
	"encoding/binary"
	"fmt"

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

package waitstate

import (
	"encoding/binary"
	"slices"

	"github.com/ptrace-dev/ptrace/internal/narrow"
)

// syncCols are a process's synchronization points once sorted, as
// narrow columns: the points live from the notifications to the end of
// the delay costs, through the phase's peak, and as 24-byte syncPts they
// were its largest array (49 MB of 2.04 M points on the 64-process
// pure-MPI trace). Most fields are small: the thread of a one-thread
// process, whom a point synchronized with (a rank or a set), its pattern;
// the call and the event grow along a thread, so each is a narrow.Framed
// column (the bits of its offset from the least of its block of 64
// points). The values are exact (narrow.Step keeps aside what its type
// in use cannot hold, a Framed block any int64), so at returns the
// syncPt that was added, its wide values still in the process's wide
// map.
type syncCols struct {
	call, ev narrow.Framed
	// th is empty where every point is on thread th0 (a process that
	// calls MPI from one thread).
	th    narrow.Step[uint8, uint16, uint32]
	th0   uint16
	with  narrow.Step[int8, int16, int32]
	compl narrow.Step[int8, int16, int32]
	pat   []Pattern
	// The waits are read at every point of every interval (timeMap), and
	// most are 4 bytes on a pure-MPI trace: whole.
	wait []int32
}

// framedOf returns the column of the n values at(0..n−1): a thread's
// calls and events grow, so a block of 64 takes a few bits a value.
func framedOf(n int, at func(j int) int64) narrow.Framed {
	var b narrow.FramedBuilder
	b.Reserve(n)
	for j := range n {
		b.Append(at(j))
	}
	return b.Finish()
}

// makeSyncCols returns the columns of ss.
func makeSyncCols(ss []syncPt) syncCols {
	n := len(ss)
	var c syncCols
	c.call = framedOf(n, func(j int) int64 { return int64(ss[j].call) })
	c.ev = framedOf(n, func(j int) int64 { return ss[j].event() })
	if n > 0 {
		c.th0 = ss[0].th
	}
	if slices.ContainsFunc(ss, func(s syncPt) bool { return s.th != c.th0 }) {
		c.th.Reserve(n)
		for j := range ss {
			c.th.Append(int64(ss[j].th))
		}
		c.th.Fit()
	}
	c.with.Reserve(n)
	c.wait = make([]int32, n)
	c.compl.Reserve(n)
	c.pat = make([]Pattern, n)
	for j := range ss {
		s := &ss[j]
		c.with.Append(int64(s.with))
		c.wait[j] = s.wait
		c.compl.Append(int64(s.compl))
		c.pat[j] = s.pat
	}
	c.with.Fit()
	c.compl.Fit()
	return c
}

// len returns the number of points.
func (c *syncCols) len() int { return len(c.pat) }

// at returns point j.
func (c *syncCols) at(j int32) syncPt {
	ev := c.ev.At(int(j))
	return syncPt{
		call: int32(c.call.At(int(j))), with: int32(c.with.At(int(j))),
		wait: c.wait[j], compl: int32(c.compl.At(int(j))),
		evLo: uint32(ev), evHi: uint8(ev >> 32), th: c.thAt(j), pat: c.pat[j],
	}
}

// callAt returns point j's call, thAt its thread, eventAt its event.
// thAt is inlined for a one-thread process (read at every step of the
// searches and walks over the points).
func (c *syncCols) callAt(j int32) int32 {
	return int32(c.call.At(int(j)))
}

func (c *syncCols) thAt(j int32) uint16 {
	if c.th.Len() == 0 {
		return c.th0
	}
	return c.thCol(j)
}

//go:noinline
func (c *syncCols) thCol(j int32) uint16 { return uint16(c.th.At(int(j))) }

func (c *syncCols) eventAt(j int32) int64 { return c.ev.At(int(j)) }

// causeAt returns the process point j waited for (causeOf).
func (c *syncCols) causeAt(j int32) int32 {
	if c.pat[j] == None {
		return -1
	}
	return max(-1, int32(c.with.At(int(j))))
}

// bytes returns the columns' size, for the tests.
func (c *syncCols) bytes() int {
	return c.call.Bytes() + c.ev.Bytes() + len(c.pat) +
		(c.th.Len()<<c.th.Width() + c.with.Len()<<c.with.Width() +
			4*len(c.wait) + c.compl.Len()<<c.compl.Width())
}

// appendPts appends points ss to b, in the order given, as varints: the
// call and event as differences from the point before's, the thread,
// partner, wait and completion, the pattern a byte (about 9 bytes a point
// of a pure-MPI process). A process's own points wait so for the
// partners' from addSyncs to applyNotes, read once in order (readPts):
// as columns they cost twice the instructions of the delay costs' points
// to make and read.
func appendPts(b []byte, ss []syncPt) []byte {
	var call, ev int64
	for j := range ss {
		s := &ss[j]
		// Wrapping arithmetic: the sum read back is the value for any two.
		b = binary.AppendVarint(b, int64(s.call)-call)
		b = binary.AppendVarint(b, s.event()-ev)
		call, ev = int64(s.call), s.event()
		b = binary.AppendUvarint(b, uint64(s.th))
		b = binary.AppendVarint(b, int64(s.with))
		b = binary.AppendVarint(b, int64(s.wait))
		b = binary.AppendVarint(b, int64(s.compl))
		b = append(b, byte(s.pat))
	}
	return b
}

// readPts appends the points appendPts wrote in b to ss.
func readPts(b []byte, ss []syncPt) []syncPt {
	var call, ev int64
	next := func() int64 {
		v, n := binary.Varint(b)
		b = b[n:]
		return v
	}
	for len(b) > 0 {
		call += next()
		ev += next()
		th, n := binary.Uvarint(b)
		b = b[n:]
		s := syncPt{call: int32(call), th: uint16(th), evLo: uint32(ev), evHi: uint8(ev >> 32)}
		s.with, s.wait, s.compl = int32(next()), int32(next()), int32(next())
		s.pat = Pattern(b[0])
		b = b[1:]
		ss = append(ss, s)
	}
	return ss
}

package waitstate

import "github.com/ptrace-dev/ptrace/internal/narrow"

// syncCols are a process's synchronization points once sorted, as
// narrow columns: the points live from the notifications to the end of
// the delay costs, through the phase's peak, and as 24-byte syncPts they
// were its largest array (49 MB of 2.04 M points on the 64-process
// pure-MPI trace). Most fields are small: the thread of a one-thread
// process, whom a point synchronized with (a rank or a set), its pattern;
// the call and the event grow along a thread, so each is an offset from
// the least of its block of points. The values are exact (narrow.Step
// keeps aside what its type in use cannot hold), so at returns the
// syncPt that was added, its wide values still in the process's wide
// map.
type syncCols struct {
	call, ev blockCol
	th       narrow.Step[uint8, uint16, uint32]
	with     narrow.Step[int8, int16, int32]
	wait     narrow.Step[int8, int16, int32]
	compl    narrow.Step[int8, int16, int32]
	pat      []Pattern
}

// blockCol is a column of values that mostly grow: each an offset from
// the least value of its block of ptBlock (at most a few hundred apart
// for a thread's calls or events), in the narrowest type most fit.
type blockCol struct {
	base []int64
	off  narrow.Step[uint8, uint16, uint32]
}

const ptBlock = 64

// makeBlockCol returns the column of the n values at(0..n−1).
func makeBlockCol(n int, at func(j int) int64) blockCol {
	var c blockCol
	c.base = make([]int64, (n+ptBlock-1)/ptBlock)
	c.off.Reserve(n)
	for b := range c.base {
		lo, hi := b*ptBlock, min(n, (b+1)*ptBlock)
		m := at(lo)
		for j := lo + 1; j < hi; j++ {
			m = min(m, at(j))
		}
		c.base[b] = m
		for j := lo; j < hi; j++ {
			// Wrapping arithmetic: base + (x − base) is x for any two
			// int64s (a difference past 32 bits is kept aside).
			c.off.Append(at(j) - m)
		}
	}
	c.off.Fit()
	return c
}

func (c *blockCol) at(j int) int64 { return c.base[j/ptBlock] + c.off.At(j) }

// makeSyncCols returns the columns of ss.
func makeSyncCols(ss []syncPt) syncCols {
	n := len(ss)
	var c syncCols
	c.call = makeBlockCol(n, func(j int) int64 { return int64(ss[j].call) })
	c.ev = makeBlockCol(n, func(j int) int64 { return ss[j].event() })
	c.th.Reserve(n)
	c.with.Reserve(n)
	c.wait.Reserve(n)
	c.compl.Reserve(n)
	c.pat = make([]Pattern, n)
	for j := range ss {
		s := &ss[j]
		c.th.Append(int64(s.th))
		c.with.Append(int64(s.with))
		c.wait.Append(int64(s.wait))
		c.compl.Append(int64(s.compl))
		c.pat[j] = s.pat
	}
	c.th.Fit()
	c.with.Fit()
	c.wait.Fit()
	c.compl.Fit()
	return c
}

// len returns the number of points.
func (c *syncCols) len() int { return len(c.pat) }

// at returns point j.
func (c *syncCols) at(j int32) syncPt {
	ev := c.ev.at(int(j))
	return syncPt{
		call: int32(c.call.at(int(j))), with: int32(c.with.At(int(j))),
		wait: int32(c.wait.At(int(j))), compl: int32(c.compl.At(int(j))),
		evLo: uint32(ev), evHi: uint8(ev >> 32), th: uint16(c.th.At(int(j))), pat: c.pat[j],
	}
}

// callAt returns point j's call, thAt its thread, eventAt its event.
func (c *syncCols) callAt(j int32) int32  { return int32(c.call.at(int(j))) }
func (c *syncCols) thAt(j int32) uint16   { return uint16(c.th.At(int(j))) }
func (c *syncCols) eventAt(j int32) int64 { return c.ev.at(int(j)) }

// causeAt returns the process point j waited for (causeOf).
func (c *syncCols) causeAt(j int32) int32 {
	if c.pat[j] == None {
		return -1
	}
	return max(-1, int32(c.with.At(int(j))))
}

// bytes returns the columns' size, for the tests.
func (c *syncCols) bytes() int {
	return 8*len(c.call.base) + 8*len(c.ev.base) + len(c.pat) +
		(c.call.off.Len()<<c.call.off.Width() + c.ev.off.Len()<<c.ev.off.Width() +
			c.th.Len()<<c.th.Width() + c.with.Len()<<c.with.Width() +
			c.wait.Len()<<c.wait.Width() + c.compl.Len()<<c.compl.Width())
}

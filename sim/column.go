package sim

import (
	"math"
	"math/bits"

	"github.com/ptrace-dev/ptrace/internal/lists"
	"github.com/ptrace-dev/ptrace/internal/packed"
)

// Per-task state that most tasks never set, or set to one value in long
// runs, costs less kept apart from the task table: columns allocated a
// page at a time where a value is written (pcol, bcol, and hcol, whose
// pages go when their lists are all empty again), one whose pages may
// hold one value in a bit an entry (col32), or a small hash table of the
// tasks that hold a value now (taskMap). Each is written for one type, not
// as a generic: a read must stay two loads, inlined.

// colPageBits sizes a column page: 4096 entries (16 KiB of int32).
const (
	colPageBits = 12
	colPageLen  = 1 << colPageBits
)

// The columns' cold paths, the same for every entry type: a page taken
// from a column's free list or made, and its page table resized for n
// entries, all pages absent (the hot reads and writes stay each column's
// own, for one type).

// takePage returns a page from *free, or a new zeroed one.
func takePage[P any](free *[]*P) *P {
	if n := len(*free); n > 0 {
		d := (*free)[n-1]
		*free = (*free)[:n-1]
		return d
	}
	return new(P)
}

// pageTable returns dense's page table resized for n entries, every page
// absent (after the column gave its pages to its free list).
func pageTable[P any](dense []*P, n int) []*P {
	return cleared(dense, (n+colPageLen-1)/colPageLen)
}

// cleared returns s as n zero values, in its own array when that has
// room (the tables of one process reused for the next).
func cleared[T any](s []T, n int) []T {
	if cap(s) >= n {
		s = s[:n]
		clear(s)
		return s
	}
	return make([]T, n)
}

// countedPages is the page table of a column whose pages go when every
// entry of theirs is empty again (lcol, zcol, hcol): n[k] counts page k's
// entries that are not, kept by the column's writes where each entry is
// already read.
type countedPages[E comparable] struct {
	dense []*[colPageLen]E
	n     []int32 // per page: entries not empty
	free  []*[colPageLen]E
}

// reset makes the column n entries long and all empty, its pages refilled
// with empty (what a previous use left) and kept for reuse.
func (c *countedPages[E]) reset(n int, empty E) {
	for _, d := range c.dense {
		if d != nil {
			for i := range d {
				d[i] = empty
			}
			c.free = append(c.free, d)
		}
	}
	c.dense = pageTable(c.dense, n)
	c.n = cleared(c.n, len(c.dense))
}

// release drops page k, whose entries are all empty again (kept for
// reuse if the column keeps few).
func (c *countedPages[E]) release(k int32) {
	if len(c.free) < keepFree {
		c.free = append(c.free, c.dense[k])
	}
	c.dense[k] = nil
}

// pcol is a column of int32 values, one per task, that reads def where
// nothing was written: a page of 4096 entries is allocated where one is
// first written. A read is two loads, as a slice's is but for the page's
// pointer, and a write to an allocated page one store (the fragment
// pass's first and last fragments of tasks, read and written at every
// fragment, are fcols, which read the same way).
type pcol struct {
	def   int32
	dense []*[colPageLen]int32
	free  []*[colPageLen]int32 // a previous use's pages (reset)
}

func (c *pcol) reset(n int, def int32) {
	for _, d := range c.dense {
		if d != nil {
			c.free = append(c.free, d)
		}
	}
	c.dense = pageTable(c.dense, n)
	c.def = def
}

func (c *pcol) get(i int32) int32 {
	if d := c.dense[i>>colPageBits]; d != nil {
		return d[i&(colPageLen-1)]
	}
	return c.def
}

// add adds x to entry i and returns the sum.
func (c *pcol) add(i int32, x int32) int32 {
	d := c.dense[i>>colPageBits]
	if d == nil {
		d = c.page(i >> colPageBits)
	}
	v := d[i&(colPageLen-1)] + x
	d[i&(colPageLen-1)] = v
	return v
}

func (c *pcol) set(i int32, x int32) {
	d := c.dense[i>>colPageBits]
	if d == nil {
		d = c.page(i >> colPageBits)
	}
	d[i&(colPageLen-1)] = x
}

// page allocates page k.
//
//go:noinline
func (c *pcol) page(k int32) *[colPageLen]int32 {
	d := takePage(&c.free)
	for e := range d {
		d[e] = c.def
	}
	c.dense[k] = d
	return d
}

// frozenPages are a column's pages of colPageLen entries that are arrays
// while written and packed by frame of reference once frozen (freeze),
// their arrays kept for the pages that need them again: fcol's and
// col32's dense pages.
type frozenPages struct {
	dense []*[colPageLen]int32 // per page: its entries once dense, else nil
	froze []packed.Int32s      // per page: its entries once frozen (Len() > 0)
	free  []*[colPageLen]int32
}

// resetPages gives the dense arrays back for reuse and sizes the page
// tables for n entries, none dense or frozen.
func (c *frozenPages) resetPages(n int) {
	for _, d := range c.dense {
		if d != nil {
			c.free = append(c.free, d)
		}
	}
	c.dense = pageTable(c.dense, n)
	c.froze = cleared(c.froze, len(c.dense))
}

// unfreeze makes page k dense and returns its entries: what it held
// frozen, def in the others.
func (c *frozenPages) unfreeze(k int32, def int32) *[colPageLen]int32 {
	d := takePage(&c.free)
	f := &c.froze[k]
	for e := range d {
		d[e] = def
		if e < f.Len() {
			d[e] = f.At(e)
		}
	}
	c.dense[k], *f = d, packed.Int32s{}
	return d
}

// freeze packs the first m entries of page k (all of the column's in
// it), if the page is dense, and gives its array back.
func (c *frozenPages) freeze(k int32, m int) {
	d := c.dense[k]
	if d == nil {
		return
	}
	c.froze[k] = packed.PackInt32Blocks(m, func(b int, dst []int32) []int32 {
		return append(dst, d[b*64:min(m, (b+1)*64)]...)
	})
	c.free = append(c.free, d)
	c.dense[k] = nil
}

// frozenCol is a column of int32 values, one per task, def where nothing
// was written, in pages of 4096 allocated where first written, as pcol's,
// that freeze packs by frame of reference once every task of a page
// completed (its entries are final then, but for a damaged trace's); a
// write to a frozen page unpacks it again.
type frozenCol struct {
	frozenPages
	def int32
}

func (c *frozenCol) resetTo(n int, def int32) {
	c.def = def
	c.resetPages(n)
}

func (c *frozenCol) get(i int32) int32 {
	if d := c.dense[i>>colPageBits]; d != nil {
		return d[i&(colPageLen-1)]
	}
	return c.getFrozen(i)
}

// getFrozen returns entry i of a page that is not dense.
func (c *frozenCol) getFrozen(i int32) int32 {
	if f := &c.froze[i>>colPageBits]; f.Len() > 0 {
		return f.At(int(i & (colPageLen - 1)))
	}
	return c.def
}

func (c *frozenCol) set(i int32, x int32) {
	d := c.dense[i>>colPageBits]
	if d == nil {
		d = c.page(i >> colPageBits)
	}
	d[i&(colPageLen-1)] = x
}

// page allocates page k, with what it held frozen if it was.
//
//go:noinline
func (c *frozenCol) page(k int32) *[colPageLen]int32 { return c.unfreeze(k, c.def) }

// fcol is a frozenCol of fragments, one per task (its first or its last),
// -1 where nothing was written, while their tasks run; frozen, they take
// about a byte a task on fib (4 while dense), the form the fragment graph
// keeps (take).
type fcol struct{ frozenCol }

func (c *fcol) reset(n int) { c.resetTo(n, -1) }

// take returns the column's n entries packed by frame of reference, as
// the fragment graph keeps them, and forgets its frozen pages (its dense
// ones stay for reuse, reset): the frozen pages are joined as they are,
// the others packed first.
func (c *fcol) take(n int) packed.Int32s {
	parts := make([]packed.Int32s, len(c.dense))
	for k := range parts {
		m := min(colPageLen, n-k*colPageLen)
		if parts[k] = c.froze[k]; parts[k].Len() > 0 {
			continue
		}
		d := c.dense[k]
		parts[k] = packed.PackInt32Blocks(m, func(b int, dst []int32) []int32 {
			if d != nil {
				return append(dst, d[b*64:min(m, (b+1)*64)]...)
			}
			for range min(m, (b+1)*64) - b*64 {
				dst = append(dst, -1)
			}
			return dst
		})
	}
	clear(c.froze)
	return packed.JoinInt32s(parts)
}

// lcol is a column of list heads (lists.Pool cells), one per task, None
// where empty, in pages allocated where a list is first pushed to and
// released when their lists are all empty again: a task's pending inputs
// and completed children wait there from one of its scheduling points to
// the next, so the pages of tasks that completed go (a recorded fib's
// would all be dense: 4 bytes a task each). Its lists are only pushed to
// (push) and taken whole (take), so keeping the count of non-empty ones
// costs a compare where each is already read. They are PushRun lists: the
// last fragments of children that complete one after another are mostly
// consecutive nodes (the lean stencil's 2.5 M children of one task, which
// only a taskwait would drain, took 20 MB of cells, 0.1 MB as runs).
type lcol struct{ countedPages[int32] }

func (c *lcol) reset(n int) { c.countedPages.reset(n, lists.None) }

// get returns list i.
func (c *lcol) get(i int32) int32 {
	if d := c.dense[i>>colPageBits]; d != nil {
		return d[i&(colPageLen-1)]
	}
	return lists.None
}

// push puts v (≥ 0) in front of list i (pool.PushRun).
func (c *lcol) push(pool *lists.Pool, i, v int32) {
	k, j := i>>colPageBits, i&(colPageLen-1)
	d := c.dense[k]
	if d == nil {
		d = c.page(k)
	}
	if d[j] == lists.None {
		c.n[k]++
	}
	d[j] = pool.PushRun(d[j], v)
}

// take empties list i and returns what it held.
func (c *lcol) take(i int32) int32 {
	k, j := i>>colPageBits, i&(colPageLen-1)
	d := c.dense[k]
	if d == nil || d[j] == lists.None {
		return lists.None
	}
	h := d[j]
	d[j] = lists.None
	if c.n[k]--; c.n[k] == 0 {
		c.release(k) // every list of the page is empty
	}
	return h
}

//go:noinline
func (c *lcol) page(k int32) *[colPageLen]int32 {
	var d *[colPageLen]int32
	if n := len(c.free); n > 0 {
		d, c.free = c.free[n-1], c.free[:n-1] // all None
	} else {
		d = new([colPageLen]int32)
		fill(d[:], lists.None)
	}
	c.dense[k] = d
	return d
}

// zcol is a column of int32 counts, one per task, 0 where nothing was
// written, in pages allocated where a count first turns non-zero and
// released when every count of the page is 0 again: the children not yet
// completed, which every parent of a recursive program has for a while
// (a recorded fib's pages all dense at its end, 4 bytes a task, as a
// pcol). Counts only change by add, so keeping the number of non-zero
// ones costs two compares where each is already read.
type zcol struct{ countedPages[int32] }

func (c *zcol) reset(n int) { c.countedPages.reset(n, 0) }

func (c *zcol) get(i int32) int32 {
	if d := c.dense[i>>colPageBits]; d != nil {
		return d[i&(colPageLen-1)]
	}
	return 0
}

// add adds x to count i and returns the sum.
func (c *zcol) add(i int32, x int32) int32 {
	k, j := i>>colPageBits, i&(colPageLen-1)
	d := c.dense[k]
	if d == nil {
		if x == 0 {
			return 0
		}
		d = c.page(k)
	}
	old := d[j]
	v := old + x
	d[j] = v
	switch {
	case old == 0 && v != 0:
		c.n[k]++
	case old != 0 && v == 0:
		if c.n[k]--; c.n[k] == 0 {
			c.release(k) // every count of the page is 0
		}
	}
	return v
}

//go:noinline
func (c *zcol) page(k int32) *[colPageLen]int32 {
	d := takePage(&c.free) // a reused page is all 0
	c.dense[k] = d
	return d
}

// tcol is a column of times, one per task, -1 where nothing was written,
// in pages of 4096 allocated where first written: the tasks' first starts,
// which a producer that creates every task before the first runs has none
// of at its peak. A page holds its times as int32 offsets from the first
// one written there (16 KiB: the tasks of a page start within seconds of
// one another, nearly always); when one does not fit, as 40-bit offsets
// (20 KiB: BOTS health large's pages each span more than 2.1 s, all 54 of
// them, and less than 9 minutes); and as int64 times (32 KiB) when one
// does not fit those. Its pages are not frozen: packed by frame of
// reference they took 2.9 bytes a task on BOTS health, for 1.4 % more
// instructions (twenty-seventh round).
type tcol struct {
	frozenPages // per page: offsets from base, tcolNone unwritten (dense only)
	base        []int64
	mid         []*tpage40           // per page: the 40-bit offsets once a 32-bit one did not fit
	wide        []*[colPageLen]int64 // per page: the times once a 40-bit offset did not fit
	freeM       []*tpage40
	freeW       []*[colPageLen]int64
	gone        int32 // the pages below it are dropped (dropBelow)
}

// tpage40 is a tcol page of 40-bit offsets from its base: the low 32 bits
// in lo, the high 8 (signed) in hi, tcolNone8 in hi where unwritten (so
// the offsets lie in [−127·2³², 2³⁹)).
type tpage40 struct {
	lo [colPageLen]int32
	hi [colPageLen]int8
}

// at returns entry j's time, its page's base plus its offset, or −1 when
// unwritten.
func (m *tpage40) at(base int64, j int32) int64 {
	h := m.hi[j]
	if h == tcolNone8 {
		return -1
	}
	return base + (int64(h)<<32 | int64(uint32(m.lo[j])))
}

// put writes entry j's offset o (off40's).
func (m *tpage40) put(j int32, o int64) { m.lo[j], m.hi[j] = int32(o), int8(o>>32) }

// dropBelow drops pages gone..k-1, for the collector, not for reuse.
func (c *tcol) dropBelow(k int32) {
	for ; c.gone < k && int(c.gone) < len(c.dense); c.gone++ {
		c.dense[c.gone], c.mid[c.gone], c.wide[c.gone] = nil, nil, nil
	}
}

const (
	tcolNone  = math.MinInt32
	tcolNone8 = math.MinInt8
)

// off40 returns x − b and whether a tpage40 holds it: not wrapped around,
// its high bits in (tcolNone8, 127].
func off40(x, b int64) (int64, bool) {
	o := x - b
	h := o >> 32
	return o, (x >= b) == (o >= 0) && h > tcolNone8 && h <= math.MaxInt8
}

func (c *tcol) reset(n int) {
	for _, m := range c.mid {
		if m != nil {
			c.freeM = append(c.freeM, m)
		}
	}
	for _, w := range c.wide {
		if w != nil {
			c.freeW = append(c.freeW, w)
		}
	}
	c.resetPages(n)
	c.mid, c.wide, c.gone = pageTable(c.mid, n), pageTable(c.wide, n), 0
	if np := len(c.dense); cap(c.base) >= np {
		c.base = c.base[:np]
	} else {
		c.base = make([]int64, np)
	}
}

func (c *tcol) get(i int32) int64 {
	k, j := i>>colPageBits, i&(colPageLen-1)
	if d := c.dense[k]; d != nil {
		if o := d[j]; o != tcolNone {
			return c.base[k] + int64(o)
		}
		return -1
	}
	return c.getWide(k, j)
}

// getWide is get's entry j of page k, which is not of 32-bit offsets
// (get stays inlined).
//
//go:noinline
func (c *tcol) getWide(k, j int32) int64 {
	if m := c.mid[k]; m != nil {
		return m.at(c.base[k], j)
	}
	if w := c.wide[k]; w != nil {
		return w[j]
	}
	return -1
}

func (c *tcol) set(i int32, x int64) {
	k, j := i>>colPageBits, i&(colPageLen-1)
	d := c.dense[k]
	if d == nil {
		if m := c.mid[k]; m != nil {
			if o, ok := off40(x, c.base[k]); ok {
				m.put(j, o)
				return
			}
			c.widenMid(k)[j] = x
			return
		}
		if w := c.wide[k]; w != nil {
			w[j] = x
			return
		}
		d = c.page(k, x)
	}
	if o := x - c.base[k]; o > tcolNone && o <= math.MaxInt32 {
		d[j] = int32(o)
		return
	}
	c.widen(k, j, x)
}

// page allocates page k, its offsets from x.
//
//go:noinline
func (c *tcol) page(k int32, x int64) *[colPageLen]int32 {
	d := takePage(&c.free)
	for e := range d {
		d[e] = tcolNone
	}
	c.dense[k], c.base[k] = d, x
	return d
}

// widen makes page k, whose 32-bit offsets do not hold x, a page of
// 40-bit offsets, or of times if those do not hold it either, and writes
// x to its entry j.
//
//go:noinline
func (c *tcol) widen(k, j int32, x int64) {
	d := c.dense[k]
	if o, ok := off40(x, c.base[k]); ok {
		m := takePage(&c.freeM)
		for e, lo := range d {
			m.lo[e], m.hi[e] = lo, int8(lo>>31) // the sign's bits
			if lo == tcolNone {
				m.hi[e] = tcolNone8
			}
		}
		m.put(j, o)
		c.free = append(c.free, d)
		c.dense[k], c.mid[k] = nil, m
		return
	}
	w := takePage(&c.freeW)
	for e, o := range d {
		w[e] = -1
		if o != tcolNone {
			w[e] = c.base[k] + int64(o)
		}
	}
	w[j] = x
	c.free = append(c.free, d)
	c.dense[k], c.wide[k] = nil, w
}

// widenMid makes page k of 40-bit offsets a page of times and returns
// them.
//
//go:noinline
func (c *tcol) widenMid(k int32) *[colPageLen]int64 {
	m, w := c.mid[k], takePage(&c.freeW)
	for e := range w {
		w[e] = c.get(k<<colPageBits | int32(e))
	}
	c.freeM = append(c.freeM, m)
	c.mid[k], c.wide[k] = nil, w
	return w
}

// rcol is a frozenCol of the tasks' run times, 0 where nothing was
// written: frozen, tasks made one after another run for alike times, 2–3
// bytes a task on BOTS health.
type rcol struct{ frozenCol }

func (c *rcol) reset(n int) { c.resetTo(n, 0) }

// col32 is a column of int32 values, one per task, that reads def where
// nothing was written, whose pages start empty (no memory but their
// header), hold one value written to some of their entries (a bit an
// entry: 512 bytes), and become dense (4 bytes an entry) when a second
// value is written: a column written with the same value for the tasks of
// a page (the barrier every task of a loop joins, the fragment their
// creator left off at) costs next to nothing. A dense page whose entries
// are final (the creator's fragments of tasks that all completed) may be
// packed by frame of reference (freeze), and is unpacked again if written.
type col32 struct {
	frozenPages
	def   int32
	pages []colPage
	// freeSet holds a previous use's bit arrays (reset), for pages that
	// need them.
	freeSet []*[colPageLen / 64]uint64
}

// colPage is a page's state but for its dense entries (col32.dense).
type colPage struct {
	set *[colPageLen / 64]uint64 // entries holding v, nil when none (or dense)
	v   int32
}

// reset makes c a column of n entries reading def, keeping the arrays it
// had for the pages it will need.
func (c *col32) reset(n int, def int32) {
	for i := range c.pages {
		if p := &c.pages[i]; p.set != nil {
			c.freeSet = append(c.freeSet, p.set)
		}
	}
	c.resetPages(n)
	c.pages = cleared(c.pages, len(c.dense))
	c.def = def
}

// get returns entry i.
func (c *col32) get(i int32) int32 {
	if d := c.dense[i>>colPageBits]; d != nil {
		return d[i&(colPageLen-1)]
	}
	p := &c.pages[i>>colPageBits]
	j := i & (colPageLen - 1)
	if p.set != nil {
		if p.set[j/64]&(1<<(j%64)) != 0 {
			return p.v
		}
		return c.def
	}
	if f := &c.froze[i>>colPageBits]; f.Len() > 0 {
		return f.At(int(j))
	}
	return c.def
}

// set writes x to entry i.
func (c *col32) set(i int32, x int32) {
	k := i >> colPageBits
	j := i & (colPageLen - 1)
	d := c.dense[k]
	if d != nil {
		d[j] = x
		return
	}
	if c.froze[k].Len() > 0 {
		c.densify(k)[j] = x
		return
	}
	p := &c.pages[k]
	bit := uint64(1) << (j % 64)
	switch {
	case x == c.def:
		if p.set != nil {
			p.set[j/64] &^= bit
		}
	case p.set == nil:
		p.set = takePage(&c.freeSet)
		clear(p.set[:]) // a previous use's
		p.v = x
		p.set[j/64] |= bit
	case x == p.v:
		p.set[j/64] |= bit
	default:
		c.densify(k)[j] = x
	}
}

// densify makes page k dense, with what it held in bits or frozen, and
// returns its entries.
func (c *col32) densify(k int32) *[colPageLen]int32 {
	d := c.unfreeze(k, c.def)
	p := &c.pages[k]
	if s := p.set; s != nil {
		for w, word := range s {
			for ; word != 0; word &= word - 1 {
				d[w*64+bits.TrailingZeros64(word)] = p.v
			}
		}
		c.freeSet = append(c.freeSet, s)
	}
	p.set = nil
	return d
}

// bcol is a column of bytes, one per task, 0 where nothing was written, in
// pages allocated where first written with another value.
type bcol struct {
	dense []*[colPageLen]uint8
	free  []*[colPageLen]uint8
}

func (c *bcol) reset(n int) {
	for _, d := range c.dense {
		if d != nil {
			clear(d[:])
			c.free = append(c.free, d)
		}
	}
	c.dense = pageTable(c.dense, n)
}

func (c *bcol) get(i int32) uint8 {
	if d := c.dense[i>>colPageBits]; d != nil {
		return d[i&(colPageLen-1)]
	}
	return 0
}

func (c *bcol) set(i int32, x uint8) {
	d := c.dense[i>>colPageBits]
	if d == nil {
		if x == 0 {
			return
		}
		d = c.page(i >> colPageBits)
	}
	d[i&(colPageLen-1)] = x
}

//go:noinline
func (c *bcol) page(k int32) *[colPageLen]uint8 {
	d := takePage(&c.free)
	c.dense[k] = d
	return d
}

// hcol is a column of lists, one per task, empty where nothing was
// written, in pages allocated where a list is first pushed to and
// released when their lists are all empty again: the successor lists of
// tasks all created first go as the tasks complete. An entry is a
// lists.Short read against its task, 4 bytes where a Head took 8: the
// tasks a loop made one after another that depend on it (the lean
// stencil's three successors of every task) are a run held in it, 9.5 MB
// less at the 10 M-event lean stencil's peak, the end of its creations.
type hcol struct{ countedPages[lists.Short] }

func (c *hcol) reset(n int) { c.countedPages.reset(n, 0) }

func (c *hcol) get(i int32) lists.Head {
	if d := c.dense[i>>colPageBits]; d != nil {
		return d[i&(colPageLen-1)].Head(i)
	}
	return lists.Head{}
}

// clear empties list i (its cells given back to the pool by the caller).
func (c *hcol) clear(i int32) {
	k, j := i>>colPageBits, i&(colPageLen-1)
	d := c.dense[k]
	if d == nil || d[j].Empty() {
		return
	}
	d[j] = 0
	if c.n[k]--; c.n[k] == 0 {
		c.release(k) // every list of the page is empty
	}
}

// push puts v (≥ 0) in front of list i (pool.PushHead).
func (c *hcol) push(pool *lists.Pool, i int32, v int32) {
	k, j := i>>colPageBits, i&(colPageLen-1)
	d := c.dense[k]
	if d == nil {
		d = c.page(k)
	}
	if d[j].Empty() {
		c.n[k]++
	}
	if !d[j].Grow(i, v) {
		pool.PushShort(&d[j], i, v)
	}
}

// fits reports whether push(i, v) would hold v in list i's head, no cell.
func (c *hcol) fits(i, v int32) bool {
	h := lists.Short(0)
	if d := c.dense[i>>colPageBits]; d != nil {
		h = d[i&(colPageLen-1)]
	}
	return h.Grow(i, v)
}

// keepFree is how many emptied pages a column keeps for reuse; more go to
// the collector.
const keepFree = 4

//go:noinline
func (c *hcol) page(k int32) *[colPageLen]lists.Short {
	d := takePage(&c.free)
	c.dense[k] = d
	return d
}

// counts is a column of int32 counts per task that are nearly always
// small: a byte a task where written (bcol), a count outside 0..254 kept
// exactly in a table (a task with 255 predecessors or more, a damaged
// trace's negative count).
type counts struct {
	small bcol
	big   taskMap
}

const bigCount = 255

func (c *counts) reset(n int) {
	c.small.reset(n)
	c.big.reset(n)
}

func (c *counts) get(t Task) int32 {
	if x := c.small.get(t); x != bigCount {
		return int32(x)
	}
	return c.big.get(t, 0)
}

// add adds n to t's count and returns the sum.
func (c *counts) add(t Task, n int32) int32 {
	if d := c.small.dense[t>>colPageBits]; d != nil {
		j := t & (colPageLen - 1)
		if x := d[j]; x != bigCount {
			if v := int32(x) + n; v >= 0 && v < bigCount {
				d[j] = uint8(v)
				return v
			}
		}
	}
	v := c.get(t) + n
	c.set(t, v)
	return v
}

func (c *counts) set(t Task, v int32) {
	if v >= 0 && v < bigCount {
		if c.small.get(t) == bigCount {
			c.big.del(t)
		}
		c.small.set(t, uint8(v))
		return
	}
	c.small.set(t, bigCount)
	c.big.insert(t, v)
}

// taskMap maps tasks to int32 values where few tasks hold one (the
// predecessor counts that do not fit a byte): an open-addressing table of
// the entries, deleted when no longer needed, so its size follows the
// tasks that hold one, not the task table.
type taskMap struct {
	slots []mapSlot // a power of two, at most half full
	n     int
	shift uint8
	// has marks the tasks holding an entry, a bit a task slot: a task
	// without one (most, most of the time) is told so by one test.
	has []uint64
}

type mapSlot struct{ key, val int32 } // key -1: empty

// get returns t's value, or none.
func (m *taskMap) get(t Task, none int32) int32 {
	if m.has[t/64]&(1<<(t%64)) == 0 {
		return none
	}
	for i := m.home(t); ; i = (i + 1) & uint32(len(m.slots)-1) {
		switch m.slots[i].key {
		case t:
			return m.slots[i].val
		case -1:
			return none
		}
	}
}

func (m *taskMap) home(t Task) uint32 { return uint32(t) * 0x9E3779B9 >> m.shift }

// insert sets t's value to v.
func (m *taskMap) insert(t Task, v int32) {
	m.place(t, v)
	m.has[t/64] |= 1 << (t % 64)
}

// place sets t's value to v in the table.
func (m *taskMap) place(t Task, v int32) {
	if 2*(m.n+1) > len(m.slots) {
		m.grow()
	}
	i := m.home(t)
	for ; m.slots[i].key != -1; i = (i + 1) & uint32(len(m.slots)-1) {
		if m.slots[i].key == t {
			m.slots[i].val = v
			return
		}
	}
	m.slots[i] = mapSlot{t, v}
	m.n++
}

// del removes t's entry, moving back the entries of its probe run that
// would no longer be found (no tombstones: the table never fills with
// them however many tasks come and go).
func (m *taskMap) del(t Task) {
	if m.has[t/64]&(1<<(t%64)) == 0 {
		return
	}
	m.has[t/64] &^= 1 << (t % 64)
	mask := uint32(len(m.slots) - 1)
	i := m.home(t)
	for ; m.slots[i].key != t; i = (i + 1) & mask {
		if m.slots[i].key == -1 {
			return
		}
	}
	for j := (i + 1) & mask; m.slots[j].key != -1; j = (j + 1) & mask {
		// The entry at j moves to the hole at i unless its home lies
		// cyclically in (i, j].
		if h := m.home(m.slots[j].key); (j-h)&mask >= (j-i)&mask {
			m.slots[i] = m.slots[j]
			i = j
		}
	}
	m.slots[i].key = -1
	m.n--
}

func (m *taskMap) grow() {
	old := m.slots
	size := max(2*len(old), 16)
	m.slots = make([]mapSlot, size)
	for i := range m.slots {
		m.slots[i].key = -1
	}
	m.shift = uint8(32 - bits.TrailingZeros(uint(size)))
	m.n = 0
	for _, s := range old {
		if s.key != -1 {
			m.place(s.key, s.val)
		}
	}
}

// reset empties m for tasks 0..n−1, keeping its table.
func (m *taskMap) reset(n int) {
	if m.n > 0 {
		for i := range m.slots {
			m.slots[i].key = -1
		}
	}
	m.n = 0
	m.has = cleared(m.has, (n+63)/64)
}

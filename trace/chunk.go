package trace

import (
	"fmt"
	"unsafe"
)

// Chunk is a decoded run of consecutive events of one thread. Readers reuse a
// Chunk's slices from one chunk to the next: copy what must outlive the call.
type Chunk struct {
	Thread int
	Seq    int64 // per-thread chunk number, from 0
	Events []Event
	Deps   []Dep // dependence lists of TaskDeps events; Args[2] indexes here
	// Offset is the file offset of the chunk's kinds column: event i's kind
	// byte is at Offset+i, which is how errors point at single events.
	Offset int64
}

// registers are the delta-coding contexts of a chunk's args column: every
// argument is coded as the zig-zag difference to the same argument of the
// event of the same kind two back (version 3; the previous one in versions
// 1 and 2), and dependence addresses to the previous address. Decoding
// then needs no per-field type switch (ids, names and flags of events of
// one kind differ little, so deltas stay small). Two back, because a
// thread's events of one kind alternate: task_schedule switches from the
// implicit task to an explicit one and back, and ids of different threads
// differ by 2^40, so coding against the previous event cost 8 bytes for
// both task arguments of every task_schedule (a third of a task-heavy
// trace's bytes); barriers and taskwaits alternate the same way. Each kind
// has two slots that take turns (flip); with alt = 0 it uses the first
// only. Registers start at zero in every chunk so chunks decode
// independently.
type registers struct {
	args [NumKinds][2][MaxArgs]int64
	flip [NumKinds]uint8
	addr uint64
}

// kindSlots bounds the kinds the decoder keeps registers for: a power of
// two, so that a kind byte masked with kindSlots−1 indexes them without a
// bounds check (kinds at or past NumKinds never reach the registers).
const kindSlots = 64

// decRegisters are the registers as the decoder keeps them, with what
// decodeRun reads per event beside them (one pointer for all of it): the
// two registers of each kind side by side, each in 64 bytes so that they
// differ in one bit of their byte offset; per kind the byte offset of the
// one its next event does not use, turned by flip (64 with alt = 1, 0
// with alt = 0) and stored before it is used, so an event finds and turns
// its register with a load, an xor and a store (the offset of the one it
// used took a copy more: both values were live); and per kind byte its
// fastArgs entry.
type decRegisters struct {
	fast [256]uint32 // fastArgs of the chunk's version (first, and unsigned: one instruction to index)
	args [2 * kindSlots]decRegister
	off  [kindSlots]uint32 // the register the kind's next event does not use
	flip uint32            // regSize·altOf the chunk's version
	addr uint64
}

// decRegister is one register of decRegisters, padded to regSize bytes.
type decRegister struct {
	v [MaxArgs]int64
	_ [regSize/8 - MaxArgs]int64
}

// regSize is the bytes of a decRegister: a power of two, so that the two
// registers of a kind (2k, 2k+1) differ in the one bit regSize of their
// byte offset.
const regSize = 64

// reset zeroes the registers, points every kind at its first and takes
// the alternation and the fast kinds of the columns' version.
func (r *decRegisters) reset(cols *chunkColumns) {
	clear(r.args[:])
	r.off, r.flip, r.addr = firstOffsets[cols.alt&1], uint32(cols.alt)*regSize, 0
	r.fast = *cols.fast
}

// firstOffsets are decRegisters.off at a chunk's start, per alternation:
// the register a kind's first event does not use (with alt = 0, the
// first, which every event uses).
var firstOffsets = func() (s [2][kindSlots]uint32) {
	for k := range kindSlots {
		s[0][k] = uint32(2 * k * regSize)
		s[1][k] = uint32((2*k + 1) * regSize)
	}
	return
}()

// next returns the register of kind k's next event and moves the kind's
// turn (alt 1: to its other register; 0: it keeps the first).
func (r *decRegisters) next(k Kind) *[MaxArgs]int64 {
	r.off[k&(kindSlots-1)] ^= r.flip
	o := r.off[k&(kindSlots-1)]
	return &r.args[(o/regSize)&(2*kindSlots-1)].v
}

// altOf returns the register alternation of a format version: 1 from
// version 3 on, 0 before.
func altOf(version int) uint8 {
	if version >= 3 {
		return 1
	}
	return 0
}

// nargsOf returns the encoded argument counts of a format version's kinds:
// before version 4 mpi_enter carries its function only (no call site).
func nargsOf(version int) *[256]uint8 {
	if version >= 4 {
		return &nargs
	}
	return &nargsV3
}

// chunkEncoder accumulates one thread's events for a chunk: kinds (one byte
// each), time deltas (the first relative to t0) and the args stream (every
// argument as the difference to its register, see registers, then for
// task_dependences the count and address/type pairs), all zig-zag coded
// and laid out as stream-vbyte columns at flush.
type chunkEncoder struct {
	thread   int
	seq      int64
	n        int
	t0, last int64
	kinds    []byte
	dt       []uint64
	args     []uint64
	reg      registers
	alt      uint8       // altOf the version written
	na       *[256]uint8 // nargsOf the version written
}

func (c *chunkEncoder) reset() {
	c.n = 0
	c.kinds = c.kinds[:0]
	c.dt = c.dt[:0]
	c.args = c.args[:0]
	c.reg = registers{}
}

func zig(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// add encodes e. deps is the dependence list of a TaskDeps event (e.Args[1]
// and e.Args[2] are ignored and taken from deps).
func (c *chunkEncoder) add(e *Event, deps []Dep) {
	if c.n == 0 {
		c.t0 = e.Time
		c.last = e.Time
	}
	c.kinds = append(c.kinds, byte(e.Kind))
	c.dt = append(c.dt, zig(e.Time-c.last))
	c.last = e.Time
	c.n++
	f := c.reg.flip[e.Kind]
	c.reg.flip[e.Kind] = f ^ c.alt
	r := &c.reg.args[e.Kind][f]
	for j := 0; j < int(c.na[e.Kind]); j++ {
		c.args = append(c.args, zig(e.Args[j]-r[j]))
		r[j] = e.Args[j]
	}
	if e.Kind == TaskDeps {
		c.args = append(c.args, uint64(len(deps)))
		for _, d := range deps {
			c.args = append(c.args, zig(int64(d.Addr-c.reg.addr)), uint64(d.Type))
			c.reg.addr = d.Addr
		}
	}
}

// chunkColumns are the raw columns of a chunk frame.
type chunkColumns struct {
	thread, seq, n, t0 int64
	nargs              int64 // values in the args stream
	kinds              []byte
	dtCtrl, dtData     []byte
	argsCtrl, argsData []byte
	alt                uint8        // altOf the file's version
	na                 *[256]uint8  // nargsOf the file's version
	fast               *[256]uint32 // fastOf the file's version
	// payload-relative positions of the kinds and args data, for errors
	kindsPos, argsPos int
}

// columnError locates a decoding problem inside a chunk.
type columnError struct {
	event  int
	column string
	pos    int
	msg    string
}

func (e *columnError) Error() string {
	unit := "value"
	if e.column == "kinds" {
		unit = "byte"
	}
	return fmt.Sprintf("event %d: %s column %s %d: %s", e.event, e.column, unit, e.pos, e.msg)
}

// decodeColumns expands cols into c.Events and c.Deps, reusing their
// storage and the scratch buffers in sc: the chunk decoder run over the
// whole chunk as one window (what the Reader hands out).
//
// It decodes first without summing the data streams' lengths from their
// control bytes (svbDataLen: five instructions an event, PERFORMANCE.md,
// twenty-third round), and takes the result when the decode read every
// value and found each stream's data exactly as long as its values and
// padding: then the sums were what the decode read, and the checks
// would have passed. Anything else (an error, a stream that ends early,
// one longer than its values) decodes the chunk again with every check
// in its order, so that a damaged chunk reports what it always did.
func decodeColumns(cols *chunkColumns, c *Chunk, sc *scratch) error {
	d := &sc.dec
	if checkColumns(cols, false) == nil {
		// n is the kinds column's length (checked): a claim the frame
		// holds.
		if cap(c.Events) < int(cols.n) {
			c.Events = make([]Event, 0, cols.n)
		}
		d.start(cols, int(cols.n), int(cols.nargs))
		evs, deps, err := d.next(c.Events[:0], c.Deps[:0], d.n)
		if err == nil && !d.short && d.abase+len(d.av) == d.m &&
			d.dtPos == len(cols.dtData)-svbPad && d.aPos == len(cols.argsData)-svbPad {
			c.Thread, c.Seq, c.Events, c.Deps = int(cols.thread), cols.seq, evs, deps
			return nil
		}
	}
	if err := d.open(cols, int(cols.n), int(cols.nargs)); err != nil {
		return err
	}
	if cap(c.Events) < d.n {
		c.Events = make([]Event, 0, d.n)
	}
	evs, deps, err := d.next(c.Events[:0], c.Deps[:0], d.n)
	if err != nil {
		return err
	}
	c.Thread, c.Seq, c.Events, c.Deps = int(cols.thread), cols.seq, evs, deps
	return nil
}

// chunkDecoder decodes one chunk's columns a window of events at a time.
// Between windows it keeps where each stream stands (the next event, the
// data positions of the dt and args streams, whose control bytes follow
// from the value indices), the time of the last event and the delta
// registers, so a reader holds a window of decoded events instead of a
// chunk. Every check of the whole-chunk decode is made at the same point
// of the stream and reports the same event and position, whichever window
// it falls in: the column sizes when the chunk is opened, the kinds,
// argument counts and dependence lists per event, the leftover arguments
// after the chunk's last event.
type chunkDecoder struct {
	cols  chunkColumns
	n     int   // events to decode (a salvaged chunk may stop before cols.n)
	m     int   // values in the args stream
	i     int   // next event to decode; a multiple of 4 until the end
	t     int64 // time of event i−1 (t0 before the first)
	dtPos int   // data position of event i's dt value
	// av holds the decoded args values abase, abase+1, …, zig-zag
	// decoded (svbDecodeZZ: the dependence counts and types, which are
	// not zig-zag coded, are coded back with unzz where they are read);
	// q indexes the next unread one, aPos is the data position of the
	// value after av's last. ablock is how many values a refill decodes
	// at least.
	av     []uint64
	q      int
	abase  int
	aPos   int
	ablock int
	// short is set when a data stream ended before its values did: only
	// when its length was not checked (checkColumns).
	short bool
	reg   decRegisters
	// deps[:ndeps] are the dependence lists while decodeRun runs, which
	// writes the lists into deps's spare room and moves ndeps.
	deps  []Dep
	ndeps int
}

// open checks cols' column sizes and starts decoding it; the first n events
// (n ≤ cols.n) will be decoded, ablock args values at a time at least.
func (d *chunkDecoder) open(cols *chunkColumns, n, ablock int) error {
	if err := checkColumns(cols, true); err != nil {
		return err
	}
	d.start(cols, n, ablock)
	return nil
}

// checkColumns checks cols' column sizes, with (lengths) or without the
// data streams' lengths against their control bytes. Without them the
// decode is still safe (every read of a data stream is bounded by the
// stream's end), but it may read past the values into the padding or
// stop short (chunkDecoder.short): decodeColumns says what it then does.
func checkColumns(cols *chunkColumns, lengths bool) error {
	if cols.n < 0 || int64(len(cols.kinds)) != cols.n {
		return &columnError{event: 0, column: "kinds", msg: fmt.Sprintf("has %d bytes for n=%d events", len(cols.kinds), cols.n)}
	}
	if err := svbCheck(cols.dtCtrl, cols.dtData, int(cols.n), lengths); err != nil {
		return &columnError{column: "dt", msg: err.Error()}
	}
	if cols.nargs < 0 || cols.nargs > int64(len(cols.argsData))+1<<20 {
		return &columnError{column: "args", msg: fmt.Sprintf("implausible value count %d", cols.nargs)}
	}
	if err := svbCheck(cols.argsCtrl, cols.argsData, int(cols.nargs), lengths); err != nil {
		return &columnError{column: "args", msg: err.Error()}
	}
	return nil
}

// start starts decoding cols, whose column sizes checkColumns has
// checked; the first n events (n ≤ cols.n) will be decoded, ablock args
// values at a time at least.
func (d *chunkDecoder) start(cols *chunkColumns, n, ablock int) {
	d.cols = *cols
	d.n, d.m = min(n, int(cols.n)), int(cols.nargs)
	d.i, d.t, d.dtPos, d.short = 0, cols.t0, 0, false
	d.av, d.q, d.abase, d.aPos, d.ablock = d.av[:0], 0, 0, 0, max(ablock, 4)
	d.reg.reset(cols)
}

// done reports whether every event to decode has been.
func (d *chunkDecoder) done() bool { return d.i >= d.n }

// next decodes up to w more events (w a multiple of 4 unless it reaches
// the end) after evs, appending their dependence lists to deps, and
// returns the extended slices. On error evs and deps come back as given
// and the decoder is dead.
func (d *chunkDecoder) next(evs []Event, deps []Dep, w int) ([]Event, []Dep, error) {
	cnt := min(w, d.n-d.i)
	if cnt <= 0 {
		return evs, deps, nil
	}
	l := len(evs)
	if cap(evs)-l < cnt {
		// A whole chunk gets its size; a window that grows, room for more.
		size := l + cnt
		if l > 0 {
			size = max(size, 2*cap(evs))
		}
		grown := make([]Event, l, size)
		copy(grown, evs)
		evs = grown
	}
	out := evs[l : l+cnt]
	cols := &d.cols
	// The times first, in the loop that decodes their deltas: the events'
	// loop below then keeps fewer values in registers.
	var dn int
	dn, t := svbTimes(cols.dtCtrl[d.i/4:], cols.dtData[d.dtPos:], out, cnt, d.t)
	if dn < 0 {
		d.short, dn = true, 0
	}
	d.t, d.dtPos = t, d.dtPos+dn

	ndeps := len(deps)
	i0 := d.i
	kinds := cols.kinds[i0 : i0+cnt]
	av, q := d.av, d.q
	reg := &d.reg
	for x := 0; x < len(out); x++ {
		// The events of the common kinds, as long as their arguments are
		// decoded; the loop stops at anything else (a dependence list, a
		// refill, an unknown kind), which the code below takes one event
		// at a time.
		// decodeRun turns the registers of alt = 1 (versions 3 and on);
		// the older versions take the general path.
		if cap(av)-len(av) >= argsPad && reg.flip != 0 {
			d.deps, d.ndeps = deps, len(deps)
			left, ap := d.decodeRun(out[x:], kinds[x:], av[:len(av)+argsPad], len(av), q)
			deps, d.deps = d.deps[:d.ndeps], nil
			x = len(out) - left
			q = int(uintptr(ap)-uintptr(unsafe.Pointer(unsafe.SliceData(av)))) / 8
		}
		if x == len(out) {
			break
		}
		k := Kind(kinds[x])
		if k == KindInvalid || k >= NumKinds {
			return evs[:l], deps[:ndeps], &columnError{event: i0 + x, column: "kinds", pos: i0 + x, msg: fmt.Sprintf("unknown event kind %d", uint8(k))}
		}
		na := int(cols.na[k])
		if q+na > len(av) {
			if av, q = d.refill(q, na); q+na > len(av) {
				return evs[:l], deps[:ndeps], &columnError{event: i0 + x, column: "args", pos: d.abase + q, msg: fmt.Sprintf("the stream ends before %s's %d arguments", k, na)}
			}
		}
		r := reg.next(k)
		e := &out[x]
		e.Kind = k
		e.Args = [MaxArgs]int64{}
		for j, a := range av[q : q+na] {
			r[j] += int64(a)
			e.Args[j] = r[j]
		}
		if k == MPIEnter && na == 1 { // versions 1 to 3: the call site is unknown
			e.Args[1] = -1
		}
		q += na
		if k == TaskDeps {
			if q >= len(av) {
				if av, q = d.refill(q, 1); q >= len(av) {
					return evs[:l], deps[:ndeps], &columnError{event: i0 + x, column: "args", pos: d.abase + q, msg: "the stream ends before the dependence count"}
				}
			}
			nd := unzz(av[q])
			q++
			if nd > maxListLen || nd > uint64(d.m-d.abase-q)/2 {
				return evs[:l], deps[:ndeps], &columnError{event: i0 + x, column: "args", pos: d.abase + q - 1, msg: fmt.Sprintf("dependence count %d exceeds the stream or the limit %d", nd, maxListLen)}
			}
			if q+2*int(nd) > len(av) {
				av, q = d.refill(q, 2*int(nd))
			}
			e.Args[1] = int64(nd)
			e.Args[2] = int64(len(deps))
			for j := 0; j < int(nd); j++ {
				ty := unzz(av[q+1])
				if ty > 0xff {
					return evs[:l], deps[:ndeps], &columnError{event: i0 + x, column: "args", pos: d.abase + q + 1, msg: fmt.Sprintf("dependence %d has type %d", j, ty)}
				}
				reg.addr += av[q]
				deps = append(deps, Dep{Addr: reg.addr, Type: uint8(ty)})
				q += 2
			}
		}
	}
	d.i += cnt
	d.q = q
	if d.i == int(cols.n) && d.abase+q != d.m {
		return evs[:l], deps[:ndeps], &columnError{event: d.i, column: "args", pos: d.abase + q, msg: fmt.Sprintf("%d values left over after the last event", d.m-d.abase-q)}
	}
	return evs[:l+cnt], deps, nil
}

// argsPad is the room the args values keep after their last (refill
// allocates it), so that decodeRun can take any event's arguments as a
// fixed-size array.
const argsPad = MaxArgs

// decodeRun decodes the kinds and arguments of the events of out (their
// times set) from their kinds (len(kinds) >= len(out)) and the args values
// av[:m] (zig-zag decoded, chunkDecoder.av) from q (len(av) >=
// m+argsPad), appending dependence lists to d.deps[:d.ndeps], for as long
// as each event's kind has a fast entry (its argument count, reg.fast)
// and its arguments are in av[:m], or is a task_dependences whose task,
// count and list are in av[:m], whose count is within the limit and the
// spare room of d.deps and whose types are good. It returns the events of out left undecoded and where the
// next event's arguments start in av. Anything else is left to next's
// general path, which names what is wrong at the same event and position
// as ever. Kept apart from next, whose error paths would otherwise take
// the machine registers this loop needs; the dependence list is d's, not
// a local, for the same reason (read and written only at a
// task_dependences). It turns the registers of alt = 1 only (reg.flip
// regSize; next calls it for those).
//
// Every access goes through an unsafe pointer its guard bounds: the
// event and kind at e and kp up to the last kind, klast (the events from
// e on start at min(len(out), len(kinds)), and they move on only while
// kp is below klast);
// an event's arguments, the MaxArgs values at ap, with ap+8·na ≤ &av[m]
// checked, within av[:m+argsPad]; a task_dependences's task, count and
// pairs, the 2+2·nd values at ap, with their end checked the same way;
// its list, deps[ndeps : ndeps+nd], with nd ≤ cap(deps)−ndeps checked; a
// register, at the byte offset reg.off holds (below 2·kindSlots·regSize:
// firstOffsets, flipped in bit regSize only; a kind past kindSlots has no
// fast entry). Slices took eleven instructions an event more and the
// machine registers the loop needs (PERFORMANCE.md, twenty-second and
// twenty-third rounds).
func (d *chunkDecoder) decodeRun(out []Event, kinds []byte, av []uint64, m, q int) (left int, ap unsafe.Pointer) {
	left = min(len(out), len(kinds))
	avp := unsafe.Pointer(unsafe.SliceData(av[:m+argsPad]))
	ap = unsafe.Add(avp, 8*q)
	if left == 0 {
		return 0, ap
	}
	reg := &d.reg
	// e and kp point at the next event and its kind, moved on only when
	// there is a next (never past the slices): klast is the address of
	// the last kind, for comparisons only (one instruction an event fewer
	// than a count). ap points at the next event's first argument; alim is
	// the address of av[m], for comparisons only. The caller works out
	// the events and values done: fewer values live in the loop than with
	// indexes, so that they fit the machine's registers.
	e, kp := &out[0], unsafe.Pointer(&kinds[0])
	klast := uintptr(kp) + uintptr(left) - 1
	alim := uintptr(avp) + 8*uintptr(m)
loop:
	for {
		k := *(*uint8)(kp)
		na := uintptr(reg.fast[k])
		// ptr32: the sum wrapped (a constant false on 64 bits, no code).
		if end := uintptr(ap) + 8*na; end > alim || (ptr32 && end < uintptr(ap)) {
			if Kind(k) != TaskDeps || uintptr(ap)+16 > alim {
				break
			}
			// A task creation's dependences: written into the spare
			// room of d.deps and kept once every type is good.
			a := (*[2]uint64)(ap)
			nd, n0 := uintptr(unzz(a[1])), d.ndeps
			if nd > maxListLen || uintptr(ap)+16+16*nd > alim || uintptr(cap(d.deps)-n0) < nd {
				break
			}
			addr := reg.addr
			// lp is &deps[ndeps] where the list has an entry (not past the
			// slice's end); j is the byte offset of both the pair (from
			// ap+16) and the entry (from lp): a Dep takes 16 bytes, as a
			// pair does.
			var lp unsafe.Pointer
			if nd > 0 {
				lp = unsafe.Add(unsafe.Pointer(unsafe.SliceData(d.deps)), uintptr(n0)*unsafe.Sizeof(Dep{}))
			}
			for j := uintptr(0); j < 16*nd; j += 16 {
				pair := (*[2]uint64)(unsafe.Add(ap, 16+j))
				// unzz written out: its inlining left a no-op an entry.
				ty := pair[1]<<1 ^ uint64(int64(pair[1])>>63)
				if ty > 0xff {
					break loop
				}
				addr += pair[0]
				l := (*Dep)(unsafe.Add(lp, j))
				l.Addr, l.Type = addr, uint8(ty)
			}
			reg.addr = addr
			// n0 and nd again from memory: kept in machine registers
			// over the list's loop, they made it spill its own.
			n0, nd = d.ndeps, uintptr(unzz(a[1]))
			d.ndeps = n0 + int(nd)
			reg.off[TaskDeps] ^= regSize
			o := reg.off[TaskDeps]
			r := (*[MaxArgs]int64)(unsafe.Add(unsafe.Pointer(&reg.args), o))
			v := r[0] + int64(a[0])
			r[0] = v
			e.Kind = TaskDeps
			e.Args[0], e.Args[1], e.Args[2], e.Args[3], e.Args[4] = v, int64(nd), int64(n0), 0, 0
			ap = unsafe.Add(ap, 16+16*nd)
		} else {
			e.Kind = Kind(k)
			// reg.off[k] without the mask that bounds k: a kind with a
			// fast entry is below NumKinds ≤ kindSlots.
			op := (*uint32)(unsafe.Add(unsafe.Pointer(&reg.off), 4*uintptr(k)))
			*op ^= regSize
			o := *op
			r := (*[MaxArgs]int64)(unsafe.Add(unsafe.Pointer(&reg.args), o))
			a := (*[MaxArgs]uint64)(ap)
			// Update the registers and store the event from registers:
			// loading the arguments back from the register file costs
			// more. Each slot is stored once (a whole array would be
			// zeroed first).
			// The counts in the order of their frequency in task-heavy
			// traces (task_schedule and task_attr, task_dependence,
			// task_create): a switch tests them by halves.
			if na == 3 {
				a0, a1, a2 := r[0]+int64(a[0]), r[1]+int64(a[1]), r[2]+int64(a[2])
				r[0], r[1], r[2] = a0, a1, a2
				e.Args[0], e.Args[1], e.Args[2], e.Args[3], e.Args[4] = a0, a1, a2, 0, 0
				ap = unsafe.Add(ap, 24)
			} else if na == 2 {
				a0, a1 := r[0]+int64(a[0]), r[1]+int64(a[1])
				r[0], r[1] = a0, a1
				e.Args[0], e.Args[1], e.Args[2], e.Args[3], e.Args[4] = a0, a1, 0, 0, 0
				ap = unsafe.Add(ap, 16)
			} else if na == 4 {
				a0, a1, a2, a3 := r[0]+int64(a[0]), r[1]+int64(a[1]), r[2]+int64(a[2]), r[3]+int64(a[3])
				r[0], r[1], r[2], r[3] = a0, a1, a2, a3
				e.Args[0], e.Args[1], e.Args[2], e.Args[3], e.Args[4] = a0, a1, a2, a3, 0
				ap = unsafe.Add(ap, 32)
			} else if na == 1 {
				a0 := r[0] + int64(a[0])
				r[0] = a0
				e.Args[0], e.Args[1], e.Args[2], e.Args[3], e.Args[4] = a0, 0, 0, 0, 0
				ap = unsafe.Add(ap, 8)
			} else if na == 5 {
				a0, a1, a2, a3, a4 := r[0]+int64(a[0]), r[1]+int64(a[1]), r[2]+int64(a[2]), r[3]+int64(a[3]), r[4]+int64(a[4])
				r[0], r[1], r[2], r[3], r[4] = a0, a1, a2, a3, a4
				e.Args[0], e.Args[1], e.Args[2], e.Args[3], e.Args[4] = a0, a1, a2, a3, a4
				ap = unsafe.Add(ap, 40)
			} else {
				e.Args[0], e.Args[1], e.Args[2], e.Args[3], e.Args[4] = 0, 0, 0, 0, 0
			}
		}
		if uintptr(kp) == klast {
			return 0, ap
		}
		e = (*Event)(unsafe.Add(unsafe.Pointer(e), unsafe.Sizeof(Event{})))
		kp = unsafe.Add(kp, 1)
	}
	return int(klast-uintptr(kp)) + 1, ap
}

// refill moves the unread args values (from q) to the front of av and
// decodes at least need values after them (zig-zag decoded), ablock at
// least, as far as the stream goes. It returns av and the new index of the value that was at q.
func (d *chunkDecoder) refill(q, need int) ([]uint64, int) {
	rest := copy(d.av, d.av[q:])
	av := d.av[:rest]
	d.abase += q
	end := d.abase + rest // values decoded so far: a multiple of 4 below m
	k := min(max(need-rest, d.ablock), d.m-end)
	if k > 0 {
		k = min((k+3)&^3, d.m-end)
		if cap(av) < rest+k+argsPad {
			grown := make([]uint64, rest, rest+k+argsPad)
			copy(grown, av)
			av = grown
		}
		av = av[:rest+k]
		if dn := svbDecodeZZ(d.cols.argsCtrl[end/4:], d.cols.argsData[d.aPos:], av[rest:], k); dn >= 0 {
			d.aPos += dn
		} else {
			d.short = true
		}
	}
	d.av = av
	return av, 0
}

// zz undoes zig-zag encoding.
func zz(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// scratch holds a reader's decoding state and buffers, reused from chunk to
// chunk.
type scratch struct {
	dec   chunkDecoder
	frame []byte // a re-read frame (streaming processes)
	// held is the streaming process whose file this scratch holds open,
	// from its first re-read until the scan moves to another process or is
	// put back (release): one pread a chunk, not an open, a read and a
	// close. The scans of a process share its one open file
	// (Process.acquireFile).
	held *Process
}

// release gives back the file the scratch holds open, if any.
func (sc *scratch) release() {
	if sc.held != nil {
		sc.held.releaseFile()
		sc.held = nil
	}
}

// nargs is the number of encoded arguments of each kind (version 4).
var nargs = func() (n [256]uint8) {
	for k := Kind(1); k < NumKinds; k++ {
		n[k] = uint8(len(schemas[k].Fields))
	}
	return n
}()

// nargsV3 is nargs of versions 1 to 3, whose mpi_enter has no call site.
var nargsV3 = func() (n [256]uint8) {
	n = nargs
	n[MPIEnter] = 1
	return n
}()

// noFast is fastArgs's count for a kind that decodeRun leaves to next:
// its 8·noFast bytes of arguments reach past any args window. 2^30 on a
// 64-bit platform; 2^28 on a 32-bit one, where 8·2^30 wraps to 0 and an
// address plus 2^31 can wrap too (decodeRun checks that there: ptr32).
const noFast = 1 << (28 + 2*(^uintptr(0)>>63))

// ptr32 is true on a platform of 32-bit addresses.
const ptr32 = ^uintptr(0)>>32 == 0

// fastArgs is, per kind, what decodeRun takes: the argument count of a
// kind it decodes, and for the others (unknown kinds, task_dependences
// with its list, and before version 4 mpi_enter, whose call site is
// filled in) a count no args stream reaches (a frame holds at most
// MaxFrameLen bytes, a stream at most 2^20 values more than its bytes).
func fastArgs(na *[256]uint8, version int) (t [256]uint32) {
	for k := range t {
		t[k] = noFast
		if k != int(KindInvalid) && k < int(NumKinds) && k != int(TaskDeps) && !(k == int(MPIEnter) && version < 4) {
			t[k] = uint32(na[k])
		}
	}
	return t
}

var (
	fastV4 = fastArgs(&nargs, 4)
	fastV3 = fastArgs(&nargsV3, 3)
)

// fastOf returns fastArgs of a format version.
func fastOf(version int) *[256]uint32 {
	if version >= 4 {
		return &fastV4
	}
	return &fastV3
}

// maxListLen bounds a single dependence list so a corrupt count cannot make
// the decoder allocate gigabytes.
const maxListLen = 1 << 24

// A pair of values and a Dep take the same 16 bytes (decodeRun).
var (
	_ [16 - unsafe.Sizeof(Dep{})]struct{}
	_ [unsafe.Sizeof(Dep{}) - 16]struct{}
)

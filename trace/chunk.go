package trace

import (
	"fmt"
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
// previous event of the same kind, and dependence addresses to the previous
// address. Decoding then needs no per-field type switch (ids, names and
// flags of consecutive events of one kind differ little, so deltas stay
// small). Registers start at zero in every chunk so chunks decode
// independently.
type registers struct {
	args [NumKinds][MaxArgs]int64
	addr uint64
}

// chunkEncoder accumulates one thread's events for a chunk: kinds (one byte
// each), time deltas (the first relative to t0) and the args stream (every
// argument as the difference to the same argument of the previous event of
// the same kind, then for task_dependences the count and address/type
// pairs), all zig-zag coded and laid out as stream-vbyte columns at flush.
type chunkEncoder struct {
	thread   int
	seq      int64
	n        int
	t0, last int64
	kinds    []byte
	dt       []uint64
	args     []uint64
	reg      registers
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
	r := &c.reg.args[e.Kind]
	for j := 0; j < int(nargs[e.Kind]); j++ {
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
// storage and the scratch buffers in sc. It checks the column sizes first,
// decodes the integer streams without per-value branches, then assembles
// events with one bounds check per event; it never panics on corrupt input.
func decodeColumns(cols *chunkColumns, c *Chunk, sc *scratch) error {
	n := int(cols.n)
	if cols.n < 0 || len(cols.kinds) != n {
		return &columnError{event: 0, column: "kinds", msg: fmt.Sprintf("has %d bytes for n=%d events", len(cols.kinds), cols.n)}
	}
	if err := svbCheck(cols.dtCtrl, cols.dtData, n); err != nil {
		return &columnError{column: "dt", msg: err.Error()}
	}
	m := int(cols.nargs)
	if cols.nargs < 0 || cols.nargs > int64(len(cols.argsData))+1<<20 {
		return &columnError{column: "args", msg: fmt.Sprintf("implausible value count %d", cols.nargs)}
	}
	if err := svbCheck(cols.argsCtrl, cols.argsData, m); err != nil {
		return &columnError{column: "args", msg: err.Error()}
	}
	dv := sc.grow(&sc.dt, n)
	av := sc.grow(&sc.args, m)
	svbDecode(cols.dtCtrl, cols.dtData, dv, n)
	svbDecode(cols.argsCtrl, cols.argsData, av, m)

	if cap(c.Events) < n {
		c.Events = make([]Event, n)
	}
	evs := c.Events[:n]
	deps := c.Deps[:0]
	reg := &sc.reg
	*reg = registers{}
	t := cols.t0
	kinds := cols.kinds[:n]
	dv = dv[:n]
	q := 0
	for i := range evs {
		k := Kind(kinds[i])
		if k == KindInvalid || k >= NumKinds {
			return &columnError{event: i, column: "kinds", pos: i, msg: fmt.Sprintf("unknown event kind %d", uint8(k))}
		}
		t += zz(dv[i])
		na := int(nargs[k])
		if q+na > m {
			return &columnError{event: i, column: "args", pos: q, msg: fmt.Sprintf("the stream ends before %s's %d arguments", k, na)}
		}
		r := &reg.args[k]
		a := av[q : q+na]
		e := &evs[i]
		e.Time = t
		e.Kind = k
		// Update the registers and store the event from registers: loading
		// the arguments back from the register file costs more.
		switch na {
		case 5:
			r[0] += zz(a[0])
			r[1] += zz(a[1])
			r[2] += zz(a[2])
			r[3] += zz(a[3])
			r[4] += zz(a[4])
			e.Args = [MaxArgs]int64{r[0], r[1], r[2], r[3], r[4]}
		case 4:
			a0, a1, a2, a3 := r[0]+zz(a[0]), r[1]+zz(a[1]), r[2]+zz(a[2]), r[3]+zz(a[3])
			r[0], r[1], r[2], r[3] = a0, a1, a2, a3
			e.Args = [MaxArgs]int64{a0, a1, a2, a3, 0}
		case 3:
			a0, a1, a2 := r[0]+zz(a[0]), r[1]+zz(a[1]), r[2]+zz(a[2])
			r[0], r[1], r[2] = a0, a1, a2
			e.Args = [MaxArgs]int64{a0, a1, a2, 0, 0}
		case 2:
			a0, a1 := r[0]+zz(a[0]), r[1]+zz(a[1])
			r[0], r[1] = a0, a1
			e.Args = [MaxArgs]int64{a0, a1, 0, 0, 0}
		case 1:
			a0 := r[0] + zz(a[0])
			r[0] = a0
			e.Args = [MaxArgs]int64{a0, 0, 0, 0, 0}
		default:
			e.Args = [MaxArgs]int64{}
		}
		q += na
		if k == TaskDeps {
			if q >= m {
				return &columnError{event: i, column: "args", pos: q, msg: "the stream ends before the dependence count"}
			}
			cnt := av[q]
			q++
			if cnt > maxListLen || cnt > uint64(m-q)/2 {
				return &columnError{event: i, column: "args", pos: q - 1, msg: fmt.Sprintf("dependence count %d exceeds the stream or the limit %d", cnt, maxListLen)}
			}
			e.Args[1] = int64(cnt)
			e.Args[2] = int64(len(deps))
			for d := 0; d < int(cnt); d++ {
				ty := av[q+1]
				if ty > 0xff {
					return &columnError{event: i, column: "args", pos: q + 1, msg: fmt.Sprintf("dependence %d has type %d", d, ty)}
				}
				reg.addr += uint64(zz(av[q]))
				deps = append(deps, Dep{Addr: reg.addr, Type: uint8(ty)})
				q += 2
			}
		}
	}
	if q != m {
		return &columnError{event: n, column: "args", pos: q, msg: fmt.Sprintf("%d values left over after the last event", m-q)}
	}
	c.Thread = int(cols.thread)
	c.Seq = cols.seq
	c.Events = evs
	c.Deps = deps
	return nil
}

// zz undoes zig-zag encoding.
func zz(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// scratch holds a reader's decoding buffers, reused from chunk to chunk.
type scratch struct {
	dt, args []uint64
	reg      registers
	frame    []byte // a re-read frame (streaming processes)
}

func (sc *scratch) grow(b *[]uint64, n int) []uint64 {
	if cap(*b) < n {
		*b = make([]uint64, n)
	}
	*b = (*b)[:n]
	return *b
}

// nargs is the number of encoded arguments of each kind.
var nargs = func() (n [256]uint8) {
	for k := Kind(1); k < NumKinds; k++ {
		n[k] = uint8(len(schemas[k].Fields))
	}
	return n
}()

// maxListLen bounds a single dependence list so a corrupt count cannot make
// the decoder allocate gigabytes.
const maxListLen = 1 << 24

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

// chunkEncoder accumulates one thread's events into the three columns of a
// chunk: kinds (one byte each), dt (zig-zag varint time deltas, the first
// relative to t0) and args (varints per the kind's schema).
type chunkEncoder struct {
	thread   int
	seq      int64
	n        int
	t0, last int64
	kinds    []byte
	dt       []byte
	args     []byte
	reg      registers
}

func (c *chunkEncoder) reset() {
	c.n = 0
	c.kinds = c.kinds[:0]
	c.dt = c.dt[:0]
	c.args = c.args[:0]
	c.reg = registers{}
}

func (c *chunkEncoder) size() int { return len(c.kinds) + len(c.dt) + len(c.args) }

// add encodes e. deps is the dependence list of a TaskDeps event (e.Args[1]
// and e.Args[2] are ignored and taken from deps).
func (c *chunkEncoder) add(e *Event, deps []Dep) {
	if c.n == 0 {
		c.t0 = e.Time
		c.last = e.Time
	}
	c.kinds = append(c.kinds, byte(e.Kind))
	c.dt = appendVarint(c.dt, e.Time-c.last)
	c.last = e.Time
	c.n++
	s := &schemas[e.Kind]
	r := &c.reg.args[e.Kind]
	for j := range s.Fields {
		c.args = appendVarint(c.args, e.Args[j]-r[j])
		r[j] = e.Args[j]
	}
	if s.List {
		c.args = appendUvarint(c.args, uint64(len(deps)))
		for _, d := range deps {
			c.args = appendVarint(c.args, int64(d.Addr-c.reg.addr))
			c.reg.addr = d.Addr
			c.args = append(c.args, d.Type)
		}
	}
}

// chunkColumns are the raw columns of a chunk frame.
type chunkColumns struct {
	thread int64
	seq    int64
	n      int64
	t0     int64
	kinds  []byte
	dt     []byte
	args   []byte
	// payload-relative positions of the three columns' data
	kindsPos, dtPos, argsPos int
}

// columnError locates a decoding problem inside a chunk.
type columnError struct {
	event  int
	column string
	pos    int
	msg    string
}

func (e *columnError) Error() string {
	return fmt.Sprintf("event %d: %s column byte %d: %s", e.event, e.column, e.pos, e.msg)
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

// decodeColumns expands cols into c.Events and c.Deps, reusing their storage.
// A fast pass decodes well-formed columns with straight-line code per
// argument count; on any irregularity it gives way to decodeChecked, which
// finds and locates the first problem. Neither panics on corrupt input.
func decodeColumns(cols *chunkColumns, c *Chunk) error {
	if decodeFast(cols, c) {
		return nil
	}
	return decodeChecked(cols, c)
}

// zz undoes zig-zag encoding.
func zz(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// rv reads the varint at b[q:] and returns it with the next position, or
// q = -1 when b is malformed there (or q was already -1). Small enough to
// inline into the decoding loop.
func rv(b []byte, q int) (v uint64, next int) {
	for s := uint(0); uint(q) < uint(len(b)) && s < 64; s += 7 {
		c := b[q]
		q++
		v |= uint64(c&0x7f) << s
		if c < 0x80 {
			return v, q
		}
	}
	return 0, -1
}

// decodeFast decodes well-formed columns; it returns false, leaving c in an
// unspecified state, at the first irregularity.
func decodeFast(cols *chunkColumns, c *Chunk) bool {
	n := int(cols.n)
	if cols.n < 0 || len(cols.kinds) != n {
		return false
	}
	if cap(c.Events) < n {
		c.Events = make([]Event, n)
	}
	evs := c.Events[:n]
	deps := c.Deps[:0]
	var reg registers
	t := cols.t0
	kinds, dt, args := cols.kinds[:n], cols.dt, cols.args
	p, q := 0, 0
	var u uint64
	for i := range evs {
		k := Kind(kinds[i])
		if k == KindInvalid || k >= NumKinds {
			return false
		}
		u, p = rv(dt, p)
		t += zz(u)
		r := &reg.args[k]
		switch nargs[k] {
		case 5:
			u, q = rv(args, q)
			r[0] += zz(u)
			u, q = rv(args, q)
			r[1] += zz(u)
			u, q = rv(args, q)
			r[2] += zz(u)
			u, q = rv(args, q)
			r[3] += zz(u)
			u, q = rv(args, q)
			r[4] += zz(u)
		case 4:
			u, q = rv(args, q)
			r[0] += zz(u)
			u, q = rv(args, q)
			r[1] += zz(u)
			u, q = rv(args, q)
			r[2] += zz(u)
			u, q = rv(args, q)
			r[3] += zz(u)
		case 3:
			u, q = rv(args, q)
			r[0] += zz(u)
			u, q = rv(args, q)
			r[1] += zz(u)
			u, q = rv(args, q)
			r[2] += zz(u)
		case 2:
			u, q = rv(args, q)
			r[0] += zz(u)
			u, q = rv(args, q)
			r[1] += zz(u)
		case 1:
			u, q = rv(args, q)
			r[0] += zz(u)
		}
		// A failed read poisons every later one (q stays -1), so one check
		// per event suffices.
		if p < 0 || q < 0 {
			return false
		}
		e := &evs[i]
		e.Time = t
		e.Kind = k
		e.Args = *r
		if k == TaskDeps {
			var cnt uint64
			cnt, q = rv(args, q)
			if q < 0 || cnt > maxListLen || cnt > uint64(len(args)-q)/2 {
				return false
			}
			e.Args[1] = int64(cnt)
			e.Args[2] = int64(len(deps))
			for d := uint64(0); d < cnt; d++ {
				u, q = rv(args, q)
				if q < 0 || q >= len(args) {
					return false
				}
				reg.addr += uint64(zz(u))
				deps = append(deps, Dep{Addr: reg.addr, Type: args[q]})
				q++
			}
		}
	}
	if p != len(dt) || q != len(args) {
		return false
	}
	c.Thread = int(cols.thread)
	c.Seq = cols.seq
	c.Events = evs
	c.Deps = deps
	return true
}

// decodeChecked is the careful decoder: it checks every byte and returns the
// first problem as a *columnError.
func decodeChecked(cols *chunkColumns, c *Chunk) error {
	n := int(cols.n)
	if cols.n < 0 || len(cols.kinds) != n {
		return &columnError{event: 0, column: "kinds", msg: fmt.Sprintf("has %d bytes for n=%d events", len(cols.kinds), cols.n)}
	}
	if cap(c.Events) < n {
		c.Events = make([]Event, n)
	}
	evs := c.Events[:n]
	deps := c.Deps[:0]
	reg := &registers{}
	t := cols.t0
	kinds, dt, args := cols.kinds, cols.dt, cols.args
	p, q := 0, 0
	for i := range evs {
		e := &evs[i]
		k := Kind(kinds[i])
		if !k.Valid() {
			return &columnError{event: i, column: "kinds", pos: i, msg: fmt.Sprintf("unknown event kind %d", uint8(k))}
		}
		// Inline fast paths: most deltas fit in one byte.
		if p < len(dt) && dt[p] < 0x80 {
			u := uint64(dt[p])
			t += int64(u>>1) ^ -int64(u&1)
			p++
		} else {
			u, m := uvarint(dt[p:])
			if m <= 0 {
				return &columnError{event: i, column: "dt", pos: p, msg: varintMsg(m)}
			}
			t += int64(u>>1) ^ -int64(u&1)
			p += m
		}
		r := &reg.args[k]
		for j := 0; j < int(nargs[k]); j++ {
			var u uint64
			if q < len(args) && args[q] < 0x80 {
				u = uint64(args[q])
				q++
			} else {
				var m int
				u, m = uvarint(args[q:])
				if m <= 0 {
					return &columnError{event: i, column: "args", pos: q, msg: varintMsg(m)}
				}
				q += m
			}
			r[j] += int64(u>>1) ^ -int64(u&1)
		}
		e.Time = t
		e.Kind = k
		e.Args = *r
		if k == TaskDeps {
			cnt, m := uvarint(args[q:])
			if m <= 0 {
				return &columnError{event: i, column: "args", pos: q, msg: "dependence count: " + varintMsg(m)}
			}
			if cnt > maxListLen {
				return &columnError{event: i, column: "args", pos: q, msg: fmt.Sprintf("dependence count %d exceeds limit %d", cnt, maxListLen)}
			}
			q += m
			e.Args[1] = int64(cnt)
			e.Args[2] = int64(len(deps))
			for d := uint64(0); d < cnt; d++ {
				u, m := uvarint(args[q:])
				if m <= 0 {
					return &columnError{event: i, column: "args", pos: q, msg: fmt.Sprintf("dependence %d address: %s", d, varintMsg(m))}
				}
				q += m
				if q >= len(args) {
					return &columnError{event: i, column: "args", pos: q, msg: fmt.Sprintf("dependence %d type: column ends", d)}
				}
				reg.addr += uint64(int64(u>>1) ^ -int64(u&1))
				deps = append(deps, Dep{Addr: reg.addr, Type: args[q]})
				q++
			}
		}
	}
	if p != len(dt) {
		return &columnError{event: n, column: "dt", pos: p, msg: fmt.Sprintf("%d trailing bytes", len(dt)-p)}
	}
	if q != len(args) {
		return &columnError{event: n, column: "args", pos: q, msg: fmt.Sprintf("%d trailing bytes", len(args)-q)}
	}
	c.Thread = int(cols.thread)
	c.Seq = cols.seq
	c.Events = evs
	c.Deps = deps
	return nil
}

func varintMsg(m int) string {
	if m == 0 {
		return "column ends inside a varint"
	}
	return "varint overflows 64 bits"
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendVarint(b []byte, v int64) []byte {
	return appendUvarint(b, uint64(v<<1)^uint64(v>>63))
}

// uvarint decodes an unsigned varint; m is the number of bytes read, 0 if b
// ends first, negative on overflow (like encoding/binary, without its
// reslicing overhead in the caller).
func uvarint(b []byte) (v uint64, m int) {
	var s uint
	for i, c := range b {
		if i == 10 {
			return 0, -1
		}
		if c < 0x80 {
			if i == 9 && c > 1 {
				return 0, -1
			}
			return v | uint64(c)<<s, i + 1
		}
		v |= uint64(c&0x7f) << s
		s += 7
	}
	return 0, 0
}

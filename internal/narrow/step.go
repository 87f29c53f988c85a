package narrow

import (
	"slices"
	"unsafe"

	"github.com/ptrace-dev/ptrace/internal/packed"
)

// Step is a column of int64 values held in the narrowest of three
// integer types A, B, C (of 1, 2 or 4 bytes, all signed or all unsigned)
// that most of them fit: it starts in A and moves to the next type once
// more than 1/stepShare of its values (and over stepMinWide) are kept
// aside, the values copied once then. As in Column, a value the type in
// use cannot hold, or that equals its escape, is kept aside exactly. A
// column of small values (the calls' durations of a code of nonblocking
// calls, the distances from a request's node to the call and event that
// posted or completed it, the threads of a process that communicates
// from one) is a byte a value, one of larger ones no wider than in C.
//
// The values are bytes of the type in use, read with the width and sign
// the Step keeps in fields, so that At is inlined (over Columns of the
// three types it was a call, three times as slow as Column.At). The zero
// Step is empty and ready to use.
type Step[A, B, C Int] struct {
	d    []byte
	wide map[int]int64
	n    int
	w    uint8 // the type in use: 0 A, 1 B, 2 C
	lg   uint8 // log2 of its size in bytes
	sh   uint8 // 64 − its bits for a signed type (sign extension), 0 unsigned
	set  bool  // lg, sh and esc are set (the zero Step's are not)
	esc  uint64
	// room is the length reserved for (Reserve), which a move keeps.
	room int
	pk   *packed.ParkedBytes // d while parked (Park), nil in memory
}

const (
	stepShare   = 32
	stepMinWide = 64
)

// init sets the fields of type w.
func (s *Step[A, B, C]) init(w uint8) {
	var size uintptr
	var signed bool
	switch w {
	case 0:
		var z A
		size, signed = unsafe.Sizeof(z), ^z < 0
	case 1:
		var z B
		size, signed = unsafe.Sizeof(z), ^z < 0
	default:
		var z C
		size, signed = unsafe.Sizeof(z), ^z < 0
	}
	bits := 8 * size
	s.w, s.lg, s.set = w, uint8(map[uintptr]uint8{1: 0, 2: 1, 4: 2}[size]), true
	s.sh, s.esc = 0, 1<<bits-1 // unsigned: the largest value
	if signed {
		s.sh, s.esc = uint8(64-bits), 1<<(bits-1) // the smallest, as its bits
	}
}

// Len returns the number of values.
func (s *Step[A, B, C]) Len() int { return s.n }

// Reserve makes room for n more values.
func (s *Step[A, B, C]) Reserve(n int) {
	if s.pk != nil {
		panic("narrow: Step.Reserve while parked")
	}
	if !s.set {
		s.init(0)
	}
	s.room = s.n + n
	s.d = slices.Grow(s.d, n<<s.lg)
}

// raw returns x in the type in use and whether it holds x (not: the
// escape).
func (s *Step[A, B, C]) raw(x int64) (uint64, bool) {
	r := uint64(x) & (1<<(8<<s.lg) - 1)
	if int64(r<<s.sh)>>s.sh == x && r != s.esc {
		return r, true
	}
	return s.esc, false
}

// put writes raw value r at k.
func (s *Step[A, B, C]) put(k int, r uint64) {
	p := unsafe.Pointer(&s.d[k<<s.lg]) // in range: see At
	switch s.lg {
	case 0:
		*(*uint8)(p) = uint8(r)
	case 1:
		*(*uint16)(p) = uint16(r)
	default:
		*(*uint32)(p) = uint32(r)
	}
}

// Append adds x at the end.
func (s *Step[A, B, C]) Append(x int64) {
	if !s.set {
		s.init(0)
	}
	end := (s.n + 1) << s.lg
	if end > cap(s.d) {
		if s.pk != nil {
			panic("narrow: Step.Append while parked")
		}
		s.d = slices.Grow(s.d, end-len(s.d))
	}
	s.d = s.d[:end]
	s.n++
	r, ok := s.raw(x)
	s.put(s.n-1, r)
	if !ok {
		s.keep(s.n-1, x)
	}
}

// Set replaces value k by x.
func (s *Step[A, B, C]) Set(k int, x int64) {
	if r, ok := s.raw(x); ok && len(s.wide) == 0 && uint(k) < uint(s.n) {
		s.put(k, r) // the usual case, inlined
		return
	}
	s.set2(k, x)
}

func (s *Step[A, B, C]) set2(k int, x int64) {
	if uint(k) >= uint(s.n) {
		panic("narrow: Step.Set out of range")
	}
	r, ok := s.raw(x)
	s.put(k, r)
	switch {
	case !ok:
		s.keep(k, x)
	case len(s.wide) > 0:
		delete(s.wide, k)
	}
}

// keep keeps value k, x, aside (its place holds the escape), and moves
// the values to the next type when too many are.
func (s *Step[A, B, C]) keep(k int, x int64) {
	if s.wide == nil {
		s.wide = map[int]int64{}
	}
	s.wide[k] = x
	if len(s.wide) > stepMinWide {
		s.check()
	}
}

// At returns value k.
func (s *Step[A, B, C]) At(k int) int64 {
	if r := s.rawAt(k); r != s.esc {
		return int64(r<<s.sh) >> s.sh
	}
	return s.wide[k]
}

// rawAt returns value k's bytes.
func (s *Step[A, B, C]) rawAt(k int) uint64 {
	// d holds n values of 1<<lg bytes: value k's first byte is in range
	// exactly when all of them are.
	p := unsafe.Pointer(&s.d[k<<s.lg])
	switch s.lg {
	case 0:
		return uint64(*(*uint8)(p))
	case 1:
		return uint64(*(*uint16)(p))
	}
	return uint64(*(*uint32)(p))
}

// Wide returns the number of values kept aside.
func (s *Step[A, B, C]) Wide() int { return len(s.wide) }

// Width returns the type the values are in: 0 for A, 1 for B, 2 for C.
func (s *Step[A, B, C]) Width() int { return int(s.w) }

// Fit drops the reserved room as Column.Fit does.
func (s *Step[A, B, C]) Fit() {
	if cap(s.d)-len(s.d) > len(s.d)/8 {
		s.d = slices.Clone(s.d)
	}
}

// check moves the values to the next type when too many are kept aside.
func (s *Step[A, B, C]) check() {
	if s.w == 2 || len(s.wide) <= s.n/stepShare {
		return
	}
	o := *s
	s.init(o.w + 1)
	s.d = make([]byte, o.n<<s.lg, max(o.room, o.n)<<s.lg)
	s.wide = nil
	// A value the narrower type held fits the wider one and is not its
	// escape (an unsigned type's escape is its largest value, a signed
	// one's its smallest): only the values kept aside are tried again.
	mask := uint64(1)<<(8<<s.lg) - 1
	for k := range o.n {
		r := o.rawAt(k)
		if r != o.esc {
			s.put(k, uint64(int64(r<<o.sh)>>o.sh)&mask)
			continue
		}
		x := o.wide[k]
		r, ok := s.raw(x)
		if !ok {
			if s.wide == nil {
				s.wide = map[int]int64{}
			}
			s.wide[k] = x
		}
		s.put(k, r)
	}
	if len(s.wide) > stepMinWide {
		s.check() // the values may not fit the next type either
	}
}

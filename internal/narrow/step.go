package narrow

// Step is a column of int64 values held in the narrowest of three
// integer types A, B, C (Column's, each value exact) that most of them
// fit: it starts in A and moves to the next type once more than
// 1/stepShare of its values (and over stepMinWide) are kept aside, the
// values copied once then. A column of small values (the calls'
// durations of a code of nonblocking calls, the distances from a
// request's node to the call and event that posted or completed it, the
// threads of a process that communicates from one) is a byte a value,
// one of larger ones no wider than in C. The zero Step is empty and
// ready to use.
type Step[A, B, C Int] struct {
	a Column[A]
	b Column[B]
	c Column[C]
	w uint8 // the type in use: 0 A, 1 B, 2 C
	// room is the length reserved for (Reserve), which a move keeps.
	room int
}

const (
	stepShare   = 32
	stepMinWide = 64
)

// Len returns the number of values.
func (s *Step[A, B, C]) Len() int {
	switch s.w {
	case 0:
		return s.a.Len()
	case 1:
		return s.b.Len()
	}
	return s.c.Len()
}

// Reserve makes room for n more values.
func (s *Step[A, B, C]) Reserve(n int) {
	s.room = s.Len() + n
	switch s.w {
	case 0:
		s.a.Reserve(n)
	case 1:
		s.b.Reserve(n)
	default:
		s.c.Reserve(n)
	}
}

// Append adds x at the end.
func (s *Step[A, B, C]) Append(x int64) {
	switch s.w {
	case 0:
		s.a.Append(x)
	case 1:
		s.b.Append(x)
	default:
		s.c.Append(x)
	}
	s.check()
}

// Set replaces value k by x.
func (s *Step[A, B, C]) Set(k int, x int64) {
	switch s.w {
	case 0:
		s.a.Set(k, x)
	case 1:
		s.b.Set(k, x)
	default:
		s.c.Set(k, x)
	}
	s.check()
}

// At returns value k.
func (s *Step[A, B, C]) At(k int) int64 {
	switch s.w {
	case 0:
		return s.a.At(k)
	case 1:
		return s.b.At(k)
	}
	return s.c.At(k)
}

// Width returns the type the values are in: 0 for A, 1 for B, 2 for C.
func (s *Step[A, B, C]) Width() int { return int(s.w) }

// Fit drops the reserved room as Column.Fit does.
func (s *Step[A, B, C]) Fit() {
	s.a.Fit()
	s.b.Fit()
	s.c.Fit()
}

// Wide returns the number of values kept aside.
func (s *Step[A, B, C]) Wide() int {
	switch s.w {
	case 0:
		return s.a.Wide()
	case 1:
		return s.b.Wide()
	}
	return s.c.Wide()
}

// check moves the values to the next type when too many are kept aside.
func (s *Step[A, B, C]) check() {
	n, w := s.Len(), s.Wide()
	if s.w == 2 || w <= stepMinWide || w <= n/stepShare {
		return
	}
	room := max(s.room, n)
	switch s.w {
	case 0:
		s.b.Reserve(room)
		for k := range n {
			s.b.Append(s.a.At(k))
		}
		s.a = Column[A]{}
	case 1:
		s.c.Reserve(room)
		for k := range n {
			s.c.Append(s.b.At(k))
		}
		s.b = Column[B]{}
	}
	s.w++
	s.check() // the values may not fit the next type either
}

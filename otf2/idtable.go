package otf2

import "slices"

// idTable maps the 32-bit ids of OTF2 definitions to values. Writers number
// definitions densely from 0, so ids near the count go into a slice indexed
// by id; any other id (a sparse numbering, or a corrupt one such as 4·10⁹)
// goes into a map, so that memory follows the number of definitions, never
// the size of the ids.
type idTable[T any] struct {
	dense  []T
	has    []uint64 // bit i: dense[i] is defined
	sparse map[uint32]T
	n      int
}

// denseSlack is how far past the current count an id may lie and still be
// stored densely.
const denseSlack = 1024

// put defines id; it reports whether id was defined already (the new value
// replaces the old one).
func (t *idTable[T]) put(id uint32, v T) (dup bool) {
	if int64(id) < int64(2*t.n+denseSlack) || int(id) < len(t.dense) {
		if int(id) >= len(t.dense) {
			n := max(int(id)+1, 2*len(t.dense))
			n = min(n, 2*t.n+denseSlack)
			n = max(n, int(id)+1)
			d := make([]T, n)
			copy(d, t.dense)
			t.dense = d
			h := make([]uint64, (n+63)/64)
			copy(h, t.has)
			t.has = h
			// sparse ids the slice now covers move into it, so that an
			// id lives in one place only
			for sid, sv := range t.sparse {
				if int(sid) < n {
					t.dense[sid] = sv
					t.has[sid/64] |= 1 << (sid % 64)
					delete(t.sparse, sid)
				}
			}
		}
		w, b := id/64, uint64(1)<<(id%64)
		dup = t.has[w]&b != 0
		t.has[w] |= b
		t.dense[id] = v
	} else {
		if t.sparse == nil {
			t.sparse = map[uint32]T{}
		}
		_, dup = t.sparse[id]
		t.sparse[id] = v
	}
	if !dup {
		t.n++
	}
	return dup
}

// get returns the value of id and whether it is defined.
func (t *idTable[T]) get(id uint32) (T, bool) {
	if int(id) < len(t.dense) {
		if t.has[id/64]&(1<<(id%64)) != 0 {
			return t.dense[id], true
		}
		var zero T
		return zero, false
	}
	v, ok := t.sparse[id]
	return v, ok
}

// ptr returns a pointer to the value of id, or nil when it is undefined.
func (t *idTable[T]) ptr(id uint32) *T {
	if int(id) < len(t.dense) {
		if t.has[id/64]&(1<<(id%64)) != 0 {
			return &t.dense[id]
		}
		return nil
	}
	if v, ok := t.sparse[id]; ok {
		// map values are not addressable: callers of ptr only read
		return &v
	}
	return nil
}

// each calls fn for every defined id in increasing id order among the
// dense ones, then the sparse ones in unspecified order.
func (t *idTable[T]) each(fn func(id uint32, v *T)) {
	for i := range t.dense {
		if t.has[i/64]&(1<<(i%64)) != 0 {
			fn(uint32(i), &t.dense[i])
		}
	}
	for id, v := range t.sparse {
		v := v
		fn(id, &v)
	}
}

// update calls fn on every defined value, in place.
func (t *idTable[T]) update(fn func(v *T)) {
	for i := range t.dense {
		if t.has[i/64]&(1<<(i%64)) != 0 {
			fn(&t.dense[i])
		}
	}
	for id, v := range t.sparse {
		fn(&v)
		t.sparse[id] = v
	}
}

// ids returns the defined ids in increasing order.
func (t *idTable[T]) ids() []uint32 {
	out := make([]uint32, 0, t.n)
	for i := range t.dense {
		if t.has[i/64]&(1<<(i%64)) != 0 {
			out = append(out, uint32(i))
		}
	}
	if len(t.sparse) > 0 {
		sp := make([]uint32, 0, len(t.sparse))
		for id := range t.sparse {
			sp = append(sp, id)
		}
		slices.Sort(sp)
		out = append(out, sp...)
	}
	return out
}

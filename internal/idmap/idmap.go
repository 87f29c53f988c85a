// Package idmap maps int64 ids to int32 values where few entries are live
// at a time: the open parallel regions of a process, keyed by their trace
// ids. A simulation inserts, looks up and deletes such an entry several
// times a region, and an MPI + OpenMP code opens a region per iteration
// (14 000 a process on the 10 M-event halo): hashing each key was 4 % of
// its simulation. Up to a handful of live entries are searched in a short
// array instead; a damaged trace that leaves many open (regions that never
// end) moves them to a Go map, so no access costs more than a map's.
package idmap

// small is how many live entries the array holds before the map takes
// over.
const small = 8

// Map is a map from int64 to int32. The zero Map is empty and ready to
// use.
type Map struct {
	keys [small]int64
	vals [small]int32
	n    int
	big  map[int64]int32 // once more than small entries were live; then the only store
}

// Get returns the value of k and whether k has one.
func (m *Map) Get(k int64) (int32, bool) {
	if m.big != nil {
		v, ok := m.big[k]
		return v, ok
	}
	for i := range m.n {
		if m.keys[i] == k {
			return m.vals[i], true
		}
	}
	return 0, false
}

// Set gives k the value v.
func (m *Map) Set(k int64, v int32) {
	if m.big != nil {
		m.big[k] = v
		return
	}
	for i := range m.n {
		if m.keys[i] == k {
			m.vals[i] = v
			return
		}
	}
	if m.n == small {
		m.big = make(map[int64]int32, 2*small)
		for i := range m.n {
			m.big[m.keys[i]] = m.vals[i]
		}
		m.big[k] = v
		m.n = 0
		return
	}
	m.keys[m.n], m.vals[m.n] = k, v
	m.n++
}

// Delete removes k's value, if any.
func (m *Map) Delete(k int64) {
	if m.big != nil {
		delete(m.big, k)
		return
	}
	for i := range m.n {
		if m.keys[i] == k {
			m.n--
			m.keys[i], m.vals[i] = m.keys[m.n], m.vals[m.n]
			return
		}
	}
}

// Len returns the number of entries.
func (m *Map) Len() int {
	if m.big != nil {
		return len(m.big)
	}
	return m.n
}

// Clear removes every entry (and the map, if entries outgrew the array).
func (m *Map) Clear() { *m = Map{} }

package anomaly

import (
	"encoding/binary"
	"math"
	"slices"
)

// Sample holds the task records the models are fitted on (Sample.Fit), in
// the order they were added, each with its construct's index in a table of
// names instead of the name: no record holds a pointer, so the collector
// does not scan the sample. A []Task of the same records is scanned whole
// by every collection while it lives (BOTS fib(23)'s 40 000 records, 2.5
// MB, most of the collector's marking in the run: forty-fourth round).
type Sample struct {
	names []string
	index map[string]uint32
	recs  []sampleRec
}

// sampleRec is one record of a Sample: a Task with its construct's index.
type sampleRec struct {
	cons           uint32
	rank, thread   int32
	id, start, dur int64
	cost           float64
}

// Add appends tasks to the sample.
func (s *Sample) Add(tasks []Task) {
	k, name := uint32(0), "" // tasks come in runs of one construct
	for i, t := range tasks {
		if i == 0 || t.Construct != name {
			k, name = s.construct(t.Construct), t.Construct
		}
		s.recs = append(s.recs, sampleRec{cons: k, rank: t.Rank, thread: t.Thread, id: t.ID, start: t.StartNS, dur: t.DurNS, cost: t.Cost})
	}
}

// construct returns the index of name, adding it if new.
func (s *Sample) construct(name string) uint32 {
	if k, ok := s.index[name]; ok {
		return k
	}
	if s.index == nil {
		s.index = map[string]uint32{}
	}
	k := uint32(len(s.names))
	s.index[name] = k
	s.names = append(s.names, name)
	return k
}

// Len returns the number of records in the sample.
func (s *Sample) Len() int { return len(s.recs) }

// AppendTo appends the sample to b in AppendTasks's form: the same bytes as
// AppendTasks of the records added, in their order (the names in the order
// they first appear, which is the table's).
func (s *Sample) AppendTo(b []byte) []byte {
	le := binary.LittleEndian
	size := 8 + len(s.recs)*taskRecBytes
	for _, n := range s.names {
		size += 4 + len(n)
	}
	b = slices.Grow(b, size)
	b = le.AppendUint32(b, uint32(len(s.names)))
	for _, n := range s.names {
		b = le.AppendUint32(b, uint32(len(n)))
		b = append(b, n...)
	}
	b = le.AppendUint32(b, uint32(len(s.recs)))
	for _, r := range s.recs {
		b = le.AppendUint32(b, r.cons)
		b = le.AppendUint32(b, uint32(r.rank))
		b = le.AppendUint32(b, uint32(r.thread))
		b = le.AppendUint64(b, uint64(r.id))
		b = le.AppendUint64(b, uint64(r.start))
		b = le.AppendUint64(b, uint64(r.dur))
		b = le.AppendUint64(b, math.Float64bits(r.cost))
	}
	return b
}

// points returns, per construct name, its records' points in the order
// they were added.
func (s *Sample) points() map[string][]point {
	per := make([][]point, len(s.names))
	for _, r := range s.recs {
		per[r.cons] = append(per[r.cons], point{rank: r.rank, thread: r.thread, start: r.start, id: r.id, dur: r.dur, cost: r.cost})
	}
	byCons := make(map[string][]point, len(s.names))
	for k, n := range s.names {
		byCons[n] = per[k]
	}
	return byCons
}

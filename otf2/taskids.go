package otf2

import "github.com/ptrace-dev/ptrace/trace"

// taskIDs maps OTF2 task keys (thread team, creating thread, generation
// number, in a team instance) to ptrace task ids, as a map would. A
// creating thread numbers its tasks one after another (Score-P from 0, or
// 1, in each team instance), so each (team, instance, creator)
// keeps its ids in a slice indexed by generation from its first; a key
// outside that run (a gap of more than maxGap, a generation before the
// first) goes to a map. A Go map of every task took about 40 bytes a task
// and a hash a lookup: on a Score-P trace of fib(25) (242 784 tasks), 15 %
// of the conversion's time, and most of its peak heap beside the archive.
type taskIDs struct {
	runs  map[[3]uint32]*idRun
	last  [3]uint32
	run   *idRun // runs[last], or nil
	other map[taskKey]int64
}

// idRun holds the ids of one (team, instance, creator), generation first+i at i;
// 0 marks a generation not set there (a ptrace id is never 0: MakeID's
// sequence numbers start at 1).
type idRun struct {
	first uint32
	ids   []int64
}

// maxGap is the most generations a run skips by padding (a generation
// further on goes to the map).
const maxGap = 1024

func newTaskIDs() taskIDs {
	return taskIDs{runs: map[[3]uint32]*idRun{}, other: map[taskKey]int64{}}
}

// find returns k's run, making one starting at k's generation when
// create is set.
func (m *taskIDs) find(k taskKey, create bool) *idRun {
	p := [3]uint32{k.team, k.inst, k.creator}
	if m.run != nil && m.last == p {
		return m.run
	}
	r := m.runs[p]
	if r == nil {
		if !create {
			return nil
		}
		r = &idRun{first: k.gen}
		m.runs[p] = r
	}
	m.last, m.run = p, r
	return r
}

// set maps k to id (not 0).
func (m *taskIDs) set(k taskKey, id int64) {
	r := m.find(k, true)
	if k.gen >= r.first {
		i := uint64(k.gen - r.first)
		switch {
		case i < uint64(len(r.ids)):
			r.ids[i] = id
			return
		case i <= uint64(len(r.ids))+maxGap:
			r.ids = append(r.ids, make([]int64, i-uint64(len(r.ids)))...) // the gap
			r.ids = append(r.ids, id)
			return
		}
	}
	m.other[k] = id
}

// get returns k's id and whether k was set.
func (m *taskIDs) get(k taskKey) (int64, bool) {
	if r := m.find(k, false); r != nil && k.gen >= r.first {
		if i := uint64(k.gen - r.first); i < uint64(len(r.ids)) && r.ids[i] != 0 {
			return r.ids[i], true
		}
	}
	id, ok := m.other[k]
	return id, ok
}

// taskRegions maps a ptrace task id to the TASK region it runs in, as a
// map would: a slice per creating thread indexed by the id's sequence
// number (dense: the converter's counters), the region + 1 (0: none).
type taskRegions [][]uint64

// get returns id's region and whether one was set.
func (t taskRegions) get(id int64) (uint32, bool) {
	th, seq := int64(trace.IDThread(id)), trace.IDSeq(id)
	if id < 0 || th >= int64(len(t)) || seq >= int64(len(t[th])) || t[th][seq] == 0 {
		return 0, false
	}
	return uint32(t[th][seq] - 1), true
}

// setOnce sets id's region unless it has one. id is one the converter
// made (trace.MakeID of a location index and its counter).
func (t *taskRegions) setOnce(id int64, region uint32) {
	th, seq := int64(trace.IDThread(id)), trace.IDSeq(id)
	if id < 0 {
		return
	}
	for int64(len(*t)) <= th {
		*t = append(*t, nil)
	}
	s := (*t)[th]
	for int64(len(s)) <= seq {
		s = append(s, 0)
	}
	if s[seq] == 0 {
		s[seq] = uint64(region) + 1
	}
	(*t)[th] = s
}

package sim

import (
	"encoding/binary"
	"sort"
)

// EventNodes maps events of a process, named by thread and index, to
// nodes (or tasks): per thread, the events in increasing order and their
// values, as the simulation meets them, packed in blocks of eventBlockLen
// entries. A block keeps its first entry whole and each next one as two
// varints, its index's difference from the previous entry's and its
// value's (zigzag): about 3 bytes an entry where two columns took 8 and
// a map 30–40. Four of them hold every remote dependence's two events
// (the fragments' send and receive nodes, the task graph's predecessor
// and successor tasks): 89 MB of the simulation's 193 on the 10 M-event
// spread trace, with 2.9 M remote dependences, before they were packed.
//
// The bytes go into segments that are never copied as they grow (each
// next one twice as large, up to maxEventSeg): the lists live until the
// critical path, and growing them by doubling left as much garbage as
// they hold. A block lies within one segment.
type EventNodes struct {
	threads []eventList
	n       int
}

type eventList struct {
	blocks  []eventBlock
	segs    [][]byte
	inLast  int   // entries in the last block
	last    int64 // the last entry's index and value
	lastVal int32
}

// eventBlock is where a block starts: its first entry, and its other
// entries' bytes at segs[seg][off:].
type eventBlock struct {
	first int64
	val   int32
	seg   uint32
	off   uint32
}

const (
	eventBlockLen = 32
	// maxEventEntry is an entry's most bytes: a 64-bit uvarint and a
	// 33-bit zigzag varint.
	maxEventEntry = binary.MaxVarintLen64 + 5
	maxEventBlock = (eventBlockLen - 1) * maxEventEntry
	minEventSeg   = 512 // at least maxEventBlock
	maxEventSeg   = 64 << 10
)

// Add records that event index of thread th maps to n; a thread's events
// come in increasing order.
func (m *EventNodes) Add(th int, index int64, n int32) {
	for len(m.threads) <= th {
		m.threads = append(m.threads, eventList{})
	}
	l := &m.threads[th]
	m.n++
	if len(l.blocks) > 0 && l.inLast < eventBlockLen {
		s := &l.segs[len(l.segs)-1]
		*s = binary.AppendUvarint(*s, uint64(index-l.last))
		*s = binary.AppendVarint(*s, int64(n)-int64(l.lastVal))
		l.inLast++
		l.last, l.lastVal = index, n
		return
	}
	k := len(l.segs) - 1
	if k < 0 || cap(l.segs[k])-len(l.segs[k]) < maxEventBlock {
		size := minEventSeg
		if k >= 0 {
			size = min(2*cap(l.segs[k]), maxEventSeg)
		}
		l.segs = append(l.segs, make([]byte, 0, size))
		k++
	}
	l.blocks = append(l.blocks, eventBlock{first: index, val: n, seg: uint32(k), off: uint32(len(l.segs[k]))})
	l.inLast = 1
	l.last, l.lastVal = index, n
}

// Trim drops the last segment's spare room when it is worth a copy (at
// most a segment's): the lists outlive the pass that filled them.
func (m *EventNodes) Trim() {
	for i := range m.threads {
		l := &m.threads[i]
		if k := len(l.segs) - 1; k >= 0 {
			if s := l.segs[k]; cap(s)-len(s) > len(s)/8 {
				l.segs[k] = append(make([]byte, 0, len(s)), s...)
			}
		}
		l.blocks = l.blocks[:len(l.blocks):len(l.blocks)]
	}
}

// Len returns the number of events mapped.
func (m *EventNodes) Len() int { return m.n }

// Get returns the node event index of thread th maps to.
func (m *EventNodes) Get(th int, index int64) (int32, bool) {
	if th < 0 || th >= len(m.threads) {
		return -1, false
	}
	var at eventPos
	return m.threads[th].find(index, &at)
}

// eventPos is an entry of a list, decoded: its block, its place in the
// block, where the next entry's bytes start, and its index and value.
type eventPos struct {
	block, j int32
	next     uint32
	index    int64
	val      int32
	ok       bool
}

// entries returns the number of entries in block k.
func (l *eventList) entries(k int) int {
	if k == len(l.blocks)-1 {
		return l.inLast
	}
	return eventBlockLen
}

// start sets p to block k's first entry.
func (l *eventList) start(k int, p *eventPos) {
	b := &l.blocks[k]
	*p = eventPos{block: int32(k), next: b.off, index: b.first, val: b.val, ok: true}
}

// step moves p to the next entry, into the next block after a block's
// last; false at the list's end.
func (l *eventList) step(p *eventPos) bool {
	k := int(p.block)
	if int(p.j)+1 >= l.entries(k) {
		if k+1 >= len(l.blocks) {
			return false
		}
		l.start(k+1, p)
		return true
	}
	s := l.segs[l.blocks[k].seg]
	d, n := binary.Uvarint(s[p.next:])
	v, w := binary.Varint(s[int(p.next)+n:])
	p.next += uint32(n + w)
	p.j++
	p.index += int64(d)
	p.val = int32(int64(p.val) + v)
	return true
}

// find returns the value of index, searching from the block that holds
// it; at is left at the entry found.
func (l *eventList) find(index int64, at *eventPos) (int32, bool) {
	k := sort.Search(len(l.blocks), func(i int) bool { return l.blocks[i].first > index }) - 1
	if k < 0 {
		return -1, false
	}
	var p eventPos
	l.start(k, &p)
	for p.index < index && int(p.block) == k && l.step(&p) {
	}
	if p.index != index {
		return -1, false
	}
	*at = p
	return p.val, true
}

// EventCursor looks events up in an EventNodes as Get does, faster when
// a thread's lookups come mostly in increasing order (the critical path's
// cross-process edges, listed in their events' order): each starts from
// where the thread's last one ended and steps a few entries before it
// falls back to Get's search.
type EventCursor struct {
	m  *EventNodes
	at []eventPos // per thread: where its last lookup ended
}

// cursorScan is how many entries a lookup steps from the last before it
// searches: most lookups are the next entry or close to it.
const cursorScan = 8

// Cursor returns a cursor over m, which must not change while it is used.
func (m *EventNodes) Cursor() EventCursor {
	return EventCursor{m: m, at: make([]eventPos, len(m.threads))}
}

// Get returns the node event index of thread th maps to.
func (c *EventCursor) Get(th int, index int64) (int32, bool) {
	if th < 0 || th >= len(c.m.threads) {
		return -1, false
	}
	l := &c.m.threads[th]
	if at := &c.at[th]; at.ok && at.index <= index {
		p := *at
		for range cursorScan {
			if p.index == index {
				*at = p
				return p.val, true
			}
			if p.index > index || !l.step(&p) {
				break
			}
		}
		if p.index == index {
			*at = p
			return p.val, true
		}
		if p.index > index {
			return -1, false // between two entries: never added
		}
	}
	return l.find(index, &c.at[th])
}

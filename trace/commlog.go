package trace

import (
	"encoding/binary"

	"github.com/ptrace-dev/ptrace/internal/packed"
)

// The communication log: the load's validating decode sees every event, and
// communication events (the kinds ThreadEvents.Comm counts) are few in a
// task-based trace — remote dependences at a partition's boundary, a few
// messages per iteration — yet the matching had to decode every event of
// their threads again to find them. The load keeps them, per thread, in a
// compact byte log (index and time as differences from the previous one,
// the kind, the first CommArgs arguments as zig-zag varints: about 10 bytes
// an event), which the matching reads instead of the chunks. Each entry also
// counts the thread's other events at the same time just before it: where
// threads have events at equal times, the matching's merged order breaks
// the tie by what is at the threads' heads, communication or not. A process
// whose log outgrows a quarter of its chunks' bytes (an MPI-heavy trace:
// its events are mostly communication) drops it, a streamed one (which
// keeps no events in memory) an eighth: there the matching decodes the
// events, as it did without the log.

// CommArgs is how many leading arguments of a communication event the log
// keeps: what the matching reads (peer, tag and communicator; task, peer
// and remote task; operation, communicator and root). A coll_begin's entry
// adds a byte saying whether its sent and received byte counts are
// positive (a collective without payload synchronizes nobody), which
// CommScan gives as those arguments, 1 or 0.
const CommArgs = 3

// commLog is one thread's log and where its last entry left the
// differences; pre counts the thread's other events at time runTime since
// its last entry. The log's bytes are blocks (packed.Blocks): grown by
// doubling and copying, it allocated twice its final size (the load's
// main garbage, 24 of its 41 MB on halo).
type commLog struct {
	blocks       packed.Blocks
	idx, time    int64
	runTime, pre int64
}

// commEntryMax is the most bytes an entry takes: three uvarints, the
// kind, CommArgs varints, a coll_begin's payload byte (a coll_start's or
// coll_complete's and its request).
const commEntryMax = 3*binary.MaxVarintLen64 + 1 + CommArgs*binary.MaxVarintLen64 + 1 + binary.MaxVarintLen64

// other notes an event that is not communication at time t.
func (l *commLog) other(t int64) {
	if t != l.runTime {
		l.runTime, l.pre = t, 0
	}
	l.pre++
}

// IsComm reports whether events of kind k are communication events: the
// ones the log keeps and the matching turns into nodes.
func IsComm(k Kind) bool {
	switch k {
	case MPISend, MPIRecv, CollBegin, CollEnd, RemoteDepOut, RemoteDepIn, CollStart, CollComplete, MPIRecvFreed:
		return true
	}
	return false
}

// add appends event e, the idx-th of its thread, to the thread's log.
func (l *commLog) add(idx int64, e *Event) int {
	// The block is stored once: each store is a write barrier while the
	// collector runs (1 % of the load on halo).
	buf := l.blocks.Room(commEntryMax)
	n := len(buf)
	buf = binary.AppendUvarint(buf, uint64(idx-l.idx))
	buf = binary.AppendUvarint(buf, uint64(e.Time-l.time))
	pre := int64(0)
	if e.Time == l.runTime {
		pre = l.pre
	}
	buf = binary.AppendUvarint(buf, uint64(pre))
	buf = append(buf, byte(e.Kind))
	for _, a := range e.Args[:CommArgs] {
		buf = binary.AppendVarint(buf, a)
	}
	switch e.Kind {
	case CollBegin:
		buf = append(buf, CollPayload(e))
	case CollStart, CollComplete:
		// Its byte count (sent at the start, received at the
		// completion) as 1 or 0, and the request that pairs them.
		buf = append(buf, b2u8(e.Args[3] > 0))
		buf = binary.AppendVarint(buf, e.Args[4])
	}
	l.blocks.Wrote(buf)
	l.idx, l.time = idx, e.Time
	l.runTime, l.pre = e.Time, 0
	return len(buf) - n
}

// HasCommLog reports whether the load kept the communication log.
func (p *Process) HasCommLog() bool { return p.commLog }

// DropCommLog releases the communication log once nothing will read it
// (after the matching).
func (p *Process) DropCommLog() {
	for t := range p.Events {
		p.Events[t].comm = commLog{}
	}
	p.commLog, p.commBytes = false, 0
}

// CommScan reads one thread's communication events, in thread order, from
// the log. Arguments past CommArgs read as zero, but a coll_begin's sent
// and received bytes, which read as 1 where they are positive, and a
// coll_start's or coll_complete's byte count (likewise) and request.
type CommScan struct {
	buf      []byte
	rest     [][]byte // the blocks after buf's
	idx, pre int64
	e        Event
}

// CommScan returns a scan of thread t's communication events; ok is false
// when the process has no log (HasCommLog).
func (p *Process) CommScan(t int) (s CommScan, ok bool) {
	if !p.commLog || t < 0 || t >= len(p.Events) {
		return CommScan{}, false
	}
	blocks := p.Events[t].comm.blocks.List()
	return CommScan{buf: blocks[0], rest: blocks[1:]}, true
}

// Next advances to the next event; false at the end.
func (s *CommScan) Next() bool {
	for len(s.buf) == 0 {
		if len(s.rest) == 0 {
			return false
		}
		s.buf, s.rest = s.rest[0], s.rest[1:]
	}
	// The log is the load's own encoding of events it validated, so it
	// cannot be malformed; a short read ends the scan rather than panic.
	di, k := binary.Uvarint(s.buf)
	if k <= 0 {
		s.buf, s.rest = nil, nil
		return false
	}
	dt, j := binary.Uvarint(s.buf[k:])
	if j <= 0 {
		s.buf, s.rest = nil, nil
		return false
	}
	k += j
	pre, j := binary.Uvarint(s.buf[k:])
	if j <= 0 || k+j >= len(s.buf) {
		s.buf, s.rest = nil, nil
		return false
	}
	s.idx += int64(di)
	s.e.Time += int64(dt)
	s.pre = int64(pre)
	s.e.Kind = Kind(s.buf[k+j])
	s.buf = s.buf[k+j+1:]
	for i := range CommArgs {
		v, n := binary.Varint(s.buf)
		if n <= 0 {
			s.buf, s.rest = nil, nil
			return false
		}
		s.e.Args[i] = v
		s.buf = s.buf[n:]
	}
	s.e.Args[3], s.e.Args[4] = 0, 0
	if s.e.Kind == CollBegin {
		if len(s.buf) == 0 {
			s.buf, s.rest = nil, nil
			return false
		}
		p := s.buf[0]
		s.e.Args[3], s.e.Args[4] = int64(p&CollSends), int64(p&CollReceives)>>1
		s.buf = s.buf[1:]
	}
	if s.e.Kind == CollStart || s.e.Kind == CollComplete {
		if len(s.buf) == 0 {
			s.buf, s.rest = nil, nil
			return false
		}
		s.e.Args[3] = int64(s.buf[0])
		v, n := binary.Varint(s.buf[1:])
		if n <= 0 {
			s.buf, s.rest = nil, nil
			return false
		}
		s.e.Args[4] = v
		s.buf = s.buf[1+n:]
	}
	return true
}

// Event is the current event (valid until the next call to Next).
func (s *CommScan) Event() *Event { return &s.e }

// Index is the current event's index in its thread.
func (s *CommScan) Index() int64 { return s.idx }

// Pre is how many other events of the thread, at the current event's time,
// come right before it (since the previous communication event).
func (s *CommScan) Pre() int64 { return s.pre }

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

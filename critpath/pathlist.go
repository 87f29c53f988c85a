package critpath

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ptrace-dev/ptrace/internal/packed"
	"github.com/ptrace-dev/ptrace/report"
)

// nodeList is a list of critical-path nodes (the path's segments, or the
// whole path with Input.Path) as it travels to rank 0, made node by node
// as the path streams by: per node six varints, its rank, thread, the
// indexes of its kind and construct in the rank's name table
// (pathSummary.Names), its start after the node before's and its
// duration. About 10 bytes a node where a report.PathNode is 64 with two
// strings for the collector to scan: a chain of 1.67 M untied tasks has
// as many nodes and segments on its path, which as PathNodes (copied to
// the gather, decoded, appended, sorted, merged and cloned on rank 0) made
// the critical path's peak heap 442 MiB.
//
// Rank 0 needs the nodes of all ranks in time order (start, rank, thread;
// ties in rank order, then in path order): the path visits nodes mostly
// in that order, so the list is kept as it came, cut into its ascending
// runs, and rank 0 merges the runs of every rank (mergeLists). The bytes
// travel apart from the rest of the summary (Gatherv: not copied within
// the process); Runs and N travel in it.
type nodeList struct {
	N    int64     // nodes
	Runs []listRun // the ascending runs, in the list's order
	// The nodes' bytes: in blocks never copied as they are written
	// (a slice grown by copying left 5 times its bytes as garbage), joined
	// into buf for the gather (join).
	blocks packed.Blocks
	size   int64 // bytes in blocks
	buf    []byte

	// The last node added, whose key the next one's is compared with.
	lastStart  int64
	lastRank   int
	lastThread int32
	hasLast    bool
}

// listRun is where an ascending run begins in the list's bytes, and the
// start of the node before it (the base of its first start's delta).
type listRun struct {
	Off  int64
	Base int64
}

// add appends a node: its kind and construct are indexes of the rank's
// name table.
func (l *nodeList) add(rank int, thread int32, kind, cons uint32, start, dur int64) {
	if !l.hasLast || cmp.Or(cmp.Compare(l.lastStart, start), cmp.Compare(l.lastRank, rank), cmp.Compare(l.lastThread, thread)) > 0 {
		l.Runs = append(l.Runs, listRun{Off: l.size, Base: l.lastStart})
	}
	b := l.blocks.Room(6 * binary.MaxVarintLen64)
	k := len(b)
	b = binary.AppendVarint(b, int64(rank))
	b = binary.AppendVarint(b, int64(thread))
	b = binary.AppendUvarint(b, uint64(kind))
	b = binary.AppendUvarint(b, uint64(cons))
	b = binary.AppendVarint(b, start-l.lastStart)
	b = binary.AppendVarint(b, dur)
	l.size += int64(len(b) - k)
	l.blocks.Wrote(b)
	l.N++
	l.lastStart, l.lastRank, l.lastThread, l.hasLast = start, rank, thread, true
}

// join returns the list's bytes in one slice, and drops its blocks.
func (l *nodeList) join() []byte {
	if l.size == 0 {
		return nil
	}
	b := make([]byte, 0, l.size)
	for _, blk := range l.blocks.List() {
		b = append(b, blk...)
	}
	l.blocks = packed.Blocks{}
	return b
}

// EncodeMsgpack implements msgpack.CustomEncoder: N and the runs, as
// varints (a list of an MPI ping-pong's path has a run every few nodes).
// The bytes of the nodes travel apart.
func (l nodeList) EncodeMsgpack(enc *msgpack.Encoder) error {
	b := binary.AppendUvarint(nil, uint64(l.N))
	b = binary.AppendUvarint(b, uint64(len(l.Runs)))
	var off int64
	for _, r := range l.Runs {
		b = binary.AppendUvarint(b, uint64(r.Off-off))
		b = binary.AppendVarint(b, r.Base)
		off = r.Off
	}
	return enc.EncodeBytes(b)
}

var errNodeList = errors.New("path nodes: truncated or malformed list")

// DecodeMsgpack implements msgpack.CustomDecoder. The counts are checked
// against the bytes left before anything is made from them.
func (l *nodeList) DecodeMsgpack(dec *msgpack.Decoder) error {
	b, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	return l.decodeHeader(b)
}

// decodeHeader reads what EncodeMsgpack wrote into l.
func (l *nodeList) decodeHeader(b []byte) error {
	r := varints{b}
	n, ok1 := r.uvarint()
	runs, ok2 := r.uvarint()
	if !ok1 || !ok2 || n > 1<<62 || runs > uint64(len(r.b))/2 { // a run takes two bytes at least
		return errNodeList
	}
	*l = nodeList{N: int64(n)}
	if runs > 0 {
		l.Runs = make([]listRun, runs)
	}
	var off int64
	for i := range l.Runs {
		d, ok1 := r.uvarint()
		base, ok2 := r.varint()
		if !ok1 || !ok2 || d > 1<<62 {
			return errNodeList
		}
		off += int64(d)
		l.Runs[i] = listRun{Off: off, Base: base}
	}
	if len(r.b) != 0 {
		return fmt.Errorf("path nodes: %d bytes after the list's runs", len(r.b))
	}
	return nil
}

// listCursor decodes one ascending run of a rank's list on rank 0.
type listCursor struct {
	b       []byte // the run's bytes not yet read
	last    int64  // the start of the node read last
	names   []string
	order   int // ties go to the smaller: rank-major, run-minor
	cur     report.PathNode
	started bool // cur holds a node
}

// next reads the run's next node into cur; false at the run's end.
func (c *listCursor) next() (bool, error) {
	if len(c.b) == 0 {
		return false, nil
	}
	var v [6]int64
	for k := range v {
		var n int
		if k == 2 || k == 3 {
			var u uint64
			u, n = binary.Uvarint(c.b)
			if n > 0 && u >= uint64(len(c.names)) {
				return false, fmt.Errorf("path nodes: name %d of %d", u, len(c.names))
			}
			v[k] = int64(u)
		} else {
			v[k], n = binary.Varint(c.b)
		}
		if n <= 0 {
			return false, errNodeList
		}
		c.b = c.b[n:]
	}
	prev := c.cur
	c.last += v[4]
	c.cur = report.PathNode{Rank: int(v[0]), Thread: int(v[1]), Kind: c.names[v[2]], Construct: c.names[v[3]], StartNS: c.last, DurNS: v[5]}
	if c.started && timeOrder(prev, c.cur) > 0 {
		return false, errors.New("path nodes: a run out of order")
	}
	c.started = true
	return true, nil
}

// timeOrder orders path nodes by start, rank and thread.
func timeOrder(a, b report.PathNode) int {
	return cmp.Or(cmp.Compare(a.StartNS, b.StartNS), cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Thread, b.Thread))
}

// mergeLists calls yield with the nodes of the ranks' lists (list(p) of
// each part, whose body is its bytes and whose names are the part's)
// merged into time order: the order of a stable sort by start, rank and
// thread of the lists one after the other. It holds a cursor a run.
func mergeLists(parts []pathSummary, list func(p *pathSummary) *nodeList, yield func(report.PathNode)) error {
	var h []*listCursor
	order := 0
	for i := range parts {
		p := &parts[i]
		l := list(p)
		if l.N > 0 && len(l.Runs) == 0 || len(l.Runs) == 0 && len(l.buf) > 0 || len(l.Runs) > 0 && l.Runs[0].Off != 0 {
			return errNodeList
		}
		for r, run := range l.Runs {
			end := int64(len(l.buf))
			if r+1 < len(l.Runs) {
				end = l.Runs[r+1].Off
			}
			if run.Off < 0 || run.Off > end || end > int64(len(l.buf)) {
				return errNodeList
			}
			c := &listCursor{b: l.buf[run.Off:end], last: run.Base, names: p.Names, order: order}
			order++
			ok, err := c.next()
			if err != nil {
				return err
			}
			if !ok {
				return errNodeList // an empty run
			}
			h = append(h, c)
		}
	}
	// The heap of cursors by their current node, ties by order.
	less := func(a, b *listCursor) bool {
		if c := timeOrder(a.cur, b.cur); c != 0 {
			return c < 0
		}
		return a.order < b.order
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		heapDown(h, i, less)
	}
	var got int64
	for len(h) > 0 {
		c := h[0]
		yield(c.cur)
		got++
		ok, err := c.next()
		if err != nil {
			return err
		}
		if !ok {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		heapDown(h, 0, less)
	}
	var want int64
	for i := range parts {
		want += list(&parts[i]).N
	}
	if got != want {
		return fmt.Errorf("path nodes: %d nodes in lists that claim %d", got, want)
	}
	return nil
}

package critpath

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ptrace-dev/ptrace/report"
)

// pathNodes is a list of critical-path nodes that travels to rank 0 as
// one columnar blob (the names once, the times as deltas): msgpack's
// reflection over the structs took 20 ms for the 35 000 segments of the
// 10 M-event halo's path, at the end of every run.
type pathNodes []report.PathNode

// EncodeMsgpack implements msgpack.CustomEncoder.
func (ns pathNodes) EncodeMsgpack(enc *msgpack.Encoder) error {
	return enc.EncodeBytes(appendPathNodes(nil, ns))
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (ns *pathNodes) DecodeMsgpack(dec *msgpack.Decoder) error {
	b, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	*ns, err = decodePathNodes(b)
	return err
}

// appendPathNodes appends ns to b: the number of nodes, the distinct
// names (kinds and constructs), then per node its rank, thread, the
// indexes of its two names, its start after the previous node's and its
// duration, all varints.
func appendPathNodes(b []byte, ns []report.PathNode) []byte {
	b = binary.AppendUvarint(b, uint64(len(ns)))
	if len(ns) == 0 {
		return b
	}
	index := map[string]uint64{}
	var names []string
	name := func(s string) uint64 {
		i, ok := index[s]
		if !ok {
			i = uint64(len(names))
			index[s] = i
			names = append(names, s)
		}
		return i
	}
	// The indexes are made first, so that the table precedes the nodes.
	ids := make([]uint64, 0, 2*len(ns))
	for _, n := range ns {
		ids = append(ids, name(n.Kind), name(n.Construct))
	}
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, s := range names {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	var last int64
	for k, n := range ns {
		b = binary.AppendVarint(b, int64(n.Rank))
		b = binary.AppendVarint(b, int64(n.Thread))
		b = binary.AppendUvarint(b, ids[2*k])
		b = binary.AppendUvarint(b, ids[2*k+1])
		b = binary.AppendVarint(b, n.StartNS-last)
		b = binary.AppendVarint(b, n.DurNS)
		last = n.StartNS
	}
	return b
}

var errPathNodes = errors.New("path nodes: truncated or malformed")

// decodePathNodes reads what appendPathNodes wrote. The counts are checked
// against the bytes left before anything is made from them.
func decodePathNodes(b []byte) ([]report.PathNode, error) {
	r := varints{b}
	uv, sv := r.uvarint, r.varint
	count, ok := uv()
	if !ok {
		return nil, errPathNodes
	}
	if count == 0 {
		return nil, nil
	}
	nn, ok := uv()
	if !ok || nn > uint64(len(r.b)) { // a name takes at least a byte
		return nil, errPathNodes
	}
	names := make([]string, nn)
	for i := range names {
		l, ok := uv()
		if !ok || l > uint64(len(r.b)) {
			return nil, errPathNodes
		}
		names[i], r.b = string(r.b[:l]), r.b[l:]
	}
	if count > uint64(len(r.b))/6 { // six varints of a byte at least
		return nil, fmt.Errorf("path nodes: %d nodes in %d bytes", count, len(r.b))
	}
	out := make([]report.PathNode, count)
	var last int64
	for k := range out {
		rank, ok1 := sv()
		thread, ok2 := sv()
		kind, ok3 := uv()
		cons, ok4 := uv()
		start, ok5 := sv()
		dur, ok6 := sv()
		if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || kind >= nn || cons >= nn {
			return nil, errPathNodes
		}
		last += start
		out[k] = report.PathNode{Rank: int(rank), Thread: int(thread), Kind: names[kind], Construct: names[cons], StartNS: last, DurNS: dur}
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("path nodes: %d bytes after the last node", len(r.b))
	}
	return out, nil
}

package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/internal/packed"
)

// NodeRef names a node of a distributed DAG: the analysis rank that owns it
// and its local id there.
type NodeRef struct {
	Rank int
	Node int32
}

// Key names a node by something its owner can resolve (see
// BuildOptions.Resolve), for edges whose declaring rank knows what the remote
// node stands for (say, a trace event) but not its local id there.
type Key struct{ A, B int64 }

// Entry is one input or output of a node in a DAG's edge lists: a local node
// id (≥ 0) or a remote slot s, encoded as ^s (< 0). A slot is one end of an
// edge between two ranks; its peer rank holds the other end.
type Entry int32

// NoEntry is the Entry of "no input" (for example Input.Arg of a node
// without explicit inputs).
const NoEntry Entry = math.MinInt32

// Node returns the local node id when e names a local node.
func (e Entry) Node() (int32, bool) { return int32(e), e >= 0 }

// Slot returns the remote slot when e names one.
func (e Entry) Slot() (int32, bool) { return int32(^e), e < 0 && e != NoEntry }

// DAG is one analysis rank's share of a distributed directed graph: its
// nodes, numbered 0…Len()−1, with
//
//   - chain edges: node i follows node i−1 when Chained(i) (the per-process
//     event order, stored as one flag per node instead of an edge);
//   - explicit edges in CSR form, both directions (Ins, Outs), whose entries
//     are local nodes or remote slots; a DAG built with
//     BuildOptions.InsOnly has the inputs' side alone and each node's
//     output count (a backward replay of values needs no more), one built
//     OutsOnly the outputs' side alone and each node's input count (a
//     forward replay that pushes values, then ReplayInReverse), that side
//     packed as varints of the entries' distance from their node (1–2
//     bytes an entry on a trace's graphs instead of 4);
//   - remote slots grouped by peer rank: slot peerBase[q]+k is the k-th edge
//     between this rank and rank q, in an order both ranks agree on, so
//     values cross ranks as (k, value) pairs without node ids.
//
// A DAG is immutable once built and may be replayed any number of times,
// forward or backward (see Replay).
type DAG struct {
	rank, size int
	chained    chainBits
	inOff      []int32 // Ins(n) = in[inOff[n]:inOff[n+1]]
	in         []Entry
	outOff     []int32
	out        []Entry
	// inPk or outPk hold the one side of a DAG built InsOnly or OutsOnly,
	// packed (packedadj.go), instead of in or out.
	inPk, outPk []byte
	inAt, outAt byteOffsets // their offsets (inOff and outOff are then nil)
	outDeg      counts      // built InsOnly: each node's number of outputs (outOff, out nil)
	inDeg       counts      // built OutsOnly: each node's number of inputs (inOff, in nil)
	// consumed is set once a replay counted down outDeg (backward) or
	// inDeg (forward) (ReplayOptions.ConsumeCounts): no replay in that
	// direction can run again.
	consumedOut, consumedIn bool

	slotNode []int32  // local node of each slot
	slotOut  slotBits // the local node is the edge's source
	peerBase []int32  // slots of peer q are [peerBase[q], peerBase[q+1])
	peers    []int32  // peers with at least one slot, ascending

	parked *parkedCSR // where Park wrote the adjacency, nil in memory
	// spill takes what a replay records and reads only later, if at all:
	// its order (SpillTo).
	spill packed.Spiller
}

// SpillTo makes f the file where the replays of g write what they record
// for later (a forward replay's order, read back by a backward replay in
// its reverse: 0.7 bytes a node, 1.7 MB of the 10 M-event halo's
// critical-path peak, which a backward replay reads only where the
// forward replay's tie log filled).
func (g *DAG) SpillTo(f packed.Spiller) { g.spill = f }

// Len returns the number of local nodes.
func (g *DAG) Len() int32 { return g.chained.len() }

// Rank returns the analysis rank this share belongs to.
func (g *DAG) Rank() int { return g.rank }

// Ins returns the explicit inputs of n (edges into n); a DAG built
// OutsOnly has none to give (see InDegree).
func (g *DAG) Ins(n int32) []Entry {
	g.checkHere()
	switch {
	case g.inPk != nil:
		lo, hi := g.inAt.span(n)
		return appendEntries(nil, n, g.inPk[lo:hi])
	case g.inOff == nil:
		return nil
	}
	return g.in[g.inOff[n]:g.inOff[n+1]]
}

// InDegree returns the number of explicit inputs of n (0 once DropInputs
// dropped them).
func (g *DAG) InDegree(n int32) int32 {
	g.checkHere()
	if g.inPk != nil {
		lo, hi := g.inAt.span(n)
		return countEntries(g.inPk[lo:hi])
	}
	if g.inOff == nil {
		if g.inDeg.null() {
			return 0
		}
		return g.inDeg.get(n)
	}
	return g.inOff[n+1] - g.inOff[n]
}

// Outs returns the explicit outputs of n (edges out of n); a DAG built
// InsOnly has none to give (see OutDegree).
func (g *DAG) Outs(n int32) []Entry {
	g.checkHere()
	switch {
	case g.outPk != nil:
		lo, hi := g.outAt.span(n)
		return appendEntries(nil, n, g.outPk[lo:hi])
	case g.outOff == nil:
		return nil
	}
	return g.out[g.outOff[n]:g.outOff[n+1]]
}

// OutDegree returns the number of explicit outputs of n.
func (g *DAG) OutDegree(n int32) int32 {
	g.checkHere()
	if g.outPk != nil {
		lo, hi := g.outAt.span(n)
		return countEntries(g.outPk[lo:hi])
	}
	if g.outOff == nil {
		return g.outDeg.get(n)
	}
	return g.outOff[n+1] - g.outOff[n]
}

// DropInputs frees the inputs' adjacency once no replay will run on g
// (Replay refuses it then); Outs, OutDegree and the slots stay, which is
// what the exchanges along the edges read (ExchangeEdges, PropagateMax).
func (g *DAG) DropInputs() {
	g.in, g.inPk, g.inOff, g.inAt, g.inDeg = nil, nil, nil, byteOffsets{}, counts{}
}

// InsOnly reports whether g was built without its outputs' adjacency.
func (g *DAG) InsOnly() bool { return g.outOff == nil && g.outPk == nil }

// OutsOnly reports whether g was built without its inputs' adjacency
// (BuildOptions.OutsOnly), keeping their counts.
func (g *DAG) OutsOnly() bool { return g.inOff == nil && g.inPk == nil && !g.inDeg.null() }

// Slots returns the number of remote slots.
func (g *DAG) Slots() int32 { return int32(len(g.slotNode)) }

// slotPeer returns the rank holding the other end of slot s: the peer
// whose range of slots holds it (a slot is a remote edge's, 4 bytes of a
// peer each where the peer was kept: 8.5 MB of the match's DAG on a pure
// MPI program at two ranks).
func (g *DAG) slotPeer(s int32) int32 {
	// The first peer whose slots end past s.
	lo, hi := 0, len(g.peerBase)-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if g.peerBase[m+1] > s {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return int32(lo)
}

// slotIsOut reports whether the local node of slot s is the edge's source.
func (g *DAG) slotIsOut(s int32) bool { return g.slotOut.has(s) }

// SlotNode returns the local node at this end of slot s.
func (g *DAG) SlotNode(s int32) int32 { return g.slotNode[s] }

// Edges returns the number of explicit edges with at least one end here:
// local edges plus remote slots. Each side lists the local edges and the
// slots of its direction, so the other direction's slots are added to it.
func (g *DAG) Edges() int64 {
	var ins int64
	for s := range int32(len(g.slotNode)) {
		if !g.slotIsOut(s) {
			ins++
		}
	}
	if g.inOff == nil && g.inPk == nil { // OutsOnly, or inputs dropped: the outputs' side
		return entries(g.out, g.outPk) + ins
	}
	return entries(g.in, g.inPk) + int64(len(g.slotNode)) - ins
}

// slotAddr returns the peer of slot s and the slot's index k in the pair's
// edge list, which is how the peer names the same edge.
func (g *DAG) slotAddr(s int32) (peer int32, k uint32) {
	p := g.slotPeer(s)
	return p, uint32(s - g.peerBase[p])
}

// Builder collects one rank's nodes and edges; Build turns the builders of
// all ranks into a distributed DAG with one all-to-all.
type Builder struct {
	rank, size int
	chained    chainBits
	esrc, edst []int32 // local edges added one by one
	sealed     int     // esrc[:sealed] are in segs already
	segs       []edgeSeg
	rem        []remoteDecl
	keys       []Key // of the declarations by key
	err        error
	// readErr is a failed read of a list of edges in a file, in a pass
	// after the one that checks the nodes: agreed at Build's end.
	readErr error
}

// edgeSeg is a run of local edges in declaration order: base + src[i] →
// base + dst[i] (edges added one by one), or the packed pairs added with
// AddPairs (the caller's list, kept until Build instead of copied).
type edgeSeg struct {
	src, dst []int32
	packed   packed.Pairs
	base     int32
	mapped   PairMap // the packed pairs' edges, when set (AddPairsMapped)
}

// PairMap maps pairs of a list onto edges between local nodes (before the
// list's base is added), a batch at a time and in place: it turns the
// pairs (as[i], bs[i]) into the edges (as[j], bs[j]), j below the count it
// returns, in order, leaving out those it drops. A call a batch, not a
// pair, so that mapping millions of pairs costs no call each. After the
// last batch of each pass over the list, it is called with empty slices:
// what it made for the pass (a table it looks the pairs up in) may go,
// so that a build's lists are not all mapped at once.
type PairMap func(as, bs []int32) int

// edgeBatch is how many edges a build reads at a time (eachEdges).
const edgeBatch = 256

// eachEdges calls fn with every local edge of the segments, in order, a
// batch at a time, their bases added: the edges added one by one, and the
// packed pairs (mapped), whose nodes it checks against n when n ≥ 0 (the
// first edge with a node that does not exist is returned, and the rest
// not read; a second pass over the same edges passes −1).
func (b *Builder) eachEdges(n int32, fn func(src, dst []int32)) error {
	var as, bs [edgeBatch]int32
	for k := range b.segs {
		sg := &b.segs[k]
		if sg.packed.Len() == 0 {
			if sg.base == 0 {
				for i := 0; i < len(sg.src); i += edgeBatch {
					j := min(i+edgeBatch, len(sg.src))
					fn(sg.src[i:j], sg.dst[i:j])
				}
				continue
			}
			for i := 0; i < len(sg.src); i += edgeBatch {
				m := copy(as[:], sg.src[i:])
				copy(bs[:m], sg.dst[i:])
				for j := range m {
					as[j], bs[j] = sg.base+as[j], sg.base+bs[j]
				}
				fn(as[:m], bs[:m])
			}
			continue
		}
		r := sg.packed.Reader()
		for m := r.Read(as[:], bs[:]); m > 0; m = r.Read(as[:], bs[:]) {
			if sg.mapped != nil {
				m = sg.mapped(as[:m], bs[:m])
			}
			base := int64(sg.base)
			switch {
			case n >= 0:
				for j := range m {
					if s, d := base+int64(as[j]), base+int64(bs[j]); uint64(s) < uint64(n) && uint64(d) < uint64(n) {
						as[j], bs[j] = int32(s), int32(d)
					} else {
						if sg.mapped != nil {
							sg.mapped(nil, nil) // the pass stops here
						}
						return fmt.Errorf("rank %d: graph: edge %d → %d: node does not exist (have %d)", b.rank, s, d, n)
					}
				}
			case base != 0:
				for j := range m {
					as[j], bs[j] = sg.base+as[j], sg.base+bs[j]
				}
			}
			fn(as[:m], bs[:m])
		}
		if sg.mapped != nil {
			sg.mapped(nil, nil) // the pass over the list is over
		}
		if err := r.Err(); err != nil { // a list in a file (packed.Pairs.StreamTo)
			err = fmt.Errorf("rank %d: graph: reading edges: %w", b.rank, err)
			b.readErr = errors.Join(b.readErr, err)
			return err
		}
	}
	return nil
}

// remoteDecl is a declared edge to another rank, 16 bytes: a key naming
// the remote node is kept aside (Builder.keys), where it took 24 bytes in
// every declaration (a match declares millions, by node id).
type remoteDecl struct {
	local int32
	peer  int32
	node  int32 // remote node id, or with byKey the key's index in keys
	out   bool  // the local node is the source
	byKey bool
}

// NewBuilder starts the share of rank (of size ranks) of a DAG.
func NewBuilder(rank, size int) *Builder { return &Builder{rank: rank, size: size} }

// Len returns the number of nodes added so far.
func (b *Builder) Len() int32 { return b.chained.len() }

// Reserve makes room for about nodes more nodes and edges more local
// edges, so that building a large graph does not copy its arrays as they
// grow.
func (b *Builder) Reserve(nodes, edges int) {
	b.chained.grow(nodes)
	b.esrc = slices.Grow(b.esrc, edges)
	b.edst = slices.Grow(b.edst, edges)
}

// ReserveRemote makes room for about n more remote edge declarations.
func (b *Builder) ReserveRemote(n int) { b.rem = slices.Grow(b.rem, n) }

// ReserveRemoteKeys makes room for about n more remote edge declarations
// by key (AddRemoteInKey, AddRemoteOutKey): the declarations and their
// keys, which grew by copying (0.06 s of the critical path's CPU on the
// 10 M-event mpi at 2 ranks, and their garbage).
func (b *Builder) ReserveRemoteKeys(n int) {
	b.rem = slices.Grow(b.rem, n)
	b.keys = slices.Grow(b.keys, n)
}

// AddNode adds a node and returns its id (ids count from 0 in call order).
// With chained, the node follows the previously added node in its chain;
// the replay then evaluates them in that order. The first node of a chain
// is added with chained false.
func (b *Builder) AddNode(chained bool) int32 {
	if b.chained.len() >= math.MaxInt32-1 {
		b.fail(fmt.Errorf("graph: more than %d nodes on one rank", math.MaxInt32-1))
		return 0
	}
	b.chained.add(chained && b.chained.len() > 0)
	return b.chained.len() - 1
}

func (b *Builder) fail(err error) {
	if b.err == nil {
		b.err = fmt.Errorf("rank %d: %w", b.rank, err)
	}
}

func (b *Builder) checkLocal(n int32) bool {
	if n < 0 || n >= b.Len() {
		b.fail(fmt.Errorf("graph: node %d does not exist (have %d)", n, b.Len()))
		return false
	}
	return true
}

func (b *Builder) checkRank(r int) bool {
	if r < 0 || r >= b.size {
		b.fail(fmt.Errorf("graph: rank %d out of range [0,%d)", r, b.size))
		return false
	}
	return true
}

// AddEdge adds an edge between two local nodes.
func (b *Builder) AddEdge(src, dst int32) {
	if b.checkLocal(src) && b.checkLocal(dst) {
		b.esrc = append(b.esrc, src)
		b.edst = append(b.edst, dst)
	}
}

// AddPairs adds the edges base+a → base+b of the packed pairs (a, b), in
// order, after those added so far. It keeps the list until Build (the
// caller must not change it), which checks that their nodes exist as it counts them (a list
// decoded once less).
func (b *Builder) AddPairs(p packed.Pairs, base int32) {
	b.seal()
	b.segs = append(b.segs, edgeSeg{packed: p, base: base})
}

// AddPairsMapped is AddPairs with the edges m maps the pairs onto, made
// as Build reads the list (twice), a batch at a time: where a list of
// other pairs would be packed only to be read by it. m must give the same
// edges each time.
func (b *Builder) AddPairsMapped(p packed.Pairs, base int32, m PairMap) {
	b.seal()
	b.segs = append(b.segs, edgeSeg{packed: p, base: base, mapped: m})
}

// seal closes the run of edges added one by one so far.
func (b *Builder) seal() {
	if n := len(b.esrc); n > b.sealed {
		b.segs = append(b.segs, edgeSeg{src: b.esrc[b.sealed:n:n], dst: b.edst[b.sealed:n:n]})
		b.sealed = n
	}
}

// AddRemoteIn adds the edge src → dst into local node dst. Every edge is
// added once, by either end's rank; an src on this rank makes a local edge.
func (b *Builder) AddRemoteIn(dst int32, src NodeRef) {
	if src.Rank == b.rank {
		b.AddEdge(src.Node, dst)
		return
	}
	if b.checkLocal(dst) && b.checkRank(src.Rank) {
		b.rem = append(b.rem, remoteDecl{local: dst, peer: int32(src.Rank), node: src.Node})
	}
}

// AddRemoteOut adds the edge src → dst out of local node src.
func (b *Builder) AddRemoteOut(src int32, dst NodeRef) {
	if dst.Rank == b.rank {
		b.AddEdge(src, dst.Node)
		return
	}
	if b.checkLocal(src) && b.checkRank(dst.Rank) {
		b.rem = append(b.rem, remoteDecl{local: src, peer: int32(dst.Rank), node: dst.Node, out: true})
	}
}

// AddRemoteInKey adds an edge into local node dst from the node that rank
// resolves key to (BuildOptions.Resolve on that rank; rank may be this one).
func (b *Builder) AddRemoteInKey(dst int32, rank int, key Key) {
	if b.checkLocal(dst) && b.checkRank(rank) {
		b.rem = append(b.rem, remoteDecl{local: dst, peer: int32(rank), node: b.addKey(key), byKey: true})
	}
}

// addKey keeps key aside and returns its index.
func (b *Builder) addKey(k Key) int32 {
	if len(b.keys) >= math.MaxInt32 {
		b.fail(fmt.Errorf("graph: more than %d edges declared by key on one rank", math.MaxInt32))
		return 0
	}
	b.keys = append(b.keys, k)
	return int32(len(b.keys) - 1)
}

// AddRemoteOutKey adds an edge out of local node src to the node that rank
// resolves key to.
func (b *Builder) AddRemoteOutKey(src int32, rank int, key Key) {
	if b.checkLocal(src) && b.checkRank(rank) {
		b.rem = append(b.rem, remoteDecl{local: src, peer: int32(rank), node: b.addKey(key), out: true, byKey: true})
	}
}

// growEdges makes room for local more local edges and remote more remote
// declarations.
func (b *Builder) growEdges(local, remote int) {
	b.rem = slices.Grow(b.rem, remote)
	b.esrc = slices.Grow(b.esrc, local)
	b.edst = slices.Grow(b.edst, local)
}

// BuildOptions tune Build.
type BuildOptions struct {
	// Resolve maps a Key that some rank used to name a node of this rank
	// (AddRemoteInKey, AddRemoteOutKey) to the node's id; ok false is an
	// error naming the key. Needed only when keys are used.
	Resolve func(k Key) (node int32, ok bool)
	// InsOnly builds the inputs' adjacency alone, with each node's number
	// of outputs: all that a backward replay of values without argmax or
	// tie keys reads (BackLengths), for half the edge arrays. Other
	// replays refuse such a DAG.
	InsOnly bool
	// OutsOnly builds the outputs' adjacency alone, with each node's
	// number of inputs: a forward replay then pushes each value to the
	// node's outputs, argmax and tie keys included, and records its order
	// (ReplayOptions.RecordOrder) for a backward replay in reverse
	// (ReplayInReverse), which pulls from the outputs. The critical path
	// holds half the edge arrays. Backward Replay refuses such a DAG.
	OutsOnly bool
	// Release, when set, is called on every rank of a communicator of
	// two or more once the declarations to other ranks are in the DAG's
	// slots and dropped, before the adjacency arrays are made: a
	// collection there lets those arrays take the pages of the
	// declarations and of their exchange (about 40 bytes an edge to
	// another rank; the match's peak on a pure MPI program at two ranks).
	Release func() error
	// Check, when set, is called on every rank once the declarations'
	// messages are made and once those received are read: a memory
	// limit's check between Build's start and Release (the task graph's
	// build on nearest --radix 64 grew 7 MiB a rank there).
	Check func() error
}

const (
	declOut   = 1
	declByKey = 2
)

// Build exchanges the remote edge declarations (one Alltoallv) and returns
// this rank's share of the DAG. It is collective: every rank calls it, and
// an error (a bad node id, an unresolvable key, on any rank) is returned on
// every rank (see comm.Agree).
func (b *Builder) Build(c comm.Comm, opts BuildOptions) (*DAG, error) {
	if c.Size() != b.size || c.Rank() != b.rank {
		return nil, fmt.Errorf("graph: builder of rank %d/%d used on rank %d/%d", b.rank, b.size, c.Rank(), c.Size())
	}
	if opts.InsOnly && opts.OutsOnly {
		return nil, errors.New("graph: a DAG cannot be built both InsOnly and OutsOnly")
	}
	k, me := b.size, b.rank
	// Declarations per peer, in declaration order.
	mine := make([]int32, k+1)
	for _, d := range b.rem {
		mine[d.peer+1]++
	}
	for q := 0; q < k; q++ {
		mine[q+1] += mine[q]
	}
	byPeer := make([]int32, len(b.rem))
	fill := append([]int32(nil), mine[:k]...)
	for i, d := range b.rem {
		byPeer[fill[d.peer]] = int32(i)
		fill[d.peer]++
	}
	send := make([][]byte, k)
	// Checked along the declarations too (comm.Checkpoints: as often on
	// every rank): their messages are 21 bytes a declaration by key.
	checks := comm.Checkpoints{Check: opts.Check}
	made := 0
	for q := 0; q < k; q++ {
		ds := byPeer[mine[q]:mine[q+1]]
		if len(ds) == 0 {
			continue
		}
		size := len(ds) * 9
		for _, i := range ds {
			if b.rem[i].byKey {
				size += 12 // a key where a node id was
			}
		}
		buf := make([]byte, 0, size)
		for _, i := range ds {
			if err := checks.After(made, len(b.rem)); err != nil {
				return nil, err
			}
			made++
			d := &b.rem[i]
			var fl byte
			if d.out {
				fl |= declOut
			}
			if d.byKey {
				fl |= declByKey
			}
			buf = binary.LittleEndian.AppendUint32(buf, uint32(d.local))
			buf = append(buf, fl)
			if d.byKey {
				key := b.keys[d.node]
				buf = binary.LittleEndian.AppendUint64(buf, uint64(key.A))
				buf = binary.LittleEndian.AppendUint64(buf, uint64(key.B))
			} else {
				buf = binary.LittleEndian.AppendUint32(buf, uint32(d.node))
			}
		}
		send[q] = buf
	}
	// The keys travel in the messages: nothing reads them after (16 B a
	// declaration by key, 44 MB of the task graph's build on the 10 M-event
	// spread at four ranks).
	b.keys = nil
	if err := checks.Finish(); err != nil {
		return nil, err
	}
	recv, err := c.Alltoallv(send)
	if err != nil {
		return nil, err
	}
	// Their declarations: my node (resolved) and whether they hold the source.
	type theirDecl struct {
		node int32
		out  bool // their node is the source
	}
	theirs := make([][]theirDecl, k)
	lerr := b.err
	n := b.Len()
	for q := 0; q < k && lerr == nil; q++ {
		buf := recv[q]
		// Room for every declaration: appending would copy the list as it
		// doubles (a declaration is at least 9 bytes).
		theirs[q] = make([]theirDecl, 0, len(buf)/9)
		for len(buf) > 0 && lerr == nil {
			if len(buf) < 9 {
				lerr = fmt.Errorf("rank %d: graph: truncated edge declaration from rank %d", me, q)
				break
			}
			fl := buf[4]
			var node int32
			if fl&declByKey != 0 {
				if len(buf) < 21 {
					lerr = fmt.Errorf("rank %d: graph: truncated edge declaration from rank %d", me, q)
					break
				}
				key := Key{int64(binary.LittleEndian.Uint64(buf[5:])), int64(binary.LittleEndian.Uint64(buf[13:]))}
				buf = buf[21:]
				ok := false
				if opts.Resolve != nil {
					node, ok = opts.Resolve(key)
				}
				if !ok {
					lerr = fmt.Errorf("rank %d: graph: rank %d names a node by key (%d, %d), which does not resolve here", me, q, key.A, key.B)
					break
				}
			} else {
				node = int32(binary.LittleEndian.Uint32(buf[5:]))
				buf = buf[9:]
			}
			if node < 0 || node >= n {
				lerr = fmt.Errorf("rank %d: graph: rank %d declares an edge with node %d here, which has %d nodes", me, q, node, n)
				break
			}
			theirs[q] = append(theirs[q], theirDecl{node: node, out: fl&declOut != 0})
		}
		recv[q] = nil // read: its bytes go (in process, the sender's too)
	}
	if err := comm.Agree(c, lerr); err != nil {
		return nil, err
	}
	if opts.Check != nil {
		if err := opts.Check(); err != nil {
			return nil, err
		}
	}

	// Edges this rank declared to itself by key become local edges: the
	// j-th self declaration and the j-th resolved one are the same edge.
	if self := byPeer[mine[me]:mine[me+1]]; len(self) > 0 {
		for j, i := range self {
			d, t := &b.rem[i], theirs[me][j]
			if d.out {
				b.esrc, b.edst = append(b.esrc, d.local), append(b.edst, t.node)
			} else {
				b.esrc, b.edst = append(b.esrc, t.node), append(b.edst, d.local)
			}
		}
		theirs[me] = nil
		byPeer = append(byPeer[:mine[me]:mine[me]], byPeer[mine[me+1]:]...)
		for q := me + 1; q <= k; q++ {
			mine[q] -= int32(len(self))
		}
	}

	g := &DAG{rank: me, size: k, chained: b.chained, peerBase: make([]int32, k+1)}
	for q := 0; q < k; q++ {
		g.peerBase[q+1] = g.peerBase[q] + (mine[q+1] - mine[q]) + int32(len(theirs[q]))
		if g.peerBase[q+1] > g.peerBase[q] {
			g.peers = append(g.peers, int32(q))
		}
	}
	ns := g.peerBase[k]
	g.slotNode = make([]int32, ns)
	g.slotOut = newSlotBits(ns)
	setOut := func(s int32, out bool) {
		if out {
			g.slotOut.set(s)
		}
	}
	// The pair's edge list holds the lower rank's declarations first, each
	// side's in its declaration order: both ranks compute the same indices.
	for q := 0; q < k; q++ {
		nm, nt := mine[q+1]-mine[q], int32(len(theirs[q]))
		mineAt, theirsAt := g.peerBase[q], g.peerBase[q]+nm
		if q < me {
			theirsAt, mineAt = g.peerBase[q], g.peerBase[q]+nt
		}
		for j, i := range byPeer[mine[q]:mine[q+1]] {
			s := mineAt + int32(j)
			g.slotNode[s] = b.rem[i].local
			setOut(s, b.rem[i].out)
		}
		for j, d := range theirs[q] {
			s := theirsAt + int32(j)
			g.slotNode[s] = d.node
			setOut(s, !d.out)
		}
	}
	// The declarations are the slots now: they and what the exchange held
	// (dead from here on) go before the adjacency arrays are made (on one
	// rank there are none but a rank's own, by key: nothing worth a
	// collection).
	b.rem = nil
	if opts.Release != nil && k > 1 {
		if err := opts.Release(); err != nil {
			return nil, err
		}
	}
	// CSR in both directions (or the inputs' and the output counts):
	// local edges in declaration order, then slots. The one side of a DAG
	// built InsOnly or OutsOnly is packed (packedadj.go; buildPacked).
	b.seal()
	if opts.InsOnly || opts.OutsOnly {
		if err := b.buildPacked(c, g, opts.OutsOnly); err != nil {
			return nil, err
		}
		return b.agreeRead(c, g)
	}
	outCnt := make([]int32, n+1) // outCnt[v+1]: outputs of v, then offsets
	g.inOff = make([]int32, n+1)
	verr := b.eachEdges(n, func(src, dst []int32) {
		dst = dst[:len(src)]
		for i, s := range src {
			outCnt[s+1]++
			g.inOff[dst[i]+1]++
		}
	})
	if err := comm.Agree(c, verr); err != nil {
		return nil, err
	}
	for s, v := range g.slotNode {
		if g.slotIsOut(int32(s)) {
			outCnt[v+1]++
		} else {
			g.inOff[v+1]++
		}
	}
	g.outOff = outCnt
	for i := int32(0); i < n; i++ {
		g.outOff[i+1] += g.outOff[i]
		g.inOff[i+1] += g.inOff[i]
	}
	g.out = make([]Entry, g.outOff[n])
	g.in = make([]Entry, g.inOff[n])
	// The offsets serve as fill cursors instead of copies of them: filled,
	// a node's offset is where the next node's list starts, and one shift
	// restores them.
	_ = b.eachEdges(-1, func(src, dst []int32) { // the count's pass checked the nodes
		dst = dst[:len(src)]
		for i, s := range src {
			d := dst[i]
			g.out[g.outOff[s]] = Entry(d)
			g.outOff[s]++
			g.in[g.inOff[d]] = Entry(s)
			g.inOff[d]++
		}
	})
	for s, v := range g.slotNode {
		e := Entry(^int32(s))
		if g.slotIsOut(int32(s)) {
			g.out[g.outOff[v]] = e
			g.outOff[v]++
		} else {
			g.in[g.inOff[v]] = e
			g.inOff[v]++
		}
	}
	for _, off := range [][]int32{g.inOff, g.outOff} {
		copy(off[1:], off[:n])
		off[0] = 0
	}
	return b.agreeRead(c, g)
}

// agreeRead returns g, or the error of a list of edges read from a file
// that failed after the nodes were checked (eachEdges' later passes), on
// every rank if any rank's did.
func (b *Builder) agreeRead(c comm.Comm, g *DAG) (*DAG, error) {
	if err := comm.Agree(c, b.readErr); err != nil {
		return nil, err
	}
	return g, nil
}

// buildPacked makes the one side a DAG built InsOnly (outs false) or
// OutsOnly (outs true) keeps, packed, and the other side's counts. Each
// node's list length in bytes is counted into a uint16 a node, made the
// packed offsets in place (offsets.go: a base per block and a 16-bit
// offset from it a node), whose 16-bit parts serve as the fill cursors:
// where the lengths, then the offsets, took an int32 a node, converted to
// the packed offsets once filled, 4 bytes a node less at the build's
// peak, which is each of the critical path's graphs' (7 MB on the
// 10 M-event stencil's task graph). A node whose list is 64 KiB or more
// (tens of thousands of edges) takes the int32 offsets instead
// (buildPackedWide).
func (b *Builder) buildPacked(c comm.Comm, g *DAG, outs bool) error {
	n := b.Len()
	// The side a one-sided DAG does not keep is counted straight into its
	// byte counts (a count of 255 or more aside), not into an int32 a
	// node converted after.
	var other *counts
	if outs {
		g.inDeg = newCounts(int(n))
		other = &g.inDeg
	} else {
		g.outDeg = newCounts(int(n))
		other = &g.outDeg
	}
	lens := make([]uint16, n+1) // each node's bytes, the last entry 0
	var wrap uint16             // a length that wrapped past 64 KiB sets its top bit
	verr := b.eachEdges(n, func(src, dst []int32) {
		dst = dst[:len(src)]
		oc := other.c // counts.inc, with the array at hand
		if outs {
			for i, s := range src {
				d := dst[i]
				l := lens[s]
				v := l + uint16(entryLen(s, Entry(d)))
				lens[s] = v
				wrap |= l &^ v // its top bit: one cleared, a length wrapped (an entry is at most 5 bytes)
				if i, sh := d>>1, uint(d&1)<<2; oc[i]>>sh&15 < countBig-1 {
					oc[i] += 1 << sh
				} else {
					other.incRare(d)
				}
			}
			return
		}
		for i, s := range src {
			d := dst[i]
			l := lens[d]
			v := l + uint16(entryLen(d, Entry(s)))
			lens[d] = v
			wrap |= l &^ v
			if i, sh := s>>1, uint(s&1)<<2; oc[i]>>sh&15 < countBig-1 {
				oc[i] += 1 << sh
			} else {
				other.incRare(s)
			}
		}
	})
	if err := comm.Agree(c, verr); err != nil {
		return err
	}
	for s, v := range g.slotNode {
		if g.slotIsOut(int32(s)) == outs {
			l := lens[v]
			lens[v] = l + uint16(entryLen(v, Entry(^int32(s))))
			wrap |= l &^ lens[v]
		} else {
			other.inc(v)
		}
	}
	at, ok := lenOffsets(lens, wrap&0x8000 == 0)
	if !ok {
		return b.buildPackedWide(g, outs)
	}
	pk := make([]byte, at.end())
	// Filled, a node's cursor is where the next node's list starts
	// (restore).
	sh := at.shift & 7
	base, rel := at.base, at.rel
	_ = b.eachEdges(-1, func(src, dst []int32) { // the count's pass checked the nodes
		dst = dst[:len(src)]
		if outs {
			for i, s := range src {
				o := base[s>>sh] + int32(rel[s])
				if e := entryCode(s, Entry(dst[i])); e < 0x80 {
					pk[o] = byte(e)
					rel[s]++
				} else {
					rel[s] += uint16(binary.PutUvarint(pk[o:], e))
				}
			}
			return
		}
		for i, s := range src {
			d := dst[i]
			o := base[d>>sh] + int32(rel[d])
			if e := entryCode(d, Entry(s)); e < 0x80 {
				pk[o] = byte(e)
				rel[d]++
			} else {
				rel[d] += uint16(binary.PutUvarint(pk[o:], e))
			}
		}
	})
	for s, v := range g.slotNode {
		if g.slotIsOut(int32(s)) == outs {
			rel[v] += uint16(putEntry(pk[base[v>>sh]+int32(rel[v]):], v, Entry(^int32(s))))
		}
	}
	at.restore()
	if outs {
		g.outPk, g.outAt = pk, at.narrow()
	} else {
		g.inPk, g.inAt = pk, at.narrow()
	}
	return nil
}

// buildPackedWide is buildPacked's side with int32 offsets, for a DAG
// with a node whose list is 64 KiB or more: counted again (the other
// side's counts are made), filled, then packed (packOffsets).
func (b *Builder) buildPackedWide(g *DAG, outs bool) error {
	n := b.Len()
	off := make([]int32, n+1)
	_ = b.eachEdges(-1, func(src, dst []int32) {
		dst = dst[:len(src)]
		for i, s := range src {
			if outs {
				off[s+1] += entryLen(s, Entry(dst[i]))
			} else {
				off[dst[i]+1] += entryLen(dst[i], Entry(s))
			}
		}
	})
	for s, v := range g.slotNode {
		if g.slotIsOut(int32(s)) == outs {
			off[v+1] += entryLen(v, Entry(^int32(s)))
		}
	}
	for i := int32(0); i < n; i++ {
		off[i+1] += off[i]
	}
	pk := make([]byte, off[n])
	put := func(v int32, e Entry) { off[v] += putEntry(pk[off[v]:], v, e) }
	_ = b.eachEdges(-1, func(src, dst []int32) {
		dst = dst[:len(src)]
		for i, s := range src {
			if outs {
				put(s, Entry(dst[i]))
			} else {
				put(dst[i], Entry(s))
			}
		}
	})
	for s, v := range g.slotNode {
		if g.slotIsOut(int32(s)) == outs {
			put(v, Entry(^int32(s)))
		}
	}
	copy(off[1:], off[:n])
	off[0] = 0
	po := packOffsets(off)
	if outs {
		g.outPk, g.outAt = pk, po.narrow()
	} else {
		g.inPk, g.inAt = pk, po.narrow()
	}
	return nil
}

// checkHere panics on a DAG whose edges are parked (Park): reading them
// then is a bug in the caller, which would otherwise see no edges.
func (g *DAG) checkHere() {
	if g.parked != nil {
		panic("graph: the edges of a parked DAG read before Unpark")
	}
}

// parkedCSR is where Park wrote a DAG's adjacency: its four arrays.
type parkedCSR struct {
	inOff, in, outOff, out *packed.ParkedBytes
}

// Park writes the adjacency of a DAG built with both sides (its CSR
// arrays, those of a side not dropped) to f and drops it until Unpark:
// for a while nothing walks the
// edges (the matching's DAG while the wait states record the calls:
// 4.9 MB of the 10 M-event halo's phase peak). On an error it stays.
// Nothing may read the edges while it is parked.
func (g *DAG) Park(f packed.Spiller) error {
	if g.parked != nil || g.inOff == nil && g.outOff == nil {
		return nil
	}
	var p parkedCSR
	var err error
	if p.inOff, err = packed.ParkSlice(f, g.inOff); err != nil {
		return err
	}
	if p.in, err = packed.ParkSlice(f, g.in); err != nil {
		return err
	}
	if p.outOff, err = packed.ParkSlice(f, g.outOff); err != nil {
		return err
	}
	if p.out, err = packed.ParkSlice(f, g.out); err != nil {
		return err
	}
	g.parked = &p
	g.inOff, g.in, g.outOff, g.out = nil, nil, nil, nil
	return nil
}

// Unpark reads back the adjacency Park wrote (nothing for a DAG not
// parked); a side dropped before (DropInputs) stays nil.
func (g *DAG) Unpark() error {
	p := g.parked
	if p == nil {
		return nil
	}
	inOff, err := packed.ReadSlice[int32](p.inOff)
	var in, out []Entry
	var outOff []int32
	if err == nil {
		in, err = packed.ReadSlice[Entry](p.in)
	}
	if err == nil {
		outOff, err = packed.ReadSlice[int32](p.outOff)
	}
	if err == nil {
		out, err = packed.ReadSlice[Entry](p.out)
	}
	if err != nil {
		return fmt.Errorf("graph: reading back a parked DAG's adjacency: %w", err)
	}
	g.inOff, g.in, g.outOff, g.out, g.parked = inOff, in, outOff, out, nil
	return nil
}

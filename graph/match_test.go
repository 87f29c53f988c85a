package graph

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/commtest"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/partition"
	"github.com/ptrace-dev/ptrace/trace"
)

// genProcs generates a trace and loads all its processes.
func genProcs(t testing.TB, cfg gen.Config) []*trace.Process {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	if _, err := gen.Generate(dir, cfg); err != nil {
		t.Fatal(err)
	}
	d, err := trace.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	procs := make([]*trace.Process, d.NRanks())
	for i := range procs {
		if procs[i], err = trace.LoadProcess(d.FilePath(i), trace.LoadOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return procs
}

// matched is what every rank's Match and ExchangeEdges produced.
type matched struct {
	stats MatchStats
	warns []string
	count int64
	edges []RemoteEdges // by global process
}

// runMatch runs Match and ExchangeEdges on k ranks (processes partitioned
// by event count, as the driver does).
func runMatch(t testing.TB, procs []*trace.Process, k int) *matched {
	t.Helper()
	w := make([]int64, len(procs))
	for i, p := range procs {
		w[i] = p.NumEvents()
	}
	plan, err := partition.Assign(w, k)
	if err != nil {
		t.Fatal(err)
	}
	res := &matched{edges: make([]RemoteEdges, len(procs))}
	var mu sync.Mutex
	perRank := make([]Warnings, k)
	err = inproc.Run(k, func(c comm.Comm) error {
		lo, hi := plan.Range(c.Rank())
		m, err := Match(c, plan, procs[lo:hi], MatchOptions{})
		if err != nil {
			return err
		}
		edges, err := ExchangeEdges(c, m, nil)
		if err != nil {
			return err
		}
		copy(res.edges[lo:hi], edges)
		mu.Lock()
		res.stats.add(&m.Stats)
		res.count += m.Warnings.Count
		mu.Unlock()
		perRank[c.Rank()] = m.Warnings
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, wr := range perRank {
		res.warns = append(res.warns, wr.First...)
	}
	return res
}

// checkEdges verifies every row against the events themselves: the
// predecessor exists, is the right kind, names the right peer, and (for a
// trace from one clock) does not come after the receive.
func checkEdges(t *testing.T, procs []*trace.Process, m *matched) (rows int) {
	t.Helper()
	evs := make([][][]trace.Event, len(procs))
	for i, p := range procs {
		evs[i] = rowsOf(p)
	}
	for pi, r := range m.edges {
		for i := 0; i < r.Len(); i++ {
			e := &evs[pi][r.ThreadAt(int(i))][r.EventAt(i)]
			pe := &evs[r.PredProcAt(i)][r.PredThreadAt(int(i))][r.PredEventAt(i)]
			if pe.Time != r.PredTimeAt(i) || pe.Kind != r.PredKindAt(i) || e.Kind != r.KindAt(i) {
				t.Fatalf("process %d row %d: row %+v disagrees with the events", pi, i, r)
			}
			if pe.Time > e.Time {
				t.Fatalf("process %d: %s at %d has its predecessor %s of process %d at %d", pi, e.Kind, e.Time, pe.Kind, r.PredProcAt(i), pe.Time)
			}
			switch e.Kind {
			case trace.MPIRecv:
				if pe.Kind != trace.MPISend || int64(r.PredProcAt(i)) != e.Args[0] || pe.Args[0] != int64(pi) || pe.Args[1] != e.Args[1] {
					t.Fatalf("process %d: recv %v matched send %v of process %d", pi, e, pe, r.PredProcAt(i))
				}
			case trace.RemoteDepIn:
				if pe.Kind != trace.RemoteDepOut || int64(r.PredProcAt(i)) != e.Args[1] || pe.Args[0] != e.Args[2] || pe.Args[2] != e.Args[0] {
					t.Fatalf("process %d: remote_dep_in %v matched %v of process %d", pi, e, pe, r.PredProcAt(i))
				}
			case trace.CollEnd:
				if pe.Kind != trace.CollBegin || pe.Args[0] != e.Args[0] {
					t.Fatalf("process %d: coll_end %v matched %v", pi, e, pe)
				}
			case trace.CollComplete:
				if pe.Kind != trace.CollStart || pe.Args[0] != e.Args[0] {
					t.Fatalf("process %d: coll_complete %v matched %v", pi, e, pe)
				}
			}
			rows++
		}
	}
	return rows
}

func TestMatchHalo(t *testing.T) {
	const R, I = 5, 6
	for _, ex := range []string{"halo", "allreduce"} {
		procs := genProcs(t, gen.Config{Workload: "halo", Ranks: R, Threads: 3, Iterations: I, Exchange: ex, LatencyNS: 1000, Jitter: 0.3})
		for k := 1; k <= 4; k++ {
			m := runMatch(t, procs, k)
			want := MatchStats{Messages: I * 2 * (R - 1), Collectives: 1, CollectiveCalls: R, PointToPointEvents: 2 * I * 2 * (R - 1)}
			if ex == "allreduce" {
				want = MatchStats{Collectives: I + 1, CollectiveCalls: R * (I + 1)}
			}
			if m.stats != want || m.count != 0 {
				t.Fatalf("%s k=%d: stats %+v, want %+v; warnings %v", ex, k, m.stats, want, m.warns)
			}
			rows := checkEdges(t, procs, m)
			// Every receive and every coll_end has its predecessor.
			if wantRows := int(want.Messages) + R*int(want.Collectives); rows != wantRows {
				t.Fatalf("%s k=%d: %d edge rows, want %d", ex, k, rows, wantRows)
			}
		}
	}
}

func TestMatchStencilRemoteDeps(t *testing.T) {
	procs := genProcs(t, gen.Config{Workload: "spread", Ranks: 4, Threads: 2, Width: 16, Steps: 6, LatencyNS: 500, Radix: 3})
	// Count the cross-rank dependences from the events themselves.
	var outs int64
	for _, p := range procs {
		for _, ev := range rowsOf(p) {
			for i := range ev {
				if ev[i].Kind == trace.RemoteDepOut {
					outs++
				}
			}
		}
	}
	if outs == 0 {
		t.Fatal("the generated trace has no remote dependences")
	}
	for k := 1; k <= 4; k++ {
		m := runMatch(t, procs, k)
		if m.stats.RemoteDeps != outs || m.count != 0 {
			t.Fatalf("k=%d: %+v, want %d dependences; warnings %v", k, m.stats, outs, m.warns)
		}
		if rows := checkEdges(t, procs, m); int64(rows) != outs {
			t.Fatalf("k=%d: %d rows, want %d", k, rows, outs)
		}
	}
}

// TestMatchUnmatched removes one receive, one coll_begin/coll_end pair and
// adds a send to an unknown communicator: counted warnings, identical for
// every partition, no failure.
func TestMatchUnmatched(t *testing.T) {
	procs := genProcs(t, gen.Config{Workload: "halo", Ranks: 4, Threads: 1, Iterations: 3, LatencyNS: 1000})
	evs := make([][][]trace.Event, len(procs))
	for i, p := range procs {
		evs[i] = rowsOf(p)
	}
	drop := func(p int, kind trace.Kind, nth int) {
		ev := evs[p][0]
		for i := range ev {
			if ev[i].Kind == kind {
				if nth == 0 {
					evs[p][0] = slices.Delete(ev, i, i+1)
					return
				}
				nth--
			}
		}
		t.Fatalf("no %s #%d", kind, nth)
	}
	drop(2, trace.MPIRecv, 1)   // a message from 1 or 3 is never received
	drop(1, trace.CollBegin, 0) // the final barrier misses a member
	drop(1, trace.CollEnd, 0)
	ev := evs[3][0]
	bogus := ev[len(ev)-1]
	bogus.Kind, bogus.Args = trace.MPISend, [trace.MaxArgs]int64{0, 1, 9, 8, 0}
	evs[3][0] = append(ev, bogus)
	for i, p := range procs {
		procs[i] = mkProc(p.Header, p.Tables, evs[i])
	}
	var first []string
	for k := 1; k <= 4; k++ {
		m := runMatch(t, procs, k)
		if m.stats.UnmatchedSends != 1 || m.stats.UnmatchedRecvs != 0 || m.stats.BadCollectives != 1 || m.stats.BadEvents != 1 || m.count != 3 {
			t.Fatalf("k=%d: %+v, %d warnings %v", k, m.stats, m.count, m.warns)
		}
		// The incomplete barrier's coll_ends get no predecessor: only the
		// matched messages have rows.
		if rows := checkEdges(t, procs, m); rows != int(m.stats.Messages) {
			t.Fatalf("k=%d: %d rows for %d messages", k, rows, m.stats.Messages)
		}
		joined := strings.Join(m.warns, "\n")
		for _, want := range []string{"unmatched mpi_send: process", "→ 2, tag 7, communicator 0", "MPI_Barrier call #1 on communicator 0: only 3 of its 4 members", "unknown communicator index 9"} {
			if !strings.Contains(joined, want) {
				t.Fatalf("k=%d: warnings lack %q:\n%s", k, want, joined)
			}
		}
		if k == 1 {
			first = m.warns
		} else if !slices.Equal(first, m.warns) {
			t.Fatalf("k=%d: warnings differ from k=1:\n%s\nvs\n%s", k, joined, strings.Join(first, "\n"))
		}
	}
}

func TestMergedOrder(t *testing.T) {
	// Region events: the tie class of everything but sends and receives.
	r := trace.RegionEnter
	p := mkProc(trace.Header{}, trace.Tables{}, [][]trace.Event{
		{{Time: 1, Kind: r}, {Time: 5, Kind: r}, {Time: 5, Kind: r}, {Time: 9, Kind: r}},
		{{Time: 0, Kind: r}, {Time: 5, Kind: r}, {Time: 6, Kind: r}},
		{},
		{{Time: 5, Kind: r}, {Time: 10, Kind: r}},
	})
	got, _, err := MergedTimes(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint16{1, 0, 0, 0, 1, 3, 1, 0, 3}
	if !slices.Equal(got, want) {
		t.Fatalf("merged order = %v, want %v", got, want)
	}
	// Equal times across threads: sends first, receives last; a thread's
	// own order stays.
	recv, send, other := trace.MPIRecv, trace.MPISend, trace.RegionEnter
	p = mkProc(trace.Header{}, trace.Tables{}, [][]trace.Event{
		{{Time: 5, Kind: recv}, {Time: 5, Kind: send}},
		{{Time: 5, Kind: other}, {Time: 5, Kind: recv}},
		{{Time: 5, Kind: send}, {Time: 6, Kind: send}},
	})
	if got, _, err = MergedTimes(p, nil); err != nil {
		t.Fatal(err)
	}
	want = []uint16{2, 1, 0, 0, 1, 2}
	if !slices.Equal(got, want) {
		t.Fatalf("merged order = %v, want %v", got, want)
	}
}

// TestSelfMessage: a message within one process (equal timestamps on two
// threads) is matched and exchanged but is no DAG edge.
func TestSelfMessage(t *testing.T) {
	world := []trace.Communicator{{Index: 0, ID: 0, Members: []int{0}}}
	p := mkProc(trace.Header{Rank: 0, NRanks: 1}, trace.Tables{Comms: world},
		[][]trace.Event{
			{{Time: 100, Kind: trace.MPIRecv, Args: [trace.MaxArgs]int64{0, 1, 0, 8, 0}}},
			{{Time: 100, Kind: trace.MPISend, Args: [trace.MaxArgs]int64{0, 1, 0, 8, 0}}},
		})
	m := runMatch(t, []*trace.Process{p}, 1)
	r := m.edges[0]
	if m.stats.Messages != 1 || r.Len() != 1 || r.ThreadAt(int(0)) != 0 || r.PredProcAt(0) != 0 || r.PredThreadAt(int(0)) != 1 || r.PredTimeAt(0) != 100 {
		t.Fatalf("%+v %+v", m.stats, r)
	}
}

// rowsOf decodes every thread of p as recorded.
func rowsOf(p *trace.Process) [][]trace.Event {
	out := make([][]trace.Event, p.NumThreads())
	for th := range out {
		out[th], _ = p.Decode(th, nil)
	}
	return out
}

// mkProc encodes a process from rows, as a loaded file would hold it.
func mkProc(h trace.Header, t trace.Tables, evs [][]trace.Event) *trace.Process {
	p, err := trace.NewProcess(h, t, evs, nil)
	if err != nil {
		panic(err)
	}
	return p
}

// TestCollOutWire routes collective records to their coordinators' ranks
// (records of every size, many chunks) and checks that every destination
// gets its records, whole and in order, in one slice.
func TestCollOutWire(t *testing.T) {
	for _, k := range []int{1, 3} {
		plan, err := partition.Assign(make([]int64, 7), k)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		out := newCollOut(k, plan)
		want := make([][]collRec, k) // per destination
		for n := range int32(20000) {
			c := collRec{comm: rng.Int64() >> rng.IntN(64), inst: rng.Int64N(1 << rng.IntN(63)), member: int32(rng.IntN(7)),
				nmembers: int32(rng.IntN(1 << 20)), op: rng.Int64() - rng.Int64(), root: int32(rng.IntN(7)) - 1,
				coord: int32(rng.IntN(7)), begin: n * 3, end: n*3 + 1 + int32(rng.IntN(1000)), memberIdx: int32(rng.IntN(7)),
				payload: uint8(rng.IntN(4))}
			out.coll(&c)
			d := plan.Owner(int(c.coord))
			c.rank = int32(d) // as the reader gives it
			want[d] = append(want[d], c)
		}
		bufs := out.wire()
		if len(bufs) != k {
			t.Fatalf("k=%d: %d buffers", k, len(bufs))
		}
		for d, buf := range bufs {
			if cap(buf) != len(buf) {
				t.Fatalf("k=%d: buffer %d has room to append into the next", k, d)
			}
			r := recReader{buf: buf}
			var got []collRec
			for r.at < len(r.buf) && r.err == nil {
				got = append(got, r.coll(int32(d)))
			}
			if r.err != nil || !slices.Equal(got, want[d]) {
				t.Fatalf("k=%d: destination %d got %d records, want %d (or different; %v)", k, d, len(got), len(want[d]), r.err)
			}
		}
	}
}

// TestReadColls reads collective records in place, from the ranks in
// order, by index as the grouping does, and rejects unknown, truncated and
// out-of-range records.
func TestReadColls(t *testing.T) {
	stream := func(recs ...int32) []byte {
		out := newCollOut(1, nil)
		for _, n := range recs {
			out.coll(&collRec{begin: n, end: n + 1, inst: int64(n) << 40, memberIdx: n + 1, op: -1})
		}
		return out.wire()[0]
	}
	colls, err := readColls([][]byte{nil, stream(1, 2), stream(300)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []int32
	for i := range int32(colls.len()) {
		r := colls.rec(i)
		if colls.inst(i) != r.inst || colls.memberIdx(i) != r.memberIdx || r.inst != int64(r.begin)<<40 || r.memberIdx != r.begin+1 || r.op != -1 {
			t.Fatalf("record %d: %+v, inst %d, member index %d", i, r, colls.inst(i), colls.memberIdx(i))
		}
		got = append(got, r.begin*10+r.rank)
	}
	if want := []int32{11, 21, 3002}; !slices.Equal(got, want) {
		t.Fatalf("collective records (begin·10+rank) %v, want %v", got, want)
	}
	good := stream(1, 2)
	bad := slices.Clone(good)
	bad[len(stream(1))] = recP2P
	for _, c := range []struct {
		colls []byte
		want  string
	}{
		{append(slices.Clip(good), 9), "rank 1: graph: unknown match record 9 from rank 0"},
		{good[:len(good)-1], "rank 1: graph: malformed record among the collective records from rank 0, at byte"},
		{append(slices.Clip(good), recColl), "rank 1: graph: malformed record among the collective records from rank 0, at byte"},
		{bad, "rank 1: graph: unknown match record 1 from rank 0"},
		{[]byte{recColl, 0xff, 0xff, 0xff, 0xff, 0x0f}, "rank 1: graph: malformed record among the collective records from rank 0, at byte 0"},
	} {
		if _, err := readColls([][]byte{c.colls, nil}, 1); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Fatalf("error %v, want %q", err, c.want)
		}
	}
}

// FuzzReadColls: any collective records from another rank are read or
// refused without a panic, and what is read decodes by index as in order.
func FuzzReadColls(f *testing.F) {
	out := newCollOut(1, nil)
	for n := range int32(4) {
		out.coll(&collRec{comm: 5, inst: int64(n), begin: n, end: n + 2, root: -1, nmembers: 4, coord: 1})
	}
	f.Add(out.wire()[0])
	f.Fuzz(func(t *testing.T, buf []byte) {
		colls, err := readColls([][]byte{nil, buf}, 0)
		if err != nil {
			return
		}
		colls.each(func(i int32, r *collRec) {
			if colls.rec(i) != *r || colls.inst(i) != r.inst || colls.memberIdx(i) != r.memberIdx || r.end <= r.begin && r.end != r.begin {
				t.Fatalf("record %d: %+v vs %+v", i, colls.rec(i), *r)
			}
		})
	})
}

// joinRec is a channel record as the join reads it back.
type joinRec struct {
	key        chanKey
	rank, node int32
}

// readParts reads every partition's sends (or receives: node is then the
// receive's number), in partition order.
func readParts(r *recParts, sends, withRank bool) [][]joinRec {
	out := make([][]joinRec, len(r.parts))
	for g := range r.parts {
		p := r.reader(g)
		for p.more() {
			var k chanKey
			d, rank := p.next(&k, sends, withRank)
			p.seq += d
			out[g] = append(out[g], joinRec{key: k, rank: rank, node: int32(p.seq)})
		}
	}
	return out
}

// TestJoinRecs routes channel records from k ranks to the partitions of
// their receivers' ranks (directly, or through the streams between ranks)
// and checks that each partition holds its channels' records, whole and in
// order, the sends with their senders' ranks and nodes.
func TestJoinRecs(t *testing.T) {
	for _, k := range []int{1, 3} {
		const nprocs = 7
		plan, err := partition.Assign(make([]int64, nprocs), k)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		recs := make([]*joinRecs, k)
		for r := range recs {
			recs[r] = newJoinRecs(k, r, plan, 20000, 20000)
		}
		type sent struct {
			joinRec
			dst int
		}
		var sends []sent
		var recvs [][]chanKey = make([][]chanKey, k) // per rank, in number order
		for n := range int32(40000) {
			key := chanKey{typ: int32(recP2P + rng.IntN(2)), src: int32(rng.IntN(nprocs)), dst: int32(rng.IntN(nprocs)),
				a: rng.Int64N(1 << 50), b: int64(rng.IntN(100)) - 50}
			if key.typ == recP2P {
				key.a %= 5
			}
			if n%2 == 0 {
				r := plan.Owner(int(key.src))
				recs[r].send(&key, n)
				sends = append(sends, sent{joinRec{key: key, rank: int32(r), node: n}, plan.Owner(int(key.dst))})
			} else {
				r := plan.Owner(int(key.dst))
				recs[r].recv(&key)
				recvs[r] = append(recvs[r], key)
			}
		}
		wires := make([][][]byte, k)
		for r := range recs {
			wires[r] = recs[r].wire()
		}
		for r := range recs {
			for q := range k {
				if q != r {
					if err := recs[r].arrive(q, wires[q][r]); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		for r := range recs {
			got := readParts(recs[r].sends, true, k > 1)
			var want []joinRec
			for _, s := range sends {
				if s.dst == r {
					want = append(want, s.joinRec)
				}
			}
			// Every send is in its channel's partition; a partition's
			// sends from one rank are in their scan order.
			var all []joinRec
			for g, recs1 := range got {
				for _, s := range recs1 {
					if recs[r].part(&s.key) != g {
						t.Fatalf("k=%d rank %d: send %+v in partition %d", k, r, s, g)
					}
					if k == 1 {
						s.rank = 0
					}
					all = append(all, s)
				}
			}
			byNode := func(a, b joinRec) int { return int(a.node) - int(b.node) }
			slices.SortFunc(all, byNode)
			if !slices.Equal(all, want) {
				t.Fatalf("k=%d rank %d: %d sends, want %d (or different)", k, r, len(all), len(want))
			}
			for _, recs1 := range got {
				for i := 1; i < len(recs1); i++ {
					if recs1[i].rank == recs1[i-1].rank && recs1[i].node <= recs1[i-1].node {
						t.Fatalf("k=%d rank %d: sends out of order", k, r)
					}
				}
			}
			gotR := readParts(recs[r].recvs, false, false)
			n := 0
			for g, recs1 := range gotR {
				for i, rr := range recs1 {
					if rr.key != recvs[r][rr.node] || recs[r].part(&rr.key) != g || i > 0 && rr.node <= recs1[i-1].node {
						t.Fatalf("k=%d rank %d: receive %d is %+v, want %+v in partition %d, in order", k, r, rr.node, rr.key, recvs[r][rr.node], g)
					}
					n++
				}
			}
			if n != len(recvs[r]) {
				t.Fatalf("k=%d rank %d: %d receives, want %d", k, r, n, len(recvs[r]))
			}
		}
	}
}

// TestJoinRecsArriveBad: the sends from another rank are checked as they
// are read: a truncated record, a field out of range or a node past int32
// is an error, never a panic.
func TestJoinRecsArriveBad(t *testing.T) {
	plan, err := partition.Assign(make([]int64, 4), 2)
	if err != nil {
		t.Fatal(err)
	}
	src := newJoinRecs(2, 0, plan, 10, 10)
	for n := range int32(5) {
		src.send(&chanKey{typ: recDep, src: 0, dst: 3, a: 1 << 45, b: int64(n)}, n*1000)
	}
	good := src.wire()[1]
	if len(good) == 0 {
		t.Fatal("no sends to rank 1")
	}
	if err := newJoinRecs(2, 1, plan, 10, 10).arrive(0, good); err != nil {
		t.Fatal(err)
	}
	huge := binary.AppendUvarint(nil, uint64(math.MaxInt32+1)<<1)
	huge = append(huge, 0, 3, 0, 0)
	for i, buf := range [][]byte{
		good[:len(good)-1],
		append(slices.Clip(good), 0x80),
		{0x02, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0}, // a source past 32 bits
		huge,
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, // a varint past 64 bits
	} {
		err := newJoinRecs(2, 1, plan, 10, 10).arrive(0, buf)
		if err == nil || !strings.Contains(err.Error(), "malformed record among the sends from rank 0") {
			t.Fatalf("case %d: error %v", i, err)
		}
	}
}

// FuzzJoinArrive: any stream of sends from another rank is read or
// refused without a panic, and what is read reads back from the
// partitions.
func FuzzJoinArrive(f *testing.F) {
	plan, err := partition.Assign(make([]int64, 4), 2)
	if err != nil {
		f.Fatal(err)
	}
	src := newJoinRecs(2, 0, plan, 10, 10)
	for n := range int32(5) {
		src.send(&chanKey{typ: recP2P, src: 0, dst: 2 + n%2, a: 3, b: int64(n)}, n*7)
	}
	f.Add(src.wire()[1])
	f.Fuzz(func(t *testing.T, buf []byte) {
		j := newJoinRecs(2, 1, plan, 10, 10)
		if err := j.arrive(0, buf); err != nil {
			return
		}
		for _, part := range readParts(j.sends, true, true) {
			for _, s := range part {
				if s.rank != 0 || s.node < 0 {
					t.Fatalf("read back %+v", s)
				}
			}
		}
	})
}

// TestInterRootedCollective: a broadcast on an intercommunicator of groups
// {0, 2} and {1, 3} (listed low group first) from world rank 0. Rank 2, the
// root group's other member, passes MPI_PROC_NULL and records no root: it
// takes no part, so only the other group's exits follow the root's enter.
// Members naming different roots are still a mismatch.
func TestInterRootedCollective(t *testing.T) {
	inter := trace.Communicator{Index: 1, ID: 7, Members: []int{0, 2, 1, 3}}
	bcast := func(roots [4]int64) []*trace.Process {
		procs := make([]*trace.Process, 4)
		for r := range procs {
			comms := []trace.Communicator{{Index: 0, ID: 0, Members: []int{0, 1, 2, 3}}, inter}
			at := int64(100 + 10*r)
			procs[r] = mkProc(trace.Header{Rank: r, NRanks: 4}, trace.Tables{Comms: comms}, [][]trace.Event{{
				{Time: at, Kind: trace.CollBegin, Args: [trace.MaxArgs]int64{int64(trace.CollBcast), 1, roots[r], 8, 8}},
				{Time: at + 100, Kind: trace.CollEnd, Args: [trace.MaxArgs]int64{int64(trace.CollBcast), 1, roots[r]}},
			}})
		}
		return procs
	}
	for k := 1; k <= 4; k++ {
		m := runMatch(t, bcast([4]int64{0, 0, -1, 0}), k)
		if m.stats.Collectives != 1 || m.stats.BadCollectives != 0 || m.count != 0 {
			t.Fatalf("k=%d: %+v, warnings %v", k, m.stats, m.warns)
		}
		for r, want := range []int{0, 1, 0, 1} {
			if got := m.edges[r].Len(); got != want {
				t.Errorf("k=%d: rank %d has %d predecessors, want %d", k, r, got, want)
			} else if got == 1 && m.edges[r].PredProcAt(0) != 0 {
				t.Errorf("k=%d: rank %d follows rank %d, want the root 0", k, r, m.edges[r].PredProcAt(0))
			}
		}
		m = runMatch(t, bcast([4]int64{0, 0, -1, 2}), k)
		if m.stats.BadCollectives != 1 || !strings.Contains(strings.Join(m.warns, "\n"), "names root 0, process 3 root 2") {
			t.Fatalf("k=%d: %+v, warnings %v, want the roots' mismatch", k, m.stats, m.warns)
		}
	}
}

// Match with DropCommLogs releases each process's communication log and
// matches exactly as it does keeping them, on 1 and 2 ranks, collecting
// before the exchange of the records (the logs it dropped, and the chunks
// the records were written in, which a trace with collectives always has:
// collections before the exchange, after the join and after the
// collectives, with the logs or without; on 2 ranks one more, in the
// DAG's build once the declarations to the other rank are dropped).
func TestMatchDropsCommLogs(t *testing.T) {
	cfg := gen.Config{Workload: "halo", Ranks: 4, Threads: 3, Iterations: 6, LatencyNS: 1000}
	for _, k := range []int{1, 2} {
		keep, drop := genProcs(t, cfg), genProcs(t, cfg)
		plan, err := partition.Assign([]int64{1, 1, 1, 1}, k)
		if err != nil {
			t.Fatal(err)
		}
		ms := make([][2]*Matching, k)
		releases := make([][2]int, k)
		err = inproc.Run(k, func(c comm.Comm) error {
			lo, hi := plan.Range(c.Rank())
			for j, procs := range [2][]*trace.Process{keep, drop} {
				r := c.Rank()
				m, err := Match(c, plan, procs[lo:hi], MatchOptions{DropCommLogs: j == 1,
					Release: func() error { releases[r][j]++; return nil }})
				if err != nil {
					return err
				}
				ms[r][j] = m
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range keep {
			if !keep[i].HasCommLog() || drop[i].HasCommLog() {
				t.Fatalf("%d ranks, process %d: log kept %v without DropCommLogs, %v with; want true, false", k, i, keep[i].HasCommLog(), drop[i].HasCommLog())
			}
		}
		for r, pair := range ms {
			a, b := pair[0], pair[1]
			if a.Len() != b.Len() || a.Stats != b.Stats || !slices.Equal(a.ProcNodes, b.ProcNodes) || a.Len() == 0 {
				t.Fatalf("%d ranks, rank %d: %d nodes, %+v; with DropCommLogs %d, %+v", k, r, a.Len(), a.Stats, b.Len(), b.Stats)
			}
			for v := range a.Len() {
				if a.Role[v] != b.Role[v] || a.Kind[v] != b.Kind[v] || a.ThreadOf(v) != b.ThreadOf(v) || a.EventOf(v) != b.EventOf(v) || a.RecordedAt(v) != b.RecordedAt(v) {
					t.Fatalf("%d ranks, rank %d: node %d differs with DropCommLogs", k, r, v)
				}
			}
			if want := 3 + min(k-1, 1); releases[r][1] != want || releases[r][0] != want {
				t.Errorf("%d ranks, rank %d: %d collections with DropCommLogs, %d without; want %d", k, r, releases[r][1], releases[r][0], want)
			}
		}
	}
}

// PropagateMaxTo hands each receive-like node the values of its
// predecessors, through collective nodes: with a node's recorded time as
// the value, the largest a node gets is its latest predecessor's time,
// which ExchangeEdges finds by another road; PropagateMax keeps the same
// largest values; nodes without a predecessor get nothing.
func TestPropagateMaxTo(t *testing.T) {
	for _, cfg := range []gen.Config{
		{Workload: "halo", Ranks: 4, Threads: 2, Iterations: 5, Exchange: "allreduce", Jitter: 0.3},
		{Workload: "halo", Ranks: 3, Threads: 2, Iterations: 4, Jitter: 0.2, LatencyNS: 1000},
	} {
		procs := genProcs(t, cfg)
		for _, k := range []int{1, 2} {
			plan, err := partition.Assign(make([]int64, len(procs)), k)
			if err != nil {
				t.Fatal(err)
			}
			err = inproc.Run(k, func(c comm.Comm) error {
				lo, hi := plan.Range(c.Rank())
				m, err := Match(c, plan, procs[lo:hi], MatchOptions{})
				if err != nil {
					return err
				}
				value := func(n int32, v []int64) { v[0], v[1] = m.RecordedAt(n), -m.RecordedAt(n)-int64(n) }
				got := map[int32][2]int64{}
				err = PropagateMaxTo(c, m, 2, value, func(to int32, v []int64) {
					if m.Role[to] != RoleRecv || to >= m.ProcNodes[len(m.Procs)] {
						t.Errorf("delivered to node %d, role %d", to, m.Role[to])
					}
					x, ok := got[to]
					if !ok {
						x = [2]int64{math.MinInt64, math.MinInt64}
					}
					got[to] = [2]int64{max(x[0], v[0]), max(x[1], v[1])}
				})
				if err != nil {
					return err
				}
				vals, err := PropagateMax(c, m, 2, value)
				if err != nil {
					return err
				}
				edges, err := ExchangeEdges(c, m, nil)
				if err != nil {
					return err
				}
				colls := 0
				for i := range m.Procs {
					row := 0
					for v := m.ProcNodes[i]; v < m.ProcNodes[i+1]; v++ {
						if m.Role[v] != RoleRecv {
							continue
						}
						x, ok := got[v]
						if !ok {
							x = [2]int64{math.MinInt64, math.MinInt64}
						}
						if w := vals.At(v); w[0] != x[0] || w[1] != x[1] {
							t.Errorf("%s, %d ranks: node %d: PropagateMax %v, PropagateMaxTo %v", cfg.Exchange, k, v, w, x)
						}
						e := &edges[i]
						if row >= e.Len() || e.ThreadAt(row) != m.ThreadOf(v) || e.EventAt(row) != m.EventOf(v) {
							t.Fatalf("%s, %d ranks: node %d has no edge row", cfg.Exchange, k, v)
						}
						if x[0] != e.PredTimeAt(row) {
							t.Errorf("%s, %d ranks: node %d (%s): latest %d, its predecessor at %d", cfg.Exchange, k, v, m.Kind[v], x[0], e.PredTimeAt(row))
						}
						if m.Kind[v] == trace.CollEnd {
							colls++
						}
						row++
					}
				}
				if colls == 0 {
					t.Errorf("%s, %d ranks: %d collective ends checked", cfg.Exchange, k, colls)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// collTrace is one collective call per process of a 3-process world: each
// enters at enter[r], leaves 10 ns later, with sent and received bytes as
// given, so a member that leaves before another enters is a clock
// violation wherever an edge joins them.
func collTrace(op trace.CollOp, root int64, enter [3]int64, sent, received [3]int64) []*trace.Process {
	procs := make([]*trace.Process, 3)
	for r := range procs {
		comms := []trace.Communicator{{Index: 0, ID: 0, Members: []int{0, 1, 2}}}
		procs[r] = mkProc(trace.Header{Rank: r, NRanks: 3}, trace.Tables{Comms: comms}, [][]trace.Event{{
			{Time: enter[r], Kind: trace.CollBegin, Args: [trace.MaxArgs]int64{int64(op), 0, root, sent[r], received[r]}},
			{Time: enter[r] + 10, Kind: trace.CollEnd, Args: [trace.MaxArgs]int64{int64(op), 0, root}},
		}})
	}
	return procs
}

// predsOf returns, per process, the processes its coll_end follows (-1:
// none).
func predsOf(t *testing.T, m *matched) [3]int32 {
	t.Helper()
	var got [3]int32
	for r := range got {
		got[r] = -1
		switch m.edges[r].Len() {
		case 0:
		case 1:
			got[r] = m.edges[r].PredProcAt(0)
		default:
			t.Fatalf("process %d has %d rows, want at most its coll_end's", r, m.edges[r].Len())
		}
	}
	return got
}

// TestCollectiveWithoutPayload: a collective that moves no data
// synchronizes nobody (Scalasca's "no payload -> no syncpoint"): Open
// MPI's MPI_Allreduce, MPI_Reduce and MPI_Bcast of count 0 return at once,
// so process 0 leaves before process 2 enters, which an edge made a clock
// violation (IMB-MPI1's first message size: 1051 of them, events moved by
// up to 8.6 ms). With payload the members wait as before; an all-to-all
// member that receives nothing (MPI_Reduce_scatter with a count of 0 for
// it) waits for nobody, though the others wait for its enter; a
// non-root of a scatter that receives nothing does not wait for the root.
func TestCollectiveWithoutPayload(t *testing.T) {
	enter := [3]int64{100, 200, 300}
	none, all := [3]int64{}, [3]int64{8, 8, 8}
	cases := []struct {
		name           string
		op             trace.CollOp
		root           int64
		sent, received [3]int64
		coll           int64    // matched instances
		want           [3]int32 // each coll_end's predecessor, -1 none
	}{
		{"allreduce", trace.CollAllreduce, -1, all, all, 1, [3]int32{2, 2, 2}},
		{"allreduce count 0", trace.CollAllreduce, -1, none, none, 1, [3]int32{-1, -1, -1}},
		{"barrier", trace.CollBarrier, -1, none, none, 1, [3]int32{2, 2, 2}},
		{"bcast", trace.CollBcast, 1, [3]int64{0, 8, 0}, [3]int64{8, 0, 8}, 1, [3]int32{1, -1, 1}},
		{"bcast count 0", trace.CollBcast, 1, none, none, 1, [3]int32{-1, -1, -1}},
		{"reduce", trace.CollReduce, 0, all, [3]int64{8, 0, 0}, 1, [3]int32{2, -1, -1}},
		{"reduce count 0", trace.CollReduce, 0, none, none, 1, [3]int32{-1, -1, -1}},
		{"reduce_scatter, 0 for 1 and 2", trace.CollReduceScatter, -1, all, [3]int64{8, 0, 0}, 1, [3]int32{2, -1, -1}},
		{"scatterv, 0 for 2", trace.CollScatterv, 1, [3]int64{0, 16, 0}, [3]int64{8, 8, 0}, 1, [3]int32{1, -1, -1}},
	}
	for _, c := range cases {
		for k := 1; k <= 3; k++ {
			m := runMatch(t, collTrace(c.op, c.root, enter, c.sent, c.received), k)
			if m.stats.Collectives != c.coll || m.stats.BadCollectives != 0 || m.count != 0 {
				t.Fatalf("%s, k=%d: %+v, warnings %v", c.name, k, m.stats, m.warns)
			}
			if got := predsOf(t, m); got != c.want {
				t.Errorf("%s, k=%d: the coll_ends follow processes %v, want %v", c.name, k, got, c.want)
			}
		}
	}
}

// TestScanPrefix: a scan's member needs the data of the members before it
// only (Open MPI's linear MPI_Scan and MPI_Exscan let process 0 leave
// before process 2 enters: ParRes Kernels' PIC), so MPI_Scan's exit of
// member i follows the latest enter of members 0…i and MPI_Exscan's of
// members 0…i−1, never a later member's; as all-to-all, process 0's exit
// followed process 2's enter, a clock violation. A member that sends
// nothing is waited for by nobody.
func TestScanPrefix(t *testing.T) {
	all := [3]int64{8, 8, 8}
	cases := []struct {
		name           string
		op             trace.CollOp
		enter          [3]int64
		sent, received [3]int64
		want           [3]int32
	}{
		{"scan, ascending enters", trace.CollScan, [3]int64{100, 200, 300}, all, all, [3]int32{0, 1, 2}},
		{"scan, descending enters", trace.CollScan, [3]int64{300, 200, 100}, all, all, [3]int32{0, 0, 0}},
		{"exscan, ascending enters", trace.CollExscan, [3]int64{100, 200, 300}, all, all, [3]int32{-1, 0, 1}},
		{"exscan, descending enters", trace.CollExscan, [3]int64{300, 200, 100}, all, all, [3]int32{-1, 0, 0}},
		{"scan, 1 sends nothing", trace.CollScan, [3]int64{100, 200, 300}, [3]int64{8, 0, 8}, all, [3]int32{0, 0, 2}},
		{"scan, 1 moves nothing", trace.CollScan, [3]int64{100, 200, 300}, [3]int64{8, 0, 8}, [3]int64{8, 0, 8}, [3]int32{0, -1, 2}},
		{"exscan count 0", trace.CollExscan, [3]int64{100, 200, 300}, [3]int64{}, [3]int64{}, [3]int32{-1, -1, -1}},
	}
	for _, c := range cases {
		for k := 1; k <= 3; k++ {
			m := runMatch(t, collTrace(c.op, -1, c.enter, c.sent, c.received), k)
			if m.stats.Collectives != 1 || m.stats.BadCollectives != 0 || m.count != 0 {
				t.Fatalf("%s, k=%d: %+v, warnings %v", c.name, k, m.stats, m.warns)
			}
			if got := predsOf(t, m); got != c.want {
				t.Errorf("%s, k=%d: the coll_ends follow processes %v, want %v", c.name, k, got, c.want)
			}
		}
	}
}

// TestScanPrefixWindow: past prefixWindow members a scan's member waits
// for the 64 nearest before it (itself included for MPI_Scan) only. With
// the enters descending (member 0 last), member 69 follows member 6, the
// latest of members 6…69, not member 0; member 63 still member 0.
func TestScanPrefixWindow(t *testing.T) {
	const n = 70
	members := make([]int, n)
	for i := range members {
		members[i] = i
	}
	procs := make([]*trace.Process, n)
	for r := range procs {
		comms := []trace.Communicator{{Index: 0, ID: 0, Members: members}}
		at := int64(1000 - 10*r)
		procs[r] = mkProc(trace.Header{Rank: r, NRanks: n}, trace.Tables{Comms: comms}, [][]trace.Event{{
			{Time: at, Kind: trace.CollBegin, Args: [trace.MaxArgs]int64{int64(trace.CollScan), 0, -1, 8, 8}},
			{Time: 2000, Kind: trace.CollEnd, Args: [trace.MaxArgs]int64{int64(trace.CollScan), 0, -1}},
		}})
	}
	for _, k := range []int{1, 3} {
		m := runMatch(t, procs, k)
		if m.stats.Collectives != 1 || m.count != 0 {
			t.Fatalf("k=%d: %+v, warnings %v", k, m.stats, m.warns)
		}
		for r, want := range map[int]int32{0: 0, 1: 0, 63: 0, 64: 1, 69: 6} {
			if e := m.edges[r]; e.Len() != 1 {
				t.Errorf("k=%d: member %d has %d rows, want its coll_end's", k, r, e.Len())
			} else if got := e.PredProcAt(0); got != want {
				t.Errorf("k=%d: member %d follows process %d, want %d", k, r, got, want)
			}
		}
	}
}

// TestWindowCollectivesPerWindow: a window's collectives (MPI_Win_fence,
// its creation and free) are recorded on a communicator entry of the
// window's own (trace.CollOp.IsWindow), so two windows of one group are
// numbered apart: process 0 fences window A then B, process 1 B then A,
// and each fence pairs with the other process's fence of its window (on
// one entry they paired by call order, A with B). Process 1 lists the
// windows in the other order in its table. A fence moves no data, and
// synchronises every member as a barrier: each coll_end follows the
// latest coll_begin of its instance.
func TestWindowCollectivesPerWindow(t *testing.T) {
	world := trace.Communicator{Index: 0, ID: 0, Members: []int{0, 1}}
	a, b := int64(1<<61|101), int64(1<<61|102)
	fence := func(at int64, idx int64) []trace.Event {
		return []trace.Event{
			{Time: at, Kind: trace.CollBegin, Args: [trace.MaxArgs]int64{int64(trace.CollWinFence), idx, -1, 0, 0}},
			{Time: at + 10, Kind: trace.CollEnd, Args: [trace.MaxArgs]int64{int64(trace.CollWinFence), idx, -1}},
		}
	}
	p0 := mkProc(trace.Header{Rank: 0, NRanks: 2}, trace.Tables{Comms: []trace.Communicator{world,
		{Index: 1, ID: a, Members: []int{0, 1}}, {Index: 2, ID: b, Members: []int{0, 1}}}},
		[][]trace.Event{append(fence(100, 1), fence(300, 2)...)}) // A at 100, B at 300
	p1 := mkProc(trace.Header{Rank: 1, NRanks: 2}, trace.Tables{Comms: []trace.Communicator{world,
		{Index: 1, ID: b, Members: []int{0, 1}}, {Index: 2, ID: a, Members: []int{0, 1}}}},
		[][]trace.Event{append(fence(200, 1), fence(400, 2)...)}) // B at 200, A at 400
	// coll_end event → (process, event) of its predecessor: A's latest
	// enter is process 1's (event 2), B's process 0's (event 2).
	want := [2]map[int64][2]int64{{1: {1, 2}, 3: {0, 2}}, {1: {0, 2}, 3: {1, 2}}}
	for k := 1; k <= 2; k++ {
		m := runMatch(t, []*trace.Process{p0, p1}, k)
		if m.stats.Collectives != 2 || m.stats.BadCollectives != 0 || m.count != 0 {
			t.Fatalf("k=%d: %+v, warnings %v", k, m.stats, m.warns)
		}
		for r := range 2 {
			e := &m.edges[r]
			got := map[int64][2]int64{}
			for i := range e.Len() {
				got[e.EventAt(i)] = [2]int64{int64(e.PredProcAt(i)), e.PredEventAt(i)}
			}
			if !maps.Equal(got, want[r]) {
				t.Errorf("k=%d: process %d's coll_ends follow %v, want %v", k, r, got, want[r])
			}
		}
	}
}

// ExchangeEdgesBounded calls its check at the same points on every rank
// (once the rows are made, after each batch, once the send-like nodes'
// round is done), whatever their processes, and a check's error stops the
// exchange there on every rank: under a memory limit it is the heap
// guard's, collective.
func TestExchangeChecksStopEveryRank(t *testing.T) {
	procs := genProcs(t, gen.Config{Workload: "halo", Ranks: 5, Threads: 2, Iterations: 4, Seed: 3, Exchange: "allreduce"})
	plan, err := partition.Assign([]int64{1, 1, 1, 1, 1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Stop at no check first (0), which counts them (the rows, each
	// batch, the first round's end), then at each.
	points := 0
	for stopAt := 0; stopAt == 0 || stopAt <= points; stopAt++ {
		stops := commtest.NewStops(3, stopAt)
		var edges [][]RemoteEdges
		if stopAt == 0 {
			edges = make([][]RemoteEdges, 3)
		}
		err := inproc.Run(3, func(c comm.Comm) error {
			lo, hi := plan.Range(c.Rank())
			m, err := Match(c, plan, procs[lo:hi], MatchOptions{})
			if err != nil {
				return err
			}
			// Batches of 64 bytes: many, and the same edges.
			e, err := ExchangeEdgesBounded(c, m, func(_, v int32) int64 { return m.RecordedAt(v) }, Bounded{Batch: 64, Check: stops.Check(c.Rank())})
			stops.Errs[c.Rank()] = err
			if edges != nil {
				edges[c.Rank()] = e
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if stopAt == 0 {
			if points = stops.Calls[0]; points < 4 {
				t.Fatalf("%d checks, want 4 at least", points)
			}
		}
		stops.Verify(t, "exchange", points)
		if stopAt == 0 {
			// The checks and the batches change nothing: the edges are
			// those of ExchangeEdgesAt.
			err := inproc.Run(3, func(c comm.Comm) error {
				lo, hi := plan.Range(c.Rank())
				m, err := Match(c, plan, procs[lo:hi], MatchOptions{})
				if err != nil {
					return err
				}
				want, err := ExchangeEdgesAt(c, m, func(_, v int32) int64 { return m.RecordedAt(v) })
				if err != nil {
					return err
				}
				for i := range want {
					g, w := &edges[c.Rank()][i], &want[i]
					if g.Len() != w.Len() {
						return fmt.Errorf("process %d: %d edges, want %d", lo+i, g.Len(), w.Len())
					}
					for k := range w.Len() {
						if g.ThreadAt(k) != w.ThreadAt(k) || g.EventAt(k) != w.EventAt(k) || g.PredProcAt(k) != w.PredProcAt(k) || g.PredThreadAt(k) != w.PredThreadAt(k) || g.PredEventAt(k) != w.PredEventAt(k) {
							return fmt.Errorf("process %d: edge %d differs", lo+i, k)
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}
	}
}

// Match calls MatchOptions.Check as often on every rank, whatever the
// rank's processes (two, two and one here): comm.ChecksPerLoop times along
// its scan, once its channels' edges are added and ChecksPerLoop+1 times
// in its DAG's build; a check's error stops the match there on every
// rank, and checks that pass change nothing matched.
func TestMatchChecksStopEveryRank(t *testing.T) {
	procs := genProcs(t, gen.Config{Workload: "halo", Ranks: 5, Threads: 2, Iterations: 4, Seed: 3})
	plan, err := partition.Assign([]int64{1, 1, 1, 1, 1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	match := func(check func(rank int) error) ([]*Matching, []error) {
		ms, errs := make([]*Matching, 3), make([]error, 3)
		err := inproc.Run(3, func(c comm.Comm) error {
			lo, hi := plan.Range(c.Rank())
			opts := MatchOptions{}
			if check != nil {
				opts.Check = func() error { return check(c.Rank()) }
			}
			ms[c.Rank()], errs[c.Rank()] = Match(c, plan, procs[lo:hi], opts)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return ms, errs
	}
	want, _ := match(nil)
	points := 2*comm.ChecksPerLoop + 2
	for stopAt := 0; stopAt <= points; stopAt++ {
		stops := commtest.NewStops(3, stopAt)
		var ms []*Matching
		ms, stops.Errs = match(func(r int) error { return stops.Check(r)() })
		stops.Verify(t, "match", points)
		for r := range 3 {
			if stopAt == 0 && stops.Errs[r] == nil && (ms[r].Len() != want[r].Len() || ms[r].Stats != want[r].Stats || ms[r].DAG.Edges() != want[r].DAG.Edges()) {
				t.Errorf("rank %d: checked, %d nodes, %d edges, %+v; unchecked, %d, %d, %+v", r, ms[r].Len(), ms[r].DAG.Edges(), ms[r].Stats, want[r].Len(), want[r].DAG.Edges(), want[r].Stats)
			}
		}
	}
}

// scanChecks makes its checks where Checkpoints.After, called at every
// node, makes them (the scan asks it at every event, without a division).
func TestScanChecksWhereAfterChecks(t *testing.T) {
	for _, units := range []int{1, 5, 8, 80, 1001} {
		var want, got []int
		var p comm.Checkpoints
		for i := range units {
			p.Check = func() error { want = append(want, i+1); return nil }
			if err := p.After(i, units); err != nil {
				t.Fatal(err)
			}
		}
		n := 0
		s := newScanChecks(func() error { got = append(got, n); return nil }, units)
		for n = 0; n <= units; n++ {
			s.at(int32(n)) // asked once more at each node count: the scan asks at each event
			s.at(int32(n))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d nodes: checks after %v nodes, Checkpoints.After makes them after %v", units, got, want)
		}
	}
}

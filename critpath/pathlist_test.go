package critpath

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ptrace-dev/ptrace/report"
)

// listsOf makes one summary per part from the parts' nodes, as the ranks
// make theirs (nodeList.add), sends their lists through msgpack and the
// bytes apart, as the gather does, and returns what rank 0 gets.
func listsOf(t testing.TB, parts [][]report.PathNode) []pathSummary {
	t.Helper()
	var sent []pathSummary
	var bufs [][]byte
	for _, ns := range parts {
		names := nameTable{index: map[string]uint32{}}
		var s pathSummary
		for _, n := range ns {
			s.Segments.add(n.Rank, int32(n.Thread), names.id(n.Kind), names.id(n.Construct), n.StartNS, n.DurNS)
		}
		s.Names = names.names
		bufs = append(bufs, s.Segments.join())
		sent = append(sent, s)
	}
	b, err := msgpack.Marshal(sent)
	if err != nil {
		t.Fatal(err)
	}
	var got []pathSummary
	if err := msgpack.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i].Segments.buf = bufs[i]
	}
	return got
}

// randomParts makes parts of path nodes whose starts mostly increase,
// with ties and steps back (as an MPI ping-pong's path: a receive entered
// before its send).
func randomParts(rng *rand.Rand, parts, nodes int) [][]report.PathNode {
	names := []string{"", "task", "mpi", "MPI_Waitall", "région ✓", "join"}
	out := make([][]report.PathNode, parts)
	for p := range out {
		var start int64
		for range rng.IntN(nodes + 1) {
			switch rng.IntN(10) {
			case 0:
				start -= rng.Int64N(1000) // back
			case 1, 2: // a tie
			default:
				start += rng.Int64N(1000)
			}
			out[p] = append(out[p], report.PathNode{Rank: rng.IntN(4), Thread: rng.IntN(3) - 1,
				Kind: names[rng.IntN(len(names))], Construct: names[rng.IntN(len(names))], StartNS: start, DurNS: rng.Int64N(1e6)})
		}
	}
	return out
}

// TestMergeLists: the ranks' lists come out of mergeLists as a stable
// sort by start, rank and thread of all of them one after the other
// orders them, whatever runs they hold.
func TestMergeLists(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for it := range 200 {
		parts := randomParts(rng, 1+rng.IntN(4), 1+rng.IntN(300))
		var want []report.PathNode
		for _, ns := range parts {
			want = append(want, ns...)
		}
		slices.SortStableFunc(want, timeOrder)
		var got []report.PathNode
		if err := mergeLists(listsOf(t, parts), func(p *pathSummary) *nodeList { return &p.Segments }, func(n report.PathNode) { got = append(got, n) }); err != nil {
			t.Fatalf("it %d: %v", it, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("it %d: merged %d nodes, not the stable sort of %d", it, len(got), len(want))
		}
	}
}

// capSegments is the cap of report.MaxPathSegments over the whole list
// of segments in time order, as the report defines it: every segment
// when there are k or fewer; else neighbours on the same rank and thread
// merged, and the k longest of those (a stable sort by longer) in time
// order if still too many. segmentCap makes it one segment at a time.
func capSegments(segs []report.PathNode, k int) ([]report.PathNode, bool) {
	if len(segs) <= k {
		return segs, false
	}
	var out []report.PathNode
	for _, s := range segs {
		if n := len(out); n > 0 && out[n-1].Rank == s.Rank && out[n-1].Thread == s.Thread {
			o := &out[n-1]
			o.DurNS = max(o.DurNS, s.StartNS+s.DurNS-o.StartNS)
			if o.Kind != s.Kind {
				o.Kind = "mixed"
			}
			continue
		}
		out = append(out, s)
	}
	if len(out) <= k {
		return out, true
	}
	keep := topNodes(slices.Clone(out), k)
	slices.SortStableFunc(keep, timeOrder)
	return keep, true
}

// TestSegmentCap: the streaming cap keeps what capSegments of the whole
// list keeps, on lists below, at and above the cap, with many equal
// durations (the stable sort's ties).
func TestSegmentCap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for it := range 500 {
		k := 1 + rng.IntN(40)
		var segs []report.PathNode
		var start int64
		for range rng.IntN(4 * k) {
			start += rng.Int64N(50)
			segs = append(segs, report.PathNode{Rank: rng.IntN(2), Thread: rng.IntN(2), Kind: []string{"task", "mpi"}[rng.IntN(2)],
				StartNS: start, DurNS: rng.Int64N(5) * 10})
		}
		want, wantCut := capSegments(slices.Clone(segs), k)
		c := newSegmentCap(k, int64(len(segs)))
		for _, s := range segs {
			c.add(s)
		}
		got, cut := c.result()
		if cut != wantCut || !reflect.DeepEqual(got, want) {
			t.Fatalf("it %d (k %d, %d segments): kept %v (cut %v), want %v (cut %v)", it, k, len(segs), got, cut, want, wantCut)
		}
	}
}

// FuzzMergeLists: any list header and bytes merge into nodes or an error,
// without panicking; what merges holds as many nodes as the header
// claims, in time order within each run.
func FuzzMergeLists(f *testing.F) {
	good := listsOf(f, [][]report.PathNode{{{Rank: 1, Thread: 2, Kind: "mpi", Construct: "MPI_Send", StartNS: 5, DurNS: 7}, {Rank: 0, StartNS: 3}}})
	b, err := msgpack.Marshal(good[0].Segments)
	if err != nil {
		f.Fatal(err)
	}
	var hdr []byte
	if err := msgpack.Unmarshal(b, &hdr); err != nil {
		f.Fatal(err)
	}
	f.Add(hdr, good[0].Segments.buf)
	f.Add([]byte{0}, []byte{})
	f.Fuzz(func(t *testing.T, hdr, body []byte) {
		var l nodeList
		if err := l.decodeHeader(hdr); err != nil {
			return
		}
		l.buf = body
		parts := []pathSummary{{Names: []string{"task", "mpi"}, Segments: l}}
		var got int64
		if err := mergeLists(parts, func(p *pathSummary) *nodeList { return &p.Segments }, func(report.PathNode) { got++ }); err != nil {
			return
		}
		if got != l.N {
			t.Fatalf("merged %d nodes of a list of %d", got, l.N)
		}
	})
}

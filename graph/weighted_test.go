package graph

import (
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/internal/narrow"
)

// TestWeightStore: a store of weights reads each node's weight until its
// value is written and the value after, whatever the order of the writes,
// through blocks kept whole and both widenings (weights and values of
// every size against a model). A node is marked done before its value is
// written (a widening as it is written re-writes it as a value).
func TestWeightStore(t *testing.T) {
	var states [3]int // stores ending at 24 bits, 32, wide
	defer func() {
		if min(states[0], states[1], states[2]) < 20 {
			t.Errorf("stores at 24 bits, 32 and wide: %v, not each 20 or more", states)
		}
	}()
	for it := 0; it < 200; it++ {
		rng := rand.New(rand.NewSource(int64(it)))
		n := 1 + rng.Intn(3000)
		big := []int64{1 << 10, 1 << 22, 1 << 23, 1 << 31, 1 << 32}[rng.Intn(5)]
		ws := make([]int64, n)
		var wb narrow.FramedBuilder
		for k := range ws {
			ws[k] = rng.Int63n(big)
			if rng.Intn(2000) == 0 {
				ws[k] = rng.Int63n(1 << 32) // a long fragment
			}
			wb.Append(ws[k])
		}
		w := wb.Finish()
		s, err := NewWeightStore(&w)
		if err != nil {
			t.Fatal(err)
		}
		v := &s.v
		vals := make([]int64, n)
		done := make([]bool, n)
		spread := []int64{1 << 10, 1 << 20, 1 << 28, 1 << 30, 1 << 33, 1 << 40}[rng.Intn(6)]
		t0 := rng.Int63n([]int64{1 << 20, 1 << 40}[rng.Intn(2)])
		order := rng.Perm(n)
		if it%2 == 0 {
			slices.Sort(order) // mostly in order, as a replay goes
		}
		check := func(when int) {
			for k := range n {
				if done[k] && v.get(int32(k)) != vals[k] {
					t.Fatalf("it %d after %d writes: node %d reads %d, was written %d", it, when, k, v.get(int32(k)), vals[k])
				}
				if !done[k] && v.weight(int32(k)) != ws[k] {
					t.Fatalf("it %d after %d writes: node %d weighs %d, not %d", it, when, k, v.weight(int32(k)), ws[k])
				}
			}
		}
		check(0)
		for i, k := range order {
			vals[k] = t0 + int64(k)*spread/int64(n) + rng.Int63n(1+spread/1000)
			setBit(v.done, int32(k)) // before the value, as the replay does
			v.set(int32(k), vals[k])
			done[k] = true
			if i%97 == 0 || i == n-1 {
				check(i + 1)
			}
		}
		switch {
		case v.wide != nil:
			states[2]++
		case v.hi == nil:
			states[1]++
		default:
			states[0]++
		}
	}
}

// TestLongestPathsWeighted: the forward replay with the weights in its
// store gives LongestPathsFollowing's EFs, arguments, span and end, and
// OnLongestPathsColumn the same marks from them (the search through the
// ties, or the backward replay when a log is full), on random DAGs with
// many ties, on 1 to 6 ranks, without reading the weights' column; the
// same with the store filled from a function (NewWeightStoreOf) and no
// column at all.
func TestLongestPathsWeighted(t *testing.T) {
	for it := 0; it < 150; it++ {
		rng := rand.New(rand.NewSource(int64(900 + it)))
		procs := 1 + rng.Intn(6)
		g := newRandGraph(rng, procs, 20+rng.Intn(400), 0.3, 3)
		switch it % 4 {
		case 2:
			for k := range g.w {
				if rng.Intn(3) == 0 {
					g.w[k] = rng.Int63n(1 << 25) // blocks kept whole, 32 bits
				}
			}
		case 3:
			for k := range g.w {
				g.w[k] = rng.Int63n(1 << 31) // no ties, wide values
			}
		case 0:
			if it%8 == 4 {
				// A few weights past 2³² (a run's main fragments of
				// seconds to minutes: BOTS health large's reach 70 s):
				// kept in the store, their sums int64s.
				for range 1 + rng.Intn(3) {
					g.w[rng.Intn(len(g.w))] = 1<<32 + rng.Int63n(1<<40)
				}
			}
		case 1:
			if it%8 == 5 {
				// Weights that fit 24 bits, EFs whose blocks do not: the
				// store widens in the replay, its nodes not done holding
				// their weights.
				for k := range g.w {
					g.w[k] = 1<<20 + rng.Int63n(1<<22)
				}
			}
		}
		wantEF, wantBL, span := refLongest(g)
		narrowW := !slices.ContainsFunc(g.w, func(x int64) bool { return x >= 1<<32 })
		k := 1 + rng.Intn(procs)
		_, loc, parts := partitionGraph(rng, g, k)
		err := inproc.Run(k, func(c comm.Comm) error {
			part := parts[c.Rank()]
			var wb narrow.FramedBuilder
			for _, n := range part.global {
				wb.Append(g.w[n])
			}
			w := wb.Finish()
			key := func(n int32) int64 { return int64(c.Rank())<<32 | int64(n) }
			var lps [3]*Longest
			var ons [3]OnLongest
			var args [3][]Entry
			for i := range lps {
				dag, err := buildRandOpts(c, g, loc, part, BuildOptions{OutsOnly: true})
				if err != nil {
					return err
				}
				wc := w
				col := &wc
				switch {
				case i == 0:
					lps[i], err = LongestPathsFollowing(c, dag, &wc, key)
				case i == 2 && narrowW:
					// Filled without a column, as the critical path
					// does where every weight is below 2³²; wider
					// weights take the column's store (default).
					ws, err := NewWeightStoreOf(len(part.global), func(add func(x int64)) {
						for _, n := range part.global {
							add(g.w[n])
						}
					})
					if err != nil {
						return err
					}
					col = nil
					lps[i], err = LongestPathsWeighted(c, dag, ws, key)
					if err != nil {
						return err
					}
				default:
					ws, err := NewWeightStore(&wc)
					if err != nil {
						return err
					}
					wc = narrow.Framed{} // not read: an empty column of no weights
					lps[i], err = LongestPathsWeighted(c, dag, ws, key)
					if err != nil {
						return err
					}
					// The length and Wide only: a column of other weights,
					// which the marks would show were it read.
					var db narrow.FramedBuilder
					for _, n := range part.global {
						db.Append(g.w[n] + 1)
					}
					wc = db.Finish()
					wc.Park(discard{})
				}
				if err != nil {
					return err
				}
				lp := lps[i]
				for j, n := range part.global {
					if lp.EFAt(int32(j)) != wantEF[n] {
						t.Errorf("it %d replay %d: node %d EF %d, want %d", it, i, n, lp.EFAt(int32(j)), wantEF[n])
					}
				}
				args[i] = lp.Arg.entries()
				if i >= 1 && (!slices.Equal(args[0], args[i]) || lps[0].End != lp.End || lps[0].Span != lp.Span) {
					t.Errorf("it %d rank %d: arguments, end or span differ", it, c.Rank())
				}
				if it%5 == 4 && lp.ties != nil {
					lp.ties.full = true // the backward replay
				}
				if ons[i], err = OnLongestPathsColumn(c, dag, col, lp); err != nil {
					return err
				}
			}
			for j, n := range part.global {
				want := wantEF[n]+wantBL[n]-g.w[n] == span
				for i := range ons {
					if ons[i].On(int32(j)) != want {
						t.Errorf("it %d (%d ranks) replay %d node %d: marked %v, on a longest path %v", it, k, i, n, ons[i].On(int32(j)), want)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// NewWeightStoreOf refuses fewer or more weights than nodes, and a
// weight outside [0, 2³²), naming the node; a column-less
// OnLongestPathsColumn needs the forward replay of a store.
func TestWeightStoreOfRefuses(t *testing.T) {
	fill := func(ws ...int64) func(add func(x int64)) {
		return func(add func(x int64)) {
			for _, x := range ws {
				add(x)
			}
		}
	}
	for _, tc := range []struct {
		n    int
		ws   []int64
		fail bool
	}{
		{3, []int64{0, 1<<32 - 1, 5}, false},
		{3, []int64{0, 1}, true},
		{2, []int64{0, 1, 2}, true},
		{3, []int64{0, 1 << 32, 2}, true},
		{3, []int64{0, -1, 2}, true},
	} {
		s, err := NewWeightStoreOf(tc.n, fill(tc.ws...))
		if (err != nil) != tc.fail {
			t.Errorf("%d nodes, weights %v: error %v, want one %v", tc.n, tc.ws, err, tc.fail)
		}
		if err == nil {
			for k, x := range tc.ws {
				if got := s.v.weight(int32(k)); got != x {
					t.Errorf("weights %v: node %d weighs %d", tc.ws, k, got)
				}
			}
		}
	}
	err := inproc.Run(1, func(c comm.Comm) error {
		b := NewBuilder(0, 1)
		b.AddNode(false)
		b.AddNode(true)
		dag, err := b.Build(c, BuildOptions{OutsOnly: true})
		if err != nil {
			return err
		}
		w := narrow.FramedBuilder{}
		w.Append(1)
		w.Append(2)
		col := w.Finish()
		lp, err := LongestPathsFollowing(c, dag, &col, func(n int32) int64 { return int64(n) })
		if err != nil {
			return err
		}
		if _, err := OnLongestPathsColumn(c, dag, nil, lp); err == nil {
			t.Error("OnLongestPathsColumn without a column after a replay of a column: no error")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWeightStoreRefuses: a column with a negative weight, or whose
// weights could sum past the largest int64, is not kept in a store (its
// EFs could wrap, and the starts read from them be wrong); one whose
// largest weight times its length is that int64 exactly is.
func TestWeightStoreRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals []int64
		ok   bool
	}{
		{"a negative weight", []int64{5, -1, 7}, false},
		{"sums up to the largest int64", []int64{0, math.MaxInt64 / 3, 1}, true},
		{"sums past it", []int64{0, math.MaxInt64/3 + 1, 1}, false},
		{"weights past 2³²", []int64{1 << 40, 3, 1<<32 + 1}, true},
	} {
		var b narrow.FramedBuilder
		for _, x := range tc.vals {
			b.Append(x)
		}
		w := b.Finish()
		_, err := NewWeightStore(&w)
		if (err == nil) != tc.ok {
			t.Errorf("%s: NewWeightStore error %v, want a store %v", tc.name, err, tc.ok)
		}
	}
}

// TestWeightStoreStarts32: a store whose weights keep more than a
// sixteenth of its blocks whole at 24 bits starts at 32 bits, holding them
// all but those past 2³¹ narrow; one whose weights keep a sixteenth
// starts at 24. Both read every weight back.
func TestWeightStoreStarts32(t *testing.T) {
	const blocks = 1600
	for _, tc := range []struct {
		long int // blocks with a weight past 24 bits
		at32 bool
	}{{blocks / 16, false}, {blocks/16 + 1, true}} {
		ws := make([]int64, blocks*64)
		var wb narrow.FramedBuilder
		for k := range ws {
			ws[k] = int64(k % 1000)
			if b := k / 64; k%64 == 5 && b < tc.long {
				ws[k] = 1 << 23 // the least weight past 24 bits
				if b == 0 {
					ws[k] = 1 << 31 // past 32: kept whole
				}
			}
			wb.Append(ws[k])
		}
		w := wb.Finish()
		s, err := NewWeightStore(&w)
		if err != nil {
			t.Fatal(err)
		}
		v := &s.v
		if at32 := v.hi == nil && v.off != nil; at32 != tc.at32 {
			t.Errorf("%d blocks of long weights: the store at 32 bits %v, want %v", tc.long, at32, tc.at32)
		}
		if want := map[bool]int{true: 1, false: tc.long}[tc.at32]; v.kept() != want {
			t.Errorf("%d blocks of long weights: %d kept whole, want %d", tc.long, v.kept(), want)
		}
		for k, x := range ws {
			if got := v.weight(int32(k)); got != x {
				t.Fatalf("%d blocks of long weights: node %d weighs %d, want %d", tc.long, k, got, x)
			}
		}
	}
}

// discard is a spill file that takes everything and gives nothing back:
// a parked column must not be read.
type discard struct{}

func (discard) Append(p []byte) (int64, error)          { return 0, nil }
func (discard) ReadAt(p []byte, off int64) (int, error) { return 0, nil }

// TestWeightStoreWidth: blocks kept whole for their long weights do not
// turn a store to 32 bits while its values fit 24 (a few long fragments
// among 640 000), and values that fit no block turn it early, as in a
// store of values alone (a pure MPI program's earliest finishes).
func TestWeightStoreWidth(t *testing.T) {
	const n = 640_000
	for _, fits := range []bool{true, false} {
		var wb narrow.FramedBuilder
		for k := range n {
			x := int64(1000)
			if k%6400 == 0 {
				x = 1 << 30 // 100 blocks kept whole for a weight
			}
			wb.Append(x)
		}
		w := wb.Finish()
		s, err := NewWeightStore(&w)
		if err != nil {
			t.Fatal(err)
		}
		v := &s.v
		if v.hi == nil || v.kept() != 100 {
			t.Fatalf("after the weights: 24 bits %v, %d blocks kept whole", v.hi != nil, v.kept())
		}
		step := int64(1000)
		if !fits {
			step = 1 << 20 // 64 values span 2^26: no block fits 24 bits
		}
		for k := range n / 2 {
			setBit(v.done, int32(k))
			v.set(int32(k), 1<<40+int64(k)*step)
		}
		if at24 := v.hi != nil; at24 != fits {
			t.Errorf("values that fit 24 bits %v: the store at 24 bits %v (%d blocks kept whole, %d used)", fits, at24, v.kept(), v.used)
		}
	}
}

// Package partition assigns trace processes to analysis ranks: one each when
// the counts match, otherwise contiguous blocks whose total weight (events,
// or bytes when event counts are unknown) is as even as possible. Keeping
// blocks contiguous keeps neighbouring ranks, which talk the most, together.
// Ranks beyond the number of processes own none: they idle through the
// analysis, taking part in its collectives, so that `mpirun -np N` works
// whatever the trace.
package partition

import (
	"fmt"
	"sort"
)

// Plan maps processes to ranks: rank r owns processes [Starts[r], Starts[r+1]),
// an empty range for the ranks past the number of processes.
type Plan struct {
	Starts  []int
	weights []int64
}

// Assign splits len(weights) processes over ranks analysis ranks. With at
// least as many processes as ranks, each rank gets at least one; with more
// ranks, the first len(weights) get one each and the others none.
func Assign(weights []int64, ranks int) (*Plan, error) {
	n := len(weights)
	switch {
	case ranks < 1:
		return nil, fmt.Errorf("partition: %d analysis ranks", ranks)
	case n == 0:
		return nil, fmt.Errorf("partition: the trace has no processes")
	}
	w := make([]int64, n)
	for i, v := range weights {
		w[i] = max(v, 1) // empty files still cost a little
	}
	p := &Plan{Starts: make([]int, ranks+1), weights: w}
	if ranks >= n {
		for i := range p.Starts {
			p.Starts[i] = min(i, n)
		}
		return p, nil
	}
	var total, heaviest int64
	for _, v := range w {
		total += v
		heaviest = max(heaviest, v)
	}
	// The smallest bottleneck B for which a greedy left-to-right packing needs
	// at most `ranks` blocks; then cut so that every rank gets a process.
	lo, hi := max(heaviest, (total+int64(ranks)-1)/int64(ranks)), total
	bound := lo + int64(sort.Search(int(min(hi-lo+1, 1<<62)), func(i int) bool {
		return blocks(w, lo+int64(i)) <= ranks
	}))
	r, acc := 0, int64(0)
	for i := 0; i < n; i++ {
		left, ranksLeft := n-i, ranks-r-1
		if i > 0 && (acc+w[i] > bound || left <= ranksLeft) && r < ranks-1 {
			r++
			p.Starts[r] = i
			acc = 0
		}
		acc += w[i]
	}
	for r++; r <= ranks; r++ {
		p.Starts[r] = n
	}
	return p, nil
}

func blocks(w []int64, bound int64) int {
	n, acc := 1, int64(0)
	for _, v := range w {
		if acc+v > bound {
			n++
			acc = 0
		}
		acc += v
	}
	return n
}

// Ranks returns the number of analysis ranks.
func (p *Plan) Ranks() int { return len(p.Starts) - 1 }

// Busy returns the number of ranks that own a process: the first Busy()
// ranks; the others idle.
func (p *Plan) Busy() int { return min(p.Ranks(), len(p.weights)) }

// Range returns the processes [lo, hi) that rank owns.
func (p *Plan) Range(rank int) (lo, hi int) { return p.Starts[rank], p.Starts[rank+1] }

// Owner returns the rank that owns process proc: the first rank whose
// range ends past proc (len(Starts)−1 for none), by a binary search
// without sort.SearchInts's call a step (a lookup per record the ranks
// exchange: 0.4 % of the pure MPI program's instructions at one rank,
// 0.7 % at two).
func (p *Plan) Owner(proc int) int {
	s := p.Starts[1:]
	lo, hi := 0, len(s)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if s[h] <= proc {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}

// Load returns the total weight of rank's processes.
func (p *Plan) Load(rank int) int64 {
	var s int64
	for _, v := range p.weights[p.Starts[rank]:p.Starts[rank+1]] {
		s += v
	}
	return s
}

// Imbalance returns max load / mean load of the ranks that own a process
// (1 is perfect): idle ranks are left out, since no plan could give them
// work.
func (p *Plan) Imbalance() float64 {
	var total, mx int64
	for r := 0; r < p.Busy(); r++ {
		l := p.Load(r)
		total += l
		mx = max(mx, l)
	}
	if total == 0 {
		return 1
	}
	return float64(mx) * float64(p.Busy()) / float64(total)
}

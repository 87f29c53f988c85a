package sim

import "slices"

// PairCheck finds repeated (predecessor, successor) dependence pairs as
// they stream by, the way the model declares them: a successor's pairs
// in one run, each checked against the run so far. A successor met again
// after its run, or a run longer than MaxRun, is past what it can tell:
// the check is then lost, and the caller must find repeats otherwise
// (a sort). Memory: a bit per successor and one run.
type PairCheck struct {
	seen []uint64 // successors whose run began
	run  []Task   // predecessors of the current run so far
	cur  Task
	lost bool
}

// MaxRun is the longest run of one successor's distinct predecessors
// checked pairwise.
const MaxRun = 64

// Add reports whether (p, s) repeats an earlier pair. Once the check is
// lost (Lost) it reports false for every pair.
func (c *PairCheck) Add(p, s Task) bool {
	switch {
	case c.lost:
		return false
	case len(c.run) > 0 && s == c.cur:
		if slices.Contains(c.run, p) {
			return true
		}
		if len(c.run) >= MaxRun {
			c.lost = true
			return false
		}
	case s < 0:
		c.lost = true
		return false
	default:
		w := int(s / 64)
		if w >= len(c.seen) {
			c.seen = append(c.seen, make([]uint64, w+1-len(c.seen))...)
		}
		if c.seen[w]&(1<<(s%64)) != 0 {
			c.lost = true
			return false
		}
		c.seen[w] |= 1 << (s % 64)
		c.run, c.cur = c.run[:0], s
	}
	c.run = append(c.run, p)
	return false
}

// Lost reports whether the pairs went past what the check can tell.
func (c *PairCheck) Lost() bool { return c.lost }

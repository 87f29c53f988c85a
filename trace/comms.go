package trace

import "fmt"

// MaxRanks bounds the world size a header may claim: communicator runs are
// checked against it, so a corrupt size cannot make sums overflow.
const MaxRanks = 1 << 24

// commWire is a communicator as a comms frame holds it. Version 1 lists
// Members; version 2 writes the shorter of Members and Runs and leaves
// MPI_COMM_WORLD (id 0) without either: it is world ranks 0 … nranks−1.
type commWire struct {
	Index   int    `msgpack:"index"`
	ID      int64  `msgpack:"id"`
	Name    string `msgpack:"name"`
	Members []int  `msgpack:"members,omitempty"`
	Runs    []int  `msgpack:"runs,omitempty"`
}

type commsFrame struct {
	Comms []commWire `msgpack:"comms"`
}

// isWorld reports whether c is MPI_COMM_WORLD of an nranks world in rank order.
func (c *Communicator) isWorld(nranks int) bool {
	if c.ID != 0 || nranks <= 0 {
		return false
	}
	if c.Runs != nil {
		return len(c.Runs) == 3 && c.Runs[0] == 0 && c.Runs[1] == nranks && (c.Runs[2] == 1 || nranks == 1)
	}
	if len(c.Members) != nranks {
		return false
	}
	for i, m := range c.Members {
		if m != i {
			return false
		}
	}
	return true
}

// commToWire encodes c compactly for a file of an nranks world (as a member
// list for a version 1 file).
func commToWire(c *Communicator, nranks, version int) commWire {
	w := commWire{Index: c.Index, ID: c.ID, Name: c.Name}
	if version < 2 {
		w.Members = c.MemberList()
		return w
	}
	if c.isWorld(nranks) {
		return w
	}
	if c.Runs != nil { // compact already
		w.Runs = c.Runs
		return w
	}
	if runs := Compress(c.Members); len(runs) < len(c.Members) {
		w.Runs = runs
	} else {
		w.Members = c.Members
	}
	return w
}

// commFromWire decodes and checks one comms-frame entry against the world
// size of the file's header. Runs are checked run by run (every member a
// world rank, at most nranks members in all), so their in-memory form stays
// as small as the frame that holds them; member lists of version 1 are
// folded into runs when that is smaller.
func commFromWire(w *commWire, nranks int) (Communicator, error) {
	c := Communicator{Index: w.Index, ID: w.ID, Name: w.Name}
	switch {
	case len(w.Runs) > 0:
		if len(w.Runs)%3 != 0 {
			return c, fmt.Errorf("communicator %d: %d run values, not a multiple of 3", w.ID, len(w.Runs))
		}
		total := 0
		for k := 0; k < len(w.Runs); k += 3 {
			first, n, stride := w.Runs[k], w.Runs[k+1], w.Runs[k+2]
			if n < 1 || n > nranks || stride < -nranks || stride > nranks || first < 0 || first >= nranks {
				return c, fmt.Errorf("communicator %d: run %d (first %d, count %d, stride %d) outside the %d-rank world", w.ID, k/3, first, n, stride, nranks)
			}
			if last := int64(first) + int64(n-1)*int64(stride); last < 0 || last >= int64(nranks) {
				return c, fmt.Errorf("communicator %d: run %d ends at rank %d, outside the %d-rank world", w.ID, k/3, last, nranks)
			}
			total += n
			if total > nranks {
				return c, fmt.Errorf("communicator %d: more than %d members in a %d-rank world", w.ID, nranks, nranks)
			}
		}
		c.Runs = RankRuns(w.Runs)
	case len(w.Members) > 0:
		if runs := Compress(w.Members); len(runs) < len(w.Members) {
			c.Runs = runs
		} else {
			c.Members = w.Members
		}
	case w.ID == 0 && nranks > 0:
		c.Runs = RankRuns{0, nranks, 1} // MPI_COMM_WORLD, implicit
	}
	return c, nil
}

// MemberRange returns the list 0 … n−1 (MPI_COMM_WORLD's members).
func MemberRange(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

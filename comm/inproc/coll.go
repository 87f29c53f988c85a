package inproc

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/ptrace-dev/ptrace/comm"
)

// slot is the rendezvous of one collective call: every rank deposits its part
// into fields indexed by its own rank, the last to arrive completes the slot
// and marks it finished (world.finish), and then each rank picks up its
// result. One slot, and at most one channel, per collective, whatever the
// number of ranks.
type slot struct {
	name string  // e.g. "Bcast"; every rank must call the same
	root int     // -1 when the collective has none
	op   comm.Op // reductions only
	n    int     // reductions: vector length
	err  error   // set when the ranks' calls disagree

	arrived int
	closed  bool  // the last rank arrived, or stop failed it (under collMu)
	stopErr error // set by world.stop before it marks the slot finished
	// fin: complete (or failed), its results readable. When ranks poll
	// (world.spin), only a rank that must block makes done (under collMu),
	// which finish and stop then close: most collectives of a replay
	// complete while their waiters poll, and no channel is made or closed.
	// Otherwise every waiter blocks, on done made with the slot.
	fin  atomic.Bool
	done chan struct{}

	bcast []byte       // Bcast: root's buffer, copied
	bufs  [][]byte     // Gatherv: by source rank; Alltoallv: K×K, row = destination
	msgs  [][]comm.Msg // Exchange: by source rank as sent, then by destination as received
	at    []int32      // Exchange: the routing's counts, kept from slot to slot

	redIn  any // reductions: [][]T, each rank's input by reference
	redOut any // reductions: []T, the result

	want atomic.Bool  // Once: some rank wants its f run
	left atomic.Int32 // ranks done with the slot (release)
}

// takeSlot returns a slot for a new collective cl, a free one if any, with
// init run on it: the arrays every rank deposits into are made there, once,
// before any rank can deposit. Called with collMu locked.
func (w *world) takeSlot(cl call, init func(s *slot)) *slot {
	var s *slot
	if n := len(w.free); n > 0 {
		s, w.free = w.free[n-1], w.free[:n-1]
	} else {
		s = &slot{}
	}
	s.name, s.root, s.op, s.n = cl.name, cl.root, cl.op, cl.n
	if !w.spin {
		s.done = make(chan struct{})
	}
	if init != nil {
		init(s)
	}
	return s
}

// release is a rank's last use of s, after it read its result: the last of
// the ranks to release it puts it back for later collectives, without what
// it referenced (results handed out stay the callers'; only the slot's own
// arrays are reused).
func (c *rankComm) release(s *slot) {
	w := c.w
	if int(s.left.Add(1)) != w.size {
		return
	}
	msgs, at := s.msgs, s.at
	clear(msgs)
	*s = slot{msgs: msgs[:0], at: at}
	w.collMu.Lock()
	w.free = append(w.free, s)
	w.collMu.Unlock()
}

// call describes one rank's collective call.
type call struct {
	name string
	root int
	op   comm.Op
	n    int
}

// join enters this rank into its next collective: deposit writes the rank's
// part (without the slot lock, into fields no other rank writes), and the last
// rank to arrive runs complete before the others are released. join returns
// the completed slot, or the error every rank of a mismatched call gets.
//
// At most one collective is open (w.open): a rank enters collective seq+1
// only once every rank has arrived at seq, and the last to arrive closes
// it. A replay runs one collective a superstep, thousands: a field, where
// a map of open slots by sequence number cost a hash and a cache miss
// twice a rank and collective.
//
// A rank waits on its slot alone: an abort or a rank's exit finishes the
// open slot (world.stop) instead of every waiter also selecting on
// job-wide channels, which thousands of ranks would contend for.
func (c *rankComm) join(cl call, init, deposit, complete func(s *slot)) (*slot, error) {
	w := c.w
	seq := c.seq
	c.seq++

	w.collMu.Lock()
	if w.stopped {
		w.collMu.Unlock()
		return nil, w.stoppedErr(cl.name, seq)
	}
	s := w.open
	switch {
	case s == nil:
		s = w.takeSlot(cl, init)
		w.open, w.openSeq = s, seq
	case w.openSeq != seq:
		// Not possible by the argument above; failing every rank is better
		// than a hang should it ever be wrong.
		w.collMu.Unlock()
		w.abort(c.rank, fmt.Errorf("inproc: rank %d entered collective #%d while #%d was open", c.rank, seq, w.openSeq))
		return nil, w.cause
	case s.err == nil && (s.name != cl.name || s.root != cl.root || s.op != cl.op || s.n != cl.n):
		s.err = fmt.Errorf("inproc: collective #%d: rank %d called %s, another rank called %s: every rank must make the same collective calls in the same order",
			seq, c.rank, cl.describe(), call{s.name, s.root, s.op, s.n}.describe())
	}
	mismatch := s.err != nil
	w.collMu.Unlock()

	if !mismatch && deposit != nil {
		deposit(s)
	}

	w.collMu.Lock()
	s.arrived++
	last := s.arrived == w.size && !s.closed
	if last {
		w.open = nil
		s.closed = true
	}
	w.collMu.Unlock()
	if last {
		// Every deposit happened before its rank's second lock above, hence
		// before this point.
		if s.err == nil && complete != nil {
			complete(s)
		}
		w.finish(s)
	}

	w.wait(s)
	if w.isAborted() {
		return nil, w.cause
	}
	if s.stopErr != nil {
		return nil, s.stopErr
	}
	if s.err != nil {
		return nil, s.err
	}
	return s, nil
}

// stop fails every open collective and every later one: after an abort, or
// once a rank has returned (it will never arrive at a collective it has not
// completed). Called with collMu unlocked.
func (w *world) stop() {
	w.collMu.Lock()
	defer w.collMu.Unlock()
	if w.stopped {
		return
	}
	w.stopped = true
	if s := w.open; s != nil {
		w.open = nil
		s.stopErr = w.stoppedErr(s.name, w.openSeq)
		s.closed = true
		w.finishLocked(s)
	}
}

// finish marks s finished and wakes the ranks blocked on it.
func (w *world) finish(s *slot) {
	if !w.spin { // done was made with the slot, and no rank makes it later
		s.fin.Store(true)
		close(s.done)
		return
	}
	w.collMu.Lock()
	w.finishLocked(s)
	w.collMu.Unlock()
}

func (w *world) finishLocked(s *slot) {
	s.fin.Store(true)
	if s.done != nil {
		close(s.done)
	}
}

// stoppedErr is what a collective that can never complete returns.
func (w *world) stoppedErr(name string, seq uint64) error {
	if w.isAborted() {
		return w.cause
	}
	return fmt.Errorf("inproc: %s (collective #%d): rank %d returned without calling it", name, seq, w.firstExit)
}

func (cl call) describe() string {
	d := cl.name
	if cl.root >= 0 {
		d += fmt.Sprintf("(root %d)", cl.root)
	}
	if cl.n >= 0 {
		d += fmt.Sprintf("(%v over %d values)", cl.op, cl.n)
	}
	return d
}

func (c *rankComm) checkRoot(op string, root int) error {
	if root < 0 || root >= c.w.size {
		return fmt.Errorf("inproc: %s: root %d out of range [0,%d)", op, root, c.w.size)
	}
	return nil
}

func (c *rankComm) Barrier() error {
	s, err := c.join(call{name: "Barrier", root: -1, n: -1}, nil, nil, nil)
	if err == nil {
		c.release(s)
	}
	return err
}

func (c *rankComm) Bcast(root int, buf []byte) ([]byte, error) {
	if err := c.checkRoot("Bcast", root); err != nil {
		return nil, err
	}
	me := c.rank
	s, err := c.join(call{name: "Bcast", root: root, n: -1}, nil, func(s *slot) {
		if me == root {
			// One copy shared by all other ranks: root may reuse buf at once.
			s.bcast = bytes.Clone(buf)
		}
	}, nil)
	if err != nil {
		return nil, err
	}
	out := s.bcast
	c.release(s)
	if me == root {
		return buf, nil
	}
	return out, nil
}

func (c *rankComm) Gatherv(root int, buf []byte) ([][]byte, error) {
	if err := c.checkRoot("Gatherv", root); err != nil {
		return nil, err
	}
	k, me := c.w.size, c.rank
	s, err := c.join(call{name: "Gatherv", root: root, n: -1}, func(s *slot) {
		s.bufs = make([][]byte, k) // root's result: not reused
	}, func(s *slot) {
		s.bufs[me] = buf
	}, nil)
	if err != nil {
		return nil, err
	}
	out := s.bufs
	c.release(s)
	if me != root {
		return nil, nil
	}
	return out, nil
}

func (c *rankComm) Alltoallv(send [][]byte) ([][]byte, error) {
	k, me := c.w.size, c.rank
	if len(send) != k {
		return nil, fmt.Errorf("inproc: Alltoallv: %d send buffers for %d ranks", len(send), k)
	}
	for r, b := range send {
		if err := checkLen("Alltoallv", len(b)); err != nil {
			return nil, fmt.Errorf("%w (to rank %d)", err, r)
		}
	}
	s, err := c.join(call{name: "Alltoallv", root: -1, n: -1}, func(s *slot) {
		s.bufs = make([][]byte, k*k) // the rows are the results: not reused
	}, func(s *slot) {
		// Row r of the K×K table is rank r's result; each sender fills its
		// own column, so senders never touch the same element and the
		// caller's outer slice is not referenced after the call.
		for r, b := range send {
			s.bufs[r*k+me] = b
		}
	}, nil)
	if err != nil {
		return nil, err
	}
	out := s.bufs[me*k : (me+1)*k : (me+1)*k]
	c.release(s)
	return out, nil
}

func (c *rankComm) Exchange(send []comm.Msg) ([]comm.Msg, error) {
	k, me := c.w.size, c.rank
	if err := comm.CheckExchange(k, send); err != nil {
		return nil, fmt.Errorf("inproc: %w", err)
	}
	for _, m := range send {
		if err := checkLen("Exchange", len(m.Buf)); err != nil {
			return nil, fmt.Errorf("%w (to rank %d)", err, m.Peer)
		}
	}
	s, err := c.join(call{name: "Exchange", root: -1, n: -1}, func(s *slot) {
		s.msgs = slices.Grow(s.msgs[:0], k)[:k] // by source, then by destination: not handed out
	}, func(s *slot) {
		s.msgs[me] = send
	}, func(s *slot) {
		// The last rank routes every message: O(K + messages) once, into
		// one array grouped by destination (counted first), the sources in
		// rank order.
		s.at = slices.Grow(s.at[:0], k+1)[:k+1]
		at := s.at
		clear(at)
		for _, sent := range s.msgs {
			for _, m := range sent {
				if len(m.Buf) > 0 {
					at[m.Peer+1]++
				}
			}
		}
		for r := range k {
			at[r+1] += at[r]
		}
		flat := make([]comm.Msg, at[k])
		fill := at[:k:k]
		for src, sent := range s.msgs {
			for _, m := range sent {
				if len(m.Buf) > 0 {
					flat[fill[m.Peer]] = comm.Msg{Peer: src, Buf: m.Buf}
					fill[m.Peer]++
				}
			}
		}
		// fill[r] now ends rank r's messages, which begin where r−1's end.
		for r := range s.msgs {
			lo := int32(0)
			if r > 0 {
				lo = fill[r-1]
			}
			s.msgs[r] = flat[lo:fill[r]:fill[r]]
		}
	})
	if err != nil {
		return nil, err
	}
	out := s.msgs[me]
	c.release(s)
	return out, nil
}

// Once implements comm.SharedProcess: the last rank to arrive runs f when
// any rank wants it, and the others wait for it.
func (c *rankComm) Once(want bool, f func()) error {
	s, err := c.join(call{name: "Once", root: -1, n: -1}, nil, func(s *slot) {
		if want {
			s.want.Store(true)
		}
	}, func(s *slot) {
		if s.want.Load() {
			f()
		}
	})
	if err == nil {
		c.release(s)
	}
	return err
}

func (c *rankComm) AllreduceInt64(op comm.Op, vals []int64) ([]int64, error) {
	res, err := reduce(c, "AllreduceInt64", -1, op, vals)
	return slices.Clone(res), err // each rank owns its result
}

func (c *rankComm) AllreduceFloat64(op comm.Op, vals []float64) ([]float64, error) {
	res, err := reduce(c, "AllreduceFloat64", -1, op, vals)
	return slices.Clone(res), err
}

func (c *rankComm) ReduceInt64(root int, op comm.Op, vals []int64) ([]int64, error) {
	if err := c.checkRoot("ReduceInt64", root); err != nil {
		return nil, err
	}
	return reduce(c, "ReduceInt64", root, op, vals)
}

func (c *rankComm) ReduceFloat64(root int, op comm.Op, vals []float64) ([]float64, error) {
	if err := c.checkRoot("ReduceFloat64", root); err != nil {
		return nil, err
	}
	return reduce(c, "ReduceFloat64", root, op, vals)
}

// reduce runs a reduction and returns the result on every rank for root < 0,
// else on root only. Inputs are deposited by reference (every rank stays in
// the collective until the result is computed, so callers may reuse vals on
// return) and combined in rank order by the last rank to arrive, so a float64
// result depends only on the inputs, not on goroutine scheduling.
func reduce[T int64 | float64](c *rankComm, name string, root int, op comm.Op, vals []T) ([]T, error) {
	if op != comm.Sum && op != comm.Min && op != comm.Max {
		return nil, fmt.Errorf("inproc: %s: unknown reduction %v", name, op)
	}
	k, me := c.w.size, c.rank
	s, err := c.join(call{name: name, root: root, op: op, n: len(vals)}, func(s *slot) {
		s.redIn = make([][]T, k)
	}, func(s *slot) {
		s.redIn.([][]T)[me] = vals
	}, func(s *slot) {
		in := s.redIn.([][]T)
		res := make([]T, len(vals))
		copy(res, in[0])
		for _, v := range in[1:] {
			for i, x := range v {
				switch op {
				case comm.Sum:
					res[i] += x
				case comm.Min:
					res[i] = min(res[i], x)
				case comm.Max:
					res[i] = max(res[i], x)
				}
			}
		}
		s.redIn, s.redOut = nil, res
	})
	if err != nil {
		return nil, err
	}
	out := s.redOut.([]T)
	c.release(s)
	if root >= 0 && me != root {
		return nil, nil
	}
	return out, nil
}

// spinWait is how many times a rank polls a collective it is waiting for,
// yielding its processor between polls, before it blocks. Ranks are
// goroutines: one that blocks parks, and waking it when the last rank
// arrives costs its OS thread's wake-up (10 µs or more on a VM), on every
// superstep of a replay that crosses ranks thousands of times. Polling
// pays only while every rank has a processor (world.spin): with more
// ranks than processors the pollers would take turns with the ranks that
// still work.
const spinWait = 256

// wait returns once s is finished.
func (w *world) wait(s *slot) {
	if !w.spin {
		<-s.done
		return
	}
	for range spinWait {
		if s.fin.Load() {
			return
		}
		runtime.Gosched()
	}
	w.collMu.Lock()
	if s.fin.Load() {
		w.collMu.Unlock()
		return
	}
	if s.done == nil {
		s.done = make(chan struct{})
	}
	done := s.done
	w.collMu.Unlock()
	<-done
}

// Package inproc is the pure-Go backend of comm: it runs K virtual ranks as
// goroutines of one process and owns their message passing, collectives and
// job-wide abort.
//
// It is built to carry thousands of ranks: point-to-point messages go through
// one mailbox per destination rank, and each collective meets in a single
// rendezvous slot keyed by its call sequence number, so nothing allocates
// O(K²) channels. Payloads move by reference where the comm contract allows
// (Alltoallv, Gatherv) and are copied where the caller may reuse its buffer
// (Send, Isend, Bcast's root buffer).
//
// Send never waits for the receiver: messages are buffered without bound, as
// if MPI's eager limit were infinite.
package inproc

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/ptrace-dev/ptrace/comm"
)

// Run runs fn on k virtual ranks, each in its own goroutine, and returns once
// all of them have returned.
//
// If some rank's fn returns an error, panics or calls Abort, every rank's
// pending and later operations fail with a *comm.AbortError, and Run returns
// that first failure as a *comm.AbortError ("rank 3: <err>"), never the echo
// another rank returned after being aborted. A panic becomes an error carrying
// the panic value and stack.
func Run(k int, fn func(c comm.Comm) error) error {
	if k < 1 {
		return fmt.Errorf("inproc: Run: %d ranks, need at least 1", k)
	}
	w := newWorld(k)
	var wg sync.WaitGroup
	wg.Add(k)
	for r := range k {
		go func() {
			defer wg.Done()
			w.runRank(r, fn)
		}()
	}
	wg.Wait()
	if w.isAborted() {
		return w.cause
	}
	return nil
}

// world is the state the ranks of one Run share.
type world struct {
	size int
	// spin: every rank can have a processor of its own, so a rank waiting
	// for a collective polls before it blocks (coll.go, wait).
	spin bool

	abortOnce sync.Once
	aborted   chan struct{}    // closed on the first abort
	cause     *comm.AbortError // set before aborted is closed

	// exited[r] is closed when rank r's fn has returned: a receive from r
	// that has not matched by then never will. The first exit (firstExit)
	// stops the collectives: one still incomplete by then can never
	// complete. Both turn a would-be hang into an error.
	exited    []chan struct{}
	exitOnce  sync.Once
	firstExit int

	boxes []mailbox // indexed by destination rank

	collMu  sync.Mutex
	open    *slot  // the open collective, if any (coll.go, join)
	openSeq uint64 // its sequence number
	stopped bool   // no collective can complete any more (see stop)
	// free are slots every rank has left (release), for the next
	// collectives: a replay runs one per superstep, thousands, and their
	// slots were most of what the critical path allocated and dropped.
	free []*slot
}

func newWorld(k int) *world {
	w := &world{
		size:    k,
		spin:    k <= runtime.GOMAXPROCS(0),
		aborted: make(chan struct{}),
		exited:  make([]chan struct{}, k),
		boxes:   make([]mailbox, k),
	}
	for r := range w.exited {
		w.exited[r] = make(chan struct{})
	}
	return w
}

func (w *world) runRank(r int, fn func(c comm.Comm) error) {
	c := &rankComm{w: w, rank: r}
	returned := false
	defer func() {
		if !returned {
			// recover must be called here, directly in the deferred function.
			if p := recover(); p != nil {
				w.abort(r, fmt.Errorf("panic: %v\n%s", p, debug.Stack()))
			} else {
				w.abort(r, errors.New("rank goroutine ended by runtime.Goexit (t.FailNow or t.Fatal called from a rank?)"))
			}
		}
		// After abort, so that ranks woken by the exit see the cause first.
		close(w.exited[r])
		w.exitOnce.Do(func() {
			w.collMu.Lock()
			w.firstExit = r
			w.collMu.Unlock()
			w.stop()
		})
	}()
	err := fn(c)
	returned = true
	if err != nil {
		w.abort(r, err)
	}
}

// abort records the first failure and wakes every blocked operation. Later
// calls, including the echoes of aborted ranks, change nothing.
func (w *world) abort(rank int, err error) {
	w.abortOnce.Do(func() {
		if err == nil {
			err = errors.New("aborted")
		}
		// A rank may return another rank's failure it learnt collectively
		// (an agreed error): keep naming the rank that failed.
		var ae *comm.AbortError
		if errors.As(err, &ae) {
			w.cause = ae
		} else {
			w.cause = &comm.AbortError{Rank: rank, Err: err}
		}
		close(w.aborted)
		w.stop()
	})
}

func (w *world) isAborted() bool {
	select {
	case <-w.aborted:
		return true
	default:
		return false
	}
}

// rankComm is one rank's view of the world; it implements comm.Comm.
type rankComm struct {
	w    *world
	rank int
	seq  uint64 // sequence number of this rank's next collective
}

func (c *rankComm) Rank() int { return c.rank }
func (c *rankComm) Size() int { return c.w.size }

func (c *rankComm) Abort(err error) { c.w.abort(c.rank, err) }

// checkPeer validates a point-to-point rank and tag the way MPI would reject
// them, so that mistakes fail here as they would under mpi.
func (c *rankComm) checkPeer(op string, peer, tag int) error {
	if peer < 0 || peer >= c.w.size {
		return fmt.Errorf("inproc: %s: rank %d out of range [0,%d)", op, peer, c.w.size)
	}
	if tag < 0 || tag > comm.MaxTag {
		return fmt.Errorf("inproc: %s: tag %d out of range [0,%d]", op, tag, comm.MaxTag)
	}
	return nil
}

// checkLen keeps inproc's limits equal to those of mpi, whose counts are C ints.
func checkLen(op string, n int) error {
	if n > math.MaxInt32 {
		return fmt.Errorf("inproc: %s: %d bytes exceed the 2 GiB limit of one message", op, n)
	}
	return nil
}

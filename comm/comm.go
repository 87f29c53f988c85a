// Package comm is the communicator every distributed algorithm in ptrace uses.
//
// One interface, two backends: comm/inproc runs K virtual ranks as goroutines in
// one process (the default, no MPI needed), and comm/mpi binds the system MPI
// through cgo (build tag "mpi"). Analysis code sees only Comm; only cmd/ptrace
// picks a backend. Results must not depend on the backend.
//
// Semantics follow MPI: point-to-point messages between a pair of ranks with the
// same tag arrive in send order; collectives are matched in call order and every
// rank must call them in the same order. Reductions over float64 are for min/max
// or for values where summation order does not matter: sums that must be
// reproducible travel as int64.
package comm

import (
	"errors"
	"fmt"
)

// Op is a reduction operator.
type Op int

const (
	Sum Op = iota
	Min
	Max
)

func (o Op) String() string {
	switch o {
	case Sum:
		return "sum"
	case Min:
		return "min"
	case Max:
		return "max"
	}
	return fmt.Sprintf("op(%d)", int(o))
}

// MaxTag is the largest tag Send, Recv, Isend and Irecv accept: the upper
// bound every MPI implementation guarantees, so code that runs on inproc also
// runs on any MPI.
const MaxTag = 32767

// Comm is a communicator over Size ranks. A Comm is used by one goroutine.
//
// Buffer ownership: slices an operation returns belong to the caller, except
// Bcast's result, which is read-only. Slices passed to Alltoallv and Gatherv
// are handed over: inproc delivers them to the receiver without copying, so
// the caller must not modify them after the call (the outer send slice of
// Alltoallv may be reused). Zero-length messages may arrive as nil.
type Comm interface {
	Rank() int
	Size() int

	// Send delivers buf to rank dst with tag in [0, MaxTag]. The caller may
	// reuse buf on return. Like MPI_Send, Send may wait until dst posts a
	// matching receive (mpi does for large messages; inproc never waits), so
	// two ranks must not Send to each other first: use Isend or Irecv.
	Send(dst, tag int, buf []byte) error
	// Recv returns the next message from rank src with tag.
	Recv(src, tag int) ([]byte, error)
	// Isend and Irecv start non-blocking operations; complete them with Wait,
	// which every Request needs. Isend's buf must not be modified until Wait
	// returns. Receives from one (src, tag) are matched in the order they
	// were posted.
	Isend(dst, tag int, buf []byte) Request
	Irecv(src, tag int) Request

	// Alltoallv sends send[r] to rank r and returns what every rank sent to this
	// one, indexed by source rank. len(send) must equal Size(). The send[r]
	// are handed over (see Comm).
	Alltoallv(send [][]byte) ([][]byte, error)
	// Exchange is a sparse Alltoallv: every rank passes the messages it
	// sends, at most one per destination, and gets those sent to it,
	// ordered by source rank (Msg.Peer is the destination in send, the
	// source in the result). Empty messages are not delivered. Buffers are
	// handed over as in Alltoallv. On inproc its cost is O(messages) plus
	// one rendezvous, not the K² buffer headers of Alltoallv, which makes
	// it the collective for the many supersteps of a replay.
	Exchange(send []Msg) ([]Msg, error)
	// Gatherv collects buf from every rank at root, indexed by rank; other ranks
	// get nil. buf is handed over (see Comm).
	Gatherv(root int, buf []byte) ([][]byte, error)
	// Bcast returns root's buf on every rank; buf is ignored on the others.
	// Root gets buf itself back and may keep using it; the other ranks must
	// treat the result as read-only (inproc hands them all one shared copy).
	Bcast(root int, buf []byte) ([]byte, error)

	// Allreduce combines vals element-wise over all ranks; every rank gets the
	// result in a new slice. All ranks pass slices of the same length.
	AllreduceInt64(op Op, vals []int64) ([]int64, error)
	AllreduceFloat64(op Op, vals []float64) ([]float64, error)
	// Reduce is Allreduce whose result only root receives (others get nil).
	ReduceInt64(root int, op Op, vals []int64) ([]int64, error)
	ReduceFloat64(root int, op Op, vals []float64) ([]float64, error)

	Barrier() error

	// Abort ends the whole job because of err on this rank: every rank's pending
	// and later operations fail with an *AbortError carrying err (inproc), or the
	// MPI job is aborted after err is printed (mpi).
	Abort(err error)
}

// SharedProcess is implemented by a Comm whose ranks share one OS process
// (inproc). Once is a collective: every rank calls it at the same point,
// and when any of them wants, f runs once, on the last rank to arrive,
// before any returns. Work that is the process's rather than the rank's
// (a garbage collection, returning free pages to the system) then runs
// once instead of once per rank.
type SharedProcess interface {
	Once(want bool, f func()) error
}

// PerProcess runs f once for the OS process when want (on a SharedProcess
// Comm: when any of its ranks wants, every rank calling PerProcess at the
// same point); on other Comms each rank is its own process and runs f
// where it wants, without communicating.
func PerProcess(c Comm, want bool, f func()) error {
	if s, ok := c.(SharedProcess); ok {
		return s.Once(want, f)
	}
	if want {
		f()
	}
	return nil
}

// Node is implemented by a Comm whose ranks are OS processes that may
// share a machine (mpi). NodeSum is a collective: every rank gets the sum
// of v over the ranks on its own node (those that share its memory), so a
// node's processes can divide what is the node's (its memory, its cores)
// among those that need it, without a table of every rank.
type Node interface {
	NodeSum(v int64) (int64, error)
}

// Msg is one message of Exchange.
type Msg struct {
	Peer int // destination when sent, source when received
	Buf  []byte
}

// CheckExchange validates Exchange's send list for a communicator of size
// ranks: peers in range, none twice.
func CheckExchange(size int, send []Msg) error {
	seen := make(map[int]bool, len(send))
	for _, m := range send {
		if m.Peer < 0 || m.Peer >= size {
			return fmt.Errorf("Exchange: destination %d out of range [0,%d)", m.Peer, size)
		}
		if seen[m.Peer] {
			return fmt.Errorf("Exchange: two messages to rank %d", m.Peer)
		}
		seen[m.Peer] = true
	}
	return nil
}

// Request is a pending non-blocking operation.
type Request interface {
	// Wait blocks until the operation completes; for a receive it returns the
	// message. Calling Wait again returns the same result.
	Wait() ([]byte, error)
}

// AbortError is what operations return on every rank once some rank aborted.
type AbortError struct {
	Rank int   // the rank that called Abort
	Err  error // its reason
}

func (e *AbortError) Error() string { return fmt.Sprintf("rank %d: %v", e.Rank, e.Err) }
func (e *AbortError) Unwrap() error { return e.Err }

// Cause returns the original error when err is (or wraps) an AbortError raised
// by another rank, so callers report the failing rank's message, not the echo.
func Cause(err error) error {
	var ae *AbortError
	if errors.As(err, &ae) {
		return ae
	}
	return err
}

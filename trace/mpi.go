package trace

import "fmt"

// CollOp identifies an MPI collective in coll_begin/coll_end events. The
// numbers are part of the format.
type CollOp int64

const (
	CollBarrier CollOp = iota + 1
	CollBcast
	CollReduce
	CollAllreduce
	CollGather
	CollGatherv
	CollScatter
	CollScatterv
	CollAllgather
	CollAllgatherv
	CollAlltoall
	CollAlltoallv
	CollReduceScatter
	CollScan
	CollExscan
	CollReduceScatterBlock
	CollAlltoallw
	// One-sided synchronisation that is collective over a window's group
	// (all-to-all, as a barrier): a member's coll_begin/coll_end name the
	// window's own communicator entry, not the one it was made on (see
	// IsWindow).
	CollWinFence  // MPI_Win_fence
	CollWinCreate // MPI_Win_create, _allocate, _allocate_shared, _create_dynamic
	CollWinFree   // MPI_Win_free
	NumCollOps    = iota + 1
)

// IsWindow reports whether o synchronises an MPI window's group. Such a
// collective is recorded on a communicator entry of its own per window (the
// window's members, an id they agree on): MPI orders the collective calls
// on a window alike on every member, but not against those on another
// window or on the communicator the window was made on, so each window
// numbers its instances apart. Like a barrier it moves no data of its own
// and synchronises every member.
func (o CollOp) IsWindow() bool { return o >= CollWinFence && o <= CollWinFree }

// CollClass is the happened-before shape of a collective: who must have
// entered before whom can leave.
type CollClass int

const (
	OneToAll CollClass = iota + 1 // every exit after the root's enter
	AllToOne                      // the root's exit after every other enter
	AllToAll                      // every exit after every enter
	Prefix                        // each exit after the enters of the members before it (MPI_Scan: and its own)
)

// Rooted reports whether a collective of class c has a root.
func (c CollClass) Rooted() bool { return c == OneToAll || c == AllToOne }

// Payload bits of a coll_begin (CollPayload): whether its member sends and
// receives data in the call. A collective without payload synchronizes
// nobody.
const (
	CollSends    = 1 << iota // coll_begin's sent bytes > 0
	CollReceives             // coll_begin's received bytes > 0
)

// CollPayload returns the payload bits of coll_begin e.
func CollPayload(e *Event) uint8 {
	var p uint8
	if e.Args[3] > 0 {
		p |= CollSends
	}
	if e.Args[4] > 0 {
		p |= CollReceives
	}
	return p
}

var collNames = [...]string{"", "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Gatherv",
	"MPI_Scatter", "MPI_Scatterv", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv",
	"MPI_Reduce_scatter", "MPI_Scan", "MPI_Exscan", "MPI_Reduce_scatter_block", "MPI_Alltoallw",
	"MPI_Win_fence", "MPI_Win_create", "MPI_Win_free"}

func (o CollOp) String() string {
	if o > 0 && int(o) < len(collNames) {
		return collNames[o]
	}
	return fmt.Sprintf("coll(%d)", int64(o))
}

// Valid reports whether o is a known collective.
func (o CollOp) Valid() bool { return o > 0 && int(o) < len(collNames) }

// Class returns the collective's happened-before shape. A scan's member
// needs the data of the members before it only: Open MPI's MPI_Scan and
// MPI_Exscan let rank 0 leave before the last rank enters, which the
// all-to-all shape made a clock violation (ParRes Kernels' PIC).
func (o CollOp) Class() CollClass {
	switch o {
	case CollBcast, CollScatter, CollScatterv:
		return OneToAll
	case CollReduce, CollGather, CollGatherv:
		return AllToOne
	case CollScan, CollExscan:
		return Prefix
	}
	return AllToAll
}

// Reserved message tags (MPI tags are ≥ 0 and −1 is "any" in a post, so
// no program's message has a negative one). −2 and −3 are a blocking and
// a nonblocking neighbourhood collective's messages; TagWinPost and
// TagWinComplete are general active target synchronisation's (MPI_Win_post,
// _start, _complete, _wait): a target's MPI_Win_post sends one to each
// origin of its group, received in the origin's MPI_Win_start; an origin's
// MPI_Win_complete sends one to each target of its start group, received
// in the target's MPI_Win_wait (or the MPI_Win_test that ends the epoch).
// All are on the window's own communicator entry.
const (
	TagWinPost     = -4
	TagWinComplete = -5
)

// Lock types of rma_lock (the numbers are part of the format; MPI's own
// constants differ between implementations).
const (
	LockExclusive = 1 // MPI_LOCK_EXCLUSIVE
	LockShared    = 2 // MPI_LOCK_SHARED, and MPI_Win_lock_all's
	LockNoCheck   = 3 // MPI_MODE_NOCHECK asserted: no lock is taken
)

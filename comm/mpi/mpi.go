//go:build mpi

package mpi

/*
// The hot calls neither call back into Go nor keep the pointers they get, so
// their pointer arguments (out-parameters, buffers) need not escape to the
// heap: one allocation less per message.
#cgo noescape p_send
#cgo nocallback p_send
#cgo noescape p_recv
#cgo nocallback p_recv
#cgo noescape p_try_recv
#cgo nocallback p_try_recv
#cgo noescape p_test
#cgo nocallback p_test
#cgo noescape p_wait
#cgo nocallback p_wait
#include <mpi.h>
#include <sched.h>
#include <stdint.h>

// MPI handles (MPI_COMM_WORLD, MPI_BYTE, MPI_SUM, ...) are macros over link-time
// objects in Open MPI; these wrappers keep them on the C side.

enum { P_SUM, P_MIN, P_MAX };
enum { P_I64, P_F64 };

static MPI_Op p_op(int op) {
	switch (op) {
	case P_MIN: return MPI_MIN;
	case P_MAX: return MPI_MAX;
	}
	return MPI_SUM;
}

static MPI_Datatype p_type(int t) { return t == P_F64 ? MPI_DOUBLE : MPI_INT64_T; }

static int p_init(int *provided) { return MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided); }
static int p_initialized(void) { int f = 0; MPI_Initialized(&f); return f; }
static int p_finalized(void) { int f = 0; MPI_Finalized(&f); return f; }
static int p_world_rank(void) { int r = -1; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
static int p_world_size(void) { int n = 0; MPI_Comm_size(MPI_COMM_WORLD, &n); return n; }
static void p_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

// p_dup_world gives ptrace two communicators of its own, so its messages
// never match another library's: c for messages and first fragments, bulk for
// the rest of long messages. Errors return instead of killing the job.
static int p_dup_world(MPI_Comm *c, MPI_Comm *bulk, int *rank, int *size) {
	int rc = MPI_Comm_dup(MPI_COMM_WORLD, c);
	if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(*c, MPI_ERRORS_RETURN);
	if (rc == MPI_SUCCESS) rc = MPI_Comm_dup(*c, bulk);
	if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(*c, rank);
	if (rc == MPI_SUCCESS) rc = MPI_Comm_size(*c, size);
	return rc;
}

// p_node_sum sums v over the ranks of c that share this rank's node
// (MPI_COMM_TYPE_SHARED, MPI-3: Open MPI and MPICH alike) on a
// communicator of their own, freed before it returns.
static int p_node_sum(MPI_Comm c, int64_t v, int64_t *sum) {
	MPI_Comm node;
	int rc = MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
	if (rc == MPI_SUCCESS) rc = MPI_Allreduce(&v, sum, 1, MPI_INT64_T, MPI_SUM, node);
	int frc = MPI_Comm_free(&node);
	return rc != MPI_SUCCESS ? rc : frc;
}

static int p_send(MPI_Comm c, const void *buf, int n, int dst, int tag) {
	return MPI_Send(buf, n, MPI_BYTE, dst, tag, c);
}

static int p_isend(MPI_Comm c, const void *buf, int n, int dst, int tag, MPI_Request *req) {
	return MPI_Isend(buf, n, MPI_BYTE, dst, tag, c, req);
}

// p_recv receives at most cap bytes and sets *count to the message's size.
static int p_recv(MPI_Comm c, void *buf, int cap, int src, int tag, int *count) {
	MPI_Status st;
	int rc = MPI_Recv(buf, cap, MPI_BYTE, src, tag, c, &st);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Get_count(&st, MPI_BYTE, count);
}

// p_try_recv is p_recv that returns *found = 0 at once when no message is
// there (a matched probe, so the message it sees is the one it receives).
static int p_try_recv(MPI_Comm c, void *buf, int cap, int src, int tag, int *found, int *count) {
	MPI_Status st;
	MPI_Message msg;
	int rc = MPI_Improbe(src, tag, c, found, &msg, &st);
	if (rc != MPI_SUCCESS || !*found) return rc;
	rc = MPI_Get_count(&st, MPI_BYTE, count);
	if (rc != MPI_SUCCESS) return rc;
	if (*count > cap) return MPI_ERR_TRUNCATE;
	return MPI_Mrecv(buf, *count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
}

static int p_wait(MPI_Request *req) { return MPI_Wait(req, MPI_STATUS_IGNORE); }
static int p_test(MPI_Request *req, int *flag) { return MPI_Test(req, flag, MPI_STATUS_IGNORE); }
static void p_yield(void) { sched_yield(); }

// Collectives always use the non-blocking variants: MPI does not match a
// blocking collective with a non-blocking one, and whether a rank must poll
// (see Communicator) is its own business. With out == NULL the call waits
// here; otherwise the request is returned for the caller to complete.

static int p_finish(int rc, MPI_Request *r, MPI_Request *out) {
	if (rc != MPI_SUCCESS) return rc;
	if (out) {
		*out = *r;
		return MPI_SUCCESS;
	}
	return MPI_Wait(r, MPI_STATUS_IGNORE);
}

static int p_barrier(MPI_Comm c, MPI_Request *out) {
	MPI_Request r;
	return p_finish(MPI_Ibarrier(c, &r), &r, out);
}

static int p_bcast(MPI_Comm c, void *buf, int n, int root, MPI_Request *out) {
	MPI_Request r;
	return p_finish(MPI_Ibcast(buf, n, MPI_BYTE, root, c, &r), &r, out);
}

static int p_allgather_i64(MPI_Comm c, const int64_t *v, int64_t *all, MPI_Request *out) {
	MPI_Request r;
	return p_finish(MPI_Iallgather(v, 1, MPI_INT64_T, all, 1, MPI_INT64_T, c, &r), &r, out);
}

static int p_alltoall_i64(MPI_Comm c, const int64_t *send, int64_t *recv, MPI_Request *out) {
	MPI_Request r;
	return p_finish(MPI_Ialltoall(send, 1, MPI_INT64_T, recv, 1, MPI_INT64_T, c, &r), &r, out);
}

static int p_allreduce(MPI_Comm c, const void *in, void *res, int n, int type, int op, MPI_Request *out) {
	MPI_Request r;
	return p_finish(MPI_Iallreduce(in, res, n, p_type(type), p_op(op), c, &r), &r, out);
}

static int p_reduce(MPI_Comm c, const void *in, void *res, int n, int type, int op, int root, MPI_Request *out) {
	MPI_Request r;
	return p_finish(MPI_Ireduce(in, res, n, p_type(type), p_op(op), root, c, &r), &r, out);
}

static int p_gatherv(MPI_Comm c, const void *sbuf, int scount, void *rbuf, const int *rcounts,
                     const int *displs, int root, MPI_Request *out) {
	MPI_Request r;
	return p_finish(MPI_Igatherv(sbuf, scount, MPI_BYTE, rbuf, rcounts, displs, MPI_BYTE, root, c, &r), &r, out);
}

static int p_alltoallv(MPI_Comm c, const void *sbuf, const int *scounts, const int *sdispls,
                       void *rbuf, const int *rcounts, const int *rdispls, MPI_Request *out) {
	MPI_Request r;
	return p_finish(MPI_Ialltoallv(sbuf, scounts, sdispls, MPI_BYTE, rbuf, rcounts, rdispls, MPI_BYTE, c, &r), &r, out);
}
*/
import "C"

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"unsafe"

	"github.com/ptrace-dev/ptrace/comm"
)

const (
	// defaultChunk bounds the bytes of one MPI call, whose counts and
	// displacements are C ints: larger transfers go in several rounds.
	defaultChunk = 1 << 30
	// fragSize splits messages in two classes. Shorter ones travel as one
	// MPI message that the receiver takes with a single MPI_Recv into a
	// buffer of fragSize bytes: comm's receives do not know the size in
	// advance, and probing first (MPI_Mprobe) costs more than the rest of a
	// small-message receive. Longer ones send a first fragment of exactly
	// fragSize bytes (the total length, then the first bytes) and the rest
	// on the bulk communicator, where the receiver now posts a receive of
	// the right size. fragSize stays under the eager limit of Open MPI's
	// shared-memory transport (4 KiB with headers).
	fragSize = 4000
	lenSize  = 8 // the length prefix of a first fragment
)

// Start initializes MPI and returns the communicator of all ranks of the job
// (a duplicate of MPI_COMM_WORLD, so that ptrace's messages stay apart from
// any other library's). Call Stop when done.
func Start() (comm.Comm, error) {
	if C.p_finalized() != 0 {
		return nil, errors.New("mpi: Start: MPI was stopped and cannot be restarted")
	}
	if C.p_initialized() != 0 {
		return nil, errors.New("mpi: Start: MPI is already started")
	}
	// MPI_Init_thread's thread is "the main thread" for MPI; stay on it
	// until we know whether other threads may call MPI.
	runtime.LockOSThread()
	var provided C.int
	if rc := C.p_init(&provided); rc != C.MPI_SUCCESS {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("mpi: MPI_Init_thread failed with error code %d", int(rc))
	}
	if provided >= C.MPI_THREAD_SERIALIZED {
		runtime.UnlockOSThread()
	} // else this goroutine stays locked and must make every call (see package doc)
	c := &Communicator{
		maxChunk: defaultChunk,
		pending:  make(map[key][]*recvReq),
		rbuf:     make([]byte, fragSize),
		sbuf:     make([]byte, fragSize),
	}
	var rank, size C.int
	if rc := C.p_dup_world(&c.comm, &c.bulk, &rank, &size); rc != C.MPI_SUCCESS {
		return nil, mpiError(rc, "duplicating MPI_COMM_WORLD")
	}
	c.rank, c.size = int(rank), int(size)
	return c, nil
}

// Stop shuts MPI down (MPI_Finalize). Every Request must have been waited for.
func Stop() error {
	if C.p_initialized() == 0 || C.p_finalized() != 0 {
		return nil
	}
	if rc := C.MPI_Finalize(); rc != C.MPI_SUCCESS {
		return mpiError(rc, "MPI_Finalize")
	}
	return nil
}

// WorldRank returns this process's rank in MPI_COMM_WORLD (between Start and
// Stop).
func WorldRank() int { return int(C.p_world_rank()) }

// WorldSize returns the number of processes in MPI_COMM_WORLD (between Start
// and Stop).
func WorldSize() int { return int(C.p_world_size()) }

// key identifies a stream of point-to-point messages.
type key struct{ src, tag int }

// Communicator implements comm.Comm over MPI.
//
// Receives are matched lazily: Irecv only queues a request, and the message
// is taken when it is waited for, because comm's receives do not know the
// message size in advance (see fragSize for how the size is learnt). To keep
// MPI's progress guarantee, whenever receives are pending every blocking
// operation polls them (non-blocking MPI calls plus MPI_Improbe): a rank that
// posted an Irecv and then waits in Send or in a collective still accepts the
// message its peer is blocked sending. With nothing pending, operations are
// single blocking MPI calls.
type Communicator struct {
	comm, bulk C.MPI_Comm
	rank, size int
	maxChunk   int64              // bytes per collective call; tests lower it to exercise the rounds
	pending    map[key][]*recvReq // posted receives not yet matched, in posting order
	rbuf       []byte             // receives short messages and first fragments
	sbuf       []byte             // builds the first fragment of a blocking Send
}

func (c *Communicator) Rank() int { return c.rank }
func (c *Communicator) Size() int { return c.size }

// Abort prints err with this rank and aborts the whole MPI job; it does not
// return.
func (c *Communicator) Abort(err error) {
	if err == nil {
		err = errors.New("aborted")
	}
	fmt.Fprintf(os.Stderr, "ptrace: rank %d: %v\n", c.rank, err)
	C.p_abort(1)
	os.Exit(1) // MPI_Abort does not return; should it, still end this rank
}

func mpiError(rc C.int, what string) error {
	var buf [C.MPI_MAX_ERROR_STRING]C.char
	var n C.int
	if C.MPI_Error_string(rc, &buf[0], &n) != C.MPI_SUCCESS {
		return fmt.Errorf("mpi: %s: MPI error code %d", what, int(rc))
	}
	return fmt.Errorf("mpi: %s: %s", what, C.GoStringN(&buf[0], n))
}

// ptr returns the address of b's data for C, or nil for an empty slice.
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

func (c *Communicator) checkPeer(op string, peer, tag int, n int) error {
	if peer < 0 || peer >= c.size {
		return fmt.Errorf("mpi: %s: rank %d out of range [0,%d)", op, peer, c.size)
	}
	if tag < 0 || tag > comm.MaxTag {
		return fmt.Errorf("mpi: %s: tag %d out of range [0,%d]", op, tag, comm.MaxTag)
	}
	if n > math.MaxInt32 {
		return fmt.Errorf("mpi: %s: %d bytes exceed the 2 GiB limit of one message", op, n)
	}
	return nil
}

func (c *Communicator) checkRoot(op string, root int) error {
	if root < 0 || root >= c.size {
		return fmt.Errorf("mpi: %s: root %d out of range [0,%d)", op, root, c.size)
	}
	return nil
}

// ---- point-to-point ----

// firstFragment fills frag (fragSize bytes) with the length of buf and its
// first bytes, and returns the rest of buf.
func firstFragment(frag, buf []byte) (rest []byte) {
	binary.LittleEndian.PutUint64(frag, uint64(len(buf)))
	n := copy(frag[lenSize:], buf)
	return buf[n:]
}

func (c *Communicator) Send(dst, tag int, buf []byte) error {
	if err := c.checkPeer("Send", dst, tag, len(buf)); err != nil {
		return err
	}
	if len(c.pending) > 0 {
		// Keep serving the posted receives while this send waits.
		_, err := c.Isend(dst, tag, buf).Wait()
		return err
	}
	// Blocking calls may take Go memory: C does not keep the pointer.
	what := "Send"
	if len(buf) < fragSize {
		if rc := C.p_send(c.comm, ptr(buf), C.int(len(buf)), C.int(dst), C.int(tag)); rc != C.MPI_SUCCESS {
			return mpiError(rc, fmt.Sprintf("%s to rank %d", what, dst))
		}
		return nil
	}
	rest := firstFragment(c.sbuf, buf)
	if rc := C.p_send(c.comm, ptr(c.sbuf), fragSize, C.int(dst), C.int(tag)); rc != C.MPI_SUCCESS {
		return mpiError(rc, fmt.Sprintf("%s to rank %d", what, dst))
	}
	if rc := C.p_send(c.bulk, ptr(rest), C.int(len(rest)), C.int(dst), C.int(tag)); rc != C.MPI_SUCCESS {
		return mpiError(rc, fmt.Sprintf("%s to rank %d", what, dst))
	}
	return nil
}

func (c *Communicator) Isend(dst, tag int, buf []byte) comm.Request {
	if err := c.checkPeer("Isend", dst, tag, len(buf)); err != nil {
		return &doneReq{err: err}
	}
	// The requests live in their own allocation: cgo's pointer check looks
	// at the whole object a pointer points into, and sendReq holds Go
	// pointers.
	s := &sendReq{c: c, dst: dst, reqs: new([2]C.MPI_Request)}
	// MPI holds on to the buffers until the sends complete: the cgo rules
	// allow that only for pinned memory.
	first, rest := buf, []byte(nil)
	if len(buf) >= fragSize {
		first = make([]byte, fragSize)
		rest = firstFragment(first, buf)
	}
	for _, b := range [][]byte{first, rest} {
		if len(b) > 0 {
			s.pin.Pin(&b[0])
		}
	}
	if rc := C.p_isend(c.comm, ptr(first), C.int(len(first)), C.int(dst), C.int(tag), &s.reqs[0]); rc != C.MPI_SUCCESS {
		s.pin.Unpin()
		return &doneReq{err: mpiError(rc, fmt.Sprintf("Isend to rank %d", dst))}
	}
	s.n = 1
	if len(buf) >= fragSize {
		// Should this fail, Wait reports it once the first fragment is out.
		if rc := C.p_isend(c.bulk, ptr(rest), C.int(len(rest)), C.int(dst), C.int(tag), &s.reqs[1]); rc != C.MPI_SUCCESS {
			s.err = mpiError(rc, fmt.Sprintf("Isend to rank %d", dst))
		} else {
			s.n = 2
		}
	}
	return s
}

func (c *Communicator) Recv(src, tag int) ([]byte, error) {
	if err := c.checkPeer("Recv", src, tag, 0); err != nil {
		return nil, err
	}
	if len(c.pending) == 0 {
		return c.recv(key{src, tag})
	}
	return c.Irecv(src, tag).Wait()
}

func (c *Communicator) Irecv(src, tag int) comm.Request {
	if err := c.checkPeer("Irecv", src, tag, 0); err != nil {
		return &doneReq{err: err}
	}
	r := &recvReq{c: c, k: key{src, tag}}
	c.pending[r.k] = append(c.pending[r.k], r)
	return r
}

// recv waits for the next message of stream k.
func (c *Communicator) recv(k key) ([]byte, error) {
	var count C.int
	if rc := C.p_recv(c.comm, ptr(c.rbuf), fragSize, C.int(k.src), C.int(k.tag), &count); rc != C.MPI_SUCCESS {
		return nil, mpiError(rc, fmt.Sprintf("receive from rank %d tag %d", k.src, k.tag))
	}
	return c.assemble(k, int(count))
}

// tryRecv is recv that returns ok == false at once when no message is there.
func (c *Communicator) tryRecv(k key) (data []byte, ok bool, err error) {
	var found, count C.int
	if rc := C.p_try_recv(c.comm, ptr(c.rbuf), fragSize, C.int(k.src), C.int(k.tag), &found, &count); rc != C.MPI_SUCCESS {
		return nil, true, mpiError(rc, fmt.Sprintf("receive from rank %d tag %d", k.src, k.tag))
	}
	if found == 0 {
		return nil, false, nil
	}
	data, err = c.assemble(k, int(count))
	return data, true, err
}

// assemble returns the message whose first n bytes are in rbuf, receiving the
// rest of a long message from the bulk communicator.
func (c *Communicator) assemble(k key, n int) ([]byte, error) {
	if n < fragSize {
		return bytes.Clone(c.rbuf[:n]), nil
	}
	total := binary.LittleEndian.Uint64(c.rbuf)
	if total < fragSize || total > math.MaxInt32 {
		return nil, fmt.Errorf("mpi: receive from rank %d tag %d: bad first fragment (length %d)", k.src, k.tag, total)
	}
	data := make([]byte, total)
	rest := data[copy(data, c.rbuf[lenSize:]):]
	var count C.int
	if rc := C.p_recv(c.bulk, ptr(rest), C.int(len(rest)), C.int(k.src), C.int(k.tag), &count); rc != C.MPI_SUCCESS {
		return nil, mpiError(rc, fmt.Sprintf("receive from rank %d tag %d", k.src, k.tag))
	}
	if int(count) != len(rest) {
		return nil, fmt.Errorf("mpi: receive from rank %d tag %d: got %d of %d bytes", k.src, k.tag, len(data)-len(rest)+int(count), total)
	}
	return data, nil
}

// complete gives the oldest pending receive of k its message.
func (c *Communicator) complete(k key, data []byte, err error) {
	q := c.pending[k]
	q[0].done, q[0].data, q[0].err = true, data, err
	q[0] = nil
	if len(q) == 1 {
		delete(c.pending, k)
	} else {
		c.pending[k] = q[1:]
	}
}

// progress matches every pending receive whose message has arrived and
// reports whether any did.
func (c *Communicator) progress() bool {
	moved := false
	for k := range c.pending {
		for len(c.pending[k]) > 0 {
			data, ok, err := c.tryRecv(k)
			if !ok {
				break
			}
			c.complete(k, data, err)
			moved = true
		}
	}
	return moved
}

// await completes a started non-blocking operation, serving pending receives
// meanwhile.
func (c *Communicator) await(req *C.MPI_Request, what string) error {
	for len(c.pending) > 0 {
		var flag C.int
		if rc := C.p_test(req, &flag); rc != C.MPI_SUCCESS {
			return mpiError(rc, what)
		}
		if flag != 0 {
			return nil
		}
		if !c.progress() {
			C.p_yield() // ranks may outnumber cores
		}
	}
	if rc := C.p_wait(req); rc != C.MPI_SUCCESS {
		return mpiError(rc, what)
	}
	return nil
}

// doneReq is a request that completed (or failed) when it was started.
type doneReq struct {
	data []byte
	err  error
}

func (r *doneReq) Wait() ([]byte, error) { return r.data, r.err }

type sendReq struct {
	c    *Communicator
	dst  int
	reqs *[2]C.MPI_Request // first fragment, rest
	n    int               // requests in use
	pin  runtime.Pinner
	done bool
	err  error
}

func (s *sendReq) Wait() ([]byte, error) {
	if !s.done {
		for i := range s.n {
			if err := s.c.await(&s.reqs[i], fmt.Sprintf("Isend to rank %d", s.dst)); err != nil && s.err == nil {
				s.err = err
			}
		}
		s.pin.Unpin()
		s.done = true
	}
	return nil, s.err
}

type recvReq struct {
	c    *Communicator
	k    key
	done bool
	data []byte
	err  error
}

func (r *recvReq) Wait() ([]byte, error) {
	c := r.c
	for !r.done {
		if len(c.pending) == 1 {
			// Only r's stream is pending: block on its oldest receive, which
			// is r or one posted before it.
			data, err := c.recv(r.k)
			c.complete(r.k, data, err)
			continue
		}
		if !c.progress() {
			C.p_yield()
		}
	}
	return r.data, r.err
}

// ---- collectives ----

// collective runs one MPI collective. With no receive pending, start(nil)
// runs it to completion in one cgo call. Otherwise start(req) only starts it
// and await completes it while serving the receives; MPI then keeps using the
// Go buffers bufs after the cgo call, so they are pinned until it completes.
func (c *Communicator) collective(what string, start func(req *C.MPI_Request) C.int, bufs ...unsafe.Pointer) error {
	if len(c.pending) == 0 {
		if rc := start(nil); rc != C.MPI_SUCCESS {
			return mpiError(rc, what)
		}
		return nil
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	for _, b := range bufs {
		if b != nil {
			pin.Pin(b)
		}
	}
	req := new(C.MPI_Request)
	if rc := start(req); rc != C.MPI_SUCCESS {
		return mpiError(rc, what)
	}
	return c.await(req, what)
}

// NodeSum returns the sum of v over the ranks on this rank's node
// (comm.Node). Collective over every rank; no receive may be pending (it
// is one blocking call, which does not poll them).
func (c *Communicator) NodeSum(v int64) (int64, error) {
	var sum C.int64_t
	if rc := C.p_node_sum(c.comm, C.int64_t(v), &sum); rc != C.MPI_SUCCESS {
		return 0, mpiError(rc, "NodeSum")
	}
	return int64(sum), nil
}

func (c *Communicator) Barrier() error {
	return c.collective("Barrier", func(req *C.MPI_Request) C.int { return C.p_barrier(c.comm, req) })
}

func (c *Communicator) Bcast(root int, buf []byte) ([]byte, error) {
	if err := c.checkRoot("Bcast", root); err != nil {
		return nil, err
	}
	n := new(int64)
	if c.rank == root {
		*n = int64(len(buf))
	}
	if err := c.collective("Bcast (size)", func(req *C.MPI_Request) C.int {
		return C.p_bcast(c.comm, unsafe.Pointer(n), 8, C.int(root), req)
	}, unsafe.Pointer(n)); err != nil {
		return nil, err
	}
	if c.rank != root {
		buf = make([]byte, *n)
	}
	for off := int64(0); off < *n; off += c.maxChunk {
		part := buf[off:min(*n, off+c.maxChunk)]
		if err := c.collective("Bcast", func(req *C.MPI_Request) C.int {
			return C.p_bcast(c.comm, ptr(part), C.int(len(part)), C.int(root), req)
		}, ptr(part)); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// rounds returns how many MPI calls move need bytes, and the share of a
// stream of n bytes in round k: streams are cut into rounds equal pieces, so
// no call moves more than maxChunk bytes plus one per stream.
func (c *Communicator) rounds(need int64) int64 {
	return max(1, (need+c.maxChunk-1)/c.maxChunk)
}

func piece(n, rounds, k int64) (lo, hi int64) {
	size := (n + rounds - 1) / rounds
	lo = min(n, k*size)
	return lo, min(n, lo+size)
}

func offsets(counts []int64) (offs []int64, total int64) {
	offs = make([]int64, len(counts))
	for i, n := range counts {
		offs[i] = total
		total += n
	}
	return offs, total
}

// The Go counts and displacements handed to MPI: C ints.
func cints(n int) []C.int { return make([]C.int, n) }

func (c *Communicator) Gatherv(root int, buf []byte) ([][]byte, error) {
	if err := c.checkRoot("Gatherv", root); err != nil {
		return nil, err
	}
	// Every rank learns every count, so all agree on the number of rounds.
	mine := new(int64)
	*mine = int64(len(buf))
	counts := make([]int64, c.size)
	if err := c.collective("Gatherv (sizes)", func(req *C.MPI_Request) C.int {
		return C.p_allgather_i64(c.comm, (*C.int64_t)(unsafe.Pointer(mine)), (*C.int64_t)(unsafe.Pointer(&counts[0])), req)
	}, unsafe.Pointer(mine), unsafe.Pointer(&counts[0])); err != nil {
		return nil, err
	}
	offs, total := offsets(counts)
	rounds := c.rounds(total)
	isRoot := c.rank == root
	var out, stage []byte
	var rcounts, displs []C.int
	if isRoot {
		out = make([]byte, total)
		rcounts, displs = cints(c.size), cints(c.size)
	}
	for k := range rounds {
		lo, hi := piece(int64(len(buf)), rounds, k)
		send := buf[lo:hi]
		recv := out
		if isRoot {
			var at int64
			for s, n := range counts {
				plo, phi := piece(n, rounds, k)
				rcounts[s] = C.int(phi - plo)
				if rounds == 1 {
					displs[s] = C.int(offs[s])
				} else {
					displs[s] = C.int(at)
				}
				at += phi - plo
			}
			if rounds > 1 {
				if int64(len(stage)) < at {
					stage = make([]byte, at)
				}
				recv = stage[:at]
			}
		}
		if err := c.collective("Gatherv", func(req *C.MPI_Request) C.int {
			return C.p_gatherv(c.comm, ptr(send), C.int(len(send)), ptr(recv), cptr(rcounts), cptr(displs), C.int(root), req)
		}, ptr(send), ptr(recv), cpin(rcounts), cpin(displs)); err != nil {
			return nil, err
		}
		if isRoot && rounds > 1 {
			for s, n := range counts {
				plo, phi := piece(n, rounds, k)
				copy(out[offs[s]+plo:offs[s]+phi], stage[displs[s]:int64(displs[s])+phi-plo])
			}
		}
	}
	if !isRoot {
		return nil, nil
	}
	return split(out, offs, counts), nil
}

func cptr(v []C.int) *C.int {
	if len(v) == 0 {
		return nil
	}
	return &v[0]
}

func cpin(v []C.int) unsafe.Pointer {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Pointer(&v[0])
}

// split cuts buf into the messages of each rank, capped so that appending to
// one cannot overwrite the next.
func split(buf []byte, offs, counts []int64) [][]byte {
	res := make([][]byte, len(counts))
	for s, n := range counts {
		res[s] = buf[offs[s] : offs[s]+n : offs[s]+n]
	}
	return res
}

func (c *Communicator) Alltoallv(send [][]byte) ([][]byte, error) {
	if len(send) != c.size {
		return nil, fmt.Errorf("mpi: Alltoallv: %d send buffers for %d ranks", len(send), c.size)
	}
	scounts := make([]int64, c.size)
	for r, b := range send {
		scounts[r] = int64(len(b))
	}
	rcounts := make([]int64, c.size)
	if err := c.collective("Alltoallv (sizes)", func(req *C.MPI_Request) C.int {
		return C.p_alltoall_i64(c.comm, (*C.int64_t)(unsafe.Pointer(&scounts[0])), (*C.int64_t)(unsafe.Pointer(&rcounts[0])), req)
	}, unsafe.Pointer(&scounts[0]), unsafe.Pointer(&rcounts[0])); err != nil {
		return nil, err
	}
	_, stotal := offsets(scounts)
	roffs, rtotal := offsets(rcounts)
	// MPI's counts and displacements are C ints: every rank must agree on
	// how many rounds keep each call under maxChunk bytes, so the largest
	// need (bytes sent or received by one rank) is agreed on first.
	need, err := c.AllreduceInt64(comm.Max, []int64{max(stotal, rtotal)})
	if err != nil {
		return nil, err
	}
	rounds := c.rounds(need[0])
	out := make([]byte, rtotal)
	var sstage, rstage []byte
	sc, sd, rc, rd := cints(c.size), cints(c.size), cints(c.size), cints(c.size)
	for k := range rounds {
		// Pack this round's pieces contiguously: MPI wants one send buffer.
		var sat, rat int64
		for r, n := range scounts {
			lo, hi := piece(n, rounds, k)
			sc[r], sd[r] = C.int(hi-lo), C.int(sat)
			sat += hi - lo
		}
		for s, n := range rcounts {
			lo, hi := piece(n, rounds, k)
			rc[s] = C.int(hi - lo)
			if rounds == 1 {
				rd[s] = C.int(roffs[s])
			} else {
				rd[s] = C.int(rat)
			}
			rat += hi - lo
		}
		if int64(len(sstage)) < sat {
			sstage = make([]byte, sat)
		}
		for r, b := range send {
			lo, hi := piece(scounts[r], rounds, k)
			copy(sstage[sd[r]:], b[lo:hi])
		}
		recv := out
		if rounds > 1 {
			if int64(len(rstage)) < rat {
				rstage = make([]byte, rat)
			}
			recv = rstage[:rat]
		}
		sbuf := sstage[:sat]
		if err := c.collective("Alltoallv", func(req *C.MPI_Request) C.int {
			return C.p_alltoallv(c.comm, ptr(sbuf), &sc[0], &sd[0], ptr(recv), &rc[0], &rd[0], req)
		}, ptr(sbuf), ptr(recv), cpin(sc), cpin(sd), cpin(rc), cpin(rd)); err != nil {
			return nil, err
		}
		if rounds > 1 {
			for s, n := range rcounts {
				lo, hi := piece(n, rounds, k)
				copy(out[roffs[s]+lo:roffs[s]+hi], rstage[rd[s]:int64(rd[s])+hi-lo])
			}
		}
	}
	return split(out, roffs, rcounts), nil
}

// Exchange sends through Alltoallv: MPI's cost for a sparse pattern is
// O(ranks) per rank either way, and Alltoallv already handles any size.
func (c *Communicator) Exchange(send []comm.Msg) ([]comm.Msg, error) {
	if err := comm.CheckExchange(c.size, send); err != nil {
		return nil, fmt.Errorf("mpi: %w", err)
	}
	bufs := make([][]byte, c.size)
	for _, m := range send {
		bufs[m.Peer] = m.Buf
	}
	recv, err := c.Alltoallv(bufs)
	if err != nil {
		return nil, err
	}
	var out []comm.Msg
	for q, b := range recv {
		if len(b) > 0 {
			out = append(out, comm.Msg{Peer: q, Buf: b})
		}
	}
	return out, nil
}

// ---- reductions ----

func cop(op comm.Op) (C.int, error) {
	switch op {
	case comm.Sum:
		return C.P_SUM, nil
	case comm.Min:
		return C.P_MIN, nil
	case comm.Max:
		return C.P_MAX, nil
	}
	return 0, fmt.Errorf("unknown reduction %v", op)
}

func ctype[T int64 | float64]() C.int {
	var z T
	if _, ok := any(z).(float64); ok {
		return C.P_F64
	}
	return C.P_I64
}

// reduce runs MPI_Allreduce (root < 0) or MPI_Reduce. Ranks must pass equal
// lengths, as MPI requires; a mismatch is not detected.
func reduce[T int64 | float64](c *Communicator, what string, root int, op comm.Op, vals []T) ([]T, error) {
	o, err := cop(op)
	if err != nil {
		return nil, fmt.Errorf("mpi: %s: %w", what, err)
	}
	if len(vals) > math.MaxInt32 {
		return nil, fmt.Errorf("mpi: %s: %d values exceed MPI's int count", what, len(vals))
	}
	var out []T
	if root < 0 || c.rank == root {
		out = make([]T, len(vals))
	}
	if len(vals) == 0 {
		return out, nil // all ranks pass the same length, so all skip the call
	}
	in := unsafe.Pointer(&vals[0])
	var res unsafe.Pointer
	if out != nil {
		res = unsafe.Pointer(&out[0])
	}
	t := ctype[T]()
	err = c.collective(what, func(req *C.MPI_Request) C.int {
		if root < 0 {
			return C.p_allreduce(c.comm, in, res, C.int(len(vals)), t, o, req)
		}
		return C.p_reduce(c.comm, in, res, C.int(len(vals)), t, o, C.int(root), req)
	}, in, res)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *Communicator) AllreduceInt64(op comm.Op, vals []int64) ([]int64, error) {
	return reduce(c, "AllreduceInt64", -1, op, vals)
}

func (c *Communicator) AllreduceFloat64(op comm.Op, vals []float64) ([]float64, error) {
	return reduce(c, "AllreduceFloat64", -1, op, vals)
}

func (c *Communicator) ReduceInt64(root int, op comm.Op, vals []int64) ([]int64, error) {
	if err := c.checkRoot("ReduceInt64", root); err != nil {
		return nil, err // before reduce, where a negative root means Allreduce
	}
	return reduce(c, "ReduceInt64", root, op, vals)
}

func (c *Communicator) ReduceFloat64(root int, op comm.Op, vals []float64) ([]float64, error) {
	if err := c.checkRoot("ReduceFloat64", root); err != nil {
		return nil, err
	}
	return reduce(c, "ReduceFloat64", root, op, vals)
}

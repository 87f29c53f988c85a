package commtest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ptrace-dev/ptrace/comm"
)

// Tags are distinct per case, so a message a broken backend misdelivers shows
// up as a failure of the case that sent it rather than of a later one.
const (
	tagRing = 100 + iota
	tagPairs
	tagSizes
	tagFIFO
	tagA
	tagB
	tagIrecv
	tagIrecvSend
	tagAcross
	tagBad
)

// payload returns n bytes that identify (a, b, n) so a misrouted or truncated
// message cannot pass for the right one.
func payload(a, b, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(a*131 + b*71 + i*7 + i>>8)
	}
	return p
}

func checkMsg(c comm.Comm, what string, got, want []byte) error {
	if !bytes.Equal(got, want) {
		return fmt.Errorf("rank %d: %s: got %d bytes %s, want %d bytes %s", c.Rank(), what, len(got), head(got), len(want), head(want))
	}
	return nil
}

func head(b []byte) string {
	if len(b) > 16 {
		return fmt.Sprintf("%x…", b[:16])
	}
	return fmt.Sprintf("%x", b)
}

func waitAll(c comm.Comm, reqs []comm.Request) error {
	for i, r := range reqs {
		if _, err := r.Wait(); err != nil {
			return fmt.Errorf("rank %d: request %d: %w", c.Rank(), i, err)
		}
	}
	return nil
}

func rankSize(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	if n < 1 || me < 0 || me >= n {
		return fmt.Errorf("rank %d of size %d", me, n)
	}
	got, err := c.AllreduceInt64(comm.Sum, []int64{1, int64(me)})
	if err != nil {
		return err
	}
	if want := []int64{int64(n), int64(n * (n - 1) / 2)}; !slices.Equal(got, want) {
		return fmt.Errorf("rank %d: sum of (1, rank) = %v, want %v: ranks are not 0..%d", me, got, want, n-1)
	}
	all, err := c.Gatherv(0, []byte{byte(me), byte(me >> 8)})
	if err != nil {
		return err
	}
	if me == 0 {
		for r, b := range all {
			if len(b) != 2 || int(b[0])|int(b[1])<<8 != r%65536 {
				return fmt.Errorf("rank 0: slot %d of Gatherv holds %x: ranks are not distinct", r, b)
			}
		}
	}
	return nil
}

// ring passes a small and a large message around the ring; the large one is
// past every MPI eager limit.
func ring(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	next, prev := (me+1)%n, (me+n-1)%n
	for _, size := range []int{13, 300 << 10} {
		if n > 64 && size > 1024 {
			continue // keep thousands of in-process ranks cheap
		}
		s := c.Isend(next, tagRing, payload(me, next, size))
		got, err := c.Recv(prev, tagRing)
		if err != nil {
			return err
		}
		if _, err := s.Wait(); err != nil {
			return err
		}
		if err := checkMsg(c, fmt.Sprintf("ring message from %d", prev), got, payload(prev, me, size)); err != nil {
			return err
		}
	}
	return nil
}

// sendRecvPairs uses blocking Send/Recv in the safe order: in each pair
// (2i, 2i+1) the even rank sends first. An odd rank out talks to itself with
// Isend, as a blocking self-send may wait forever under MPI.
func sendRecvPairs(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	for _, size := range []int{0, 8, 1 << 20} {
		switch {
		case me%2 == 0 && me+1 < n:
			if err := c.Send(me+1, tagPairs, payload(me, me+1, size)); err != nil {
				return err
			}
			got, err := c.Recv(me+1, tagPairs)
			if err != nil {
				return err
			}
			if err := checkMsg(c, "pair reply", got, payload(me+1, me, size)); err != nil {
				return err
			}
		case me%2 == 1:
			got, err := c.Recv(me-1, tagPairs)
			if err != nil {
				return err
			}
			if err := checkMsg(c, "pair message", got, payload(me-1, me, size)); err != nil {
				return err
			}
			if err := c.Send(me-1, tagPairs, payload(me, me-1, size)); err != nil {
				return err
			}
		default:
			s := c.Isend(me, tagPairs, payload(me, me, size))
			got, err := c.Recv(me, tagPairs)
			if err != nil {
				return err
			}
			if _, err := s.Wait(); err != nil {
				return err
			}
			if err := checkMsg(c, "self message", got, payload(me, me, size)); err != nil {
				return err
			}
		}
	}
	return nil
}

// messageSizes sends sizes around the usual eager limits and protocol
// switches of MPI transports and of comm/mpi, blocking and non-blocking, each
// rank to the next.
func messageSizes(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	next, prev := (me+1)%n, (me+n-1)%n
	sizes := []int{0, 1, 7, 8, 9, 3991, 3992, 3999, 4000, 4001, 4007, 4008, 4009, 4095, 4096, 4097, 12 << 10, 64<<10 - 1, 64 << 10, 64<<10 + 1}
	var reqs []comm.Request
	for _, size := range sizes {
		reqs = append(reqs, c.Isend(next, tagSizes, payload(me, size, size)))
	}
	var recvs []comm.Request
	for range sizes {
		recvs = append(recvs, c.Irecv(prev, tagSizes))
	}
	for i, size := range sizes {
		got, err := recvs[i].Wait()
		if err != nil {
			return err
		}
		if err := checkMsg(c, fmt.Sprintf("Irecv of %d bytes", size), got, payload(prev, size, size)); err != nil {
			return err
		}
	}
	if err := waitAll(c, reqs); err != nil {
		return err
	}
	// Blocking, in the safe order: rank 0 receives last.
	for _, size := range sizes {
		if me != 0 {
			got, err := c.Recv(prev, tagSizes)
			if err != nil {
				return err
			}
			if err := checkMsg(c, fmt.Sprintf("Recv of %d bytes", size), got, payload(prev, size, size)); err != nil {
				return err
			}
		}
		if n > 1 || me != 0 {
			if err := c.Send(next, tagSizes, payload(me, size, size)); err != nil {
				return err
			}
		}
		if me == 0 && n > 1 {
			got, err := c.Recv(prev, tagSizes)
			if err != nil {
				return err
			}
			if err := checkMsg(c, fmt.Sprintf("Recv of %d bytes", size), got, payload(prev, size, size)); err != nil {
				return err
			}
		}
	}
	return nil
}

// fifo sends a stream of numbered messages of mixed sizes (eager and
// rendezvous under MPI) and checks they arrive in order.
func fifo(c comm.Comm) error {
	const count = 64
	n, me := c.Size(), c.Rank()
	next, prev := (me+1)%n, (me+n-1)%n
	sizeOf := func(i int) int {
		if i%16 == 5 {
			return 100 << 10
		}
		return 1 + i%9
	}
	var reqs []comm.Request
	for i := range count {
		msg := payload(me, i, sizeOf(i))
		msg[0] = byte(i)
		reqs = append(reqs, c.Isend(next, tagFIFO, msg))
	}
	for i := range count {
		got, err := c.Recv(prev, tagFIFO)
		if err != nil {
			return err
		}
		if len(got) > 0 && int(got[0]) != i {
			return fmt.Errorf("rank %d: message %d from %d arrived as number %d: order lost", me, i, prev, got[0])
		}
		want := payload(prev, i, sizeOf(i))
		want[0] = byte(i)
		if err := checkMsg(c, fmt.Sprintf("message %d from %d", i, prev), got, want); err != nil {
			return err
		}
	}
	return waitAll(c, reqs)
}

// tags interleaves two tags and receives them in the other order: each tag is
// its own FIFO stream.
func tags(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	next, prev := (me+1)%n, (me+n-1)%n
	var reqs []comm.Request
	for i := range 3 {
		reqs = append(reqs, c.Isend(next, tagA, fmt.Appendf(nil, "a%d from %d", i, me)))
		reqs = append(reqs, c.Isend(next, tagB, fmt.Appendf(nil, "b%d from %d", i, me)))
	}
	reqs = append(reqs, c.Isend(next, 0, []byte("tag 0")), c.Isend(next, comm.MaxTag, []byte("max tag")))
	from := func(f string, i int) string { return fmt.Sprintf(f+" from %d", i, prev) }
	for _, rc := range []struct {
		tag  int
		want string
	}{
		{comm.MaxTag, "max tag"},
		{tagB, from("b%d", 0)}, {tagB, from("b%d", 1)}, {tagB, from("b%d", 2)},
		{tagA, from("a%d", 0)}, {tagA, from("a%d", 1)},
		{0, "tag 0"},
		{tagA, from("a%d", 2)},
	} {
		got, err := c.Recv(prev, rc.tag)
		if err != nil {
			return err
		}
		if string(got) != rc.want {
			return fmt.Errorf("rank %d: tag %d from %d: got %q, want %q", me, rc.tag, prev, got, rc.want)
		}
	}
	return waitAll(c, reqs)
}

// isendIrecv posts two receives from every rank before anything is sent and
// waits for them in reverse order: receives from one source and tag match in
// posting order, whatever the order of Wait.
func isendIrecv(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	first := make([]comm.Request, n)
	second := make([]comm.Request, n)
	for src := range n {
		first[src] = c.Irecv(src, tagIrecv)
		second[src] = c.Irecv(src, tagIrecv)
	}
	var sends []comm.Request
	for dst := range n {
		sends = append(sends, c.Isend(dst, tagIrecv, payload(me, dst, 5)))
		sends = append(sends, c.Isend(dst, tagIrecv, payload(dst, me, 70<<10)))
	}
	for src := n - 1; src >= 0; src-- {
		got, err := second[src].Wait()
		if err != nil {
			return err
		}
		if err := checkMsg(c, fmt.Sprintf("second Irecv from %d", src), got, payload(me, src, 70<<10)); err != nil {
			return err
		}
		again, err := second[src].Wait()
		if err != nil || !bytes.Equal(again, got) {
			return fmt.Errorf("rank %d: second Wait on a receive returned %d bytes, %v; want the same message again", me, len(again), err)
		}
		got, err = first[src].Wait()
		if err != nil {
			return err
		}
		if err := checkMsg(c, fmt.Sprintf("first Irecv from %d", src), got, payload(src, me, 5)); err != nil {
			return err
		}
	}
	return waitAll(c, sends)
}

// irecvThenSend is the classic safe exchange: post the receive, then a
// blocking Send of a message past every eager limit, then wait. It hangs if
// posted receives do not really accept messages before Wait.
func irecvThenSend(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	next, prev := (me+1)%n, (me+n-1)%n
	const size = 1 << 20
	r := c.Irecv(prev, tagIrecvSend)
	if err := c.Send(next, tagIrecvSend, payload(me, next, size)); err != nil {
		return err
	}
	got, err := r.Wait()
	if err != nil {
		return err
	}
	return checkMsg(c, "exchange", got, payload(prev, me, size))
}

// p2pAcrossCollectives sends before collectives and receives after them:
// collectives must neither consume nor reorder point-to-point messages, and a
// pending receive must not stall them.
func p2pAcrossCollectives(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	next, prev := (me+1)%n, (me+n-1)%n
	r := c.Irecv(prev, tagAcross)
	s := c.Isend(next, tagAcross, payload(me, 1, 200<<10))
	s2 := c.Isend(next, tagAcross, payload(me, 2, 3))
	if err := c.Barrier(); err != nil {
		return err
	}
	if _, err := c.Alltoallv(make([][]byte, n)); err != nil {
		return err
	}
	sum, err := c.AllreduceInt64(comm.Sum, []int64{1})
	if err != nil {
		return err
	}
	if sum[0] != int64(n) {
		return fmt.Errorf("rank %d: Allreduce with receives pending = %d, want %d", me, sum[0], n)
	}
	got, err := r.Wait()
	if err != nil {
		return err
	}
	if err := checkMsg(c, "message sent before the collectives", got, payload(prev, 1, 200<<10)); err != nil {
		return err
	}
	got, err = c.Recv(prev, tagAcross)
	if err != nil {
		return err
	}
	if err := checkMsg(c, "second message", got, payload(prev, 2, 3)); err != nil {
		return err
	}
	return waitAll(c, []comm.Request{s, s2})
}

// a2aSize is the uneven size rank s sends to rank r; about one pair in eleven
// sends nothing.
func a2aSize(s, r int) int { return (s*7 + r*3) % 11 * 37 }

func checkAlltoallv(c comm.Comm, got [][]byte, size func(s, r int) int) error {
	n, me := c.Size(), c.Rank()
	if len(got) != n {
		return fmt.Errorf("rank %d: Alltoallv returned %d buffers, want %d", me, len(got), n)
	}
	for s, b := range got {
		n := size(s, me)
		if n == 0 && len(b) == 0 {
			continue // the common case at thousands of ranks: skip allocating
		}
		if err := checkMsg(c, fmt.Sprintf("Alltoallv from %d", s), b, payload(s, me, n)); err != nil {
			return err
		}
	}
	return nil
}

func alltoallvUneven(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	send := make([][]byte, n)
	for r := range send {
		send[r] = payload(me, r, a2aSize(me, r))
		if len(send[r]) == 0 && r%2 == 0 {
			send[r] = nil // nil and empty both mean "nothing"
		}
	}
	got, err := c.Alltoallv(send)
	if err != nil {
		return err
	}
	clear(send) // the outer slice is the caller's again
	if err := checkAlltoallv(c, got, a2aSize); err != nil {
		return err
	}
	// A second round reuses nothing from the first.
	for r := range send {
		send[r] = payload(me, r, a2aSize(r, me))
	}
	got, err = c.Alltoallv(send)
	if err != nil {
		return err
	}
	return checkAlltoallv(c, got, func(s, r int) int { return a2aSize(r, s) })
}

func alltoallvEmpty(c comm.Comm) error {
	for _, mk := range []func() []byte{func() []byte { return nil }, func() []byte { return []byte{} }} {
		send := make([][]byte, c.Size())
		for r := range send {
			send[r] = mk()
		}
		got, err := c.Alltoallv(send)
		if err != nil {
			return err
		}
		if err := checkAlltoallv(c, got, func(int, int) int { return 0 }); err != nil {
			return err
		}
	}
	return nil
}

func alltoallvLarge(c comm.Comm) error {
	size := func(s, r int) int { return 64<<10 + s*1000 + r }
	send := make([][]byte, c.Size())
	for r := range send {
		send[r] = payload(c.Rank(), r, size(c.Rank(), r))
	}
	got, err := c.Alltoallv(send)
	if err != nil {
		return err
	}
	return checkAlltoallv(c, got, size)
}

// alltoallvSparse has each rank send to three others (and itself), the rest
// empty, so it stays cheap at thousands of ranks yet checks every slot.
func alltoallvSparse(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	targets := func(s int) [4]int { return [4]int{s, (s + 1) % n, (s + n/2) % n, (s*3 + 1) % n} }
	size := func(s, r int) int {
		t := targets(s)
		if slices.Contains(t[:], r) {
			return 1 + (s+r)%5
		}
		return 0
	}
	send := make([][]byte, n)
	for _, r := range targets(me) {
		send[r] = payload(me, r, size(me, r))
	}
	got, err := c.Alltoallv(send)
	if err != nil {
		return err
	}
	return checkAlltoallv(c, got, size)
}

func gatherv(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	for _, root := range slices.Compact([]int{0, n - 1, n / 2}) {
		got, err := c.Gatherv(root, payload(me, root, 3*me))
		if err != nil {
			return err
		}
		if me != root {
			if got != nil {
				return fmt.Errorf("rank %d: Gatherv at root %d gave a non-root %d buffers, want nil", me, root, len(got))
			}
			continue
		}
		if len(got) != n {
			return fmt.Errorf("rank %d: Gatherv returned %d buffers, want %d", me, len(got), n)
		}
		for s, b := range got {
			if err := checkMsg(c, fmt.Sprintf("Gatherv from %d", s), b, payload(s, root, 3*s)); err != nil {
				return err
			}
		}
	}
	return nil
}

func bcast(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	for _, root := range slices.Compact([]int{0, n - 1, n / 2}) {
		for _, size := range []int{0, 1, 300 << 10} {
			var buf []byte
			if me == root {
				buf = payload(root, size, size)
			} else {
				buf = []byte("ignored on non-roots")
			}
			got, err := c.Bcast(root, buf)
			if err != nil {
				return err
			}
			if err := checkMsg(c, fmt.Sprintf("Bcast from %d", root), got, payload(root, size, size)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ops are the reductions every backend must support.
func ops() []comm.Op { return []comm.Op{comm.Sum, comm.Min, comm.Max} }

// Reduction inputs: of both signs, distinct per rank so that a missing or
// doubled rank shows, and dyadic so that float64 sums are exact in any order
// (MPI may combine in a tree).
func intVals(r int) []int64 {
	return []int64{int64(r), -int64(r * r), 1<<40 + int64(r)*3, 7, int64(-r) * (1 << 33)}
}

func floatVals(r int) []float64 {
	return []float64{float64(r) + 0.5, -2.25 * float64(r), math.Ldexp(float64(r%2), 900), -7, float64(r*r) / 4}
}

func combine[T int64 | float64](op comm.Op, n int, vals func(int) []T) []T {
	res := slices.Clone(vals(0))
	for r := 1; r < n; r++ {
		for i, x := range vals(r) {
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
	return res
}

func allreduceInt64(c comm.Comm) error {
	for _, op := range ops() {
		in := intVals(c.Rank())
		got, err := c.AllreduceInt64(op, in)
		if err != nil {
			return err
		}
		if want := combine(op, c.Size(), intVals); !slices.Equal(got, want) {
			return fmt.Errorf("rank %d: AllreduceInt64 %v = %v, want %v", c.Rank(), op, got, want)
		}
		if !slices.Equal(in, intVals(c.Rank())) {
			return fmt.Errorf("rank %d: AllreduceInt64 %v modified its input", c.Rank(), op)
		}
		got[0]++ // the result is the caller's to modify
	}
	got, err := c.AllreduceInt64(comm.Sum, nil)
	if err != nil || len(got) != 0 {
		return fmt.Errorf("rank %d: AllreduceInt64 of no values = %v, %v; want empty", c.Rank(), got, err)
	}
	return nil
}

func allreduceFloat64(c comm.Comm) error {
	for _, op := range ops() {
		got, err := c.AllreduceFloat64(op, floatVals(c.Rank()))
		if err != nil {
			return err
		}
		if want := combine(op, c.Size(), floatVals); !slices.Equal(got, want) {
			return fmt.Errorf("rank %d: AllreduceFloat64 %v = %v, want %v", c.Rank(), op, got, want)
		}
	}
	got, err := c.AllreduceFloat64(comm.Max, []float64{math.Inf(-1), float64(c.Rank())})
	if err != nil {
		return err
	}
	if !math.IsInf(got[0], -1) || got[1] != float64(c.Size()-1) {
		return fmt.Errorf("rank %d: AllreduceFloat64 max with -Inf = %v", c.Rank(), got)
	}
	return nil
}

func reduceInt64(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	for _, root := range slices.Compact([]int{0, n - 1}) {
		for _, op := range ops() {
			got, err := c.ReduceInt64(root, op, intVals(me))
			if err != nil {
				return err
			}
			if me != root {
				if got != nil {
					return fmt.Errorf("rank %d: ReduceInt64 at root %d gave a non-root %v, want nil", me, root, got)
				}
				continue
			}
			if want := combine(op, n, intVals); !slices.Equal(got, want) {
				return fmt.Errorf("rank %d: ReduceInt64 %v = %v, want %v", me, op, got, want)
			}
		}
	}
	return nil
}

func reduceFloat64(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	for _, root := range slices.Compact([]int{0, n - 1}) {
		for _, op := range ops() {
			got, err := c.ReduceFloat64(root, op, floatVals(me))
			if err != nil {
				return err
			}
			if me != root {
				if got != nil {
					return fmt.Errorf("rank %d: ReduceFloat64 at root %d gave a non-root %v, want nil", me, root, got)
				}
				continue
			}
			if want := combine(op, n, floatVals); !slices.Equal(got, want) {
				return fmt.Errorf("rank %d: ReduceFloat64 %v = %v, want %v", me, op, got, want)
			}
		}
	}
	return nil
}

// barrier interleaves barriers with reductions: they must keep matching in
// call order. (That no rank leaves a barrier early cannot be observed across
// processes without timing; inproc checks it with shared memory.)
func barrier(c comm.Comm) error {
	for i := range 20 {
		if err := c.Barrier(); err != nil {
			return err
		}
		got, err := c.AllreduceInt64(comm.Sum, []int64{int64(i)})
		if err != nil {
			return err
		}
		if got[0] != int64(i*c.Size()) {
			return fmt.Errorf("rank %d: round %d: sum after barrier = %d, want %d", c.Rank(), i, got[0], i*c.Size())
		}
	}
	return nil
}

// badArguments checks that invalid ranks, tags and roots are errors (not
// aborts or crashes) and leave the communicator usable. Every rank makes the
// same bad calls, so no collective is left half-joined.
func badArguments(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	var ae *comm.AbortError
	check := func(what string, err error) error {
		if err == nil {
			return fmt.Errorf("rank %d: %s succeeded, want an error", me, what)
		}
		if errors.As(err, &ae) {
			return fmt.Errorf("rank %d: %s: %v is an abort, want a plain error", me, what, err)
		}
		return nil
	}
	recvErr := func(src, tag int) error { _, err := c.Recv(src, tag); return err }
	waitErr := func(r comm.Request) error { _, err := r.Wait(); return err }
	collErr := func(f func() error) error { return f() }
	for _, tc := range []struct {
		what string
		err  error
	}{
		{"Send to rank -1", c.Send(-1, tagBad, nil)},
		{"Send to rank Size", c.Send(n, tagBad, nil)},
		{"Send with tag -1", c.Send(me, -1, nil)},
		{"Send with tag MaxTag+1", c.Send(me, comm.MaxTag+1, nil)},
		{"Recv from rank Size", recvErr(n, tagBad)},
		{"Recv with tag -1", recvErr(me, -1)},
		{"Isend to rank Size", waitErr(c.Isend(n, tagBad, nil))},
		{"Irecv from rank -1", waitErr(c.Irecv(-1, tagBad))},
		{"Alltoallv with Size+1 buffers", collErr(func() error { _, err := c.Alltoallv(make([][]byte, n+1)); return err })},
		{"Exchange to rank Size", collErr(func() error { _, err := c.Exchange([]comm.Msg{{Peer: n, Buf: []byte{1}}}); return err })},
		{"Exchange to one rank twice", collErr(func() error {
			_, err := c.Exchange([]comm.Msg{{Peer: me, Buf: []byte{1}}, {Peer: me, Buf: []byte{2}}})
			return err
		})},
		{"Bcast from root Size", collErr(func() error { _, err := c.Bcast(n, nil); return err })},
		{"Gatherv at root -1", collErr(func() error { _, err := c.Gatherv(-1, nil); return err })},
		{"ReduceInt64 at root Size", collErr(func() error { _, err := c.ReduceInt64(n, comm.Sum, nil); return err })},
		{"ReduceFloat64 at root -1", collErr(func() error { _, err := c.ReduceFloat64(-1, comm.Sum, nil); return err })},
		{"AllreduceInt64 with an unknown op", collErr(func() error { _, err := c.AllreduceInt64(comm.Op(99), []int64{1}); return err })},
	} {
		if err := check(tc.what, tc.err); err != nil {
			return err
		}
	}
	// Still usable.
	got, err := c.AllreduceInt64(comm.Sum, []int64{1})
	if err != nil || got[0] != int64(n) {
		return fmt.Errorf("rank %d: Allreduce after bad calls = %v, %v; want [%d]", me, got, err, n)
	}
	return nil
}

// exchangeTargets are the distinct ranks s sends to in the Exchange cases:
// itself, its neighbours and one far rank, fewer when Size is small.
func exchangeTargets(s, n int) []int {
	var t []int
	for _, r := range []int{(s + 1) % n, s, (s + n/2) % n, (s*3 + 1) % n} {
		if !slices.Contains(t, r) {
			t = append(t, r)
		}
	}
	return t
}

// exchangeSize is the size s sends to r in the Exchange cases (0: nothing
// or an empty message, which is not delivered); large sizes go past the
// MPI backend's one-message limit.
func exchangeSize(s, r, n int) int {
	if !slices.Contains(exchangeTargets(s, n), r) || (s+r)%7 == 3 {
		return 0
	}
	if (s+r)%5 == 0 {
		return 5000 + s + r
	}
	return 1 + (s+2*r)%13
}

// exchange checks Exchange: sparse messages, in any order, arrive once,
// from the right sources, in rank order; empty ones are not delivered.
func exchange(c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	for round := 0; round < 2; round++ {
		var send []comm.Msg
		ts := exchangeTargets(me, n)
		if round == 1 {
			slices.Reverse(ts) // order does not matter
		}
		for _, r := range ts {
			if exchangeTargets(me, n)[0] == r && round == 1 {
				continue // the second round leaves one message out
			}
			send = append(send, comm.Msg{Peer: r, Buf: payload(me, r+round, exchangeSize(me, r, n))})
		}
		got, err := c.Exchange(send)
		if err != nil {
			return err
		}
		var want []int
		for s := range n {
			if exchangeSize(s, me, n) > 0 && (round == 0 || exchangeTargets(s, n)[0] != me) {
				want = append(want, s)
			}
		}
		if len(got) != len(want) {
			return fmt.Errorf("rank %d: round %d: Exchange delivered %d messages, want %d (from %v)", me, round, len(got), len(want), want)
		}
		for i, m := range got {
			if m.Peer != want[i] {
				return fmt.Errorf("rank %d: round %d: message %d from rank %d, want %d (sources in rank order)", me, round, i, m.Peer, want[i])
			}
			if err := checkMsg(c, fmt.Sprintf("Exchange from %d", m.Peer), m.Buf, payload(m.Peer, me+round, exchangeSize(m.Peer, me, n))); err != nil {
				return err
			}
		}
	}
	// Nothing sent anywhere.
	got, err := c.Exchange(nil)
	if err != nil {
		return err
	}
	if len(got) != 0 {
		return fmt.Errorf("rank %d: Exchange of nothing delivered %d messages", me, len(got))
	}
	return nil
}

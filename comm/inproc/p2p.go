package inproc

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"github.com/ptrace-dev/ptrace/comm"
)

// key identifies a point-to-point stream within one destination's mailbox.
type key struct{ src, tag int }

// mailbox holds the messages and posted receives of one destination rank.
// Matching happens under mu, so per-(src,tag) order is the order of Send
// calls and of Irecv calls, as in MPI.
type mailbox struct {
	mu sync.Mutex
	q  map[key]*stream
}

// stream is one (src,tag) queue. At most one of msgs and recvs is non-empty:
// a message waits for a receive or a receive for a message.
type stream struct {
	msgs  [][]byte
	recvs []*recvReq
}

// deliver hands msg to the oldest posted receive or queues it.
func (b *mailbox) deliver(k key, msg []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.q[k]
	if s != nil && len(s.recvs) > 0 {
		r := s.recvs[0]
		s.recvs[0] = nil
		s.recvs = s.recvs[1:]
		b.dropIfEmpty(k, s)
		r.ch <- msg // buffered for exactly this message: never blocks
		return
	}
	if s == nil {
		if b.q == nil {
			b.q = make(map[key]*stream)
		}
		s = &stream{}
		b.q[k] = s
	}
	s.msgs = append(s.msgs, msg)
}

// post returns the oldest queued message, or registers r to receive the next
// one and returns ok == false.
func (b *mailbox) post(k key, r *recvReq) (msg []byte, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.q[k]
	if s != nil && len(s.msgs) > 0 {
		msg = s.msgs[0]
		s.msgs[0] = nil
		s.msgs = s.msgs[1:]
		b.dropIfEmpty(k, s)
		return msg, true
	}
	if s == nil {
		if b.q == nil {
			b.q = make(map[key]*stream)
		}
		s = &stream{}
		b.q[k] = s
	}
	r.ch = make(chan []byte, 1)
	s.recvs = append(s.recvs, r)
	return nil, false
}

// withdraw removes a posted receive that has not matched yet. It reports
// false when a message was matched to r meanwhile (it is then in r.ch).
func (b *mailbox) withdraw(k key, r *recvReq) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.q[k]
	if s == nil {
		return false
	}
	i := slices.Index(s.recvs, r)
	if i < 0 {
		return false
	}
	s.recvs = slices.Delete(s.recvs, i, i+1)
	b.dropIfEmpty(k, s)
	return true
}

// dropIfEmpty keeps the map as small as the traffic in flight, which matters
// with thousands of ranks and many tags.
func (b *mailbox) dropIfEmpty(k key, s *stream) {
	if len(s.msgs) == 0 && len(s.recvs) == 0 {
		delete(b.q, k)
	}
}

func (c *rankComm) Send(dst, tag int, buf []byte) error {
	if err := c.checkPeer("Send", dst, tag); err != nil {
		return err
	}
	if err := checkLen("Send", len(buf)); err != nil {
		return err
	}
	if c.w.isAborted() {
		return c.w.cause
	}
	// Copy: the caller may reuse buf as soon as Send returns.
	c.w.boxes[dst].deliver(key{c.rank, tag}, bytes.Clone(buf))
	return nil
}

// Isend completes at once: sends are buffered, so there is nothing to wait for.
func (c *rankComm) Isend(dst, tag int, buf []byte) comm.Request {
	return &doneReq{err: c.Send(dst, tag, buf)}
}

func (c *rankComm) Recv(src, tag int) ([]byte, error) {
	return c.Irecv(src, tag).Wait()
}

func (c *rankComm) Irecv(src, tag int) comm.Request {
	r := &recvReq{w: c.w, me: c.rank, k: key{src, tag}}
	if err := c.checkPeer("Irecv", src, tag); err != nil {
		r.finish(nil, err)
		return r
	}
	if c.w.isAborted() {
		r.finish(nil, c.w.cause)
		return r
	}
	if msg, ok := c.w.boxes[c.rank].post(r.k, r); ok {
		r.finish(msg, nil)
	}
	return r
}

// doneReq is a request that completed when it was started.
type doneReq struct {
	data []byte
	err  error
}

func (r *doneReq) Wait() ([]byte, error) { return r.data, r.err }

// recvReq is a posted receive. Its message arrives on ch, which deliver fills
// at most once.
type recvReq struct {
	w    *world
	me   int // the receiving rank
	k    key
	ch   chan []byte
	done bool
	data []byte
	err  error
}

func (r *recvReq) finish(data []byte, err error) {
	r.done, r.data, r.err, r.ch = true, data, err, nil
}

func (r *recvReq) Wait() ([]byte, error) {
	if r.done {
		return r.data, r.err
	}
	w := r.w
	select {
	case msg := <-r.ch:
		r.finish(msg, nil)
	case <-w.aborted:
		// The receive stays posted and may still get a message: harmless,
		// since ch has room for it and nobody waits on it any more.
		r.finish(nil, w.cause)
	case <-w.exited[r.k.src]:
		if w.isAborted() {
			r.finish(nil, w.cause)
			break
		}
		// Everything src sent was delivered before it exited, so the message
		// is either in ch already or was never sent.
		if w.boxes[r.me].withdraw(r.k, r) {
			r.finish(nil, fmt.Errorf("inproc: Recv from rank %d tag %d: rank %d returned without sending it", r.k.src, r.k.tag, r.k.src))
		} else {
			r.finish(<-r.ch, nil)
		}
	}
	return r.data, r.err
}

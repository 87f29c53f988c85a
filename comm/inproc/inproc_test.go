package inproc

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"go.uber.org/goleak"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/commtest"
)

// Every test must leave no goroutine behind, aborted worlds included.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func runner(k int) commtest.World {
	return func(fn func(c comm.Comm) error) error { return Run(k, fn) }
}

func TestConformance(t *testing.T) {
	for _, k := range []int{1, 2, 3, 4, 7} {
		t.Run(fmt.Sprintf("K=%d", k), func(t *testing.T) { commtest.Run(t, runner(k)) })
	}
}

func TestAbort(t *testing.T) {
	for _, k := range []int{1, 2, 3, 4, 7, 64} {
		t.Run(fmt.Sprintf("K=%d", k), func(t *testing.T) { commtest.RunAbort(t, runner(k)) })
	}
}

// TestLarge is the acceptance check that one process carries 4096 ranks
// through a ring exchange and an Alltoallv.
func TestLarge(t *testing.T) {
	commtest.RunCases(t, runner(4096), commtest.LargeCases())
}

func TestRunRejectsNoRanks(t *testing.T) {
	if err := Run(0, func(comm.Comm) error { return nil }); err == nil {
		t.Fatal("Run(0) succeeded")
	}
}

func TestRunReturnsOriginatingError(t *testing.T) {
	errOpen := errors.New("open rank-00003.ptrace: no such file")
	err := Run(6, func(c comm.Comm) error {
		if c.Rank() == 3 {
			return errOpen
		}
		// The others fail as a consequence and say so: Run must not pick
		// one of these echoes.
		if err := c.Barrier(); err != nil {
			return fmt.Errorf("rank %d waiting at barrier: %w", c.Rank(), err)
		}
		return errors.New("barrier completed without rank 3")
	})
	if err == nil || err.Error() != "rank 3: open rank-00003.ptrace: no such file" {
		t.Fatalf("Run = %v, want \"rank 3: open rank-00003.ptrace: no such file\"", err)
	}
	if !errors.Is(err, errOpen) {
		t.Errorf("Run error does not wrap the rank's error")
	}
	if comm.Cause(err) != err {
		t.Errorf("Cause changed Run's error")
	}
}

func TestPanicBecomesError(t *testing.T) {
	var echoes atomic.Int32
	err := Run(4, func(c comm.Comm) error {
		if c.Rank() == 2 {
			var m map[string]int
			m["boom"]++ // a nil-map write panics
		}
		_, err := c.Recv(2, 0)
		var ae *comm.AbortError
		if errors.As(err, &ae) && ae.Rank == 2 {
			echoes.Add(1)
		}
		return err
	})
	if err == nil || !strings.HasPrefix(err.Error(), "rank 2: panic: assignment to entry in nil map") {
		t.Fatalf("Run = %v, want rank 2's panic", err)
	}
	if !strings.Contains(err.Error(), "inproc_test.go") {
		t.Errorf("panic error has no stack pointing at the test:\n%v", err)
	}
	if echoes.Load() != 3 {
		t.Errorf("%d ranks saw rank 2's abort, want 3", echoes.Load())
	}
}

func TestGoexitBecomesError(t *testing.T) {
	err := Run(2, func(c comm.Comm) error {
		if c.Rank() == 1 {
			runtime.Goexit()
		}
		return c.Barrier()
	})
	if err == nil || !strings.Contains(err.Error(), "rank 1: rank goroutine ended by runtime.Goexit") {
		t.Fatalf("Run = %v, want rank 1's Goexit reported", err)
	}
}

func TestAbortNilError(t *testing.T) {
	err := Run(2, func(c comm.Comm) error {
		if c.Rank() == 0 {
			c.Abort(nil)
			return nil // Abort alone must fail the run
		}
		return c.Barrier()
	})
	var ae *comm.AbortError
	if !errors.As(err, &ae) || ae.Rank != 0 || ae.Err == nil {
		t.Fatalf("Run = %v, want an AbortError from rank 0", err)
	}
}

// A rank that returns while others still wait for it must turn into an error,
// not a hang.
func TestEarlyReturnIsAnError(t *testing.T) {
	t.Run("Recv", func(t *testing.T) {
		err := Run(2, func(c comm.Comm) error {
			if c.Rank() == 1 {
				return nil
			}
			_, err := c.Recv(1, 5)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "rank 0: inproc: Recv from rank 1 tag 5: rank 1 returned without sending it") {
			t.Fatalf("Run = %v", err)
		}
	})
	t.Run("Collective", func(t *testing.T) {
		err := Run(3, func(c comm.Comm) error {
			if err := c.Barrier(); err != nil {
				return err
			}
			if c.Rank() == 2 {
				return nil
			}
			return c.Barrier()
		})
		if err == nil || !strings.Contains(err.Error(), "inproc: Barrier (collective #1): rank 2 returned without calling it") {
			t.Fatalf("Run = %v", err)
		}
	})
}

// Messages sent before the sender returned are still delivered.
func TestRecvFromExitedSender(t *testing.T) {
	err := Run(2, func(c comm.Comm) error {
		if c.Rank() == 1 {
			for i := range 3 {
				if err := c.Send(0, 1, []byte{byte(i)}); err != nil {
					return err
				}
			}
			return nil
		}
		for i := range 3 {
			got, err := c.Recv(1, 1)
			if err != nil {
				return err
			}
			if len(got) != 1 || got[0] != byte(i) {
				return fmt.Errorf("message %d = %v", i, got)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCollectiveMismatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func(c comm.Comm) error
		want string
	}{
		{"Kind", func(c comm.Comm) error {
			if c.Rank() == 0 {
				_, err := c.Bcast(0, nil)
				return err
			}
			return c.Barrier()
		}, "every rank must make the same collective calls"},
		{"Length", func(c comm.Comm) error {
			_, err := c.AllreduceInt64(comm.Sum, make([]int64, 1+c.Rank()))
			return err
		}, "AllreduceInt64(sum over"},
		{"Root", func(c comm.Comm) error {
			_, err := c.Gatherv(c.Rank(), nil)
			return err
		}, "Gatherv(root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var failed atomic.Int32
			err := Run(3, func(c comm.Comm) error {
				err := tc.fn(c)
				if err != nil && strings.Contains(err.Error(), tc.want) {
					failed.Add(1)
				}
				return err
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want an error containing %q", err, tc.want)
			}
			if failed.Load() != 3 {
				t.Errorf("%d of 3 ranks got the mismatch error", failed.Load())
			}
		})
	}
}

// TestBarrierSeparatesPhases uses shared memory, which only an in-process
// backend allows: no rank may leave a barrier before all have entered it.
func TestBarrierSeparatesPhases(t *testing.T) {
	const k, rounds = 16, 50
	var entered atomic.Int64
	err := Run(k, func(c comm.Comm) error {
		for i := range rounds {
			entered.Add(1)
			if err := c.Barrier(); err != nil {
				return err
			}
			if got := entered.Load(); got < int64((i+1)*k) {
				return fmt.Errorf("round %d: left the barrier after %d entries, want ≥ %d", i, got, (i+1)*k)
			}
			// A second barrier keeps fast ranks from entering the next round
			// before everyone has checked this one.
			if err := c.Barrier(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBufferOwnership pins down which operations copy.
func TestBufferOwnership(t *testing.T) {
	err := Run(3, func(c comm.Comm) error {
		me := c.Rank()
		// Send copies: the sender may scribble on its buffer at once.
		if me == 0 {
			buf := []byte("hello")
			if err := c.Send(1, 0, buf); err != nil {
				return err
			}
			copy(buf, "XXXXX")
		}
		if me == 1 {
			got, err := c.Recv(0, 0)
			if err != nil {
				return err
			}
			if string(got) != "hello" {
				return fmt.Errorf("Send did not copy: got %q", got)
			}
		}
		// Bcast: root keeps its own buffer; the others share one copy.
		mine := []byte("root data")
		got, err := c.Bcast(0, mine)
		if err != nil {
			return err
		}
		if me == 0 {
			if unsafe.SliceData(got) != unsafe.SliceData(mine) {
				return errors.New("Bcast root did not get its own buffer back")
			}
			copy(mine, "scribbled")
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if string(got) != "root data" && me != 0 {
			return fmt.Errorf("rank %d: root's later write reached Bcast's result: %q", me, got)
		}
		// Alltoallv hands buffers over without copying.
		send := make([][]byte, 3)
		for r := range send {
			send[r] = []byte{byte(me), byte(r)}
		}
		recv, err := c.Alltoallv(send)
		if err != nil {
			return err
		}
		if unsafe.SliceData(recv[me]) != unsafe.SliceData(send[me]) {
			return errors.New("Alltoallv copied a buffer")
		}
		if cap(recv) != 3 {
			return fmt.Errorf("Alltoallv result has cap %d: appending would overwrite another rank's result", cap(recv))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestIrecvAfterAbort(t *testing.T) {
	err := Run(2, func(c comm.Comm) error {
		if c.Rank() == 0 {
			c.Abort(errors.New("stop"))
		}
		if err := c.Barrier(); err == nil {
			return errors.New("Barrier after abort succeeded")
		}
		_, err := c.Irecv(1-c.Rank(), 0).Wait()
		var ae *comm.AbortError
		if !errors.As(err, &ae) {
			return fmt.Errorf("Irecv after abort: %v, want AbortError", err)
		}
		return nil
	})
	if err == nil || err.Error() != "rank 0: stop" {
		t.Fatalf("Run = %v, want rank 0: stop", err)
	}
}

// Once runs f once for the process when any rank wants it, none when no
// rank does, and no rank returns before f has run.
func TestOnce(t *testing.T) {
	const k, rounds = 5, 40
	var runs, done atomic.Int64
	err := Run(k, func(c comm.Comm) error {
		for i := range rounds {
			// Round i: rank i%k wants it in odd rounds, nobody in even ones.
			want := i%2 == 1 && c.Rank() == i%k
			if err := comm.PerProcess(c, want, func() {
				runs.Add(1)
				done.Store(int64(i))
			}); err != nil {
				return err
			}
			if i%2 == 1 && done.Load() != int64(i) {
				return fmt.Errorf("round %d: rank %d returned before f ran", i, c.Rank())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := runs.Load(); got != rounds/2 {
		t.Errorf("f ran %d times in %d rounds, %d of them wanted", got, rounds, rounds/2)
	}
}

// TestResultsOutliveRecycledSlots: a collective's slot is reused once
// every rank has left it, and what a collective returned stays as it was
// through the collectives that reuse its slot (Exchange, Alltoallv,
// Gatherv, the reductions and Bcast in turn, results checked at the end).
func TestResultsOutliveRecycledSlots(t *testing.T) {
	const k, rounds = 4, 60
	w := newWorld(k)
	var wg sync.WaitGroup
	wg.Add(k)
	errs := make([]error, k)
	body := func(c comm.Comm) error {
		me := c.Rank()
		type kept struct {
			ex  []comm.Msg
			a2a [][]byte
			gat [][]byte
			sum []int64
			bc  []byte
		}
		var all []kept
		for i := range rounds {
			var kp kept
			var send []comm.Msg
			for p := range k {
				if p != me && (i+p)%2 == 0 {
					send = append(send, comm.Msg{Peer: p, Buf: []byte{byte(me), byte(p), byte(i)}})
				}
			}
			var err error
			if kp.ex, err = c.Exchange(send); err != nil {
				return err
			}
			a := make([][]byte, k)
			for p := range a {
				a[p] = []byte{byte(me), byte(p), byte(i)}
			}
			if kp.a2a, err = c.Alltoallv(a); err != nil {
				return err
			}
			if kp.gat, err = c.Gatherv(i%k, []byte{byte(me), byte(i)}); err != nil {
				return err
			}
			if kp.sum, err = c.AllreduceInt64(comm.Sum, []int64{int64(me + i)}); err != nil {
				return err
			}
			if kp.bc, err = c.Bcast(i%k, []byte{byte(i), byte(i % k)}); err != nil {
				return err
			}
			all = append(all, kp)
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		for i, kp := range all {
			n := 0
			for _, m := range kp.ex {
				if m.Buf[0] != byte(m.Peer) || m.Buf[1] != byte(me) || m.Buf[2] != byte(i) {
					return fmt.Errorf("rank %d round %d: Exchange message %v from %d changed", me, i, m.Buf, m.Peer)
				}
				n++
			}
			if want := 0; (i+me)%2 == 0 {
				want = k - 1
				if n != want {
					return fmt.Errorf("rank %d round %d: %d messages, want %d", me, i, n, want)
				}
			} else if n != want {
				return fmt.Errorf("rank %d round %d: %d messages, want none", me, i, n)
			}
			for p, b := range kp.a2a {
				if b[0] != byte(p) || b[1] != byte(me) || b[2] != byte(i) {
					return fmt.Errorf("rank %d round %d: Alltoallv from %d is %v", me, i, p, b)
				}
			}
			if i%k == me {
				for p, b := range kp.gat {
					if b[0] != byte(p) || b[1] != byte(i) {
						return fmt.Errorf("rank %d round %d: Gatherv from %d is %v", me, i, p, b)
					}
				}
			}
			if want := int64(k*(k-1)/2 + k*i); kp.sum[0] != want {
				return fmt.Errorf("rank %d round %d: sum %d, want %d", me, i, kp.sum[0], want)
			}
			if kp.bc[0] != byte(i) || kp.bc[1] != byte(i%k) {
				return fmt.Errorf("rank %d round %d: Bcast %v", me, i, kp.bc)
			}
		}
		return nil
	}
	for r := range k {
		go func() {
			defer wg.Done()
			w.runRank(r, func(c comm.Comm) error { errs[r] = body(c); return errs[r] })
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	// 301 collectives, one at a time: a rank may enter the next while
	// another still reads the last, so a few slots serve them all.
	if n := len(w.free); n == 0 || n > 4 {
		t.Fatalf("%d slots made for %d collectives one after another", n, 5*rounds+1)
	}
}

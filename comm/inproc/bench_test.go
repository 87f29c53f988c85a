package inproc

import (
	"fmt"
	"testing"
	"time"

	"github.com/ptrace-dev/ptrace/comm"
)

// benchRanks runs body b.N times on k ranks, timing only the loop: rank 0
// owns the timer, and barriers keep the others inside the timed region.
func benchRanks(b *testing.B, k int, body func(c comm.Comm) error) {
	b.Helper()
	err := Run(k, func(c comm.Comm) error {
		if err := c.Barrier(); err != nil {
			return err
		}
		if c.Rank() == 0 {
			b.ResetTimer()
		}
		for range b.N {
			if err := body(c); err != nil {
				return err
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if c.Rank() == 0 {
			b.StopTimer()
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAlltoallv measures throughput: every rank sends perRank bytes in
// total, spread evenly over all ranks; bytes/s counts all ranks' data.
func BenchmarkAlltoallv(b *testing.B) {
	const perRank = 1 << 20
	for _, k := range []int{4, 64, 1024} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			b.SetBytes(int64(k) * perRank)
			piece := make([]byte, perRank/k)
			benchRanks(b, k, func(c comm.Comm) error {
				send := make([][]byte, k)
				for r := range send {
					send[r] = piece // read-only on both sides
				}
				_, err := c.Alltoallv(send)
				return err
			})
		})
	}
}

// BenchmarkAlltoallvSmall measures latency: 8 bytes to every rank.
func BenchmarkAlltoallvSmall(b *testing.B) {
	for _, k := range []int{4, 64, 1024} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			piece := make([]byte, 8)
			benchRanks(b, k, func(c comm.Comm) error {
				send := make([][]byte, k)
				for r := range send {
					send[r] = piece
				}
				_, err := c.Alltoallv(send)
				return err
			})
		})
	}
}

// BenchmarkPingPong reports the time of one round trip between two ranks.
func BenchmarkPingPong(b *testing.B) {
	for _, size := range []int{8, 1 << 10, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("bytes=%d", size), func(b *testing.B) {
			b.SetBytes(2 * int64(size))
			buf := make([]byte, size)
			benchRanks(b, 2, func(c comm.Comm) error {
				peer := 1 - c.Rank()
				if c.Rank() == 0 {
					if err := c.Send(peer, 0, buf); err != nil {
						return err
					}
					_, err := c.Recv(peer, 0)
					return err
				}
				msg, err := c.Recv(peer, 0)
				if err != nil {
					return err
				}
				return c.Send(peer, 0, msg)
			})
		})
	}
}

func BenchmarkBarrier(b *testing.B) {
	for _, k := range []int{4, 64, 1024} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			benchRanks(b, k, func(c comm.Comm) error { return c.Barrier() })
		})
	}
}

func BenchmarkAllreduceInt64(b *testing.B) {
	for _, k := range []int{4, 64, 1024} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			vals := []int64{1, 2, 3, 4}
			benchRanks(b, k, func(c comm.Comm) error {
				_, err := c.AllreduceInt64(comm.Sum, vals)
				return err
			})
		})
	}
}

// BenchmarkExchange is a replay superstep's traffic: every rank sends 24
// bytes to its two neighbours, through Exchange and, for comparison,
// through Alltoallv.
func BenchmarkExchange(b *testing.B) {
	for _, k := range []int{4, 64, 1024} {
		piece := make([]byte, 24)
		b.Run(fmt.Sprintf("Exchange/K=%d", k), func(b *testing.B) {
			benchRanks(b, k, func(c comm.Comm) error {
				me := c.Rank()
				send := []comm.Msg{{Peer: (me + 1) % k, Buf: piece}}
				if k > 2 {
					send = append(send, comm.Msg{Peer: (me + k - 1) % k, Buf: piece})
				}
				_, err := c.Exchange(send)
				return err
			})
		})
		b.Run(fmt.Sprintf("Alltoallv/K=%d", k), func(b *testing.B) {
			benchRanks(b, k, func(c comm.Comm) error {
				me := c.Rank()
				send := make([][]byte, k)
				send[(me+1)%k], send[(me+k-1)%k] = piece, piece
				_, err := c.Alltoallv(send)
				return err
			})
		})
	}
}

// BenchmarkSuperstep is a replay's superstep between two ranks that take
// turns: the rank whose turn it is works ~5 µs while the other waits in
// the Allreduce, as when a critical path crosses ranks at every step. What
// it measures beyond the work is the waiting rank's wake-up.
func BenchmarkSuperstep(b *testing.B) {
	work := func() {
		for t := time.Now(); time.Since(t) < 5*time.Microsecond; {
		}
	}
	step := 0
	benchRanks(b, 2, func(c comm.Comm) error {
		if step%2 == c.Rank() {
			work()
		}
		step++
		_, err := c.AllreduceInt64(comm.Sum, []int64{1})
		return err
	})
}

package graph

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
)

// TestRoundsAlongBatches: records sent in batches far smaller than a
// round arrive each once, whatever each rank's number of nodes (ranks
// that are done keep joining the batches of the others), and the check
// runs after every batch on every rank alike (7 batches of 3 nodes for
// the rank of 21), as a collective check needs.
func TestRoundsAlongBatches(t *testing.T) {
	const k = 3
	got := make([][]int32, k)
	checks := make([]int, k)
	err := inproc.Run(k, func(c comm.Comm) error {
		me := c.Rank()
		lo, hi := int32(100*me), int32(100*me+7*(me+1)) // 7, 14, 21 nodes
		perPeer := make([]int, k)
		for v := lo; v < hi; v++ {
			perPeer[int(v)%k] += 4
		}
		var recvd []int32
		err := roundsAlongBy(c, 9, lo, hi, perPeer, func(bufs [][]byte, v int32) int {
			q := int(v) % k
			bufs[q] = binary.LittleEndian.AppendUint32(bufs[q], uint32(v))
			return 4
		}, func(recv [][]byte) error {
			for _, buf := range recv {
				for ; len(buf) >= 4; buf = buf[4:] {
					recvd = append(recvd, int32(binary.LittleEndian.Uint32(buf)))
				}
			}
			return nil
		}, func() error { checks[me]++; return nil })
		got[me] = recvd
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for q := range k {
		var want []int32
		for r := range k {
			for v := int32(100 * r); v < int32(100*r+7*(r+1)); v++ {
				if int(v)%k == q {
					want = append(want, v)
				}
			}
		}
		slices.Sort(got[q])
		if !slices.Equal(got[q], want) {
			t.Errorf("rank %d received %v, want %v", q, got[q], want)
		}
		if checks[q] != 7 {
			t.Errorf("rank %d checked %d times, want 7 (a batch each)", q, checks[q])
		}
	}
}

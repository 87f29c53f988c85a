//go:build mpi

// Command pingpong measures the one-way latency of comm/mpi's Send/Recv
// between ranks 0 and 1, the same way scripts/comm/pingpong.c measures plain
// MPI; scripts/comm/pingpong.sh runs both and prints the ratio.
//
// Usage: mpirun -np 2 pingpong [-raw] [size...]
// Prints "size one_way_latency_us" per size on rank 0: the median over 5
// repetitions of the round-trip time divided by two. With -raw it calls
// MPI_Send/MPI_Recv through cgo directly instead of through comm/mpi.
package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/mpi"
)

const reps = 5

// iterations must match iterations() in pingpong.c.
func iterations(size int) int {
	switch {
	case size <= 1024:
		return 20000
	case size <= 65536:
		return 5000
	}
	return 500
}

func rounds(c comm.Comm, buf []byte, n int) error {
	peer := 1 - c.Rank()
	for range n {
		if c.Rank() == 0 {
			if err := c.Send(peer, 0, buf); err != nil {
				return err
			}
			if _, err := c.Recv(peer, 0); err != nil {
				return err
			}
		} else {
			msg, err := c.Recv(peer, 0)
			if err != nil {
				return err
			}
			if err := c.Send(peer, 0, msg); err != nil {
				return err
			}
		}
	}
	return nil
}

func run(c comm.Comm, sizes []int, rounds func(comm.Comm, []byte, int) error) error {
	if c.Size() != 2 {
		return fmt.Errorf("needs exactly 2 ranks, got %d", c.Size())
	}
	for _, size := range sizes {
		buf := make([]byte, size)
		n := iterations(size)
		if err := rounds(c, buf, n/10); err != nil { // warm up
			return err
		}
		var t [reps]float64
		for r := range t {
			if err := c.Barrier(); err != nil {
				return err
			}
			t0 := time.Now()
			if err := rounds(c, buf, n); err != nil {
				return err
			}
			t[r] = float64(time.Since(t0).Microseconds()) / float64(n) / 2
		}
		slices.Sort(t[:])
		if c.Rank() == 0 {
			fmt.Printf("%d %.3f\n", size, t[reps/2])
		}
	}
	return nil
}

func main() {
	sizes := []int{8, 1024, 65536, 1048576}
	args := os.Args[1:]
	loop := rounds
	if len(args) > 0 && args[0] == "-raw" {
		loop, args = rawRounds, args[1:]
	}
	if len(args) > 0 {
		sizes = sizes[:0]
		for _, a := range args {
			n, err := strconv.Atoi(a)
			if err != nil || n < 0 {
				fmt.Fprintf(os.Stderr, "pingpong: bad size %q\n", a)
				os.Exit(2)
			}
			sizes = append(sizes, n)
		}
	}
	c, err := mpi.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pingpong:", err)
		os.Exit(1)
	}
	if err := run(c, sizes, loop); err != nil {
		c.Abort(err)
	}
	if err := mpi.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "pingpong:", err)
		os.Exit(1)
	}
}

// Package reduce moves per-process summaries to rank 0 and computes what is
// computed from them there: sums and min/mean/max over processes, gathered
// per-process rows (O(processes), never O(events)), and the POP efficiency
// formulas (TALP).
package reduce

import (
	"fmt"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/vmihailenco/msgpack/v5"
)

// GatherRows collects every rank's rows at rank 0, concatenated in rank
// order (ranks own contiguous process blocks, so that is process order).
// Other ranks get nil.
func GatherRows[T any](c comm.Comm, rows []T) ([]T, error) {
	b, err := msgpack.Marshal(rows)
	if err != nil {
		return nil, fmt.Errorf("gather: encode: %w", err)
	}
	parts, err := c.Gatherv(0, b)
	if err != nil || c.Rank() != 0 {
		return nil, err
	}
	var all []T
	for r, p := range parts {
		var rs []T
		if err := msgpack.Unmarshal(p, &rs); err != nil {
			return nil, fmt.Errorf("gather: decode rows of rank %d: %w", r, err)
		}
		all = append(all, rs...)
	}
	return all, nil
}

// Broadcast sends rank 0's value to every rank.
func Broadcast[T any](c comm.Comm, v *T) error {
	var b []byte
	if c.Rank() == 0 {
		var err error
		if b, err = msgpack.Marshal(v); err != nil {
			return fmt.Errorf("broadcast: encode: %w", err)
		}
	}
	b, err := c.Bcast(0, b)
	if err != nil {
		return err
	}
	if c.Rank() != 0 {
		if err := msgpack.Unmarshal(b, v); err != nil {
			return fmt.Errorf("broadcast: decode: %w", err)
		}
	}
	return nil
}

// SumInt64 adds vals element-wise over ranks; every rank gets the result.
// Integer sums are exact, so results do not depend on the rank count.
func SumInt64(c comm.Comm, vals ...int64) ([]int64, error) {
	return c.AllreduceInt64(comm.Sum, vals)
}

// Summary is min, mean and max of a quantity over processes.
type Summary struct {
	Min, Mean, Max float64
	ArgMin, ArgMax int // process indices
}

// Summarize returns the summary of vals (indexed by process).
func Summarize(vals []float64) Summary {
	if len(vals) == 0 {
		return Summary{}
	}
	s := Summary{Min: vals[0], Max: vals[0]}
	var sum float64
	for i, v := range vals {
		sum += v
		if v < s.Min {
			s.Min, s.ArgMin = v, i
		}
		if v > s.Max {
			s.Max, s.ArgMax = v, i
		}
	}
	s.Mean = sum / float64(len(vals))
	return s
}

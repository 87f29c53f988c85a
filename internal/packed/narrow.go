package packed

import "math"

// Narrow is an int64 column with random access held in 32 bits a value,
// for values that nearly always fit (durations, gaps, ids read from a
// file): a value that does not is kept in a map beside the column, so
// every int64 comes back exactly.
type Narrow struct {
	v    []int32
	wide map[int32]int64 // index → value, where v holds wideMark
}

// wideMark in the column says the value is in the map.
const wideMark = math.MinInt32

// MakeNarrow returns a column of n zeros with room for c values.
func MakeNarrow(n, c int) Narrow { return Narrow{v: make([]int32, n, max(n, c))} }

// Len returns the number of values.
func (c *Narrow) Len() int { return len(c.v) }

// Append adds x at the end.
func (c *Narrow) Append(x int64) {
	c.v = append(c.v, 0)
	c.Set(len(c.v)-1, x)
}

// Set replaces value i with x.
func (c *Narrow) Set(i int, x int64) {
	if x > wideMark && x <= math.MaxInt32 {
		if c.v[i] == wideMark {
			delete(c.wide, int32(i))
		}
		c.v[i] = int32(x)
		return
	}
	if c.wide == nil {
		c.wide = map[int32]int64{}
	}
	c.v[i] = wideMark
	c.wide[int32(i)] = x
}

// At returns value i.
func (c *Narrow) At(i int) int64 {
	if x := c.v[i]; x != wideMark {
		return int64(x)
	}
	return c.wide[int32(i)]
}

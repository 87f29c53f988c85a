package narrow

import "testing"

func BenchmarkStepAt(b *testing.B) {
	var c Step[uint8, uint16, uint32]
	for k := range 1 << 16 {
		c.Append(int64(k % 200))
	}
	for b.Loop() {
		var s int64
		for k := range c.Len() {
			s += c.At(k)
		}
		sink = s
	}
}

func BenchmarkStepAppend(b *testing.B) {
	for b.Loop() {
		var c Step[uint8, uint16, uint32]
		c.Reserve(1 << 16)
		for k := range 1 << 16 {
			c.Append(int64(k % 200))
		}
	}
}

func BenchmarkColumnAppend(b *testing.B) {
	for b.Loop() {
		var c Column[uint8]
		c.Reserve(1 << 16)
		for k := range 1 << 16 {
			c.Append(int64(k % 200))
		}
	}
}

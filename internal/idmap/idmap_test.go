package idmap

import (
	"math/rand/v2"
	"testing"
)

// TestAsMap: random sets, gets and deletes over key ranges small and large
// (so the array fills, spills to the map, and stays there) give what a Go
// map gives, operation by operation.
func TestAsMap(t *testing.T) {
	for _, keys := range []int64{3, small, small + 1, 40} {
		r := rand.New(rand.NewPCG(uint64(keys), 7))
		var m Map
		ref := map[int64]int32{}
		spilled := false
		for op := range 20000 {
			k := r.Int64N(keys) - keys/2 // negative keys too
			switch r.IntN(4) {
			case 0, 1:
				v := r.Int32()
				m.Set(k, v)
				ref[k] = v
			case 2:
				m.Delete(k)
				delete(ref, k)
			}
			got, ok := m.Get(k)
			want, wok := ref[k]
			if got != want || ok != wok || m.Len() != len(ref) {
				t.Fatalf("keys %d, op %d: Get(%d) = %d, %v, Len %d; want %d, %v, Len %d", keys, op, k, got, ok, m.Len(), want, wok, len(ref))
			}
			spilled = spilled || m.big != nil
			if op%5000 == 4999 {
				m.Clear()
				clear(ref)
			}
		}
		if keys > small && !spilled {
			t.Errorf("keys %d: never spilled to the map", keys)
		}
	}
}

func BenchmarkRegionPattern(b *testing.B) {
	b.Run("idmap", func(b *testing.B) {
		var m Map
		for i := range b.N {
			id := int64(i) << 1
			m.Set(id, int32(i))
			for range 4 {
				m.Get(id)
			}
			m.Delete(id)
		}
	})
	b.Run("map", func(b *testing.B) {
		m := map[int64]int32{}
		for i := range b.N {
			id := int64(i) << 1
			m[id] = int32(i)
			for range 4 {
				_ = m[id]
			}
			delete(m, id)
		}
	})
}

package otf2

import (
	"math/rand"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// TestTaskIDsAsMap: taskIDs answers every lookup as a Go map of the same
// sets would, over keys in runs (a creator's generations one after
// another), with gaps small and large, generations before a run's first,
// repeated keys and keys never set.
func TestTaskIDsAsMap(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	m := newTaskIDs()
	want := map[taskKey]int64{}
	next := map[[2]uint32]uint32{}
	var id int64
	for range 200_000 {
		team, creator := uint32(rng.Intn(3)), uint32(rng.Intn(5))
		p := [2]uint32{team, creator}
		g := next[p]
		switch r := rng.Intn(100); {
		case r < 2:
			g += uint32(rng.Intn(3 * maxGap)) // a gap, small or not
		case r < 4:
			g = uint32(rng.Intn(int(g) + 1)) // an earlier generation again
		case r < 5:
			g = rng.Uint32() // anywhere
		}
		next[p] = g + 1
		k := taskKey{team: team, creator: creator, gen: g}
		id++
		m.set(k, id)
		want[k] = id
		q := taskKey{team: uint32(rng.Intn(4)), creator: uint32(rng.Intn(6)), gen: uint32(rng.Intn(int(g) + 2))}
		if got, ok := m.get(q); got != want[q] || ok != (want[q] != 0) {
			t.Fatalf("get %v: %d %v, the map says %d", q, got, ok, want[q])
		}
	}
	for k, v := range want {
		if got, ok := m.get(k); !ok || got != v {
			t.Fatalf("get %v: %d %v, want %d", k, got, ok, v)
		}
	}
}

// TestTaskRegionsAsMap: the first region set for an id is the one found,
// as the map with its "unless set" check gave, for every region value.
func TestTaskRegionsAsMap(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	var tr taskRegions
	want := map[int64]uint32{}
	for range 50_000 {
		id := trace.MakeID(rng.Intn(8), int64(1+rng.Intn(5000)))
		reg := uint32(rng.Intn(10))
		if rng.Intn(50) == 0 {
			reg = ^uint32(0) // OTF2's undefined reference
		}
		tr.setOnce(id, reg)
		if _, ok := want[id]; !ok {
			want[id] = reg
		}
	}
	for th := range 9 {
		for seq := range int64(5002) {
			id := trace.MakeID(th, seq)
			w, wok := want[id]
			if got, ok := tr.get(id); ok != wok || got != w {
				t.Fatalf("id %d: %d %v, want %d %v", id, got, ok, w, wok)
			}
		}
	}
}

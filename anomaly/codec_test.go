package anomaly

import (
	"math"
	"slices"
	"testing"
)

// Records come back exactly, names shared, whatever the values; damaged
// bytes are an error, never a panic or a large allocation.
func TestTaskCodec(t *testing.T) {
	tasks := []Task{
		{Rank: 3, Thread: 1, ID: 1 << 40, Construct: "a.c:10", StartNS: 5, DurNS: 7, Cost: 1.5},
		{Rank: -1, Thread: math.MaxInt32, ID: -9, Construct: "", StartNS: math.MinInt64, DurNS: math.MaxInt64, Cost: math.Inf(-1)},
		{Rank: 3, Thread: 2, ID: 4, Construct: "a.c:10", StartNS: 6, DurNS: 8, Cost: math.NaN()},
		{Rank: 0, Thread: 0, ID: 0, Construct: "b.c:3 é", Cost: 0},
	}
	b := AppendTasks(nil, tasks)
	got, err := DecodeTasks(b)
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b Task) bool {
		return a.Rank == b.Rank && a.Thread == b.Thread && a.ID == b.ID && a.Construct == b.Construct &&
			a.StartNS == b.StartNS && a.DurNS == b.DurNS && math.Float64bits(a.Cost) == math.Float64bits(b.Cost)
	}
	if !slices.EqualFunc(got, tasks, same) {
		t.Fatalf("decoded %+v, want %+v", got, tasks)
	}
	if got, err := DecodeTasks(AppendTasks(nil, nil)); err != nil || len(got) != 0 {
		t.Errorf("no tasks: %v, %v", got, err)
	}
	for cut := range len(b) {
		if _, err := DecodeTasks(b[:cut]); err == nil {
			t.Errorf("cut at %d of %d bytes: no error", cut, len(b))
		}
	}
	// The first record's construct index, after the names and the count.
	at := len(b) - len(tasks)*taskRecBytes
	bad := slices.Clone(b)
	bad[at] = 99
	if _, err := DecodeTasks(bad); err == nil {
		t.Error("a construct index beyond the names: no error")
	}
	bad = slices.Clone(b)
	bad[0] = 0xff // a huge name count
	if _, err := DecodeTasks(bad); err == nil {
		t.Error("a name count beyond the bytes: no error")
	}
}

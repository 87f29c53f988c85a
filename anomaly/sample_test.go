package anomaly

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"runtime/metrics"
	"testing"
)

// sampleTasks returns n records of three constructs in runs, as the
// analysis makes them, with the values a damaged trace may hold too.
func sampleTasks(n int, seed uint64) []Task {
	rng := rand.New(rand.NewPCG(seed, 5))
	names := []string{"fib.c:12", "fib.c:14", ""}
	tasks := make([]Task, n)
	cons := 0
	for i := range tasks {
		if rng.IntN(50) == 0 {
			cons = rng.IntN(len(names))
		}
		tasks[i] = Task{Rank: int32(rng.IntN(4)) - 1, Thread: int32(rng.IntN(8)), ID: rng.Int64() - math.MaxInt64/2,
			Construct: names[cons], StartNS: int64(rng.IntN(1000)), DurNS: int64(rng.IntN(1e6)) - 10, Cost: float64(rng.IntN(3))}
	}
	return tasks
}

// A Sample gives each construct the points, in the order added, that the
// records' own grouping gives (what Fit read before it took a Sample),
// and travels in AppendTasks's bytes (AppendTasks is AppendTo), which
// decode to the records; its Fit is Fit's on the records.
func TestSampleAsTasks(t *testing.T) {
	tasks := sampleTasks(5000, 1)
	var s Sample
	s.Add(tasks[:1234]) // added in parts, as the ranks' parts are
	s.Add(tasks[1234:])
	if s.Len() != len(tasks) {
		t.Fatalf("%d records, want %d", s.Len(), len(tasks))
	}
	want := map[string][]point{}
	for _, t := range tasks {
		want[t.Construct] = append(want[t.Construct], point{rank: t.Rank, thread: t.Thread, start: t.StartNS, id: t.ID, dur: t.DurNS, cost: t.Cost})
	}
	if got := s.points(); !reflect.DeepEqual(got, want) {
		t.Error("the sample's points per construct differ from the records'")
	}
	if got, want := s.AppendTo([]byte("x")), AppendTasks([]byte("x"), tasks); !bytes.Equal(got, want) {
		t.Errorf("AppendTo: %d bytes differing from AppendTasks's %d", len(got), len(want))
	}
	// AppendTasks is AppendTo of a Sample of its tasks: the bytes must
	// also decode to the records added.
	if got, err := DecodeTasks(s.AppendTo(nil)); err != nil || !reflect.DeepEqual(got, tasks) {
		t.Errorf("AppendTo's bytes decode to %d records (%v), want the %d added", len(got), err, len(tasks))
	}
	counts := map[string]int64{"fib.c:12": 9000, "fib.c:14": 100, "": 5000, "none.c:1": 40}
	if got, want := s.Fit(counts, Options{}), Fit(tasks, counts, Options{}); !reflect.DeepEqual(got, want) {
		t.Errorf("Sample.Fit %+v, Fit %+v", got, want)
	}
}

// The collector does not scan a Sample's records: the heap it scans grows
// by a small part of their bytes, where the same records held as []Task
// (the control, which shows the measure sees them) are scanned whole.
func TestSampleNotScanned(t *testing.T) {
	const chunks, chunk = 100, 1000
	scanned := func() uint64 {
		runtime.GC()
		m := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}}
		metrics.Read(m)
		return m[0].Value.Uint64()
	}
	var s Sample
	before := scanned()
	for i := range chunks {
		s.Add(sampleTasks(chunk, uint64(i)))
	}
	grown := int64(scanned()) - int64(before)
	held := int64(s.Len() * 48) // a record's bytes
	if grown > held/10 {
		t.Errorf("the scanned heap grew by %d bytes with a sample of %d bytes", grown, held)
	}
	runtime.KeepAlive(&s)
	s = Sample{}
	var tasks []Task
	before = scanned()
	for i := range chunks {
		tasks = append(tasks, sampleTasks(chunk, uint64(i))...)
	}
	if grown := int64(scanned()) - int64(before); grown < held/2 {
		t.Errorf("control: the scanned heap grew by %d bytes with %d records as []Task", grown, len(tasks))
	}
	runtime.KeepAlive(tasks)
}

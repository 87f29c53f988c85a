package graph

import (
	"math/rand/v2"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// TestOpenColls checks the scan's open collectives against a map by
// (communicator, thread), as the scan kept them before: a thread with
// more open than its short list holds (coll_ends missing on many
// communicators) moves the rest to a map, and every entry is found,
// replaced and taken once.
func TestOpenColls(t *testing.T) {
	comms := make([]trace.Communicator, 40)
	for k := range comms {
		comms[k].ID = int64(1000 + 7*k)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var o openColls
	want := map[[2]int64]int64{} // → event
	for step := range 20000 {
		cm := &comms[rng.IntN(len(comms))]
		th := int32(rng.IntN(3))
		key := [2]int64{cm.ID, int64(th)}
		if rng.IntN(2) == 0 {
			oc := o.at(cm.ID, th)
			_, busy := want[key]
			if busy != (oc.comm != nil) {
				t.Fatalf("step %d: %v open %v, want %v", step, key, oc.comm != nil, busy)
			}
			if busy && oc.event != want[key] {
				t.Fatalf("step %d: %v holds event %d, want %d", step, key, oc.event, want[key])
			}
			*oc = openColl{comm: cm, thread: th, event: int64(step)}
			want[key] = int64(step)
			continue
		}
		oc, ok := o.take(cm.ID, th)
		ev, busy := want[key]
		if ok != busy || ok && (oc.event != ev || oc.comm != cm || oc.thread != th) {
			t.Fatalf("step %d: take %v = %+v, %v; want event %d, %v", step, key, oc, ok, ev, busy)
		}
		delete(want, key)
	}
	all := o.appendAll(nil)
	if len(all) != len(want) {
		t.Fatalf("%d open, want %d", len(all), len(want))
	}
	for _, oc := range all {
		if ev, ok := want[[2]int64{oc.comm.ID, int64(oc.thread)}]; !ok || ev != oc.event {
			t.Fatalf("open %+v not expected (want event %d, %v)", oc, ev, ok)
		}
	}
	if o.many == nil {
		t.Fatal("no thread held more than openListMax: the map was not tried")
	}
}

// TestProcCursor checks the cursor against ProcOf on nodes in order, out
// of order, in empty processes' ranges and on collective nodes.
func TestProcCursor(t *testing.T) {
	m := &Matching{Procs: make([]*trace.Process, 5), ProcNodes: []int32{0, 3, 3, 10, 11, 11}}
	rng := rand.New(rand.NewPCG(3, 4))
	var c ProcCursor
	for k := range 2000 {
		n := int32(k % 14)
		if k >= 1000 {
			n = int32(rng.IntN(14))
		}
		if got, want := c.Of(m, n), m.ProcOf(n); got != want {
			t.Fatalf("node %d: process %d, want %d", n, got, want)
		}
	}
}

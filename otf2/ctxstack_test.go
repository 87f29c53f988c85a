package otf2

import "testing"

// TestContextStackAllocs: replaying calling-context records makes no
// allocation a record once the location's stack has grown (a Score-P
// archive with unwinding has one or two a region entry and exit).
func TestContextStackAllocs(t *testing.T) {
	g := &Defs{}
	// main (region 1) → solve (2) → MPI_Send (3)
	g.contexts.put(0, CallingContext{Region: 1, Parent: undefined32})
	g.contexts.put(1, CallingContext{Region: 2, Parent: 0})
	g.contexts.put(2, CallingContext{Region: 3, Parent: 1})
	c := &conv{a: &Archive{Defs: g}}
	n := 0
	s := ctxStack{c: c, fn: func(e *Event, now int64) error { n++; return nil }}
	enter := Event{Type: EvCallingContextEnter}
	enter.A[0], enter.A[1] = 2, 3 // MPI_Send and solve new
	leave := Event{Type: EvCallingContextLeave}
	leave.A[0] = 2
	step := func() {
		if err := s.event(&enter, 0, "f"); err != nil {
			t.Fatal(err)
		}
		if err := s.event(&leave, 1, "f"); err != nil {
			t.Fatal(err)
		}
	}
	step()
	if n != 4 || len(s.stack) != 2 {
		t.Fatalf("%d records made, stack %v; want main, solve, MPI_Send entered and MPI_Send left", n, s.stack)
	}
	if a := testing.AllocsPerRun(100, step); a != 0 {
		t.Errorf("%.1f allocations an enter and leave, want none", a)
	}
}

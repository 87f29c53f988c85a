package sim_test

import (
	"reflect"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// eagerIntegrals integrates the task counts' indicators and bins the
// ready count at every event, as the passes did before the simulation
// integrated them only where the counts change: the reference.
type eagerIntegrals struct {
	ready, blocked sim.Integral
	prev           int64
	started        bool
	series         []int64
	start, bin     int64
	last           int64
	// at Finish: the simulation's own
	gotReady, gotBlocked sim.Integral
}

func (p *eagerIntegrals) Before(s *sim.Sim, e *trace.Event, th int, dt int64) {
	if !p.started {
		p.started, p.prev = true, s.Now
	}
	var r, b int64
	switch {
	case s.Ready > 0:
		r = 1
	case s.Blocked > 0:
		b = 1
	}
	p.ready.Add(s, p.prev, dt, r)
	p.blocked.Add(s, p.prev, dt, b)
	p.prev += dt
	now := s.End
	if e != nil {
		now = e.Time
	}
	if s.Ready > 0 {
		for a := max(p.last, p.start); a < now; {
			i := (a - p.start) / p.bin
			if i >= int64(len(p.series)) {
				break
			}
			end := min(now, p.start+(i+1)*p.bin)
			p.series[i] += int64(s.Ready) * (end - a)
			a = end
		}
	}
	p.last = now
}
func (p *eagerIntegrals) After(s *sim.Sim, e *trace.Event, th int) {}
func (p *eagerIntegrals) Finish(s *sim.Sim) {
	p.gotReady, p.gotBlocked = *s.ReadyTime(s.Now), *s.BlockedTime(s.Now)
}

// The simulation integrates "some task ready" and "none ready, some
// blocked", and feeds the ready series, only where the counts change: the
// same integrals, with the same values at the window's bounds, and the
// same series as stepping at every event, on windows inside, around and
// past the events.
func TestIntegralsAsEventByEvent(t *testing.T) {
	cfgs := []gen.Config{
		{Workload: "stencil", Ranks: 2, Threads: 3, Width: 16, Steps: 8, Jitter: 0.3, LatencyNS: 500},
		{Workload: "halo", Ranks: 2, Threads: 3, Iterations: 4, Jitter: 0.2},
		{Workload: "untied", Threads: 3, Steps: 20},
		{Workload: "forkjoin", Threads: 4, Width: 12, Steps: 5, Jitter: 0.2},
		{Workload: "pipeline", Ranks: 2, Threads: 3, Jitter: 0.2},
	}
	checked := 0
	for _, cfg := range cfgs {
		for _, p := range genProcess(t, cfg) {
			first, last := p.TimeRange(nil)
			span := last - first
			for _, w := range [][2]int64{{first, last}, {first + span/3, last - span/4}, {first - 1000, last + 5000}, {first + span/2, first + span/2 + 1}} {
				s := sim.New(p, nil, false)
				s.SetWindow(w[0], w[1])
				bin := max((w[1]-w[0])/37, 1)
				ref := &eagerIntegrals{series: make([]int64, 40), start: w[0], bin: bin, last: w[0]}
				ready := sim.NewReadySeries(w[0], bin, 40)
				if err := s.Run(ompt.NewModel(), ref, ready); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(ref.gotReady, ref.ready) || !reflect.DeepEqual(ref.gotBlocked, ref.blocked) {
					t.Errorf("%s rank %d window %v: integrals %+v %+v, event by event %+v %+v", cfg.Workload, p.Header.Rank, w, ref.gotReady, ref.gotBlocked, ref.ready, ref.blocked)
				}
				if !reflect.DeepEqual(ready.Values, ref.series) {
					t.Errorf("%s rank %d window %v: ready series %v, event by event %v", cfg.Workload, p.Header.Rank, w, ready.Values, ref.series)
				}
				if ref.ready.Value() > 0 {
					checked++
				}
			}
		}
	}
	// A clock that goes back: corrections that move some events of a
	// thread before the thread's previous ones (not what clock
	// synchronization makes, but the integrals must not depend on it).
	for _, p := range genProcess(t, gen.Config{Workload: "stencil", Ranks: 1, Threads: 3, Width: 16, Steps: 8, Jitter: 0.3}) {
		tb := trace.NewTimebase(0, 0, 0, p.NumThreads())
		for th := range p.NumThreads() {
			n := p.Events[th].N
			for idx := int64(5); idx < n; idx += 7 {
				tb.SetCorrection(th, idx, n, -3000*(idx%3))
			}
		}
		first, last := p.TimeRange(nil)
		for k := int64(1); k < 100; k++ { // window bounds all over, some inside a step back
			begin := first + k*(last-first)/100
			s := sim.New(p, tb, false)
			s.SetWindow(begin, begin+(last-first)/3)
			ref := &eagerIntegrals{series: make([]int64, 40), start: first, bin: (last-first)/37 + 1, last: first}
			ready := sim.NewReadySeries(first, (last-first)/37+1, 40)
			if err := s.Run(ompt.NewModel(), ref, ready); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ref.gotReady, ref.ready) || !reflect.DeepEqual(ref.gotBlocked, ref.blocked) || !reflect.DeepEqual(ready.Values, ref.series) {
				t.Fatalf("times going back, window from %d: integrals %+v %+v series %v, event by event %+v %+v %v", begin, ref.gotReady, ref.gotBlocked, ready.Values, ref.ready, ref.blocked, ref.series)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d runs had ready time: the test checks little", checked)
	}
}

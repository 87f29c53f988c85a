package clocksync

import "github.com/ptrace-dev/ptrace/trace"

// location is one CLC location: a process with all its threads merged in
// time order. It walks the process's merged order with one cursor per
// thread, forward (amortization) and then backward (smoothing), and writes
// each event's new time in place. Nothing here allocates per event.
type location struct {
	evs   [][]trace.Event
	order []uint16
	cur   []int
	pos   int // next merged position to process (forward: up, backward: down)
	mdl   model
	itime []int64 // interpolated time by merged position, for the corrections

	// Forward state: the previous event's interpolated and logical time,
	// the anchor of the current γ-run, and the logical time at the last
	// jump (start of the next jump's smoothing window).
	started      bool
	lastT, lastF int64
	anchT, anchF int64
	lastJumpF    int64

	// Backward state: the next event's forward and final times, and the
	// current smoothing ramp b = f + (f − rampX0)·rampScale.
	hasNext      bool
	bNext, fNext int64
	rampX0       int64
	rampScale    float64

	maxCorr, sumCorr int64
}

func newLocation(p *trace.Process, order []uint16, mdl model) *location {
	n := len(order)
	return &location{evs: p.Events, order: order, cur: make([]int, len(p.Events)), mdl: mdl, itime: make([]int64, n)}
}

// logical returns the forward CLC time of an event at interpolated time t,
// before any receive constraint, and the γ term it was compared with.
//
// LC(e_i) = max(LC(e_{i−1}) + min(δ, t_i − t_{i−1}), LC(a) + γ·(t_i − t_a), t_i)
//
// where a is the anchor, the last event whose LC was not set by the γ term:
// while γ wins, LC(e_i) − LC(a) = γ·(t_i − t_a) exactly, the telescoped form
// of LC(e_{i−1}) + γ·(t_i − t_{i−1}) with one rounding instead of one per
// event (per-event rounding would shrink every short interval after a jump
// by up to 1 ns, and halve one of 2 ns). min(δ, …) keeps events the clock
// told apart at least δ apart but leaves events it could not tell apart
// (equal timestamps, common across a process's threads) at equal times.
func (l *location) logical(t int64, p *params) (f, g int64) {
	if !l.started {
		return t, t
	}
	d := max(t-l.lastT, 0)
	g = l.anchF + roundHalfUp(p.gamma*float64(t-l.anchT))
	return max(g, l.lastF+min(p.delta, d), t), g
}

// commit records the forward time f of the event at interpolated time t.
func (l *location) commit(t, f, g int64) {
	if !l.started || f != g {
		l.anchT, l.anchF = t, f
	}
	if !l.started {
		l.started = true
		l.lastJumpF = f
	}
	l.lastT, l.lastF = t, f
}

// forwardTo processes merged positions [pos, end) as internal events.
func (l *location) forwardTo(end int, p *params) {
	order, evs, cur, itime := l.order, l.evs, l.cur, l.itime
	for pos := l.pos; pos < end; pos++ {
		th := order[pos]
		e := &evs[th][cur[th]]
		cur[th]++
		t := l.mdl.apply(e.Time)
		itime[pos] = t
		f, g := l.logical(t, p)
		l.commit(t, f, g)
		e.Time = f
	}
	l.pos = max(l.pos, end)
}

// forwardNode processes the communication event at merged position pos (all
// events before it must be done), with the receive constraint LC ≥ in +
// l_min when hasIn. It returns the event's logical time, the jump the
// constraint caused and the smoothing window [x0, x1] that jump gets.
func (l *location) forwardNode(pos int, in int64, hasIn bool, p *params) (f, jump, x0, x1 int64) {
	th := l.order[pos]
	e := &l.evs[th][l.cur[th]]
	l.cur[th]++
	t := l.mdl.apply(e.Time)
	l.itime[pos] = t
	fint, g := l.logical(t, p)
	if !l.started {
		l.lastJumpF = fint
	}
	f = fint
	if hasIn && in+p.lmin > f {
		f = in + p.lmin
	}
	jump, x0, x1 = f-fint, l.lastJumpF, fint
	l.commit(t, f, g)
	if jump > 0 {
		l.lastJumpF = f
	}
	e.Time = f
	l.pos = pos + 1
	return f, jump, x0, x1
}

// startBackward positions the location after its last event.
func (l *location) startBackward() {
	for t := range l.evs {
		l.cur[t] = len(l.evs[t])
	}
	l.pos = len(l.order) - 1
}

// backStep gives the event at the current position its final time:
//
//	b = min(f + ramp(f), cap, b_next − min(δ, f_next − f))
//
// where f is its forward time, ramp the smoothing of the next jump after
// it, cap (for send-like events) the latest time its receivers allow, and
// the last term keeps the location's order and δ spacing. b ≥ f always
// holds, since every bound is at least f after the forward pass.
func (l *location) backStep(capv int64, hasCap bool, p *params) int64 {
	pos := l.pos
	th := l.order[pos]
	l.cur[th]--
	e := &l.evs[th][l.cur[th]]
	f := e.Time
	b := f
	if l.rampScale != 0 && f > l.rampX0 {
		b += int64(float64(f-l.rampX0) * l.rampScale)
	}
	if hasCap && b > capv {
		b = capv
	}
	if l.hasNext {
		if lim := l.bNext - min(p.delta, l.fNext-f); b > lim {
			b = lim
		}
	}
	c := b - l.itime[pos]
	l.sumCorr += c
	l.maxCorr = max(l.maxCorr, c)
	e.Time = b
	l.bNext, l.fNext, l.hasNext = b, f, true
	l.pos = pos - 1
	return b
}

// backwardTo processes merged positions down to lo (inclusive) as events
// without a receiver's cap.
func (l *location) backwardTo(lo int, p *params) {
	for l.pos >= lo {
		l.backStep(0, false, p)
	}
}

// setRamp starts the smoothing window of a jump for the events before it:
// they move up linearly from 0 at x0 (the previous jump, or the first
// event) to almost the whole jump just before it.
func (l *location) setRamp(jump, x0, x1 int64) {
	l.rampX0, l.rampScale = x0, 0
	if x1 > x0 {
		l.rampScale = float64(jump) / float64(x1-x0)
	}
}

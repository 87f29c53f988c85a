package clocksync

import "github.com/ptrace-dev/ptrace/trace"

// location is one CLC location: a process with all its threads merged in
// time order. It walks the process's merged order forward (amortization)
// and then backward (smoothing) on the recorded times in merged order
// (graph.MergedTimes, turned into interpolated times in place), and records
// each event's correction (final − interpolated time) in the process's
// Timebase. It decodes no event; nothing here allocates per event but the
// correction columns.
type location struct {
	n     []int64 // events per thread
	cur   []int64 // per thread, index of the next event (forward: up, backward: down)
	tb    *trace.Timebase
	order []uint16
	pos   int // next merged position to process (forward: up, backward: down)
	mdl   OffsetModel
	itime []int64 // interpolated time by merged position, for the corrections

	// Forward state: the previous event's interpolated and logical time,
	// the anchor of the current γ-run, the logical time at the last jump
	// (start of the next jump's smoothing window) and its position.
	started      bool
	lastT, lastF int64
	anchT, anchF int64
	lastJumpF    int64
	lastJumpPos  int // −1: no jump

	// Backward state: the next event's forward and final times, and the
	// current smoothing ramp b = f + (f − rampX0)·rampScale.
	hasNext      bool
	bNext, fNext int64
	rampX0       int64
	rampScale    float64

	// Corrections (final − interpolated time): the forward pass adds
	// f − t for every event, the backward pass b − f for those it moves.
	maxCorr, sumCorr int64
}

func newLocation(p *trace.Process, order []uint16, times []int64, mdl OffsetModel) *location {
	nth := p.NumThreads()
	l := &location{n: make([]int64, nth), cur: make([]int64, nth),
		tb: trace.NewTimebase(mdl.off, mdl.at, mdl.slope, nth), order: order, mdl: mdl,
		itime: times, lastJumpPos: -1}
	for th := range l.n {
		l.n[th] = p.Events[th].N
	}
	return l
}

// next returns the thread-local index of the event at merged position
// pos, whose thread is th (positions are visited in order).
func (l *location) next(th uint16) int64 {
	idx := l.cur[th]
	l.cur[th]++
	return idx
}

// setForward records the forward time f of event idx of thread th at
// interpolated time t (corrections start at zero, so f = t costs nothing).
func (l *location) setForward(th uint16, idx, t, f int64) {
	if f != t {
		l.tb.SetCorrection(int(th), idx, l.n[th], f-t)
	}
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
	l.sumCorr += f - t
	l.maxCorr = max(l.maxCorr, f-t)
}

// forwardTo processes merged positions [pos, end) as internal events. It
// is the hot loop of the forward pass, so state lives in locals; while the
// location has no correction (LC = t) every bound of logical is at most t
// — the γ term included, whatever its anchor — so LC = t without the γ
// multiplication, and the anchor, which cannot matter before the next
// jump re-anchors, is kept at the current event.
func (l *location) forwardTo(end int, p *params) {
	if l.pos >= end {
		return
	}
	order, itime := l.order, l.itime
	pos := l.pos
	if !l.started {
		th := order[pos]
		idx := l.next(th)
		t := l.mdl.Apply(itime[pos])
		itime[pos] = t
		f, g := l.logical(t, p)
		l.commit(t, f, g)
		l.setForward(th, idx, t, f)
		pos++
	}
	off, at, slope := l.mdl.off, l.mdl.at, l.mdl.slope
	gamma, delta := p.gamma, p.delta
	lastT, lastF, anchT, anchF := l.lastT, l.lastF, l.anchT, l.anchF
	sum, mx := l.sumCorr, l.maxCorr
	for ; pos < end; pos++ {
		th := order[pos]
		idx := l.next(th)
		rec := itime[pos]
		t := rec + off
		if slope != 0 {
			t += roundHalfUp(float64(rec-at) * slope)
		}
		itime[pos] = t
		if lastF == lastT {
			anchT, anchF = t, t
			lastT, lastF = t, t
			continue
		}
		g := anchF + roundHalfUp(gamma*float64(t-anchT))
		f := lastF + min(delta, max(t-lastT, 0))
		f = max(f, g, t)
		if f != g {
			anchT, anchF = t, f
		}
		lastT, lastF = t, f
		sum += f - t
		mx = max(mx, f-t)
		l.setForward(th, idx, t, f)
	}
	l.lastT, l.lastF, l.anchT, l.anchF = lastT, lastF, anchT, anchF
	l.sumCorr, l.maxCorr = sum, mx
	l.pos = end
}

// forwardNode processes the communication event at merged position pos (all
// events before it must be done), with the receive constraint LC ≥ in +
// l_min when hasIn. It returns the event's logical time, the jump the
// constraint caused and the smoothing window [x0, x1] that jump gets.
func (l *location) forwardNode(pos int, in int64, hasIn bool, p *params) (f, jump, x0, x1 int64) {
	th := l.order[pos]
	idx := l.next(th)
	t := l.mdl.Apply(l.itime[pos])
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
		l.lastJumpF, l.lastJumpPos = f, pos
	}
	l.setForward(th, idx, t, f)
	l.pos = pos + 1
	return f, jump, x0, x1
}

// startBackward positions the location at its last jump. Events after it
// keep their forward times: no later jump ramps them, a receiver's cap is
// never below a send's forward time, and b_next = f_next makes the order
// bound at least f, so the backward pass starts there and costs nothing on
// a location without jumps. Only the thread-index column is read to place
// the cursors.
func (l *location) startBackward() {
	copy(l.cur, l.n)
	for pos := len(l.order) - 1; pos > l.lastJumpPos; pos-- {
		l.cur[l.order[pos]]--
	}
	l.pos = l.lastJumpPos
	if l.pos >= 0 && l.pos+1 < len(l.order) {
		th := l.order[l.pos+1]
		f := l.itime[l.pos+1] + l.tb.Correction(int(th), l.cur[th])
		l.hasNext, l.bNext, l.fNext = true, f, f
	}
}

// tail reports whether merged position pos lies after the backward pass's
// start, where times stay as the forward pass left them.
func (l *location) tail(pos int) bool { return pos > l.lastJumpPos }

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
	idx := l.cur[th]
	t := l.itime[pos]
	f := t + l.tb.Correction(int(th), idx)
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
	l.sumCorr += b - f
	l.maxCorr = max(l.maxCorr, b-t)
	if b != f {
		l.tb.SetCorrection(int(th), idx, l.n[th], b-t)
	}
	l.bNext, l.fNext, l.hasNext = b, f, true
	l.pos = pos - 1
	return b
}

// backwardTo processes merged positions down to lo (inclusive) as events
// without a receiver's cap: backStep's rule with state in locals. Without a
// ramp and with the next event uncorrected (b = f), the bound b_next −
// min(δ, f_next − f) is at least f, so b = f and the event keeps its time.
func (l *location) backwardTo(lo int, p *params) {
	if l.pos < lo {
		return
	}
	if !l.hasNext {
		l.backStep(0, false, p)
	}
	order, cur, itime, tb, n := l.order, l.cur, l.itime, l.tb, l.n
	delta, x0, scale := p.delta, l.rampX0, l.rampScale
	bNext, fNext := l.bNext, l.fNext
	sum, mx := l.sumCorr, l.maxCorr
	for pos := l.pos; pos >= lo; pos-- {
		th := order[pos]
		cur[th]--
		t := itime[pos]
		c := tb.Correction(int(th), cur[th])
		f := t + c
		b := f
		if scale != 0 || bNext != fNext {
			if scale != 0 && f > x0 {
				b += int64(float64(f-x0) * scale)
			}
			b = min(b, bNext-min(delta, fNext-f))
			if b != f {
				tb.SetCorrection(int(th), cur[th], n[th], b-t)
			}
			sum += b - f
			mx = max(mx, b-t)
		}
		bNext, fNext = b, f
	}
	l.bNext, l.fNext = bNext, fNext
	l.sumCorr, l.maxCorr = sum, mx
	l.pos = min(l.pos, lo-1)
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

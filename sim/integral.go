package sim

// Integral is a running ∫ rate dt over a simulation, for a rate that is
// constant between events (δr of POT's Alg. 3: "some task is ready"), with
// its values where it passed the analysis window's bounds. A pass keeps,
// per thread, the value it read when the thread's interval began (Value);
// Over then reads off the part of the interval inside the window in O(1),
// whatever the number of threads.
type Integral struct{ v, atBegin, atEnd int64 }

// Add integrates rate over (prev, prev+dt], noting the values at the
// window's bounds when it passes them.
func (g *Integral) Add(s *Sim, prev, dt, rate int64) {
	now := prev + dt
	if prev < s.Begin && s.Begin <= now {
		g.atBegin = g.v + rate*(s.Begin-prev)
	}
	if prev < s.End && s.End <= now {
		g.atEnd = g.v + rate*(s.End-prev)
	}
	g.v += rate * dt
}

// Value returns the integral up to where it has been added.
func (g *Integral) Value() int64 { return g.v }

// Over returns the integral over an interval from since, when the integral
// read mark, to now (the integral's current end), cut to the window.
func (g *Integral) Over(s *Sim, since, mark, now int64) int64 {
	from, to := mark, g.v
	if since < s.Begin {
		from = g.atBegin
	}
	if now > s.End {
		to = g.atEnd
	}
	return to - from
}

package otf2

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// Recording gaps. Score-P's user API (SCOREP_RECORDING_OFF/ON) and its
// selective recording switch a process's recording off and on: a
// MeasurementOnOff record (OTF2_MEASUREMENT_OFF, then _ON) on the location
// that switched, nothing at all in between, on any of the process's
// locations. The gap is time the trace says nothing about: the analysis
// must not read it as the work or the MPI time of the state before it
// (docs/otf2.md, "Recording switched off").
//
// A message or collective one process recorded while its partner was not
// recording has only one side in the archive, and MPI's order of matching
// then pairs later records wrongly: false wait states, false clock
// violations. Given the union of every process's gaps (the driver gathers
// them from a first conversion), a conversion drops the communication
// records that fall inside it and moves the rest onto copies of their
// communicators, one per stretch between two gaps, so that a message or
// collective never pairs across a gap.

// Gap is a time a process recorded nothing: from the record switching its
// recording off to the one switching it on again (or to the location's
// last record when none does), in converted ns.
type Gap struct{ Off, On int64 }

// measurement modes of MeasurementOnOff (OTF2_MeasurementMode)
const (
	measurementOn  = 1
	measurementOff = 2
)

// onOff notes a MeasurementOnOff record of location t at now (pass 1).
func (c *conv) onOff(t int, mode uint64, now int64) {
	switch {
	case mode == measurementOff && c.offAt[t] < 0:
		c.offAt[t] = now
	case mode == measurementOn && c.offAt[t] >= 0:
		c.addGap(t, c.offAt[t], now)
		c.offAt[t] = -1
	}
}

// addGap keeps a gap that lasts: recording switched off at a location's
// last record (or on again at once) leaves nothing out.
func (c *conv) addGap(t int, off, on int64) {
	if on > off {
		c.st.Gaps = append(c.st.Gaps, Gap{off, on})
		c.offs[t] = append(c.offs[t], off)
	}
}

// endGaps closes location t's gap at its last record when recording was
// not switched on again (pass 1, after the location's file).
func (c *conv) endGaps(t int) {
	if c.offAt[t] >= 0 {
		c.addGap(t, c.offAt[t], c.last[t])
		c.offAt[t] = -1
	}
}

// MergeGaps returns the union of gaps as disjoint gaps in time order.
func MergeGaps(gaps []Gap) []Gap {
	g := slices.Clone(gaps)
	slices.SortFunc(g, func(a, b Gap) int { return cmp.Or(cmp.Compare(a.Off, b.Off), cmp.Compare(a.On, b.On)) })
	out := g[:0]
	for _, x := range g {
		if n := len(out); n > 0 && x.Off <= out[n-1].On {
			out[n-1].On = max(out[n-1].On, x.On)
			continue
		}
		out = append(out, x)
	}
	return out
}

// gapWarning describes the process's own gaps (merged after pass 1).
func (c *conv) gapWarning(name string) {
	if len(c.st.Gaps) == 0 {
		return
	}
	var sum int64
	for _, g := range c.st.Gaps {
		sum += g.On - g.Off
	}
	g := c.st.Gaps[0]
	times := "once"
	if n := len(c.st.Gaps); n > 1 {
		times = fmt.Sprintf("%d times", n)
	}
	c.st.Warnings = append(c.st.Warnings, fmt.Sprintf("%s: recording switched off %s (MEASUREMENT_ON_OFF), %s in all, the first from %s to %s: the archive holds nothing of that time",
		name, times, fmtNS(sum), fmtNS(g.Off), fmtNS(g.On)))
}

// fmtNS prints ns as ms with µs.
func fmtNS(ns int64) string { return fmt.Sprintf("%.3f ms", float64(ns)/1e6) }

// stretch returns the index of the stretch between the cut's gaps that
// holds time t, and whether t falls inside a gap of the cut.
func (c *conv) stretch(t int64) (int, bool) {
	k, _ := slices.BinarySearchFunc(c.cut, t, func(g Gap, t int64) int {
		switch {
		case g.On < t:
			return -1
		case g.Off > t:
			return 1
		}
		return 0
	})
	if k < len(c.cut) && c.cut[k].Off <= t && t <= c.cut[k].On {
		return k, true
	}
	return k, false
}

// cutComm returns the communicator index of a communication record at
// time t on communicator index ci (its stretch's copy), and false when the
// record falls inside a gap of the cut (dropped, and counted).
func (c *conv) cutComm(ci int64, t int64) (int64, bool) {
	if len(c.cut) == 0 {
		return ci, true
	}
	s, in := c.stretch(t)
	if in {
		if !c.beforeOwnOff(s, t) {
			c.st.CutRecords++
			return 0, false
		}
		c.st.KeptRecords++
	}
	if s == 0 || ci < 0 || ci >= int64(len(c.commList)) {
		return ci, true
	}
	key := [2]int64{int64(s), ci}
	if k, ok := c.commCopies[key]; ok {
		return k, true
	}
	if c.commCopies == nil {
		c.commCopies = map[[2]int64]int64{}
	}
	cm := c.commList[ci]
	cm.Index = len(c.commList) + len(c.commCopies)
	cm.ID |= trace.CommStretch | int64(s)<<32
	cm.Name = fmt.Sprintf("%s (recorded stretch %d)", cm.Name, s+1)
	c.w.AddComm(cm)
	c.commCopies[key] = int64(cm.Index)
	return int64(cm.Index), true
}

// beforeOwnOff reports whether time t, inside gap k of the cut, precedes
// the process's own switching off within that gap: the process recorded
// it, and it belongs to the stretch before the gap (index k). What each
// process recorded before its own OFF is, on every channel and
// communicator, a prefix of what it did (recording stops at the OFF), and
// MPI pairs messages and collectives in order, so the prefixes pair as the
// run did: what has no partner there is an unmatched record at the end of
// the stretch, and nothing after it in the stretch to pair wrongly with (a
// receive recorded just before one process's OFF, its send just before the
// other's, later: both kept and paired, where the union alone dropped the
// later one and left the earlier unmatched). After an ON the records are a
// suffix, which pairs only from the end: those inside the cut stay dropped.
// A process without a gap of its own inside gap k keeps nothing there.
func (c *conv) beforeOwnOff(k int, t int64) bool {
	if k >= len(c.cut) {
		return false
	}
	j, _ := slices.BinarySearch(c.ownOffs, c.cut[k].Off)
	return j < len(c.ownOffs) && c.ownOffs[j] <= c.cut[k].On && t < c.ownOffs[j]
}

// cutComms keeps the process's communicators, whose copies for the
// stretches after the first cutComm adds as records use them: the same
// members, the id moved above OTF2's 32-bit ids, the next free index. A
// copy of every communicator for every stretch took gaps × communicators
// (20 k gaps of 51 communicators: a table of 82 MB, over the trace's
// limit).
func (c *conv) cutComms(list []trace.Communicator) {
	if len(c.cut) > 0 {
		c.commList = list
	}
}

// A code region whose Leave falls inside a gap is never left in the
// archive (Score-P records the regions' Enter and Leave only while
// recording): every later call would sit inside it. Pass 1 finds the code
// regions a location enters and never leaves although recording was
// switched off after their Enter; pass 2 leaves them where recording
// stopped, with a warning.

// openCode is a code region entered and not left yet (pass 1): its
// region, the count of code-region Enters on the location before it, and
// the time and offset of its Enter.
type openCode struct {
	id      uint32
	seq     int
	at, off int64
}

// codeEnter and codeLeave follow location t's code regions (pass 1).
func (c *conv) codeEnter(t int, id uint32, now, off int64) {
	c.codeOpen[t] = append(c.codeOpen[t], openCode{id: id, seq: c.codeSeq[t], at: now, off: off})
	c.codeSeq[t]++
}

// codeLeave closes the innermost open entry of region id, as pass 2
// does (nesting.go: the entries above it stay open); a Leave of a region
// not open near the top is skipped there and here alike.
func (c *conv) codeLeave(t int, id uint32) {
	s := c.codeOpen[t]
	if k := innermost(len(s), func(k int) uint32 { return s[k].id }, id); k >= 0 {
		c.codeOpen[t] = append(s[:k], s[k+1:]...)
	}
}

// unleftRegions marks, at the end of location t's pass 1, the code regions
// it never leaves that were open when recording was switched off.
func (c *conv) unleftRegions(t int) {
	for _, o := range c.codeOpen[t] {
		// the first Off at or after the Enter (the Offs are in time order)
		k, _ := slices.BinarySearch(c.offs[t], o.at)
		if k == len(c.offs[t]) {
			continue // open to the end (a truncated run): as before
		}
		if c.unleft[t] == nil {
			c.unleft[t] = map[int]bool{}
		}
		c.unleft[t][o.seq] = true
		name := fmt.Sprintf("region %d", o.id)
		if r := c.a.Defs.Region(o.id); r != nil {
			name = r.Name
		}
		c.unleftCount.add("%s: offset %d: region %q, entered before recording was switched off, is never left (its Leave fell into the gap): taken as left where recording stopped, at %s",
			c.a.evtPath(c.p.locations[t].ID), o.off, name, fmtNS(c.offs[t][k]))
	}
	c.codeOpen[t] = nil
}

// enterUnleft counts a code-region Enter of pass 2 and keeps the region
// when pass 1 found it never left.
func (h *thr) enterUnleft(id uint32) {
	if h.c.unleft[h.t][h.codeSeq] {
		h.unleft = append(h.unleft, id)
	}
	h.codeSeq++
}

// offUnleft leaves, where recording stops, the regions that are never left.
func (h *thr) offUnleft(now int64) {
	for k := len(h.unleft) - 1; k >= 0; k-- {
		id := h.unleft[k]
		if r := h.c.a.Defs.Region(id); r != nil {
			h.c.region(h, false, now, id, r)
		}
	}
	h.unleft = h.unleft[:0]
}

// A parallel region whose end falls into a gap is never joined in the
// archive: every later parallel region would nest inside it. Score-P
// refuses to switch recording inside a parallel region, but not inside a
// team of one thread (it is not "in parallel" then): its ThreadTeamEnd and
// ThreadJoin fall into the gap. Pass 1 finds the forks a location never
// joins although recording was switched off after them; pass 2 ends them,
// implicit task and region, where recording stopped, with a warning.

// unjoinedForks marks, at the end of location t's pass 1, the forks it
// never joins that were open when recording was switched off.
func (c *conv) unjoinedForks(t int) {
	for _, o := range c.forkOpen[t] {
		k, _ := slices.BinarySearch(c.offs[t], o.at)
		if k == len(c.offs[t]) {
			continue // open to the end (a truncated run): as before
		}
		if c.unjoined == nil {
			c.unjoined = map[int64]bool{}
		}
		c.unjoined[c.forks[t][o.seq].par] = true
		c.unjoinedCt.add("%s: offset %d: parallel region forked before recording was switched off is never joined (its end fell into the gap): ended where recording stopped, at %s",
			c.a.evtPath(c.p.locations[t].ID), o.off, fmtNS(c.offs[t][k]))
	}
	c.forkOpen[t] = nil
}

// offUnjoined ends, where recording stops, the parallel regions that are
// never joined, innermost first: the thread's implicit task in each, then
// the region.
func (h *thr) offUnjoined(now int64) {
	for n := len(h.forks); n > 0 && h.c.unjoined[h.forks[n-1]]; n = len(h.forks) {
		par := h.forks[n-1]
		h.forks = h.forks[:n-1]
		if f := h.par(); len(h.pars) > 0 && f.par == par {
			h.endImplicit(now, f.legacy)
		}
		h.emit(trace.ParallelEnd, now, par, h.cur(), ompt.ParallelInvokerProgram|ompt.ParallelTeam, 0)
	}
}

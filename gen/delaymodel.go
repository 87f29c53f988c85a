package gen

import "slices"

// The delay costs a schedule implies (Böhme et al., ICPP 2010, as Scalasca
// 2.6's scout computes them; docs/report-schema.md, wait_states): a plain
// restatement of the definitions over a workload's planned calls, one
// process after the other, with no distribution, no narrow columns and
// floating-point shares, so that the analysis (package waitstate) is
// checked against it.

// dmCall is an MPI call of a rank's schedule as the delay model sees it.
type dmCall struct {
	site        string // its call path: function and call site
	enter, exit int64
	// codes is the time outside MPI since the rank's previous call, per
	// code (call path of computation).
	codes []dmCode
	syncs []dmSync // its synchronization points, in event order
}

type dmCode struct {
	code string
	ns   int64
}

// dmSync is a synchronization point: with whom, its wait (if any), the
// process waited for and that process's point (call, index in it), its
// completion time.
type dmSync struct {
	partners []int // nil: every rank
	wait     int64
	pat      string
	cause    int // −1: none
	// causeCall and causeSync locate the cause's synchronization point.
	causeCall, causeSync int
	compl                int64
	coll                 bool // a collective's wait: its share is not capped at 1
}

// noWait is a synchronization point without a wait, with partners.
func noWait(compl int64, partners ...int) dmSync {
	if partners == nil {
		partners = []int{}
	}
	return dmSync{partners: partners, cause: -1, compl: compl}
}

// everyone is a synchronization point of all ranks (a barrier's member,
// MPI_Init).
func everyone(compl int64) dmSync { return dmSync{cause: -1, compl: compl} }

// patterns indexes the patterns a wait's propagated costs are kept by.
var patterns = map[string]int{"late_sender": 0, "late_receiver": 1, "wait_barrier": 2, "wait_nxn": 3, "late_broadcast": 4, "early_reduce": 5,
	"wait_for_progress": 6}

// delayCosts returns per rank its short-term and long-term delay costs.
func delayCosts(ranks [][]dmCall) (short, long []float64) {
	R := len(ranks)
	type point struct {
		call int
		s    *dmSync
		cost [7]float64 // costs propagated to its wait, by pattern
	}
	pts := make([][]point, R)
	first := make([][]int, R) // per rank and call: its first point
	// Call paths by number: a call's site, and "code:" + a code.
	ids := map[string]int{}
	id := func(name string) int {
		if n, ok := ids[name]; ok {
			return n
		}
		ids[name] = len(ids)
		return len(ids) - 1
	}
	siteID, codeIDs := make([][]int, R), make([][][]int, R)
	for r := range ranks {
		n := 0
		for k := range ranks[r] {
			n += len(ranks[r][k].syncs)
		}
		pts[r] = make([]point, 0, n)
		first[r] = make([]int, len(ranks[r]))
		siteID[r], codeIDs[r] = make([]int, len(ranks[r])), make([][]int, len(ranks[r]))
		for k := range ranks[r] {
			first[r][k] = len(pts[r])
			siteID[r][k] = id(ranks[r][k].site)
			for _, x := range ranks[r][k].codes {
				codeIDs[r][k] = append(codeIDs[r][k], id("code:"+x.code))
			}
			for j := range ranks[r][k].syncs {
				pts[r] = append(pts[r], point{call: k, s: &ranks[r][k].syncs[j]})
			}
		}
	}
	m, tw := make([]float64, len(ids)), make([]float64, len(ids)) // time maps, by call path
	with := func(s *dmSync, r int) bool {
		if s.partners == nil {
			return true
		}
		for _, p := range s.partners {
			if p == r {
				return true
			}
		}
		return false
	}
	prev := func(r, q, partner int) int {
		for j := q - 1; j >= 0; j-- {
			if with(pts[r][j].s, partner) {
				return j
			}
		}
		return -1
	}
	// timeMap: rank r's time per call path from point a's call's enter
	// to point b's call's enter, less the waits between, less a's call
	// but for its completion (in m); and the waiting between.
	timeMap := func(r, a, b int) float64 {
		clear(m)
		ka, kb := 0, pts[r][b].call
		if a >= 0 {
			ka = pts[r][a].call
		}
		for k := ka; k < kb; k++ {
			c := &ranks[r][k]
			m[siteID[r][k]] += float64(c.exit - c.enter)
			for x, n := range codeIDs[r][k+1] {
				m[n] += float64(ranks[r][k+1].codes[x].ns)
			}
		}
		var W float64
		for j := a + 1; j < b; j++ {
			if w := pts[r][j].s.wait; w > 0 {
				m[siteID[r][pts[r][j].call]] -= float64(w)
				W += float64(w)
			}
		}
		for n, v := range m {
			m[n] = max(v, 0)
		}
		if a >= 0 {
			c := &ranks[r][ka]
			n := siteID[r][ka]
			m[n] = max(m[n]-float64(c.exit-c.enter-pts[r][a].s.compl), 0)
		}
		return W
	}
	// A collective root c's group at its point cp: the point before where
	// every other rank last synchronized with c (prevAll), and those
	// after it where some did (inter, descending).
	type group struct {
		prevAll int
		inter   []int
	}
	scanGroup := func(c, cp int) group {
		met := make([]bool, R)
		met[c] = true
		g, left := group{prevAll: -1}, R-1
		for q := cp - 1; q >= 0 && left > 0; q-- {
			s := pts[c][q].s
			if s.partners == nil {
				g.prevAll = q
				break
			}
			var newly []int
			for _, r := range s.partners {
				if !met[r] && !slices.Contains(newly, r) {
					newly = append(newly, r)
				}
			}
			switch {
			case len(newly) == left:
				g.prevAll = q
				left = 0
			case len(newly) > 0:
				g.inter = append(g.inter, q)
				for _, r := range newly {
					met[r] = true
				}
				left -= len(newly)
			}
		}
		return g
	}
	// groupLo is where the waits of collective root c's interval begin to
	// receive a member's costs, the member having synchronized with c
	// last at pc: after the point where every other rank last
	// synchronized with c, when the member did there; else from the next
	// point where another member last did, if any (scout's sum scales).
	groups := map[[2]int]group{}
	groupLo := func(c, cp, pc int) int {
		g, ok := groups[[2]int{c, cp}]
		if !ok {
			g = scanGroup(c, cp)
			groups[[2]int{c, cp}] = g
		}
		if pc <= g.prevAll {
			return pc + 1
		}
		next := cp
		for _, q := range g.inter {
			if q > pc {
				next = q
			}
		}
		return next
	}
	type task struct {
		waiter, wp, cause, cp, lo int
		d, den                    float64
		done                      bool
	}
	n := 0
	for r := range pts {
		for q := range pts[r] {
			if s := pts[r][q].s; s.wait > 0 && s.cause >= 0 {
				n++
			}
		}
	}
	tasks := make([]task, 0, n)
	short, long = make([]float64, R), make([]float64, R)
	for r := range pts {
		for q := range pts[r] {
			s := pts[r][q].s
			if s.wait <= 0 || s.cause < 0 {
				continue
			}
			c := s.cause
			cp := first[c][s.causeCall] + s.causeSync
			timeMap(r, prev(r, q, c), q)
			copy(tw, m)
			pc := prev(c, cp, r)
			W := timeMap(c, pc, cp)
			var D float64
			for n, v := range m {
				if d := v - tw[n]; d > 0 {
					D += d
				}
			}
			t := task{waiter: r, wp: q, cause: c, cp: cp, lo: pc + 1, d: D, den: D + W}
			if s.coll {
				t.lo = groupLo(c, cp, pc)
			}
			if t.den > 0 {
				scale := float64(s.wait) / t.den
				if !s.coll {
					scale = min(scale, 1)
				}
				short[c] += scale * D
				for j := t.lo; j < cp; j++ {
					if w := pts[c][j].s.wait; w > 0 {
						pts[c][j].cost[patterns[s.pat]] += scale * float64(w)
					}
				}
			}
			tasks = append(tasks, t)
		}
	}
	// The backward replay: a task passes on the costs of its wait once
	// every task of the waiter after that wait has (the waiter's highest
	// task not done is at or before the wait).
	byCause, byWaiter := make([][]int, R), make([][]int, R)
	for i := range tasks {
		byCause[tasks[i].cause] = append(byCause[tasks[i].cause], i)
		byWaiter[tasks[i].waiter] = append(byWaiter[tasks[i].waiter], i)
	}
	for r := 0; r < R; r++ {
		slices.SortFunc(byCause[r], func(x, y int) int { return tasks[y].cp - tasks[x].cp })
		slices.SortFunc(byWaiter[r], func(x, y int) int { return tasks[y].wp - tasks[x].wp })
	}
	hi, released := make([]int, R), make([]int, R)
	var queue []int
	release := func(r int) {
		for hi[r] < len(byCause[r]) && tasks[byCause[r][hi[r]]].done {
			hi[r]++
		}
		bound := -1
		if hi[r] < len(byCause[r]) {
			bound = tasks[byCause[r][hi[r]]].cp
		}
		for ; released[r] < len(byWaiter[r]) && tasks[byWaiter[r][released[r]]].wp >= bound; released[r]++ {
			queue = append(queue, byWaiter[r][released[r]])
		}
	}
	for r := 0; r < R; r++ {
		release(r)
	}
	for done := 0; done < len(tasks); done++ {
		if len(queue) == 0 {
			panic("gen: the delay model's replay is circular")
		}
		t := &tasks[queue[0]]
		queue = queue[1:]
		t.done = true
		if t.den > 0 {
			for pat, v := range pts[t.waiter][t.wp].cost {
				scale := v / t.den
				long[t.cause] += scale * t.d
				for j := t.lo; j < t.cp; j++ {
					if w := pts[t.cause][j].s.wait; w > 0 {
						pts[t.cause][j].cost[pat] += scale * float64(w)
					}
				}
			}
		}
		release(t.cause)
	}
	return short, long
}

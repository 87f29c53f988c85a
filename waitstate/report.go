package waitstate

import (
	"sort"

	"github.com/ptrace-dev/ptrace/report"
)

// entry returns the index of key k's row in *rows, appending row() under a
// new index when k has none yet: the rows keep the order keys first came.
func entry[K comparable, R any](index map[K]int, rows *[]R, k K, row func() R) int {
	i, ok := index[k]
	if !ok {
		i = len(*rows)
		index[k] = i
		*rows = append(*rows, row())
	}
	return i
}

// Report sums the gathered rows into the report's section: totals, call
// sites (most waiting first) and processes (in rank order). It returns nil
// when no MPI call fell in the window, so reports of traces without MPI
// have no section.
func Report(rows []Row, causes []Cause, delays []Delay) *report.WaitStates {
	if len(rows) == 0 {
		return nil
	}
	ws := &report.WaitStates{}
	type key struct{ fn, site, region string }
	sites := map[key]int{}
	procs := map[int]int{}
	for k := range rows {
		r := &rows[k]
		add(&ws.WaitTimes, r)
		s := entry(sites, &ws.CallSites, key{r.Func, r.Site, r.Region}, func() report.WaitSite {
			return report.WaitSite{Func: r.Func, Site: r.Site, Region: r.Region}
		})
		add(&ws.CallSites[s].WaitTimes, r)
		p := entry(procs, &ws.PerProcess, r.Rank, func() report.WaitProcess { return report.WaitProcess{Rank: r.Rank} })
		add(&ws.PerProcess[p].WaitTimes, r)
	}
	sort.SliceStable(ws.CallSites, func(i, j int) bool {
		a, b := &ws.CallSites[i], &ws.CallSites[j]
		if wa, wb := a.Waiting(), b.Waiting(); wa != wb {
			return wa > wb
		}
		if a.MPINS != b.MPINS {
			return a.MPINS > b.MPINS
		}
		if a.Func != b.Func {
			return a.Func < b.Func
		}
		if a.Site != b.Site {
			return a.Site < b.Site
		}
		return a.Region < b.Region
	})
	sort.SliceStable(ws.PerProcess, func(i, j int) bool { return ws.PerProcess[i].Rank < ws.PerProcess[j].Rank })
	type ckey struct {
		rank             int
		fn, site, region string
		pat              Pattern
	}
	byKey := map[ckey]int{}
	for i := range ws.PerProcess {
		procs[ws.PerProcess[i].Rank] = i
	}
	total := ws.Waiting()
	ws.Causes = []report.WaitCause{}
	for _, c := range causes {
		p := entry(procs, &ws.PerProcess, c.Rank, func() report.WaitProcess { return report.WaitProcess{Rank: c.Rank} })
		ws.PerProcess[p].CausedNS += c.NS
		j := entry(byKey, &ws.Causes, ckey{c.Rank, c.Func, c.Site, c.Region, c.Pattern}, func() report.WaitCause {
			return report.WaitCause{Rank: c.Rank, Func: c.Func, Site: c.Site, Region: c.Region, Pattern: c.Pattern.String()}
		})
		ws.Causes[j].NS += c.NS
		ws.Causes[j].Calls += c.Calls
	}
	// A cause may have added a process without MPI time of its own.
	sort.SliceStable(ws.PerProcess, func(i, j int) bool { return ws.PerProcess[i].Rank < ws.PerProcess[j].Rank })
	for i := range ws.Causes {
		if total > 0 {
			ws.Causes[i].Share = float64(ws.Causes[i].NS) / float64(total)
		}
	}
	type dkey struct {
		rank       int
		code, site string
		pat        Pattern
	}
	dIdx := map[dkey]int{}
	for i := range ws.PerProcess {
		procs[ws.PerProcess[i].Rank] = i
	}
	ws.Delays = []report.WaitDelay{}
	for _, d := range delays {
		j := entry(dIdx, &ws.Delays, dkey{d.Rank, d.Label, d.Site, d.Pattern}, func() report.WaitDelay {
			return report.WaitDelay{Rank: d.Rank, Code: d.Label, Site: d.Site, Pattern: d.Pattern.String()}
		})
		ws.Delays[j].NS += d.NS
		ws.Delays[j].LongTermNS += d.LongTerm
		ws.Delays[j].PropagatedNS += d.Propagated
		ws.Delays[j].Waits += d.Waits
		if p, ok := procs[d.Rank]; ok {
			ws.PerProcess[p].DelayNS += d.NS
			ws.PerProcess[p].LongTermNS += d.LongTerm
		}
	}
	for i := range ws.Delays {
		if total > 0 {
			ws.Delays[i].Share = float64(ws.Delays[i].NS) / float64(total)
		}
	}
	sort.SliceStable(ws.Delays, func(i, j int) bool {
		// By total cost (Böhme et al.): a delay whose waits propagated
		// far comes before one that only caused its own.
		a, b := &ws.Delays[i], &ws.Delays[j]
		if ta, tb := a.NS+a.LongTermNS, b.NS+b.LongTermNS; ta != tb {
			return ta > tb
		}
		if a.NS != b.NS {
			return a.NS > b.NS
		}
		if a.Rank != b.Rank {
			return a.Rank < b.Rank
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		if a.Site != b.Site {
			return a.Site < b.Site
		}
		return a.Pattern < b.Pattern
	})
	sort.SliceStable(ws.Causes, func(i, j int) bool {
		a, b := &ws.Causes[i], &ws.Causes[j]
		if a.NS != b.NS {
			return a.NS > b.NS
		}
		if a.Rank != b.Rank {
			return a.Rank < b.Rank
		}
		if a.Func != b.Func {
			return a.Func < b.Func
		}
		if a.Site != b.Site {
			return a.Site < b.Site
		}
		if a.Region != b.Region {
			return a.Region < b.Region
		}
		return a.Pattern < b.Pattern
	})
	return ws
}

// EmptyReport returns a section without MPI calls, for the OpenMP part
// alone.
func EmptyReport() *report.WaitStates {
	return &report.WaitStates{CallSites: []report.WaitSite{}, PerProcess: []report.WaitProcess{}, Causes: []report.WaitCause{}, Delays: []report.WaitDelay{}}
}

func add(t *report.WaitTimes, r *Row) {
	t.MPINS += r.MPINS
	t.Calls += r.Calls
	t.LateSenderNS += r.Wait[LateSender]
	t.LateReceiverNS += r.Wait[LateReceiver]
	t.WaitNxNNS += r.Wait[WaitNxN]
	t.WaitBarrierNS += r.Wait[WaitBarrier]
	t.LateBroadcastNS += r.Wait[LateBroadcast]
	t.EarlyReduceNS += r.Wait[EarlyReduce]
	t.WaitAtFenceNS += r.Wait[WaitAtFence]
	t.WaitAtWinCreateNS += r.Wait[WaitAtWinCreate]
	t.WaitAtWinFreeNS += r.Wait[WaitAtWinFree]
	t.LatePostNS += r.Wait[LatePost]
	t.EarlyWaitNS += r.Wait[EarlyWait]
	t.LockContentionNS += r.Wait[LockContention]
	t.WaitForProgressNS += r.Wait[WaitForProgress]
	t.OtherNS += r.Other()
	for p := None + 1; p < NumPatterns; p++ {
		t.WaitingCalls += r.Count[p]
	}
}

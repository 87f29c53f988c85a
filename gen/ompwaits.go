package gen

import "sort"

// ompWait is one process's expected OpenMP wait states (the report's
// wait_states.openmp): time not working per sync construct and per reason.
type ompWait struct {
	rank                                  int
	barrier, taskwait, taskgroup, outside int64
	ready, deps, none                     int64
}

// ompConstruct is one construct's expected row over all processes.
type ompConstruct struct {
	kind, construct, region string
	count, waiting          int64
	ready, deps, none       int64
}

// setOMPWaits records the OpenMP wait states of a workload whose threads
// wait only in implicit barriers, taskwaits, taskgroups and outside any
// construct.
func setOMPWaits(e Expected, procs []ompWait, cons []ompConstruct) {
	var tot ompWait
	rows := make([]any, len(procs))
	for i, p := range procs {
		tot.barrier += p.barrier
		tot.taskwait += p.taskwait
		tot.taskgroup += p.taskgroup
		tot.outside += p.outside
		tot.ready += p.ready
		tot.deps += p.deps
		tot.none += p.none
		m := ompTimes(p)
		m["rank"] = p.rank
		rows[i] = m
	}
	for k, v := range ompTimes(tot) {
		e.set("wait_states.openmp."+k, v)
	}
	e.set("wait_states.openmp.per_process", rows)
	var kept []ompConstruct
	for _, c := range cons {
		if c.count > 0 || c.waiting > 0 {
			kept = append(kept, c)
		}
	}
	// The report's order: most waiting first, then kind, construct, region.
	sort.SliceStable(kept, func(i, j int) bool {
		a, b := &kept[i], &kept[j]
		if a.waiting != b.waiting {
			return a.waiting > b.waiting
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.construct != b.construct {
			return a.construct < b.construct
		}
		return a.region < b.region
	})
	cr := make([]any, len(kept))
	for i, c := range kept {
		m := map[string]any{"kind": c.kind, "count": c.count, "waiting_ns": c.waiting,
			"task_ready_ns": c.ready, "dependences_ns": c.deps, "no_task_ns": c.none}
		if c.construct != "" {
			m["construct"] = c.construct
		}
		if c.region != "" {
			m["region"] = c.region
		}
		cr[i] = m
	}
	e.set("wait_states.openmp.constructs", cr)
}

func ompTimes(p ompWait) map[string]any {
	return map[string]any{
		"waiting_ns":          p.barrier + p.taskwait + p.taskgroup + p.outside,
		"barrier_implicit_ns": p.barrier, "barrier_explicit_ns": 0, "taskwait_ns": p.taskwait,
		"taskgroup_ns": p.taskgroup, "other_sync_ns": 0, "outside_sync_ns": p.outside,
		"task_ready_ns": p.ready, "dependences_ns": p.deps, "no_task_ns": p.none,
	}
}

// gapsBefore returns how much of the gaps between [0, end] and the busy
// intervals (sorted by start, disjoint) lies before t.
func gapsBefore(busy [][2]int64, end, t int64) int64 {
	t = min(t, end)
	var idle, at int64
	for _, b := range busy {
		if b[0] > at {
			idle += max(0, min(b[0], t)-at)
		}
		at = max(at, b[1])
	}
	if end > at {
		idle += max(0, t-at)
	}
	return idle
}

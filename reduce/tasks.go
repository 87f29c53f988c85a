package reduce

import (
	"fmt"
	"sort"
)

// ConstructRow is one construct's task statistics in one process.
type ConstructRow struct {
	Name     string
	Kind     string
	Count    int64
	Executed int64
	SumNS    int64
	MinNS    int64
	MaxNS    int64
	CreateNS int64
	Hist     []int64
}

// Construct is a construct's statistics over all processes.
type Construct struct {
	ConstructRow
	MeanNS int64
	Share  float64 // of all task execution time
}

// MergeConstructs combines per-process rows (given in process order) by
// construct name and kind, ordered by total time (then name).
func MergeConstructs(rows [][]ConstructRow) []Construct {
	idx := map[string]int{}
	var out []Construct
	var total int64
	for _, proc := range rows {
		for _, r := range proc {
			key := r.Kind + "\x00" + r.Name
			i, ok := idx[key]
			if !ok {
				i = len(out)
				idx[key] = i
				c := Construct{ConstructRow: r}
				c.Hist = append([]int64(nil), r.Hist...)
				out = append(out, c)
				total += r.SumNS
				continue
			}
			c := &out[i]
			if r.Executed > 0 && (c.Executed == 0 || r.MinNS < c.MinNS) {
				c.MinNS = r.MinNS
			}
			c.MaxNS = max(c.MaxNS, r.MaxNS)
			c.Count += r.Count
			c.Executed += r.Executed
			c.SumNS += r.SumNS
			c.CreateNS += r.CreateNS
			for len(c.Hist) < len(r.Hist) {
				c.Hist = append(c.Hist, 0)
			}
			for b, v := range r.Hist {
				c.Hist[b] += v
			}
			total += r.SumNS
		}
	}
	for i := range out {
		c := &out[i]
		if c.Executed > 0 {
			c.MeanNS = c.SumNS / c.Executed
		}
		if total > 0 {
			c.Share = float64(c.SumNS) / float64(total)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].SumNS != out[j].SumNS {
			return out[i].SumNS > out[j].SumNS
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Finding is a plain-language diagnosis.
type Finding struct {
	Severity string // "info", "warning", "problem"
	Topic    string
	Message  string
}

// GranularityLimitNS is POT's accuracy limit: below about 16 µs per task,
// measurement bias and runtime overheads are no longer negligible (seed
// pot-dependent-task-time-breakdown.txt §4.2).
const GranularityLimitNS = 16_000

// TaskFindings diagnoses task granularity per construct (Score-P §VI,
// POT §4.2): too fine tasks, and creation costing as much as execution.
func TaskFindings(cs []Construct, threads int) []Finding {
	var f []Finding
	for _, c := range cs {
		if c.Executed < 10 {
			continue
		}
		if c.MeanNS < GranularityLimitNS {
			f = append(f, Finding{Severity: "problem", Topic: "granularity",
				Message: fmt.Sprintf("tasks of %s last %s on average, below the ~16 µs where runtime and measurement overheads stop being negligible: coarsen them (bigger blocks, a recursion cut-off)", c.Name, fmtNS(c.MeanNS))})
		}
		if c.Count > 0 && c.CreateNS/c.Count*2 >= max(c.MeanNS, 1) {
			f = append(f, Finding{Severity: "warning", Topic: "creation",
				Message: fmt.Sprintf("creating a task of %s takes up to %s, comparable to its %s execution: task management dominates", c.Name, fmtNS(c.CreateNS/c.Count), fmtNS(c.MeanNS))})
		}
		if threads > 1 && c.Executed < int64(threads) && c.Share > 0.5 {
			f = append(f, Finding{Severity: "warning", Topic: "parallelism",
				Message: fmt.Sprintf("%s holds %.0f%% of the task time in only %d tasks for %d threads: not enough tasks to keep every thread busy", c.Name, 100*c.Share, c.Executed, threads)})
		}
	}
	return f
}

func fmtNS(ns int64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.3g s", float64(ns)/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.3g ms", float64(ns)/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3g µs", float64(ns)/1e3)
	}
	return fmt.Sprintf("%d ns", ns)
}

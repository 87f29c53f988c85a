package gen

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
)

// FamilyResult summarises what GenerateFamily wrote: one run per thread
// count, in increasing order, and the compare values expected over them.
type FamilyResult struct {
	Runs     []*Result
	Dirs     []string
	Expected Expected // under the keys of ptrace compare --json
}

// FamilyDir names the member of a family run at threads threads.
func FamilyDir(dir string, threads int) string {
	return filepath.Join(dir, fmt.Sprintf("threads-%d", threads))
}

// GenerateFamily writes the same workload at every thread count in
// threads into DIR/threads-N (FamilyDir), each with its expected.json, and
// DIR/expected-compare.json holding what ptrace compare must find over
// them: strong scaling against the smallest run, computation scalability,
// per-construct inflation and the work/span bounds. The width stays fixed
// (strong scaling), so it must be given or defaults to the largest run's
// 4·ranks·threads; Config.Inflation makes tasks longer with more threads
// and Config.SerialNS adds a serial task.
func GenerateFamily(dir string, cfg Config, threads []int) (*FamilyResult, error) {
	if !isPattern(cfg.Workload) {
		return nil, fmt.Errorf("--family applies to the task patterns (stencil, nearest, spread), not %q", cfg.Workload)
	}
	if len(threads) < 2 {
		return nil, fmt.Errorf("--family needs at least two thread counts")
	}
	ts := append([]int(nil), threads...)
	sort.Ints(ts)
	for i := 1; i < len(ts); i++ {
		if ts[i] == ts[i-1] {
			return nil, fmt.Errorf("--family: thread count %d given twice", ts[i])
		}
	}
	if cfg.Width == 0 {
		cfg.Width = 4 * max(cfg.Ranks, 1) * ts[len(ts)-1]
	}
	fr := &FamilyResult{Expected: Expected{}}
	var members []member
	for _, t := range ts {
		c := cfg
		c.Threads = t
		d := FamilyDir(dir, t)
		res, err := Generate(d, c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		fr.Runs = append(fr.Runs, res)
		fr.Dirs = append(fr.Dirs, d)
		m, err := memberOf(res.Expected, Defaults(c))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		members = append(members, m)
	}
	fr.Expected = familyExpected(members)
	if err := fr.Expected.write(filepath.Join(dir, "expected-compare.json")); err != nil {
		return nil, err
	}
	return fr, nil
}

// member is what the compare expectations need from one run's expected
// values.
type member struct {
	cores                  int
	useful, work, span, rt int64
	cons                   map[string]consStat
}

type consStat struct{ count, sum, mean int64 }

func memberOf(e Expected, cfg Config) (member, error) {
	m := member{cores: cfg.Ranks * cfg.Threads, cons: map[string]consStat{}}
	var err error
	num := func(path string) int64 {
		v, ok := lookup(e, path)
		if !ok && err == nil {
			err = fmt.Errorf("internal: expected.json lacks %s", path)
		}
		return v
	}
	// The patterns never enter MPI and have no overhead: useful time is
	// work.
	m.useful = num("breakdown.work_ns")
	m.work = num("critical_path.work_ns")
	m.span = num("critical_path.length_ns")
	m.rt = num("trace.duration_ns")
	tasks, _ := e["tasks"].(map[string]any)
	rows, _ := tasks["constructs"].([]any)
	for _, r := range rows {
		row := r.(map[string]any)
		m.cons[row["name"].(string)] = consStat{toInt(row["count"]), toInt(row["sum_ns"]), toInt(row["mean_ns"])}
	}
	return m, err
}

func lookup(e Expected, path string) (int64, bool) {
	var cur any = map[string]any(e)
	for _, k := range splitPath(path) {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false
		}
		if cur, ok = m[k]; !ok {
			return 0, false
		}
	}
	return toInt(cur), true
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

// familyExpected computes, by the formulas docs/report-schema.md gives for
// ptrace compare, the values it must report; members are in increasing
// core order and the first is the reference.
func familyExpected(ms []member) Expected {
	e := Expected{"schema": "ptrace.compare/v1"}
	ref := ms[0]
	runs := make([]any, len(ms))
	for i, m := range ms {
		P := float64(m.cores)
		area := float64(m.work) / P
		bound := math.Max(area, float64(m.span))
		limit := "work"
		if float64(m.span) > area {
			limit = "span"
		}
		comp := float64(ref.useful) / float64(m.useful)
		par := float64(m.useful) / (P * float64(m.rt))
		runs[i] = map[string]any{
			"cores":         m.cores,
			"elapsed_ns":    m.rt,
			"useful_sum_ns": m.useful,
			"efficiencies": map[string]any{
				"computation_scalability": comp,
				"parallel":                par,
				"global":                  par * comp,
			},
			"bounds": map[string]any{
				"work_ns":          m.work,
				"span_ns":          m.span,
				"parallelism":      float64(m.work) / float64(m.span),
				"area_bound_ns":    int64(math.Round(area)),
				"burdened_span_ns": m.span, // no overhead in a generated trace
				"speedup_max":      math.Min(P, float64(m.work)/float64(m.span)),
				"speedup_min":      float64(m.work) / (area + float64(m.span)),
				"measured_ns":      m.rt,
				"bound_ns":         int64(math.Round(bound)),
				"limit":            limit,
				"distance":         float64(m.rt) / bound,
			},
		}
	}
	e.set("runs", runs)
	// Constructs in the reference's order: total duration, then name.
	names := make([]string, 0, len(ref.cons))
	for n := range ref.cons {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := ref.cons[names[i]], ref.cons[names[j]]
		if a.sum != b.sum {
			return a.sum > b.sum
		}
		return names[i] < names[j]
	})
	lost := make([]int64, len(ms))
	for i, m := range ms {
		for _, n := range names {
			lost[i] += max(0, m.cons[n].sum-ref.cons[n].sum)
		}
	}
	cons := make([]any, len(names))
	for j, n := range names {
		r := ref.cons[n]
		per := make([]any, len(ms))
		for i, m := range ms {
			c := m.cons[n]
			extra := c.sum - r.sum
			share := 0.0
			if lost[i] > 0 {
				share = float64(max(extra, 0)) / float64(lost[i])
			}
			per[i] = map[string]any{
				"count": c.count, "sum_ns": c.sum, "mean_ns": c.mean,
				"inflation":      float64(c.sum) / float64(r.sum),
				"mean_inflation": float64(c.mean) / float64(r.mean),
				"extra_ns":       extra,
				"share_of_lost":  share,
			}
		}
		cons[j] = map[string]any{"name": n, "runs": per}
	}
	e.set("constructs", cons)
	for _, k := range []string{
		"runs.efficiencies.computation_scalability", "runs.efficiencies.parallel", "runs.efficiencies.global",
		"runs.bounds.parallelism", "runs.bounds.speedup_max", "runs.bounds.speedup_min", "runs.bounds.distance",
		"constructs.runs.inflation", "constructs.runs.mean_inflation", "constructs.runs.share_of_lost",
	} {
		e.tol(k, 1e-9)
	}
	return e
}

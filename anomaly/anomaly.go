// Package anomaly finds tasks that ran much longer than their task type
// predicts (StarVZ, seed starvz-irregular-task-structure.txt §4.1). It owns
// the duration model per task type (construct) and the outlier test; it
// knows nothing about traces or simulation: its input is a plain slice of
// per-task records, its output the report's "anomalies" section.
//
// The model, per construct:
//
//   - when every task carries a positive cost attribute (a flop or byte
//     estimate) that varies, a log-log regression ln(dur) = a + b·ln(cost):
//     StarVZ's model, whose log transform absorbs the variance growing with
//     the cost;
//   - otherwise a robust location/scale model of ln(dur): median and
//     1.4826·MAD.
//
// Both are fitted robustly (the residual scale is a MAD and gross outliers
// are rejected before the final fit), so the outliers being looked for do
// not hide themselves by inflating the scale. A task is anomalous when its
// log duration lies above the one-sided prediction bound at level α/N,
// N the number of tasks tested in the whole run (Bonferroni), since the
// test is applied to every task.
package anomaly

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/ptrace-dev/ptrace/report"
	"gonum.org/v1/gonum/mathext"
)

// Task is one executed task as the analysis knows it.
type Task struct {
	Rank, Thread int32 // 56 bytes a record: ranks hold one per executed task
	ID           int64
	Construct    string
	StartNS      int64
	DurNS        int64
	Cost         float64 // task cost attribute (flops, bytes); 0 = none
}

// Options tune Detect. Zero values take the defaults.
type Options struct {
	// Alpha is the family-wise false-positive level (default 0.05).
	Alpha float64
	// MinTasks is the smallest construct that is tested (default 10):
	// below it neither model can be estimated with any confidence.
	MinTasks int
	// MinScale floors the residual scale of log durations (default 0.05,
	// i.e. ±5%): identical durations would otherwise make every task a
	// nanosecond longer than the median an anomaly.
	MinScale float64
	// Attribute names the cost attribute, for the report (e.g. "flops").
	Attribute string
	// MaxListed bounds the anomalies listed (default 1000, highest scores
	// kept); Found still counts all of them.
	MaxListed int
	// GroupGap joins anomalies into one group when one starts within
	// GroupGap predicted durations of the end of the previous (default 2).
	GroupGap float64
}

func (o Options) withDefaults() Options {
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = 0.05
	}
	if o.MinTasks <= 0 {
		o.MinTasks = 10
	}
	if o.MinScale <= 0 {
		o.MinScale = 0.05
	}
	if o.MaxListed <= 0 {
		o.MaxListed = 1000
	}
	if o.GroupGap <= 0 {
		o.GroupGap = 2
	}
	return o
}

// rejectK is how many robust scales from the fit a point must lie to be left
// out of the final fit: far enough that well-behaved tails stay in, close
// enough that 8× outliers (ln 8 ≈ 2.1) are out whenever the scale is small
// enough for them to be detectable at all.
const rejectK = 3.5

// madToSigma turns a median absolute deviation into a normal scale.
const madToSigma = 1.4826

// Detect fits the per-construct models on all tasks, tests them and
// returns the anomalies section: Fit, Test and Finish on one node. The
// result does not depend on the order of tasks.
func Detect(tasks []Task, o Options) *report.Anomalies {
	counts := map[string]int64{}
	for _, t := range tasks {
		counts[t.Construct]++
	}
	ms := Fit(tasks, counts, o)
	found, n := ms.Test(tasks)
	return ms.Finish(found, n)
}

// Models are the fitted duration models, one per construct, with the
// Bonferroni-corrected bound. They travel from rank 0, which fits them on a
// sample, to every rank, which tests its own tasks.
type Models struct {
	Opts   Options
	Tested int64 // tasks tested in the whole run (the Bonferroni N)
	Cons   []ConsModel
}

// ConsModel is one construct's fitted model.
type ConsModel struct {
	Report report.AnomalyModel
	Fit    Fitted
	Q      float64 // bound on the standardised residual
}

// Fitted is a fitted line in log space (exported for transport).
type Fitted struct {
	A, B, S, Mean, Sxx, DF float64
	M                      int
}

func (f Fitted) model() model {
	return model{a: f.A, b: f.B, s: f.S, m: f.M, df: f.DF, mean: f.Mean, sxx: f.Sxx}
}

// Fit fits each construct's model on sample (all its tasks, or a
// deterministic sample of them — see InSample); counts gives every
// construct's number of tasks in the whole run, which decides what is
// tested and the Bonferroni factor.
func Fit(sample []Task, counts map[string]int64, o Options) *Models {
	var s Sample
	s.Add(sample)
	return s.Fit(counts, o)
}

// Fit is the package's Fit on the sample's records.
func (s *Sample) Fit(counts map[string]int64, o Options) *Models {
	o = o.withDefaults()
	// Per construct, what a fit reads of its tasks: pointer-free points,
	// which sort 2–3× faster than the records (no string to move, no
	// write barriers).
	byCons := s.points()
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	ms := &Models{Opts: o}
	for _, n := range names {
		if counts[n] >= int64(o.MinTasks) && len(byCons[n]) >= o.MinTasks {
			ms.Tested += counts[n]
		}
	}
	for _, n := range names {
		ts := byCons[n]
		// A canonical order makes floating-point sums, and so the result,
		// independent of how the tasks were gathered.
		slices.SortFunc(ts, func(a, b point) int {
			// Early exits: cmp.Or would compare every key first.
			if a.rank != b.rank {
				return cmp.Compare(a.rank, b.rank)
			}
			if a.thread != b.thread {
				return cmp.Compare(a.thread, b.thread)
			}
			if a.start != b.start {
				return cmp.Compare(a.start, b.start)
			}
			return cmp.Compare(a.id, b.id)
		})
		cm := ConsModel{Report: report.AnomalyModel{Construct: n, Kind: "untested", Tasks: counts[n]}}
		if counts[n] >= int64(o.MinTasks) && len(ts) >= o.MinTasks {
			var fit model
			if x, ok := logCosts(ts); ok {
				fit = fitLogLog(x, logDurs(ts), o.MinScale)
				cm.Report.Kind, cm.Report.Attribute = "loglog", o.Attribute
			} else {
				fit = fitLocation(logDurs(ts), o.MinScale)
				cm.Report.Kind = "location"
			}
			cm.Q = tQuantile(1-o.Alpha/float64(ms.Tested), fit.df)
			cm.Report.Intercept, cm.Report.Slope, cm.Report.Scale = fit.a, fit.b, fit.s
			cm.Report.BoundFactor = math.Exp(cm.Q * fit.s * math.Sqrt(1+1/float64(fit.m)))
			cm.Fit = Fitted{A: fit.a, B: fit.b, S: fit.s, Mean: fit.mean, Sxx: fit.sxx, DF: fit.df, M: fit.m}
		}
		ms.Cons = append(ms.Cons, cm)
	}
	return ms
}

// Test checks tasks against the models and returns the anomalies found
// (at most Opts.MaxListed, highest scores first) and how many there were
// per construct.
func (ms *Models) Test(tasks []Task) ([]report.Anomaly, map[string]int64) {
	sc := ms.Screen()
	var found []report.Anomaly
	n := map[string]int64{}
	for _, t := range tasks {
		i, ok := sc.index(t.Construct)
		if !ok {
			continue
		}
		c, p := &ms.Cons[i], &sc.prep[i]
		fit := &p.fit
		if !p.loglog && float64(max(t.DurNS, 1)) <= p.below {
			continue
		}
		x := 0.0
		if p.loglog {
			if !(t.Cost > 0) {
				continue
			}
			x = math.Log(t.Cost)
		}
		pred := fit.a + fit.b*x
		se := fit.s * fit.seFactor(x)
		y := math.Log(float64(max(t.DurNS, 1)))
		if score := (y - pred) / se; score > c.Q {
			n[t.Construct]++
			found = append(found, report.Anomaly{
				Rank: int(t.Rank), Thread: int(t.Thread), Task: t.ID, Construct: t.Construct,
				StartNS: t.StartNS, DurNS: t.DurNS,
				PredictedNS: int64(math.Round(math.Exp(pred))),
				BoundNS:     int64(math.Round(math.Exp(pred + c.Q*se))),
				Score:       score,
			})
		}
	}
	return topScores(found, ms.Opts.MaxListed), n
}

// Screen is Test's model per construct, prepared once, and its quick
// answer for tasks it cannot find anomalous: a caller that makes task
// records from columns makes only the others (Clear).
type Screen struct {
	idx  map[string]int // construct → index in Models.Cons
	prep []prepared
	// The last construct looked up: tasks come in runs of one construct.
	last  string
	lastI int
	ok    bool
	init  bool
}

// prepared is a construct's model as Test reads it: for a location model,
// also the duration at or below which no task can score above Q (the
// bound less a margin far beyond exp's and log's rounding), so that most
// tasks are decided without a logarithm.
type prepared struct {
	fit    model
	loglog bool
	tested bool
	below  float64 // location model: durations ≤ below are no anomaly
}

// Screen prepares the models for Test and Clear.
func (ms *Models) Screen() *Screen {
	sc := &Screen{idx: make(map[string]int, len(ms.Cons)), prep: make([]prepared, len(ms.Cons))}
	for i := range ms.Cons {
		c := &ms.Cons[i]
		sc.idx[c.Report.Construct] = i
		p := prepared{fit: c.Fit.model(), loglog: c.Report.Kind == "loglog", tested: c.Report.Kind != "untested", below: -1}
		if se := p.fit.s * p.fit.seFactor(0); !p.loglog && se > 0 {
			p.below = math.Exp(p.fit.a+c.Q*se) * (1 - 1e-9)
		}
		sc.prep[i] = p
	}
	return sc
}

// index returns construct's model, ok false when its tasks are not tested.
func (sc *Screen) index(construct string) (int, bool) {
	if !sc.init || construct != sc.last {
		i, ok := sc.idx[construct]
		sc.last, sc.lastI, sc.ok, sc.init = construct, i, ok && sc.prep[i].tested, true
	}
	return sc.lastI, sc.ok
}

// Clear reports whether Test certainly finds no anomaly in a task of
// construct that ran dur nanoseconds, whatever its other fields: its
// construct is not tested, or its location model's bound lies above dur.
func (sc *Screen) Clear(construct string, dur int64) bool {
	i, ok := sc.index(construct)
	if !ok {
		return true
	}
	p := &sc.prep[i]
	return !p.loglog && float64(max(dur, 1)) <= p.below
}

// Top keeps the anomalies that can be listed (Options.MaxListed, highest
// scores) of lists Test returned for parts of a rank's tasks.
func (ms *Models) Top(found []report.Anomaly) []report.Anomaly {
	return topScores(found, ms.Opts.MaxListed)
}

// topScores keeps the max highest-scoring anomalies in a canonical order.
// The order is total (a rank's tasks have distinct ids), so the limit
// first are one set whatever the input's order: they are selected first,
// by index (selectFirst), moved to the front once each, and only they are
// sorted. A tree's traces have half their tasks anomalous, all with one
// score: sorting every one of them (100-byte records holding a string,
// each move a write barrier while the collector runs) cost about 4 % of
// the analysis.
func topScores(as []report.Anomaly, limit int) []report.Anomaly {
	if len(as) > limit {
		idx := make([]int32, len(as))
		for i := range idx {
			idx[i] = int32(i)
		}
		selectFirst(as, idx, limit)
		keep := idx[:limit]
		slices.Sort(keep) // then as[keep[w]] moves down to as[w], never over one still to move
		for w, i := range keep {
			as[w] = as[i]
		}
		as = as[:limit]
	}
	sortAnomalies(as)
	return as
}

func sortAnomalies(as []report.Anomaly) {
	slices.SortFunc(as, func(a, b report.Anomaly) int { return listOrder(&a, &b) })
}

// listOrder is the anomalies' order in the report: highest score first,
// then by rank, thread, start and task. It exits at the first key that
// differs, as cmp.Or would not: a tree's anomalies share their score.
func listOrder(a, b *report.Anomaly) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	switch {
	case a.Rank != b.Rank:
		return cmp.Compare(a.Rank, b.Rank)
	case a.Thread != b.Thread:
		return cmp.Compare(a.Thread, b.Thread)
	case a.StartNS != b.StartNS:
		return cmp.Compare(a.StartNS, b.StartNS)
	}
	return cmp.Compare(a.Task, b.Task)
}

// selectFirst moves the indices of the k first of as in listOrder to
// idx[:k], in no particular order (0 < k < len(idx)): a quickselect with
// a median-of-three pivot, which sorts the range it is left with once it
// has partitioned more often than a sort would.
func selectFirst(as []report.Anomaly, idx []int32, k int) {
	less := func(i, j int32) bool { return listOrder(&as[i], &as[j]) < 0 }
	lo, hi := 0, len(idx) // the k-th lies in idx[lo:hi]
	for budget := 2 * bits.Len(uint(len(idx))); hi-lo > 16 && budget > 0; budget-- {
		// The median of three ends at idx[m], then goes to idx[lo]: the pivot.
		m, z := lo+(hi-lo)/2, hi-1
		if less(idx[m], idx[lo]) {
			idx[m], idx[lo] = idx[lo], idx[m]
		}
		if less(idx[z], idx[m]) {
			idx[z], idx[m] = idx[m], idx[z]
		}
		if less(idx[m], idx[lo]) {
			idx[m], idx[lo] = idx[lo], idx[m]
		}
		idx[lo], idx[m] = idx[m], idx[lo]
		// Lomuto's partition: idx[lo+1:p] before the pivot, the rest after.
		p, pivot := lo+1, idx[lo]
		for i := lo + 1; i < hi; i++ {
			if less(idx[i], pivot) {
				idx[i], idx[p] = idx[p], idx[i]
				p++
			}
		}
		q := p - 1
		idx[lo], idx[q] = idx[q], idx[lo] // the pivot at its place
		switch {
		case q == k || q+1 == k:
			return // idx[:k] are the k first
		case k < q:
			hi = q
		default:
			lo = q + 1
		}
	}
	slices.SortFunc(idx[lo:hi], func(i, j int32) int { return listOrder(&as[i], &as[j]) })
}

// Finish assembles the report section from the anomalies every rank found
// (in any order) and their counts per construct.
func (ms *Models) Finish(found []report.Anomaly, counts map[string]int64) *report.Anomalies {
	var n int64
	for _, c := range counts {
		n += c
	}
	o := ms.Opts
	out := &report.Anomalies{
		Model: fmt.Sprintf("per construct: log-log regression of duration on %s when tasks carry it, else median/MAD of log durations; "+
			"one-sided prediction bound, Bonferroni-corrected over %d tasks", attrName(o.Attribute), ms.Tested),
		Alpha:  o.Alpha,
		Tested: ms.Tested,
		Found:  n,
		Models: []report.AnomalyModel{},
		Tasks:  []report.Anomaly{},
		Groups: []report.AnomalyGroup{},
	}
	found = topScores(found, o.MaxListed)
	out.Truncated = n > int64(len(found))
	for _, c := range ms.Cons {
		m := c.Report
		m.Found = counts[m.Construct]
		out.Models = append(out.Models, m)
	}
	out.Groups = group(found, o.GroupGap)
	out.Tasks = found
	return out
}

// InSample reports whether the sample the models are fitted on holds task
// id of rank, of a construct that has count tasks in the whole run: about
// limit tasks per construct, those whose hashed (rank, id) falls under a
// threshold. It depends only on the task itself, not on the tasks' order
// or on which analysis rank holds them, so models fitted on samples do
// not depend on the partition.
func InSample(rank int32, id int64, count int64, limit int) bool {
	return count <= int64(limit) || hash(int(rank), id)%uint64(count) < uint64(limit)
}

func hash(rank int, id int64) uint64 {
	h := uint64(rank)*0x9E3779B97F4A7C15 ^ uint64(id)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

func attrName(a string) string {
	if a == "" {
		return "the task cost attribute"
	}
	return a
}

// model is a fitted line in log space: ln(dur) ≈ a + b·x, with residual
// scale s estimated from m inliers with df degrees of freedom. For the
// prediction bound at x, mean and sxx give the standard error factor.
type model struct {
	a, b, s   float64
	m         int
	df        float64
	mean, sxx float64
}

// seFactor is the standard error of a new observation at x in units of s:
// sqrt(1 + 1/m + (x−x̄)²/Sxx) for a regression, sqrt(1 + 1/m) for a location.
func (f *model) seFactor(x float64) float64 {
	v := 1 + 1/float64(f.m)
	if f.sxx > 0 {
		d := x - f.mean
		v += d * d / f.sxx
	}
	return math.Sqrt(v)
}

// point is a sampled task as a fit reads it, with the keys of its
// canonical order (rank, thread, start, id).
type point struct {
	rank, thread int32
	start, id    int64
	dur          int64
	cost         float64
}

func logDurs(ts []point) []float64 {
	y := make([]float64, len(ts))
	for i, t := range ts {
		y[i] = math.Log(float64(max(t.dur, 1)))
	}
	return y
}

// logCosts returns ln(cost) when every task has a positive cost and the
// costs vary enough to fit a slope; otherwise ok is false.
func logCosts(ts []point) (x []float64, ok bool) {
	x = make([]float64, len(ts))
	for i, t := range ts {
		if !(t.cost > 0) || math.IsInf(t.cost, 0) {
			return nil, false
		}
		x[i] = math.Log(t.cost)
	}
	if variance(x) < 1e-9 {
		return nil, false
	}
	return x, true
}

// median returns the median of v (v is not modified).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return sortedMedian(s)
}

// robustScale is 1.4826·MAD of r around its median, floored at minScale.
func robustScale(r []float64, minScale float64) float64 {
	return scaleAround(r, median(r), minScale)
}

// scaleAround is robustScale of r given its median c.
func scaleAround(r []float64, c, minScale float64) float64 {
	d := make([]float64, len(r))
	for i, v := range r {
		d[i] = math.Abs(v - c)
	}
	return math.Max(madToSigma*median(d), minScale)
}

func fitLocation(y []float64, minScale float64) model {
	c := median(y) // sorted once: the location and the scale's centre
	return model{a: c, s: scaleAround(y, c, minScale), m: len(y), df: float64(len(y) - 1)}
}

// fitLogLog fits y = a + b·x by least squares with hard rejection of points
// more than rejectK robust scales from the current line, repeated until the
// inlier set is stable (a few rounds at most).
func fitLogLog(x, y []float64, minScale float64) model {
	w := make([]float64, len(x))
	for i := range w {
		w[i] = 1
	}
	r := make([]float64, len(x))
	var a, b, s float64
	for round := 0; round < 5; round++ {
		a, b = linearRegression(x, y, w)
		for i := range x {
			r[i] = y[i] - (a + b*x[i])
		}
		s = robustScale(r, minScale)
		changed := false
		for i := range x {
			nw := 1.0
			if math.Abs(r[i]) > rejectK*s {
				nw = 0
			}
			if nw != w[i] {
				changed = true
				w[i] = nw
			}
		}
		if !changed {
			break
		}
	}
	var m int
	var mean float64
	for i := range x {
		if w[i] > 0 {
			m++
			mean += x[i]
		}
	}
	if m < 3 {
		// Nothing left to fit: fall back to the location model.
		return fitLocation(y, minScale)
	}
	mean /= float64(m)
	var sxx float64
	for i := range x {
		if w[i] > 0 {
			sxx += (x[i] - mean) * (x[i] - mean)
		}
	}
	// The scale of the final inlier fit.
	in := make([]float64, 0, m)
	for i := range x {
		if w[i] > 0 {
			in = append(in, y[i]-(a+b*x[i]))
		}
	}
	s = robustScale(in, minScale)
	return model{a: a, b: b, s: s, m: m, df: float64(m - 2), mean: mean, sxx: sxx}
}

// tQuantile is the p-quantile of Student's t with df degrees of freedom (the
// normal one for large df, where they agree and t's is slower).
func tQuantile(p, df float64) float64 {
	if df < 1 {
		df = 1
	}
	if df > 1e4 {
		return mathext.NormalQuantile(p)
	}
	return studentsTQuantile(p, df)
}

// group clusters anomalies in time: sorted by start, an anomaly joins the
// current group when it starts within gap predicted durations of the
// group's end. It sets each anomaly's Group and sorts them by start.
func group(as []report.Anomaly, gap float64) []report.AnomalyGroup {
	slices.SortFunc(as, func(a, b report.Anomaly) int {
		return cmp.Or(cmp.Compare(a.StartNS, b.StartNS), cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Thread, b.Thread), cmp.Compare(a.Task, b.Task))
	})
	groups := []report.AnomalyGroup{}
	type loc struct{ rank, thread int }
	var where map[loc]bool
	var ranks map[int]bool
	finish := func() {
		g := &groups[len(groups)-1]
		g.Threads = len(where)
		if len(ranks) > 1 {
			g.Rank = -1
		}
		if len(where) > 1 {
			g.Thread = -1
		}
	}
	for i := range as {
		a := &as[i]
		end := a.StartNS + a.DurNS
		if n := len(groups); n > 0 && float64(a.StartNS) <= float64(groups[n-1].EndNS)+gap*float64(a.PredictedNS) {
			g := &groups[n-1]
			g.Tasks++
			g.EndNS = max(g.EndNS, end)
		} else {
			if n > 0 {
				finish()
			}
			groups = append(groups, report.AnomalyGroup{ID: len(groups) + 1, Tasks: 1, Rank: a.Rank, Thread: a.Thread, StartNS: a.StartNS, EndNS: end})
			where, ranks = map[loc]bool{}, map[int]bool{}
		}
		where[loc{a.Rank, a.Thread}] = true
		ranks[a.Rank] = true
		a.Group = len(groups)
	}
	if len(groups) > 0 {
		finish()
	}
	return groups
}

package compare

import (
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ptrace-dev/ptrace/internal/outfile"
)

// CSV table file names; the columns are the comparison's JSON keys.
const (
	CSVScaling   = "scaling.csv"   // one row per run: cores, elapsed, speedup, every factor
	CSVInflation = "inflation.csv" // one row per construct and run
	CSVBounds    = "bounds.csv"    // one row per run with a critical path
	CSVChanges   = "changes.csv"   // one row per step between consecutive runs
	CSVProblems  = "problems.csv"  // runs left out
)

func i64(v int64) string   { return strconv.FormatInt(v, 10) }
func f64(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// WriteCSV writes the comparison's tables into dir (created if needed) and
// returns the paths written.
func WriteCSV(dir string, r *Result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	scaling := [][]string{{"run", "processes", "cores", "problem_size", "elapsed_ns", "useful_sum_ns", "speedup", "lost_work_ns"}}
	for _, f := range FactorTree {
		scaling[0] = append(scaling[0], f.Key)
	}
	for _, run := range r.Runs {
		row := []string{run.Name, strconv.Itoa(run.Processes), strconv.Itoa(run.Cores), f64(run.ProblemSize), i64(run.ElapsedNS), i64(run.UsefulSumNS), f64(run.Speedup), i64(run.LostWorkNS)}
		for _, f := range FactorTree {
			row = append(row, f64(f.Get(&run.Efficiencies)))
		}
		scaling = append(scaling, row)
	}
	infl := [][]string{{"construct", "kind", "run", "count", "sum_ns", "mean_ns", "inflation", "mean_inflation", "extra_ns", "share_of_lost", "missing"}}
	for _, c := range r.Constructs {
		for i, cr := range c.Runs {
			infl = append(infl, []string{c.Name, c.Kind, r.Runs[i].Name, i64(cr.Count), i64(cr.SumNS), i64(cr.MeanNS), f64(cr.Inflation), f64(cr.MeanInflation), i64(cr.ExtraNS), f64(cr.ShareOfLost), strconv.FormatBool(cr.Missing)})
		}
	}
	bounds := [][]string{{"run", "cores", "work_ns", "span_ns", "parallelism", "area_bound_ns", "path_tasks", "task_overhead_ns", "burdened_span_ns", "speedup_min", "speedup_max", "measured_ns", "bound_ns", "limit", "distance"}}
	for _, run := range r.Runs {
		if b := run.Bounds; b != nil {
			bounds = append(bounds, []string{run.Name, strconv.Itoa(b.Cores), i64(b.WorkNS), i64(b.SpanNS), f64(b.Parallelism), i64(b.AreaBoundNS), i64(b.PathTasks), f64(b.TaskOverheadNS), i64(b.BurdenedSpanNS), f64(b.SpeedupMin), f64(b.SpeedupMax), i64(b.MeasuredNS), i64(b.BoundNS), b.Limit, f64(b.Distance)})
		}
	}
	// The off-path columns come last, so that positional consumers of the
	// earlier ones read what they read before.
	changes := [][]string{{"from", "to", "factor", "factor_was", "factor_is", "construct", "mean_was_ns", "mean_is_ns", "extra_ns", "share", "text", "off_path", "off_path_was", "off_path_is"}}
	for _, c := range r.Changes {
		changes = append(changes, []string{c.From, c.To, c.Factor, f64(c.FactorWas), f64(c.FactorIs), c.Construct, i64(c.MeanWasNS), i64(c.MeanIsNS), i64(c.ExtraNS), f64(c.Share), c.Text,
			c.OffPath, f64(c.OffPathWas), f64(c.OffPathIs)})
	}
	problems := [][]string{{"run", "message"}}
	for _, p := range r.Problems {
		problems = append(problems, []string{p.Run, p.Message})
	}
	var paths []string
	for _, t := range []struct {
		name string
		rows [][]string
	}{{CSVScaling, scaling}, {CSVInflation, infl}, {CSVBounds, bounds}, {CSVChanges, changes}, {CSVProblems, problems}} {
		p := filepath.Join(dir, t.name)
		if err := writeTable(p, t.rows); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func writeTable(path string, rows [][]string) error {
	// Whole or not at all: a full disk leaves no truncated table behind.
	return outfile.Write(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		return cw.WriteAll(rows)
	})
}

package driver

import (
	"fmt"

	"github.com/ptrace-dev/ptrace/anomaly"
	"github.com/ptrace-dev/ptrace/reduce"
	"github.com/ptrace-dev/ptrace/report"
)

// sampleLimit is about how many tasks per construct rank 0 fits a duration
// model on: enough for a stable median/MAD or regression, and bounded
// whatever the run's size.
const sampleLimit = 20000

// anomalies runs StarVZ-style outlier detection without moving every task to
// rank 0: the construct counts come from the simulation's reduction, every
// rank sends a deterministic sample of its tasks, rank 0 fits the models on
// the sample and broadcasts them, every rank tests its own tasks, and only
// the anomalies (at most MaxListed per rank) travel back.
func (r *run) anomalies() error {
	var counts map[string]int64
	if r.c.Rank() == 0 && r.rep.Tasks != nil {
		counts = map[string]int64{}
		for _, c := range r.rep.Tasks.Constructs {
			counts[c.Name] += c.Executed
		}
	}
	if err := reduce.Broadcast(r.c, &counts); err != nil {
		return err
	}
	keys, err := reduce.GatherRows(r.c, []string{r.costKey})
	if err != nil {
		return err
	}
	// Records are made a chunk at a time (eachRecords): the sample and Test
	// look at one task at a time, and the lists they return are merged by
	// rank 0.
	var buf []anomaly.Task
	var mine anomaly.Sample // pointer-free: the phase's collections do not scan it
	for i, pg := range r.cp {
		rank := int32(pg.Rank())
		lastName, count := "", int64(-1)
		sampled := func(id int64, name string, _ int64) bool {
			if count < 0 || name != lastName {
				lastName, count = name, counts[name]
			}
			return anomaly.InSample(rank, id, count, sampleLimit)
		}
		buf = r.tasks[i].eachRecords(pg, buf, sampled, func(recs []anomaly.Task) {
			mine.Add(recs)
		})
	}
	// The sample travels in the records' own binary form (AppendTasks):
	// reflection cost 60 ms on 20 000 records. Rank 0 keeps its own as
	// they are, first as its part was: encoded and decoded, its records
	// were there three times over at the phase's high (2 MB of BOTS
	// health's, above its simulation's).
	// Under a memory limit the sample and, on rank 0, the models are
	// where the phase grows (1.5–3 MiB above the simulation's resident
	// set on a million tasks): checked on every rank once each is made.
	check := r.limitCheck("anomalies")
	if check == nil {
		check = func() error { return nil }
	}
	if err := check(); err != nil {
		return err
	}
	var enc []byte
	if r.c.Rank() != 0 {
		enc, mine = mine.AppendTo(nil), anomaly.Sample{}
	}
	parts, err := r.c.Gatherv(0, enc)
	if err != nil {
		return err
	}
	for k := 1; k < len(parts); k++ {
		ts, err := anomaly.DecodeTasks(parts[k])
		if err != nil {
			return fmt.Errorf("anomalies: the sample of rank %d: %w", k, err)
		}
		parts[k] = nil
		mine.Add(ts)
	}
	var models *anomaly.Models
	if r.c.Rank() == 0 {
		key := ""
		for _, k := range keys {
			if k != "" {
				key = k
				break
			}
		}
		models = mine.Fit(counts, anomaly.Options{Attribute: key})
	}
	if err := check(); err != nil {
		return err
	}
	if err := reduce.Broadcast(r.c, &models); err != nil {
		return err
	}
	// The test of every task: on a second core while the critical path
	// computes its task graph, joined before the fragment DAG is built
	// (critpath.Input.AfterTaskGraph): held through the build, the table
	// raised fib(27)'s peak, which is in the critical path, by 2.6 MB
	// (4.7 %). On one core, here.
	tasks, cps := r.tasks, r.cp
	r.tasks = nil
	test := func() {
		screen := models.Screen()
		candidate := func(_ int64, name string, dur int64) bool { return !screen.Clear(name, dur) }
		for i, pg := range cps {
			buf = tasks[i].eachRecords(pg, buf, candidate, func(recs []anomaly.Task) {
				f, c := models.Test(recs)
				// Only the highest scores are listed: each chunk's best
				// kept whole grew with the tasks when most are anomalous
				// (half a tree's tasks, 11 MB at the critical path's
				// peak on a million tasks). The order is total, so the
				// best of the best of each chunk are the best of all.
				if len(r.anom.found)+len(f) > 2*models.Opts.MaxListed {
					r.anom.found = models.Top(r.anom.found)
				}
				r.anom.found = append(r.anom.found, f...)
				for k, v := range c {
					r.anom.n[k] += v
				}
			})
			// The critical path that follows has no use for the table.
			tasks[i] = taskTable{}
		}
	}
	r.anom = anomalyTest{ran: true, models: models, n: map[string]int64{}}
	if r.opts.Workers > 1 {
		done := make(chan struct{})
		go func() {
			defer close(done)
			test()
		}()
		r.anom.wait = func() { <-done }
		return nil
	}
	test()
	return nil
}

// anomalyTest is the anomalies' test of every task, which may run beside
// the critical path's start, and what it found.
type anomalyTest struct {
	ran    bool // the phase got this far
	models *anomaly.Models
	found  []report.Anomaly
	n      map[string]int64
	wait   func() // nil once joined, or when it ran in the phase
}

// joinAnomalies waits for the anomalies' test of every task if it runs
// beside the critical path (the critical path calls it once its task
// graph is done, and once more when it ends, whatever happened).
func (r *run) joinAnomalies() {
	if r.anom.wait != nil {
		r.anom.wait()
		r.anom.wait = nil
	}
}

// finishAnomalies gathers the anomalies the ranks found (after the
// critical path, on every rank in the same order of collectives whether
// the test ran beside it or not).
func (r *run) finishAnomalies() error {
	r.joinAnomalies()
	a := r.anom
	r.anom = anomalyTest{}
	if !a.ran {
		return nil
	}
	all, err := reduce.GatherRows(r.c, a.models.Top(a.found))
	if err != nil {
		return err
	}
	perRank, err := reduce.GatherRows(r.c, []map[string]int64{a.n})
	if err != nil || r.c.Rank() != 0 {
		return err
	}
	total := map[string]int64{}
	for _, m := range perRank {
		for k, v := range m {
			total[k] += v
		}
	}
	r.rep.Anomalies = a.models.Finish(all, total)
	return nil
}

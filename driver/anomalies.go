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
	// Records are made a chunk at a time (eachRecords): Sample and Test
	// look at one task at a time, and the lists they return are merged by
	// rank 0.
	var buf, mine []anomaly.Task
	for i, pg := range r.cp {
		buf = r.tasks[i].eachRecords(pg, buf, func(recs []anomaly.Task) {
			mine = append(mine, anomaly.Sample(recs, counts, sampleLimit)...)
		})
	}
	// The sample travels in the records' own binary form (AppendTasks):
	// reflection cost 60 ms on 20 000 records.
	parts, err := r.c.Gatherv(0, anomaly.AppendTasks(nil, mine))
	if err != nil {
		return err
	}
	var sample []anomaly.Task
	for k, p := range parts {
		ts, err := anomaly.DecodeTasks(p)
		if err != nil {
			return fmt.Errorf("anomalies: the sample of rank %d: %w", k, err)
		}
		sample = append(sample, ts...)
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
		models = anomaly.Fit(sample, counts, anomaly.Options{Attribute: key})
	}
	if err := reduce.Broadcast(r.c, &models); err != nil {
		return err
	}
	var found []report.Anomaly
	n := map[string]int64{}
	for i, pg := range r.cp {
		buf = r.tasks[i].eachRecords(pg, buf, func(recs []anomaly.Task) {
			f, c := models.Test(recs)
			found = append(found, f...)
			for k, v := range c {
				n[k] += v
			}
		})
		// The critical path that follows has no use for the table.
		r.tasks[i] = taskTable{}
	}
	all, err := reduce.GatherRows(r.c, models.Top(found))
	if err != nil {
		return err
	}
	perRank, err := reduce.GatherRows(r.c, []map[string]int64{n})
	if err != nil || r.c.Rank() != 0 {
		return err
	}
	total := map[string]int64{}
	for _, m := range perRank {
		for k, v := range m {
			total[k] += v
		}
	}
	r.rep.Anomalies = models.Finish(all, total)
	return nil
}

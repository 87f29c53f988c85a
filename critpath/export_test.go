package critpath

import (
	"github.com/ptrace-dev/ptrace/internal/narrow"
	"github.com/ptrace-dev/ptrace/report"
)

// TaskGraphOf makes the task graph of in's processes (Input.taskGraph):
// with drain, its latency nodes weigh their receives' fragments from the
// rank's column of weights, drained and parked in in.Spill as Analyze
// does (narrow.Framed.Gather); without, from the processes' own weights
// (sim.Frags.WeightsOf), as processes apart do.
func TaskGraphOf(in *Input, drain bool) (*report.Graph, error) {
	if drain {
		nodes := 0
		for _, pg := range in.Procs {
			nodes += pg.frags.Len()
		}
		var w narrow.Framed
		in.drainParked(&w, nodes)
	}
	return in.taskGraph()
}

// ColumnWeights makes Analyze weigh the fragment DAG's nodes from the
// rank's column of weights, as before the direct store (Input.columnWeights).
func ColumnWeights(in *Input) { in.columnWeights = true }

// NarrowWeights reports whether pg's fragment weights are known narrow,
// which Analyze's direct store needs.
func NarrowWeights(pg *Proc) bool { return pg.frags.NarrowWeights() }

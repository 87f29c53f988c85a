package graph

import "github.com/ptrace-dev/ptrace/internal/narrow"

// nodeEval is how a replay's loops compute a node's value from its
// inputs: a switch on the kind of evaluation the options ask for
// (Weights, WeightsFramed, OnLongestPaths' marks, or Eval), written out in
// each loop, where a call of Eval (and of a weight function behind it)
// for every node cost two calls of function values; the switch takes the
// same branch every time.
type nodeEval struct {
	w64  []int64
	wf   *narrow.FramedCursor // a replay reads nodes mostly a step apart
	on   *onLongestEval
	eval func(n int32, x Input) int64
}

func evaluator(o *ReplayOptions) nodeEval {
	ev := nodeEval{w64: o.Weights, on: o.onLongest, eval: o.Eval}
	if o.WeightsFramed != nil {
		ev.wf = o.WeightsFramed.Cursor()
	}
	return ev
}

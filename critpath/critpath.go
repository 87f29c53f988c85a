// Package critpath owns the critical path and the task graph: what each
// process's simulation keeps for them (Proc, and the RemoteDeps pass), the
// distributed fragment DAG of all processes with its longest path, the walk
// back across ranks and the path's summary (the report's critical_path
// section: span, work, parallelism, zero-slack tasks, composition, longest
// nodes, segments), and the task graph's per-root metrics (the graph
// section, seed ompc-distributed-task-profiling.txt §4.5.3).
//
// Analyze is the phase: the driver hands it the communicator, the owned
// processes' Procs and their cross-process edges, and takes back the
// report's sections. The distributed steps are graph's builder and replays;
// only summaries travel to rank 0.
package critpath

import (
	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/internal/narrow"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/sim"
)

// Input is what the critical-path phase needs on one analysis rank. Every
// rank calls Analyze with its own.
type Input struct {
	Comm comm.Comm
	// Owners tells which analysis rank holds a trace process.
	Owners graph.Owners
	// First is the trace rank of this rank's first process; Procs[i] is
	// process First+i.
	First int
	// Procs holds, per owned process in order, what its simulation kept
	// (NewProc). Analyze drops their arrays as it goes: they serve one
	// analysis.
	Procs []*Proc
	// Edges holds, per owned process, the predecessors of its receive-like
	// events (graph.ExchangeEdges, with the Late Receiver edges added). A
	// process past the end of Edges has none. Analyze sets Edges to nil
	// once it read them, so that their arrays go back before it ends: the
	// caller keeps no other reference.
	Edges []graph.RemoteEdges
	// RunTimeNS is the analysis window's length, of which the report gives
	// the path's share.
	RunTimeNS int64
	// WindowStartNS is where the analysis window begins (reference
	// clock): the time before the path's first node is measured from it.
	WindowStartNS int64
	// Path asks for the whole path in time order on rank 0 (Result.Path; it
	// moves O(path length) data to rank 0, packed). Every rank sets it or
	// none.
	Path bool
	// AfterTaskGraph, when set, is called once the task graph is done and
	// before the fragment DAG is built, where the phase's memory grows:
	// the caller joins there what it ran beside the phase's start, and
	// what it drops is collected before the DAG's arrays are made.
	AfterTaskGraph func()
	// Check, when set, is called on every rank at fixed points where the
	// phase's state grows (the weights' column drained; the task graph's
	// pairs listed, its isolated processes' graphs done, its builder
	// filled, its
	// declarations exchanged, its DAG built, its back lengths found; the
	// fragment DAG's declarations exchanged, the DAG built, its longest
	// paths found, the path's nodes marked; the declarations' on a
	// communicator of two ranks or more; or, where the processes' DAGs
	// are apart, eight along their loop, comm.Checkpoints), and its error
	// returned: under a memory limit the heap guard, collective, which
	// stops the phase there on every rank instead of at its end.
	Check func() error
	// Spill, when set, takes what the fragment DAG alone reads (the
	// fragment edges, the tasks' first and last fragments) out of memory
	// while the task graph is made (sim.Frags.Park): its backward replay
	// is the phase's peak on the gen traces. nil: they stay.
	Spill sim.SpillFile
	// fragW, while the task graph is made, holds the fragment nodes'
	// weights in the rank's numbering (Analyze), where its latency nodes
	// read theirs; nil: they are read from each process's packed
	// weights (Frags.WeightsOf).
	fragW *narrow.Framed
	// columnWeights makes the forward replay's store of weights from the
	// rank's column even where it could be filled from the processes'
	// packed weights (Analyze's direct): the way before, for comparison.
	columnWeights bool
}

// check calls in.Check when set.
func (in *Input) check() error {
	if in.Check == nil {
		return nil
	}
	return in.Check()
}

// Result is the phase's part of the report, on rank 0; the other ranks
// get a zero Result.
type Result struct {
	CriticalPath *report.CriticalPath
	Graph        *report.Graph
	// Path gives the whole critical path in time order, with Input.Path:
	// it merges the ranks' packed lists (about 10 bytes a node) as it is
	// read, so that a path of millions of nodes is never held as rows.
	Path report.PathSource
	// Warnings counts what the phase tolerated (cross-process edges whose
	// source event has no fragment, in a damaged trace), listing the first.
	Warnings report.Warnings
}

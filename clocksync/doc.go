// Package clocksync owns timestamp correction: it makes the clocks of a
// trace's processes comparable so that no receive-like event precedes its
// send-like event, in three steps over the happened-before graph that
// graph.Match builds (messages, collectives, remote task dependences).
//
// # Offset model
//
// Each process's clock is mapped to rank 0's by a linear model from the
// offsets the collector measured against rank 0: with an init and a
// finalize measurement the offset is interpolated linearly between them
// (removing constant drift exactly), with one it is constant. Without
// measurements (traces not from MPI, or a collector that failed to
// measure), the process's first event is aligned with rank 0's first
// event: MPI_Init ends at nearly the same moment on every rank, and the CLC
// repairs whatever this leaves. A pair of measurements implying more than
// 1% drift is ignored beyond the init one, with a warning.
//
// # Controlled logical clock (Becker et al., forward amortization)
//
// The CLC runs over one location per process, all its threads merged in
// time order (graph.MergedTimes). The threads of a process read one
// hardware clock, so correcting the process's time as one monotone function
// keeps every intra-process order — task create before start, fork before
// join, barrier enter before exit — without modelling OpenMP edges; and a
// thread's events keep their order because the merged order contains it.
// For an internal event e_i with interpolated time t_i
//
//	LC(e_i) = max(LC(e_{i−1}) + min(δ, t_i − t_{i−1}), LC(a) + γ·(t_i − t_a), t_i)
//
// where a is the last event whose LC the γ term did not set: the telescoped
// form of LC(e_{i−1}) + γ·(t_i − t_{i−1}), rounded once instead of per
// event, which would otherwise shrink every short interval after a jump.
// δ applies only between events the clock told apart, so events with equal
// timestamps (frequent across a process's threads) stay equal instead of
// being pushed apart by δ each, a shift γ would take long to amortize. A
// receive-like event is moreover at least l_min after its send-like event:
// mpi_recv after its mpi_send, remote_dep_in after its remote_dep_out,
// coll_end after the relevant coll_begin(s) (one-to-all: the root's;
// all-to-one, at the root: every other member's; all-to-all: every
// member's, through one virtual node per instance). A collective whose
// operation is not known orders nothing (Score-P's communicator and handle
// operations, MPI_Comm_free among them, which is local in Open MPI; as
// Scalasca's correction, which drops them): no edge. The forward pass is a
// forward replay (graph.Replay) whose values are the logical times.
//
// # Backward amortization
//
// A jump J at a receive-like event r means the process's clock was behind
// by about J shortly before r, so the events before r are smoothed: an
// event with forward time f between the previous jump w (or the process's
// first event) and r moves to f + J·(f − LC(w))/(LC'(r) − LC(w)), where
// LC'(r) is r's time without the jump — a linear ramp from 0 to nearly J.
// A send-like event must not pass what its receivers allow (send + l_min
// ≤ receive), and a location's order and δ spacing must hold:
//
//	b(e) = min(f(e) + ramp(e), min over receivers b(recv) − l_min, b(next) − min(δ, f(next) − f(e)))
//
// This needs the receivers' final times, so the pass is a backward replay
// of the same graph. Every bound is at least f(e), so b ≥ f: corrections
// only move events later, never back.
//
// # Defaults
//
// γ = 0.99999: a corrected clock may run 10 ppm slow against its own, far
// more than the residual drift after interpolation, so a jump decays by
// 10 µs per second. δ = 1 ns: the trace's clock unit. l_min = 0: ptrace
// cannot know the network's least latency, and any positive guess larger
// than a real latency would itself move correct events; recorded send
// times (at post) and receive times (at completion) already satisfy
// recv ≥ send on a correct clock. Users who know a bound set it
// (--min-latency).
//
// # Results
//
// Events are not rewritten: each process gets a trace.Timebase (the offset
// model, plus an int32 column of CLC corrections for threads that got any)
// that its scans apply at decode, so corrected times cost no second copy
// of the trace. Per process: the offset
// model (source, offsets, drift), the largest and summed CLC correction
// (final time − interpolated time, never negative), and violations (a
// receive-like event earlier than its send-like event + l_min) on the
// recorded times and after the offset model (one graph.PropagateMax with
// both clocks), and after the CLC (CountAfter, on the edges
// graph.ExchangeEdges hands the rest of the pipeline; always 0), all
// counted at the receiving process. Census does the counting alone for
// traces from one shared clock.
package clocksync

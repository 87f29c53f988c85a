// Package graph owns ptrace's distributed graphs: the happened-before
// relation between processes (message matching), the replay engine that
// evaluates any DAG spread over analysis ranks, and the cross-process edge
// exchange. Dependence graphs of tasks, longest paths and the critical path
// (issue #6) build on the same engine.
//
// # Distributed DAG and replay
//
// A DAG (built with a Builder on every rank, then Build, one Alltoallv) has
// dense local node ids per rank. Nodes form chains (a node follows the
// previous one: the event order of a process, stored as one flag per node)
// and carry explicit edges in CSR arrays in both directions. An edge
// between ranks is a slot on each side: slot peerBase[q]+k is the k-th edge
// between this rank and rank q, in an order both compute, so values cross
// ranks as (k, value) pairs. Remote ends can be named by node id or by a
// Key the owner resolves (BuildOptions.Resolve), e.g. a trace event.
//
// Replay evaluates every node once with a user Eval over int64 values: the
// chain predecessor's value and the max (or min) over explicit inputs, plus,
// optionally, which input gave it (Arg) with partition-independent tie
// keys. Forward replays follow the edges, backward replays the reversed
// graph, NoChains replays only the explicit edges (an exchange). Each rank
// evaluates what is ready (a ready stack that runs along chains), batches
// values per destination rank, and all ranks swap batches in
// bulk-synchronous supersteps: one Alltoallv and one Allreduce of progress
// counts each. Results do not depend on the partition. A superstep in which
// no rank made progress while nodes remain proves a cycle: every rank
// returns the same *CycleError naming a waiting node. Walk passes tokens
// along chosen inputs across ranks (the critical path's walk back).
//
// A DAG may hold one side of its edges only: built InsOnly, a backward
// replay pushes each value to the node's inputs; built OutsOnly, a forward
// replay pushes it to the outputs (the argmax by tie key, as a pull would
// choose it) and records its order superstep by superstep, and
// ReplayInReverse then runs the backward replay in the reverse of that
// order, pulling from the outputs: a node's outputs came after it in the
// forward replay, on whatever rank. The critical path's fragment DAG is
// built OutsOnly, so its inputs' adjacency is never held.
//
// # Message matching
//
// Match gives every communication event of a rank's processes a node, in
// each process's merged event order (MergedTimes: time, then thread; sends
// before receives among different threads' equal timestamps, which would
// otherwise close false cycles), one chain per process. Messages within one
// process are matched but are no edges (SelfPairs): one clock, no
// constraint. Send-like records travel to the rank holding the
// receiver (one Alltoallv), where they are matched per channel in order:
// (communicator id, source, destination, tag) for point-to-point messages,
// (source, destination, predecessor task, successor task) for remote task
// dependences. Collectives match per communicator in call order; each
// instance gets a virtual node on the rank of member k mod N (its
// coordinator), with edges from the members' relevant coll_begin nodes and
// to their relevant coll_end nodes by the operation's class (one-to-all,
// all-to-one, all-to-all) and by which members move data (edgesOf: a
// collective of count 0 synchronizes nobody), so a collective over N
// members costs O(N) edges; a scan (prefix class) gets a virtual node per
// member, from the enters of up to 64 members before it. Unmatched events are counted warnings, listed in process order.
//
// # Edge exchange
//
// After clock synchronization, ExchangeEdges hands every process its
// RemoteEdges: for each receive-like event (mpi_recv, coll_end,
// remote_dep_in), in merged order, the predecessor's process, thread, event
// index, kind and final timestamp, as dense columns. Send-like events travel
// along their edges in one Alltoallv; collective nodes pick the latest of
// their members' enters (ties to the lowest process, thread, event) and pass
// it on in a second one. The simulator reads message arrival from it; the
// critical path declares its cross-process edges from it (AddRemoteInKey
// with a Key naming the predecessor's event, resolved by its owner).
package graph

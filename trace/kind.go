package trace

import "fmt"

// Kind is an event kind. The numeric values are part of the file format
// (docs/trace-format.md) and shared with the C collector: never renumber.
type Kind uint8

const (
	KindInvalid Kind = iota
	ThreadBegin
	ThreadEnd
	ParallelBegin
	ParallelEnd
	ImplicitTaskBegin
	ImplicitTaskEnd
	TaskCreate
	TaskDeps
	TaskDependence
	TaskSchedule
	SyncBegin
	SyncEnd
	SyncWaitBegin
	SyncWaitEnd
	DetachFulfill
	Cancel
	MPIEnter
	MPIExit
	MPISend
	MPIRecv
	MPIRecvPost
	MPIRequestDone
	CollBegin
	CollEnd
	RemoteDepOut
	RemoteDepIn
	RegionEnter
	RegionExit
	TaskAttr
	FlushBegin
	FlushEnd
	WorkBegin
	WorkEnd
	MutexAcquire
	MutexAcquired
	MutexReleased
	CollStart
	CollComplete
	MPIPolled
	RMALock
	RMAUnlock
	MPICancelled
	MPIRecvFreed

	NumKinds // one past the last valid kind
)

// Field is how one argument of an event is encoded in a chunk's args column.
type Field uint8

const (
	FUint     Field = iota // unsigned varint
	FInt                   // zig-zag signed varint
	FTask                  // task id: zig-zag delta against the chunk's last task id
	FParallel              // parallel-region id: zig-zag delta against the last one
	FRequest               // MPI request id: zig-zag delta against the last one
	FString                // string-table id (unsigned varint)
	FLoc                   // location-table id (unsigned varint)
	FComm                  // communicator-table index (unsigned varint)
)

// MaxArgs is the number of fixed arguments an Event carries.
const MaxArgs = 5

// Schema describes the arguments of one event kind: their names (for docs,
// dumps and error messages) and encodings. A kind with List set is followed by
// a variable-length dependence list (count, then address/type pairs).
type Schema struct {
	Name   string
	Args   []string
	Fields []Field
	List   bool
}

var schemas = [NumKinds]Schema{
	KindInvalid:       {Name: "invalid"},
	ThreadBegin:       {Name: "thread_begin", Args: []string{"type"}, Fields: []Field{FUint}},
	ThreadEnd:         {Name: "thread_end"},
	ParallelBegin:     {Name: "parallel_begin", Args: []string{"parallel", "encountering_task", "requested_team", "flags", "loc"}, Fields: []Field{FParallel, FTask, FUint, FUint, FLoc}},
	ParallelEnd:       {Name: "parallel_end", Args: []string{"parallel", "encountering_task", "flags", "loc"}, Fields: []Field{FParallel, FTask, FUint, FLoc}},
	ImplicitTaskBegin: {Name: "implicit_task_begin", Args: []string{"parallel", "task", "team_size", "thread_num", "flags"}, Fields: []Field{FParallel, FTask, FUint, FUint, FUint}},
	ImplicitTaskEnd:   {Name: "implicit_task_end", Args: []string{"parallel", "task", "team_size", "thread_num", "flags"}, Fields: []Field{FParallel, FTask, FUint, FUint, FUint}},
	TaskCreate:        {Name: "task_create", Args: []string{"task", "parent", "flags", "loc"}, Fields: []Field{FTask, FTask, FUint, FLoc}},
	TaskDeps:          {Name: "task_dependences", Args: []string{"task", "count", "offset"}, Fields: []Field{FTask}, List: true},
	TaskDependence:    {Name: "task_dependence", Args: []string{"pred", "succ"}, Fields: []Field{FTask, FTask}},
	TaskSchedule:      {Name: "task_schedule", Args: []string{"prior", "status", "next"}, Fields: []Field{FTask, FUint, FTask}},
	SyncBegin:         {Name: "sync_begin", Args: []string{"sync_kind", "parallel", "task", "loc"}, Fields: []Field{FUint, FParallel, FTask, FLoc}},
	SyncEnd:           {Name: "sync_end", Args: []string{"sync_kind", "parallel", "task", "loc"}, Fields: []Field{FUint, FParallel, FTask, FLoc}},
	SyncWaitBegin:     {Name: "sync_wait_begin", Args: []string{"sync_kind", "parallel", "task"}, Fields: []Field{FUint, FParallel, FTask}},
	SyncWaitEnd:       {Name: "sync_wait_end", Args: []string{"sync_kind", "parallel", "task"}, Fields: []Field{FUint, FParallel, FTask}},
	DetachFulfill:     {Name: "detach_fulfill", Args: []string{"task"}, Fields: []Field{FTask}},
	Cancel:            {Name: "cancel", Args: []string{"task", "flags", "loc"}, Fields: []Field{FTask, FUint, FLoc}},
	MPIEnter:          {Name: "mpi_enter", Args: []string{"func", "loc"}, Fields: []Field{FString, FLoc}},
	MPIExit:           {Name: "mpi_exit", Args: []string{"func"}, Fields: []Field{FString}},
	MPISend:           {Name: "mpi_send", Args: []string{"peer", "tag", "comm", "bytes", "request"}, Fields: []Field{FInt, FInt, FComm, FUint, FRequest}},
	MPIRecv:           {Name: "mpi_recv", Args: []string{"peer", "tag", "comm", "bytes", "request"}, Fields: []Field{FInt, FInt, FComm, FUint, FRequest}},
	MPIRecvPost:       {Name: "mpi_recv_post", Args: []string{"peer", "tag", "comm", "request"}, Fields: []Field{FInt, FInt, FComm, FRequest}},
	MPIRequestDone:    {Name: "mpi_request_done", Args: []string{"request"}, Fields: []Field{FRequest}},
	CollBegin:         {Name: "coll_begin", Args: []string{"op", "comm", "root", "sent", "received"}, Fields: []Field{FUint, FComm, FInt, FUint, FUint}},
	CollEnd:           {Name: "coll_end", Args: []string{"op", "comm", "root"}, Fields: []Field{FUint, FComm, FInt}},
	RemoteDepOut:      {Name: "remote_dep_out", Args: []string{"task", "peer", "remote_task"}, Fields: []Field{FTask, FInt, FUint}},
	RemoteDepIn:       {Name: "remote_dep_in", Args: []string{"task", "peer", "remote_task"}, Fields: []Field{FTask, FInt, FUint}},
	RegionEnter:       {Name: "region_enter", Args: []string{"name"}, Fields: []Field{FString}},
	RegionExit:        {Name: "region_exit", Args: []string{"name"}, Fields: []Field{FString}},
	TaskAttr:          {Name: "task_attr", Args: []string{"task", "key", "value"}, Fields: []Field{FTask, FString, FInt}},
	FlushBegin:        {Name: "flush_begin"},
	FlushEnd:          {Name: "flush_end"},
	WorkBegin:         {Name: "work_begin", Args: []string{"ws_type", "count", "loc"}, Fields: []Field{FUint, FUint, FLoc}},
	WorkEnd:           {Name: "work_end", Args: []string{"ws_type", "count", "loc"}, Fields: []Field{FUint, FUint, FLoc}},
	MutexAcquire:      {Name: "mutex_acquire", Args: []string{"mutex_kind", "wait_id", "loc"}, Fields: []Field{FUint, FUint, FLoc}},
	MutexAcquired:     {Name: "mutex_acquired", Args: []string{"mutex_kind", "wait_id", "loc"}, Fields: []Field{FUint, FUint, FLoc}},
	MutexReleased:     {Name: "mutex_released", Args: []string{"mutex_kind", "wait_id", "loc"}, Fields: []Field{FUint, FUint, FLoc}},
	CollStart:         {Name: "coll_start", Args: []string{"op", "comm", "root", "sent", "request"}, Fields: []Field{FUint, FComm, FInt, FUint, FRequest}},
	CollComplete:      {Name: "coll_complete", Args: []string{"op", "comm", "root", "received", "request"}, Fields: []Field{FUint, FComm, FInt, FUint, FRequest}},
	MPIPolled:         {Name: "mpi_polled", Args: []string{"request"}, Fields: []Field{FRequest}},
	RMALock:           {Name: "rma_lock", Args: []string{"peer", "comm", "lock_type"}, Fields: []Field{FInt, FComm, FUint}},
	RMAUnlock:         {Name: "rma_unlock", Args: []string{"peer", "comm"}, Fields: []Field{FInt, FComm}},
	MPICancelled:      {Name: "mpi_cancelled", Args: []string{"request"}, Fields: []Field{FRequest}},
	MPIRecvFreed:      {Name: "mpi_recv_freed", Args: []string{"peer", "tag", "comm", "request"}, Fields: []Field{FInt, FInt, FComm, FRequest}},
}

// SchemaOf returns the schema of k; ok is false for kinds this version does not know.
func SchemaOf(k Kind) (s Schema, ok bool) {
	if k == KindInvalid || k >= NumKinds {
		return Schema{}, false
	}
	return schemas[k], true
}

// Valid reports whether k is a kind this format version defines.
func (k Kind) Valid() bool { return k > KindInvalid && k < NumKinds }

func (k Kind) String() string {
	if k < NumKinds {
		return schemas[k].Name
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// KindByName returns the kind named s (as in Schema.Name).
func KindByName(s string) (Kind, bool) {
	for k := Kind(1); k < NumKinds; k++ {
		if schemas[k].Name == s {
			return k, true
		}
	}
	return KindInvalid, false
}

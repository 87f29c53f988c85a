package trace

// Event is one decoded event of one thread. Args hold the kind's arguments in
// the order of its Schema; unused slots are zero. Events of a thread are kept in
// dense slices (no pointers) so hot loops stay cache friendly.
//
// For TaskDeps, Args[1] is the number of dependences and Args[2] the index of
// the first one in the owning Deps slice (the chunk's, or the thread's once
// loaded).
type Event struct {
	Time int64
	Kind Kind
	Args [MaxArgs]int64
}

// Dep is one entry of a task's dependence list: an address (or doacross
// iteration value) and an OMPT dependence type (1 in, 2 out, 3 inout,
// 4 mutexinoutset, 5 source, 6 sink, 7 inoutset).
type Dep struct {
	Addr uint64
	Type uint8
	// 16 bytes on every platform, as a pair of decoded values takes
	// (chunkDecoder.decodeRun writes both at one offset); a 32-bit
	// platform aligns Addr to 4 and would make it 12.
	_ [7]byte
}

// Dependence types as OMPT numbers them (ompt_dependence_type_t).
const (
	DepIn            = 1
	DepOut           = 2
	DepInout         = 3
	DepMutexInoutset = 4
	DepSource        = 5
	DepSink          = 6
	DepInoutset      = 7
	// omp_all_memory (OpenMP 5.1), as LLVM 17's libomp and later report
	// it; the collector records what earlier ones report for it (an entry
	// at address 0 or −1) as DepOutAllMemory.
	DepOutAllMemory   = 34
	DepInoutAllMemory = 35
)

// AllMemory reports whether d is an omp_all_memory dependence.
func (d Dep) AllMemory() bool {
	return d.Type == DepOutAllMemory || d.Type == DepInoutAllMemory
}

// Task and other process-local ids carry the index of the thread that created
// them in their top bits and a per-thread sequence number (from 1) below, so
// collectors need no shared counter and analyses map ids to dense indices with
// one table per thread instead of a hash map.
const (
	IDSeqBits = 40
	IDSeqMask = 1<<IDSeqBits - 1
)

// MakeID returns the id of the seq-th object (seq ≥ 1) created by thread.
func MakeID(thread int, seq int64) int64 { return int64(thread)<<IDSeqBits | seq }

// IDThread returns the creating thread of an id made by MakeID.
func IDThread(id int64) int { return int(id >> IDSeqBits) }

// IDSeq returns the per-thread sequence number of an id made by MakeID.
func IDSeq(id int64) int64 { return id & IDSeqMask }

// Deps returns the dependence list of a TaskDeps event e from deps, the Deps
// slice that belongs to e's chunk or thread. It returns nil when the event's
// range does not fit deps (a corrupt event; the decoder rejects those).
func (e *Event) Deps(deps []Dep) []Dep {
	if e.Kind != TaskDeps {
		return nil
	}
	n, off := e.Args[1], e.Args[2]
	// n > len − off: off + n can wrap past the largest int64.
	if off < 0 || n < 0 || off > int64(len(deps)) || n > int64(len(deps))-off {
		return nil
	}
	return deps[off : off+n]
}

package waitstate

import (
	"fmt"

	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// Lock and critical-section contention, from the OMPT mutex events (and
// those of POSIX threads mutexes, ptrace's own kind trace.MutexPthread,
// which OTF2 archives of Score-P's pthread adapter give): a
// thread's wait for a mutex is from its mutex_acquire to its
// mutex_acquired, its hold from there to mutex_released. The waiting task
// is running for the simulator (the runtime spins or sleeps inside it), so
// this time is part of the breakdown's work, not of the OpenMP waiting the
// OMP pass splits.
//
// Its part until the mutex became free is the contention, Scalasca's
// definition (scout's Thread Lock Contention pattern: the last release of
// the lock in acquisition order, which is the previous holder's release,
// minus the entry of the acquiring construct or call; none when the lock
// was free at the request): from mutex_acquire to the last mutex_released
// of the same wait id before the mutex_acquired, 0 when there was none
// after the request; the rest of the wait is the hand-over after the
// release. The pass sees the process's events in time order across its
// threads, so a release is handed to the threads pending on that id at
// the time (no table of every id: codes with a lock per array element
// have millions). OMPT reports a release after the runtime let the lock
// go, so the next holder's mutex_acquired may come first: when another
// thread still holds the id at an acquisition, its release is taken to be
// at the acquisition (the whole wait is contention).

// A mutex_acquire without its mutex_acquired (a failed omp_test_lock, a
// nest lock acquired again by its owner, which OMPT reports through
// nest_lock) counts nothing: the next acquire replaces it. libomp reports a
// test's acquire with the kind of a blocking lock, so no lock's acquire has
// to complete.
//
// Every other departure from OMPT's sequence is a claim the trace breaks,
// a counted warning naming the event (the report is then partial): an
// acquired without its acquire, or with another kind or wait id; a mutex
// acquired again by the thread holding it; a release of a mutex the thread
// does not hold, or of another kind; a blocking acquire (critical,
// atomic, ordered) that another acquire follows without its acquired; a
// mutex still held when the trace ends; a kind OMPT does not define. Kinds
// compare by what libomp pairs: an omp_test_lock is released as a lock, an
// omp_test_nest_lock as a nest lock.

// mutexNames are OMPT's ompt_mutex_t values.
var mutexNames = [...]string{1: "lock", 2: "test_lock", 3: "nest_lock", 4: "test_nest_lock", 5: "critical", 6: "atomic", 7: "ordered"}

// MutexName names an ompt_mutex_t value, or ptrace's own pthread_mutex.
func MutexName(kind int64) string {
	if kind > 0 && kind < int64(len(mutexNames)) {
		return mutexNames[kind]
	}
	if kind == trace.MutexPthread {
		return "pthread_mutex"
	}
	return fmt.Sprintf("mutex_%d", kind)
}

// MutexRow is one process's acquisitions of one kind of mutex at one call
// site (the location of the acquiring call or construct).
type MutexRow struct {
	Rank         int
	Kind         string
	Construct    string
	Acquisitions int64 // acquired in the window
	WaitNS       int64 // mutex_acquire to mutex_acquired, cut to the window
	MaxWaitNS    int64
	HoldNS       int64 // mutex_acquired to mutex_released, cut to the window
	// ContentionNS: mutex_acquire to the last release of the mutex before
	// the acquisition (Scalasca's lock contention), cut to the window.
	ContentionNS int64
}

type mutexKey struct{ kind, loc int64 }

type mutexAcc struct {
	n, wait, maxWait, hold, contention int64
}

// maxHeld bounds the mutexes a thread is taken to hold at once.
const maxHeld = 64

type held struct {
	id, since, kind int64
	row             int32
}

// mutexState follows each thread's pending acquisition and held mutexes.
type mutexState struct {
	keys  []mutexKey
	acc   []mutexAcc
	index map[mutexKey]int32
	// per thread: the pending acquisition (row −1: none) and held mutexes
	pendRow  []int32
	pendID   []int64
	pendTime []int64
	pendKind []int64
	// pendMay: the pending acquire may have no acquired (a test, or a
	// nest lock its thread held when it asked again)
	pendMay []bool
	// pendRel: the last release of the pending acquisition's id while it
	// was pending, its request's time when none came (no time is before
	// every request: a corrected clock may start below 0)
	pendRel []int64
	// pending lists the threads with a pending acquisition, pendPos each
	// one's place in it: a release looks at these threads only.
	pending []int32
	pendPos []int32
	held    [][]held
	nheld   int // mutexes held, over all threads
}

func newMutexState(T int) mutexState {
	m := mutexState{pendRow: make([]int32, T), pendID: make([]int64, T), pendTime: make([]int64, T), pendKind: make([]int64, T), pendMay: make([]bool, T),
		pendRel: make([]int64, T), pendPos: make([]int32, T), held: make([][]held, T)}
	for th := range m.pendRow {
		m.pendRow[th] = -1
	}
	return m
}

// setPending and clearPending keep the list of pending threads.
func (m *mutexState) setPending(th int) {
	m.pendPos[th] = int32(len(m.pending))
	m.pending = append(m.pending, int32(th))
}

func (m *mutexState) clearPending(th int) {
	i, last := m.pendPos[th], m.pending[len(m.pending)-1]
	m.pending[i], m.pendPos[last] = last, i
	m.pending = m.pending[:len(m.pending)-1]
}

// heldByOther reports whether a thread other than th holds mutex id.
func (m *mutexState) heldByOther(th int, id int64) bool {
	if m.nheld == len(m.held[th]) {
		return false
	}
	for o := range m.held {
		if o != th && m.holds(o, id) >= 0 {
			return true
		}
	}
	return false
}

func (m *mutexState) rowOf(k mutexKey) int32 {
	if m.index == nil {
		m.index = map[mutexKey]int32{}
	}
	i, ok := m.index[k]
	if !ok {
		i = int32(len(m.keys))
		m.index[k] = i
		m.keys = append(m.keys, k)
		m.acc = append(m.acc, mutexAcc{})
	}
	return i
}

// clip returns the part of [from, to] inside the window.
func inWindow(s *sim.Sim, from, to int64) int64 {
	return max(0, min(to, s.End)-max(from, s.Begin))
}

// Mutex kinds (ompt_mutex_t).
const (
	mutexLock         = 1
	mutexTestLock     = 2
	mutexNestLock     = 3
	mutexTestNestLock = 4
	mutexOrdered      = 7
)

// mutexClass maps a kind to the kind libomp releases it as.
func mutexClass(kind int64) int64 {
	switch kind {
	case mutexTestLock:
		return mutexLock
	case mutexTestNestLock:
		return mutexNestLock
	}
	return kind
}

func (m *mutexState) holds(th int, id int64) int {
	hs := m.held[th]
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].id == id {
			return i
		}
	}
	return -1
}

func (m *mutexState) event(s *sim.Sim, e *trace.Event, th int) {
	kind, id := e.Args[0], e.Args[1]
	if (kind < mutexLock || kind > mutexOrdered) && kind != trace.MutexPthread {
		s.Warn.Add("unknown mutex kind", "%s of mutex kind %d (OMPT defines 1..%d, ptrace %d)", e.Kind, kind, mutexOrdered, trace.MutexPthread)
	}
	switch e.Kind {
	case trace.MutexAcquire:
		if k := m.pendRow[th]; k >= 0 && !m.pendMay[th] {
			s.Warn.Add("mutex_acquired missing", "mutex_acquire of mutex %#x (kind %d) follows the acquire of mutex %#x (kind %d) without its mutex_acquired", id, kind, m.pendID[th], m.pendKind[th])
		}
		if m.pendRow[th] < 0 {
			m.setPending(th)
		}
		m.pendRow[th], m.pendID[th], m.pendTime[th], m.pendKind[th] = m.rowOf(mutexKey{kind, e.Args[2]}), id, e.Time, kind
		m.pendRel[th] = e.Time
		// A test may fail, and a nest lock's owner takes it again without
		// an acquired; a blocking acquire always completes. LLVM's libomp
		// reports omp_test_lock and omp_test_nest_lock as acquires of kind
		// lock and nest_lock (ompt_mutex_test_lock never comes), so any
		// lock acquire may be a test that failed: a thread spinning on a
		// held lock's test makes one for each try, a million under load.
		m.pendMay[th] = kind == mutexLock || kind == mutexTestLock || kind == mutexNestLock || kind == mutexTestNestLock
	case trace.MutexAcquired:
		k := m.pendRow[th]
		if k >= 0 {
			m.clearPending(th)
		}
		var wait, contention int64
		switch {
		case k < 0:
			s.Warn.Add("mutex_acquired without mutex_acquire", "mutex %#x (kind %d)", id, kind)
		case m.pendID[th] != id:
			s.Warn.Add("mutex wait id mismatch", "mutex_acquired of mutex %#x after the acquire of mutex %#x", id, m.pendID[th])
			k = -1
		default:
			if m.pendKind[th] != kind {
				s.Warn.Add("mutex kind mismatch", "mutex_acquired of kind %d after an acquire of kind %d (mutex %#x)", kind, m.pendKind[th], id)
			}
			wait = inWindow(s, m.pendTime[th], e.Time)
			free := m.pendRel[th]
			if m.heldByOther(th, id) {
				free = e.Time // its holder's release comes later in the trace
			}
			contention = inWindow(s, m.pendTime[th], free)
		}
		if k < 0 {
			// No wait known.
			k = m.rowOf(mutexKey{kind, e.Args[2]})
		}
		if i := m.holds(th, id); i >= 0 {
			s.Warn.Add("mutex acquired twice", "mutex %#x (kind %d), which this thread holds since %d ns", id, kind, m.held[th][i].since)
		}
		m.pendRow[th] = -1
		a := &m.acc[k]
		if e.Time >= s.Begin && e.Time <= s.End {
			a.n++
		}
		a.wait += wait
		a.maxWait = max(a.maxWait, wait)
		a.contention += contention
		if len(m.held[th]) == maxHeld {
			// Releases lost: forget the oldest rather than grow.
			s.Warn.Add("mutex_released missing", "thread holds %d mutexes; the oldest, %#x, is taken as released", maxHeld, m.held[th][0].id)
			m.held[th] = append(m.held[th][:0], m.held[th][1:]...)
			m.nheld--
		}
		m.held[th] = append(m.held[th], held{id: id, since: e.Time, kind: kind, row: k})
		m.nheld++
	case trace.MutexReleased:
		i := m.holds(th, id)
		if i < 0 {
			s.Warn.Add("mutex_released without mutex_acquired", "mutex %#x (kind %d), which this thread does not hold", id, kind)
			return
		}
		hs := m.held[th]
		if mutexClass(hs[i].kind) != mutexClass(kind) {
			s.Warn.Add("mutex kind mismatch", "mutex_released of kind %d for mutex %#x acquired as kind %d", kind, id, hs[i].kind)
		}
		m.acc[hs[i].row].hold += inWindow(s, hs[i].since, e.Time)
		m.held[th] = append(hs[:i], hs[i+1:]...)
		m.nheld--
		// The mutex is free: the threads waiting for it wait no longer
		// for its holder.
		for _, o := range m.pending {
			if m.pendID[o] == id {
				m.pendRel[o] = e.Time
			}
		}
	}
}

// finish warns about the mutexes still held at the end of the trace: their
// hold time is unknown (counted to the end of the window it would be a
// guess, left out it is too little).
func (m *mutexState) finish(s *sim.Sim) {
	for th, hs := range m.held {
		for _, h := range hs {
			s.Warn.Add("mutex never released", "thread %d holds mutex %#x (kind %d) since %d ns", th, h.id, h.kind, h.since)
		}
	}
}

func (m *mutexState) rows(rank int, name func(int64) string) []MutexRow {
	var out []MutexRow
	for i, k := range m.keys {
		a := &m.acc[i]
		if a.n == 0 && a.wait == 0 && a.hold == 0 {
			continue
		}
		out = append(out, MutexRow{Rank: rank, Kind: MutexName(k.kind), Construct: name(k.loc), Acquisitions: a.n, WaitNS: a.wait, MaxWaitNS: a.maxWait, HoldNS: a.hold, ContentionNS: a.contention})
	}
	return out
}

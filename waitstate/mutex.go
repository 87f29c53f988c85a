package waitstate

import (
	"fmt"

	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// Lock and critical-section contention, from the OMPT mutex events: a
// thread's wait for a mutex is from its mutex_acquire to its
// mutex_acquired, its hold from there to mutex_released. The waiting task
// is running for the simulator (the runtime spins or sleeps inside it), so
// this time is part of the breakdown's work, not of the OpenMP waiting the
// OMP pass splits.

// A mutex_acquire without its mutex_acquired (a failed omp_test_lock, a
// nest lock acquired again by its owner, which OMPT reports through
// nest_lock) counts nothing: the next acquire replaces it.

// mutexNames are OMPT's ompt_mutex_t values.
var mutexNames = [...]string{1: "lock", 2: "test_lock", 3: "nest_lock", 4: "test_nest_lock", 5: "critical", 6: "atomic", 7: "ordered"}

// MutexName names an ompt_mutex_t value.
func MutexName(kind int64) string {
	if kind > 0 && kind < int64(len(mutexNames)) {
		return mutexNames[kind]
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
}

type mutexKey struct{ kind, loc int64 }

type mutexAcc struct {
	n, wait, maxWait, hold int64
}

// maxHeld bounds the mutexes a thread is taken to hold at once.
const maxHeld = 64

type held struct {
	id, since int64
	row       int32
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
	held     [][]held
}

func newMutexState(T int) mutexState {
	m := mutexState{pendRow: make([]int32, T), pendID: make([]int64, T), pendTime: make([]int64, T), held: make([][]held, T)}
	for th := range m.pendRow {
		m.pendRow[th] = -1
	}
	return m
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

func (m *mutexState) event(s *sim.Sim, e *trace.Event, th int) {
	kind, id := e.Args[0], e.Args[1]
	switch e.Kind {
	case trace.MutexAcquire:
		m.pendRow[th], m.pendID[th], m.pendTime[th] = m.rowOf(mutexKey{kind, e.Args[2]}), id, e.Time
	case trace.MutexAcquired:
		k := m.pendRow[th]
		var wait int64
		if k >= 0 && m.pendID[th] == id {
			wait = inWindow(s, m.pendTime[th], e.Time)
		} else {
			// Acquired without a recorded acquire (lost events): no wait known.
			k = m.rowOf(mutexKey{kind, e.Args[2]})
		}
		m.pendRow[th] = -1
		a := &m.acc[k]
		if e.Time >= s.Begin && e.Time <= s.End {
			a.n++
		}
		a.wait += wait
		a.maxWait = max(a.maxWait, wait)
		if len(m.held[th]) == maxHeld {
			// Releases lost: forget the oldest rather than grow.
			m.held[th] = append(m.held[th][:0], m.held[th][1:]...)
		}
		m.held[th] = append(m.held[th], held{id: id, since: e.Time, row: k})
	case trace.MutexReleased:
		hs := m.held[th]
		for i := len(hs) - 1; i >= 0; i-- {
			if hs[i].id == id {
				m.acc[hs[i].row].hold += inWindow(s, hs[i].since, e.Time)
				m.held[th] = append(hs[:i], hs[i+1:]...)
				break
			}
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
		out = append(out, MutexRow{Rank: rank, Kind: MutexName(k.kind), Construct: name(k.loc), Acquisitions: a.n, WaitNS: a.wait, MaxWaitNS: a.maxWait, HoldNS: a.hold})
	}
	return out
}

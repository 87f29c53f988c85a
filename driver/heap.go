package driver

import (
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptrace-dev/ptrace/internal/procmem"
)

// heapSampler records the peak of live heap objects between calls to
// phasePeak, polling runtime/metrics: the heap's high point inside a
// phase, which a reading at the phase's end misses.
type heapSampler struct {
	// mu makes a reading and its noting one step against phasePeak: a
	// reading taken before a phase's closing collection and noted after
	// phasePeak had started the next phase counted the phase's heap in
	// the next one (--stats gave the anomalies the simulation's peak).
	mu   sync.Mutex
	peak atomic.Uint64
	// live is the peak of the heap the last collection found live (the
	// runtime's /gc/heap/live:bytes): what the analysis holds, without
	// the garbage a collector starved of CPU has not reclaimed yet.
	live atomic.Uint64
	// over is the resident set the sampler saw above limit (the process's
	// memory limit, 0: none), 0 until it does: the phases poll it to stop
	// at once rather than at their end.
	limit uint64
	over  atomic.Uint64
	done  chan struct{}
	wg    sync.WaitGroup
}

const (
	heapMetric = "/memory/classes/heap/objects:bytes"
	liveMetric = "/gc/heap/live:bytes"
)

func readHeap(s []metrics.Sample) uint64 {
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// readLive returns the live heap (s[1], read with s by readHeap).
func readLive(s []metrics.Sample) uint64 {
	if len(s) < 2 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[1].Value.Uint64()
}

func noteMax(a *atomic.Uint64, v uint64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

func startHeapSampler(limit uint64) *heapSampler {
	h := &heapSampler{limit: limit, done: make(chan struct{})}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		s := []metrics.Sample{{Name: heapMetric}, {Name: liveMetric}}
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			h.mu.Lock()
			h.note(readHeap(s))
			live := readLive(s)
			noteMax(&h.live, live)
			h.mu.Unlock()
			if h.limit > 0 {
				rss := uint64(procmem.Resident())
				if rss == 0 {
					rss = live // no /proc: the live heap, the runtime's share of it
				}
				if rss > h.limit {
					noteMax(&h.over, rss)
				}
			}
			select {
			case <-h.done:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) note(v uint64) { noteMax(&h.peak, v) }

// phasePeak returns the peaks of the heap and of the live heap since the
// previous call (the current ones included) and starts the next phase's
// from the current ones.
func (h *heapSampler) phasePeak() (heap, live uint64) {
	s := []metrics.Sample{{Name: heapMetric}, {Name: liveMetric}}
	h.mu.Lock()
	defer h.mu.Unlock()
	cur, curLive := readHeap(s), readLive(s)
	h.note(cur)
	noteMax(&h.live, curLive)
	return h.peak.Swap(cur), h.live.Swap(curLive)
}

func (h *heapSampler) stop() {
	close(h.done)
	h.wg.Wait()
}

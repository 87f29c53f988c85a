package driver

import (
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// heapSampler records the peak of live heap objects between calls to
// phasePeak, polling runtime/metrics: the heap's high point inside a
// phase, which a reading at the phase's end misses.
type heapSampler struct {
	peak atomic.Uint64
	done chan struct{}
	wg   sync.WaitGroup
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func readHeap(s []metrics.Sample) uint64 {
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{done: make(chan struct{})}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		s := []metrics.Sample{{Name: heapMetric}}
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			h.note(readHeap(s))
			select {
			case <-h.done:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) note(v uint64) {
	for {
		old := h.peak.Load()
		if v <= old || h.peak.CompareAndSwap(old, v) {
			return
		}
	}
}

// phasePeak returns the peak since the previous call (the current heap
// included) and starts the next phase's from the current heap.
func (h *heapSampler) phasePeak() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	cur := readHeap(s)
	h.note(cur)
	return h.peak.Swap(cur)
}

func (h *heapSampler) stop() {
	close(h.done)
	h.wg.Wait()
}

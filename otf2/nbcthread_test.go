package otf2

import (
	"math"
	"testing"
)

// crossThreadNBCArchive writes oldArchive's two processes with an
// MPI_Ibarrier before their MPI_Allreduce whose request rank 0 completes
// on another location (an MPI_Wait on its location 2, a second thread
// that records no ThreadBegin, as under MPI_THREAD_MULTIPLE), rank 1 on
// the thread that started it. Score-P writes the NonBlockingCollective-
// Request on the starting location and the NonBlockingCollectiveComplete,
// which alone names the operation and communicator, on the completing
// one (request ids are the process's). Timeline (ns):
//
//	rank 0, location 0: MPI_Init 0–1000, MPI_Ibarrier 2500–2700 (request 5 at 2600),
//	                    MPI_Allreduce 5000–5600, MPI_Finalize 7000–8000
//	rank 0, location 2: MPI_Wait 2800–3100 (request 5 completes at 3000)
//	rank 1:             MPI_Init 0–1000, MPI_Ibarrier 1500–1700 (request 9 at 1600),
//	                    MPI_Wait 1800–3100 (completes at 3000),
//	                    MPI_Allreduce 4000–5600, MPI_Finalize 7000–8000
//
// So rank 1 waits 700 ns in MPI_Wait for rank 0's MPI_Ibarrier (wait at
// the barrier) and 1000 ns in MPI_Allreduce (wait at N×N).
func crossThreadNBCArchive(t testing.TB, dir string) string {
	const chunk = 256 << 10
	anchor := editedArchive(t, dir, func(recs []defRec) []defRec {
		recs = append(recs, defRec{gdString, (&enc{}).c(16).str("MPI_Ibarrier")}, defRec{gdString, (&enc{}).c(17).str("MPI_Wait")})
		for id := uint64(6); id <= 7; id++ {
			recs = append(recs, defRec{gdRegion, (&enc{}).c(id).c(id + 10).c(0).u8(0).c(14).c(0).c(0).c(id + 10).u8(roleFunction).u8(paradigmMPI).c(0)})
		}
		return append(recs, defRec{gdLocation, (&enc{}).c(2).c(10).u8(locationTypeCPU).c(0).c(0)})
	})
	const ibarrier, wait, allreduce = 6, 7, 3
	ev := func(f *file, rank uint64, ibar uint64, completes bool) {
		at := func(ns uint64) *file { return f.time(1000 + ns) }
		enter := func(ns, reg uint64) { at(ns).single(EvEnter, (&enc{}).c(reg)) }
		leave := func(ns, reg uint64) { at(ns).single(EvLeave, (&enc{}).c(reg)) }
		req := 5 + 4*rank
		enter(0, 0)
		leave(1000, 0)
		enter(ibar, ibarrier)
		at(ibar+100).rec(EvNbCollRequest, (&enc{}).c(req))
		leave(ibar+200, ibarrier)
		if completes {
			enter(1800, wait)
			// NonBlockingCollectiveComplete: op (0 barrier), comm, root,
			// sent, received, request
			at(3000).rec(EvNbCollComplete, (&enc{}).u8(0).c(0).c(math.MaxUint32).c(0).c(0).c(req))
			leave(3100, wait)
		}
		enter(4000+(1-rank)*1000, allreduce)
		at(4000+(1-rank)*1000).rec(EvMpiCollectiveBegin, &enc{})
		at(5500).rec(EvMpiCollectiveEnd, (&enc{}).u8(11).c(0).c(math.MaxUint32).c(8).c(8))
		leave(5600, allreduce)
		enter(7000, 4)
		leave(8000, 4)
	}
	f0, f1, f2 := newFile(chunk), newFile(chunk), newFile(chunk)
	ev(f0, 0, 2500, false)
	ev(f1, 1, 1500, true)
	f2.time(1000+2800).single(EvEnter, (&enc{}).c(wait))
	f2.time(1000+3000).rec(EvNbCollComplete, (&enc{}).u8(0).c(0).c(math.MaxUint32).c(0).c(0).c(5))
	f2.time(1000+3100).single(EvLeave, (&enc{}).c(wait))
	writeLocation(t, dir, "0", f0.bytes())
	writeLocation(t, dir, "1", f1.bytes())
	writeLocation(t, dir, "2", f2.bytes())
	return anchor
}

package otf2

import "testing"

// polledRecvArchive writes oldArchive's two processes with a receive that
// rank 1 polls with MPI_Test (Score-P's MpiRequestTest records, group
// xreqtest, in each test that does not complete it) while rank 0 computes
// before its MPI_Send. Timeline (ns):
//
//	rank 0: MPI_Init 0–1000, serial code, MPI_Send 5000–5100, MPI_Finalize 5200–8000
//	rank 1: MPI_Init 0–1000, MPI_Irecv 1500–1600 (request 3),
//	        MPI_Test 2000–2200, 3000–3300, 4800–5200 (each tests request 3),
//	        MPI_Test 5500–5600 (completes it), MPI_Finalize 7000–8000
//
// So rank 1's polling waits 200 + 300 + 200 = 700 ns for rank 0's send
// (Late Sender), and the critical path (5600 ns) runs through rank 0's
// 4000 ns of serial code and its MPI_Send, then rank 1's completing
// MPI_Test and serial code: rank 1 alone weighs 6000 ns less the 700 of
// the wait. With the polling weighed in full it would be rank 1 alone.
func polledRecvArchive(t testing.TB, dir string) string {
	const chunk = 256 << 10
	anchor := editedArchive(t, dir, func(recs []defRec) []defRec {
		recs = append(recs, defRec{gdString, (&enc{}).c(16).str("MPI_Irecv")}, defRec{gdString, (&enc{}).c(17).str("MPI_Test")})
		for id := uint64(6); id <= 7; id++ {
			recs = append(recs, defRec{gdRegion, (&enc{}).c(id).c(id + 10).c(0).u8(0).c(14).c(0).c(0).c(id + 10).u8(roleFunction).u8(paradigmMPI).c(0)})
		}
		return recs
	})
	const send, irecv, test, finalize = 1, 6, 7, 4
	f0, f1 := newFile(chunk), newFile(chunk)
	for r, f := range []*file{f0, f1} {
		at := func(ns uint64) *file { return f.time(1000 + ns) }
		enter := func(ns, reg uint64) { at(ns).single(EvEnter, (&enc{}).c(reg)) }
		leave := func(ns, reg uint64) { at(ns).single(EvLeave, (&enc{}).c(reg)) }
		enter(0, 0)
		leave(1000, 0)
		if r == 0 {
			enter(5000, send)
			// MpiSend: receiver, comm, tag, length
			at(5000).rec(EvMpiSend, (&enc{}).c(1).c(0).c(7).c(4))
			leave(5100, send)
		} else {
			enter(1500, irecv)
			at(1550).single(EvMpiIrecvRequest, (&enc{}).c(3))
			leave(1600, irecv)
			for _, c := range [][2]uint64{{2000, 2200}, {3000, 3300}, {4800, 5200}} {
				enter(c[0], test)
				at(c[0]+50).single(EvMpiRequestTest, (&enc{}).c(3))
				leave(c[1], test)
			}
			enter(5500, test)
			// MpiIrecv: sender, comm, tag, length, request
			at(5550).rec(EvMpiIrecv, (&enc{}).c(0).c(0).c(7).c(4).c(3))
			leave(5600, test)
		}
		enter(7000-1800*uint64(1-r), finalize)
		leave(8000, finalize)
	}
	writeLocation(t, dir, "0", f0.bytes())
	writeLocation(t, dir, "1", f1.bytes())
	return anchor
}

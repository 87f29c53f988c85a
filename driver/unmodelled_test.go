package driver_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/trace"
)

// writeTwoThreadRank writes rank r of a 2-process trace in dir: its
// initial thread as writeMPIRank's, with main's events, and, when other
// is not nil, a second thread of type typ that runs no task (a pthread
// of an OTF2 archive, type unknown; a thread the collector recorded no
// OpenMP runtime on, type other) with other's.
func writeTwoThreadRank(t *testing.T, dir string, r int, typ int, end int64, main, other func(w *trace.Writer, emit emitFunc)) {
	t.Helper()
	w, err := trace.Create(filepath.Join(dir, trace.FileName(r)), trace.Header{Rank: r, NRanks: 2, Host: "node", ClockSrc: "synthetic"})
	if err != nil {
		t.Fatal(err)
	}
	w.AddComm(trace.Communicator{Index: 0, ID: 0, Name: "MPI_COMM_WORLD", Members: []int{0, 1}})
	on := func(th int) emitFunc {
		return func(k trace.Kind, time int64, args ...int64) {
			if err := w.E(th, k, time, args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	emit := on(0)
	emit(trace.ThreadBegin, 0, trace.ThreadInitial)
	emit(trace.ImplicitTaskBegin, 0, 0, trace.MakeID(0, 1), 1, 0, 1)
	emit(trace.MPIEnter, 0, w.String("MPI_Init"))
	emit(trace.MPIExit, 10, w.String("MPI_Init"))
	if main != nil {
		main(w, emit)
	}
	emit(trace.MPIEnter, end, w.String("MPI_Finalize"))
	emit(trace.MPIExit, end+10, w.String("MPI_Finalize"))
	emit(trace.ImplicitTaskEnd, end+10, 0, trace.MakeID(0, 1), 1, 0, 1)
	emit(trace.ThreadEnd, end+10)
	if other != nil {
		w.SetThread(trace.Thread{Index: 1, Type: typ})
		o := on(1)
		o(trace.ThreadBegin, 0, int64(typ))
		other(w, o)
		o(trace.ThreadEnd, end+10)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestEdgesFromThreadsOutsideGraph: a cross-process edge whose source is
// an event of a thread that runs no task — a wait for progress whose
// completion is on such a thread (MPI_THREAD_MULTIPLE: a pthread waits
// for the main thread's MPI_Ibarrier, the shape of the Score-P archive
// of otf2.CrossThreadNBCArchive), a message it sent, a Late Receiver of
// its receive — has no source node, for the thread's MPI calls are no
// fragments (sim.Frags.OutsideGraph): the critical path leaves the edge
// out without a warning (each one counted as a damaged trace's "edges
// whose source event has no fragment" before), on a thread of type
// unknown and on one of type other, on 1 and 2 analysis ranks, with the
// same report. A send outside any MPI call on the type-other thread is
// a damaged trace's: still counted.
func TestEdgesFromThreadsOutsideGraph(t *testing.T) {
	bar := int64(trace.CollBarrier)
	type body = func(w *trace.Writer, emit emitFunc)
	cases := []struct {
		name        string
		main, other [2]body
		warn        bool
	}{
		{name: "wait for progress", main: [2]body{
			func(w *trace.Writer, emit emitFunc) { // starts late, completes on thread 1 at 400
				emit(trace.MPIEnter, 300, w.String("MPI_Ibarrier"))
				emit(trace.CollStart, 310, bar, 0, -1, 0, 7)
				emit(trace.MPIExit, 320, w.String("MPI_Ibarrier"))
			},
			func(w *trace.Writer, emit emitFunc) { // waits from 130 for the start and the progress
				emit(trace.MPIEnter, 100, w.String("MPI_Ibarrier"))
				emit(trace.CollStart, 110, bar, 0, -1, 0, 9)
				emit(trace.MPIExit, 120, w.String("MPI_Ibarrier"))
				emit(trace.MPIEnter, 130, w.String("MPI_Wait"))
				emit(trace.CollComplete, 500, bar, 0, -1, 0, 9)
				emit(trace.MPIExit, 510, w.String("MPI_Wait"))
			}}, other: [2]body{
			func(w *trace.Writer, emit emitFunc) {
				emit(trace.MPIEnter, 400, w.String("MPI_Wait"))
				emit(trace.CollComplete, 500, bar, 0, -1, 0, 7)
				emit(trace.MPIExit, 510, w.String("MPI_Wait"))
			}, nil}},
		{name: "send", main: [2]body{nil,
			func(w *trace.Writer, emit emitFunc) {
				emit(trace.MPIEnter, 100, w.String("MPI_Recv"))
				emit(trace.MPIRecv, 400, 0, 4, 0, 8, 0)
				emit(trace.MPIExit, 410, w.String("MPI_Recv"))
			}}, other: [2]body{
			func(w *trace.Writer, emit emitFunc) {
				emit(trace.MPIEnter, 300, w.String("MPI_Send"))
				emit(trace.MPISend, 300, 1, 4, 0, 8, 0)
				emit(trace.MPIExit, 310, w.String("MPI_Send"))
			}, nil}},
		{name: "late receiver", main: [2]body{nil,
			func(w *trace.Writer, emit emitFunc) {
				emit(trace.MPIEnter, 100, w.String("MPI_Ssend"))
				emit(trace.MPISend, 100, 0, 4, 0, 8, 0)
				emit(trace.MPIExit, 400, w.String("MPI_Ssend"))
			}}, other: [2]body{
			func(w *trace.Writer, emit emitFunc) {
				emit(trace.MPIEnter, 300, w.String("MPI_Recv"))
				emit(trace.MPIRecv, 390, 1, 4, 0, 8, 0)
				emit(trace.MPIExit, 400, w.String("MPI_Recv"))
			}, nil}},
		{name: "send outside its call", main: [2]body{nil,
			func(w *trace.Writer, emit emitFunc) {
				emit(trace.MPIEnter, 100, w.String("MPI_Recv"))
				emit(trace.MPIRecv, 400, 0, 4, 0, 8, 0)
				emit(trace.MPIExit, 410, w.String("MPI_Recv"))
			}}, other: [2]body{
			func(w *trace.Writer, emit emitFunc) {
				emit(trace.MPIEnter, 300, w.String("MPI_Barrier"))
				emit(trace.MPIExit, 310, w.String("MPI_Barrier"))
				emit(trace.MPISend, 320, 1, 4, 0, 8, 0)
			}, nil}, warn: true},
	}
	for _, typ := range []int{trace.ThreadUnknown, trace.ThreadOther} {
		for _, c := range cases {
			warn := c.warn && typ == trace.ThreadOther // every event of a thread of type unknown is outside
			dir := t.TempDir()
			for r := range 2 {
				writeTwoThreadRank(t, dir, r, typ, 1000, c.main[r], c.other[r])
			}
			var js [2][]byte
			for k := 1; k <= 2; k++ {
				rep, err := runWith(k, driver.Options{Dir: dir, NoClockSync: true})
				if err != nil {
					t.Fatalf("%s, type %d, k=%d: %v", c.name, typ, k, err)
				}
				if w := rep.Trace.Warnings; (w != nil && w.Count > 0) != warn {
					t.Errorf("%s, type %d, k=%d: warnings %+v, want some: %v", c.name, typ, k, w, warn)
				}
				if rep.CriticalPath == nil {
					t.Errorf("%s, type %d, k=%d: no critical path", c.name, typ, k)
				}
				js[k-1] = reportJSON(t, rep)
			}
			if !bytes.Equal(js[0], js[1]) {
				t.Errorf("%s, type %d: the report differs on 1 and 2 ranks", c.name, typ)
			}
		}
	}
}

package driver

import (
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// lateInitTrace writes two processes: rank 1's MPI_Init ends 130 ns after
// rank 0's (at 140, not 10). Rank 0 computes [10, 100], sends to rank 1
// in [100, 110] (its event at 100), computes [110, 200] and enters
// MPI_Finalize at 200; rank 1 computes [140, 150], receives in [150, 160]
// (the message there before) and computes [160, 1000] before its
// MPI_Finalize. The window is [10, 1000].
func lateInitTrace(t *testing.T) string {
	t.Helper()
	const fInit, fRecv, fSend, fFin = 0, 1, 2, 3
	call := func(enter, exit, fn int64, inner ...trace.Event) []trace.Event {
		return append(append([]trace.Event{ev(enter, trace.MPIEnter, fn, -1)}, inner...), ev(exit, trace.MPIExit, fn))
	}
	rows := [2][]trace.Event{}
	for r := range 2 {
		evs := []trace.Event{ev(0, trace.ThreadBegin, 1)}
		if r == 0 {
			evs = append(evs, call(0, 10, fInit)...)
			evs = append(evs, call(100, 110, fSend, ev(100, trace.MPISend, 1, 7, 0, 8, 0))...)
			evs = append(evs, call(200, 1010, fFin)...)
		} else {
			evs = append(evs, call(0, 140, fInit)...)
			evs = append(evs, call(150, 160, fRecv, ev(160, trace.MPIRecv, 0, 7, 0, 8, 0))...)
			evs = append(evs, call(1000, 1010, fFin)...)
		}
		rows[r] = append(evs, ev(1010, trace.ThreadEnd))
	}
	dir := t.TempDir()
	for r := range 2 {
		w, err := trace.Create(filepath.Join(dir, trace.FileName(r)), trace.Header{Rank: r, NRanks: 2, ClockUnit: "ns"})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"MPI_Init", "MPI_Recv", "MPI_Send", "MPI_Finalize"} {
			w.String(s)
		}
		w.AddComm(trace.Communicator{Index: 0, ID: 0, Name: "MPI_COMM_WORLD", Members: []int{0, 1}})
		w.SetThread(trace.Thread{Index: 0, Type: trace.ThreadInitial})
		for i := range rows[r] {
			if err := w.Emit(0, &rows[r][i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A process whose MPI_Init ends late starts late, which no node of the
// path holds. The path is rank 0's computation to its send (90), rank
// 1's receive (10) and computation (840): 940 of the window's 990. The
// gap from rank 0's node's end (100) to the receive (150) is start skew
// up to rank 1's first work (140), then across processes (rank 1 busy).
func TestOffPathStartSkew(t *testing.T) {
	dir := lateInitTrace(t)
	for k := 1; k <= 3; k++ {
		rep, _, err := analyze(t, Options{Dir: dir, NoClockSync: true}, k)
		if err != nil {
			t.Fatal(err)
		}
		cp := rep.CriticalPath
		want := report.OffPath{NS: 50, Share: 50.0 / 990, Between: 50, StartSkew: 40, Processes: 10}
		if cp.LengthNS != 940 || cp.RunTimeNS != 990 || cp.OffPath == nil || *cp.OffPath != want {
			t.Errorf("k=%d: path %d of %d, off_path %+v, want %+v", k, cp.LengthNS, cp.RunTimeNS, cp.OffPath, want)
		}
	}
}

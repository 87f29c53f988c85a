package otf2_test

import (
	"bytes"
	"encoding/json"
	"math/big"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// The Score-P 8.4 traces of pthreads_mpi.c (2 ranks; main starts 2
// pthreads, which compute, take a mutex, wait on a condition variable and,
// in the MPI_THREAD_MULTIPLE run, exchange with the peer rank; main joins
// them): testdata/scorep-8.4-pthreads-mpi and, with the threads calling no
// MPI (MPI_THREAD_FUNNELED, which scout reads), -funneled.
var pthreadArchives = []string{"testdata/scorep-8.4-pthreads-mpi", "testdata/scorep-8.4-pthreads-funneled"}

// ticksNS converts a (clock-corrected) OTF2 timestamp to ns since the
// archive's global offset, rounded to nearest, as the converter does.
func ticksNS(a *otf2.Archive, ticks uint64) int64 {
	v := new(big.Int).Sub(new(big.Int).SetUint64(ticks), new(big.Int).SetUint64(a.Defs.GlobalOffset))
	v.Mul(v, big.NewInt(1_000_000_000))
	res := new(big.Int).SetUint64(a.Defs.TimerResolution)
	v.Add(v, new(big.Int).Rsh(res, 1))
	return v.Div(v, res).Int64()
}

// listedRegions returns a location's Enter/Leave pairs of the regions
// named name in an otf2-print listing, as [enter, leave] timestamps.
func listedRegions(listing []byte, loc uint64, name string) [][2]uint64 {
	var out [][2]uint64
	var open []uint64
	var stack []bool
	for _, line := range strings.Split(string(listing), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || (f[0] != "ENTER" && f[0] != "LEAVE") || f[1] != strconv.FormatUint(loc, 10) {
			continue
		}
		ts, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			continue
		}
		this := strings.Contains(line, `Region: "`+name+`"`)
		if f[0] == "ENTER" {
			stack = append(stack, this)
			if this {
				open = append(open, ts)
			}
			continue
		}
		if n := len(stack); n > 0 {
			stack = stack[:n-1]
		}
		if this && len(open) > 0 {
			out = append(out, [2]uint64{open[len(open)-1], ts})
			open = open[:len(open)-1]
		}
	}
	return out
}

// TestScorepPthreads: Score-P writes a pthread as a CPU-thread location
// whose first record is ThreadBegin and last ThreadEnd, and the joins as
// pthread_join regions (role THREAD_WAIT, paradigm pthread) around a
// ThreadWait. The converter made them threads of type unknown, left out
// of the breakdown and POP, and main's joins code regions (work). Now each
// pthread is a user thread (type 5) from its ThreadBegin to its ThreadEnd,
// at the archive's times, and each join is the thread_join wait (sync kind
// 256, parallel and task 0) over the pthread_join region; their records
// are no longer noted as unused.
func TestScorepPthreads(t *testing.T) {
	for _, dir := range pthreadArchives {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			anchor := filepath.Join(dir, "traces.otf2")
			a, err := otf2.Open(anchor)
			if err != nil {
				t.Fatal(err)
			}
			listing := readListing(t, dir)
			recs := parsePrint(listing)
			for rank := 0; rank < a.NumProcesses(); rank++ {
				var buf bytes.Buffer
				st, err := a.Convert(rank, &buf)
				if err != nil {
					t.Fatal(err)
				}
				if st.UserThreads != 2 || st.Unmodelled != 0 || len(st.Notes) != 0 || len(st.Warnings) != 0 {
					t.Errorf("rank %d: %d user threads, %d unmodelled, notes %q, warnings %q; want 2 user threads and nothing else",
						rank, st.UserThreads, st.Unmodelled, st.Notes, st.Warnings)
				}
				for _, k := range []uint8{otf2.EvThreadBegin, otf2.EvThreadEnd, otf2.EvThreadWait} {
					if st.Ignored[k] != 0 {
						t.Errorf("rank %d: %d %s records left unused", rank, st.Ignored[k], otf2.EventName(k))
					}
				}
				if st.Ignored[otf2.EvThreadCreate] != 2 {
					t.Errorf("rank %d: %d THREAD_CREATE noted, want 2 (no counterpart)", rank, st.Ignored[otf2.EvThreadCreate])
				}
				evs, tb := convertProcess(t, anchor, rank)
				locs := a.Locations(rank)
				if len(tb.Threads) != 3 || len(locs) != 3 {
					t.Fatalf("rank %d: threads %+v of locations %v, want 3", rank, tb.Threads, locs)
				}
				for _, th := range tb.Threads {
					want := trace.ThreadUser
					if th.Index == 0 {
						want = trace.ThreadInitial
					}
					if th.Type != want {
						t.Errorf("rank %d: thread %d (%s) has type %d, want %d", rank, th.Index, th.Name, th.Type, want)
					}
				}
				byThread := map[int][]trace.Event{}
				for _, e := range evs {
					byThread[e.thread] = append(byThread[e.thread], e.Event)
				}
				// the user threads' begin and end: their ThreadBegin and
				// ThreadEnd records, the first and last of the location
				for th := 1; th < 3; th++ {
					r := recs[locs[th]]
					es := byThread[th]
					if len(r) < 2 || r[0].name != "THREAD_BEGIN" || r[len(r)-1].name != "THREAD_END" {
						t.Fatalf("rank %d location %d: records %v, want ThreadBegin first and ThreadEnd last", rank, locs[th], r)
					}
					first, last := es[0], es[len(es)-1]
					if first.Kind != trace.ThreadBegin || first.Args[0] != trace.ThreadUser || first.Time != ticksNS(a, r[0].time) ||
						last.Kind != trace.ThreadEnd || last.Time != ticksNS(a, r[len(r)-1].time) {
						t.Errorf("rank %d thread %d: begins %v at %d, ends %v at %d; the archive's ThreadBegin %d ns, ThreadEnd %d ns",
							rank, th, first.Kind, first.Time, last.Kind, last.Time, ticksNS(a, r[0].time), ticksNS(a, r[len(r)-1].time))
					}
					// its MPI calls are kept
					var mpi int
					for _, e := range es {
						if e.Kind == trace.MPIEnter {
							mpi++
						}
					}
					if want := len(listedRegions(listing, locs[th], "MPI_Sendrecv")); mpi != want {
						t.Errorf("rank %d thread %d: %d MPI calls, the archive %d", rank, th, mpi, want)
					}
				}
				// main's joins: one sync_begin, sync_wait_begin at the
				// pthread_join region's Enter, sync_wait_end, sync_end at
				// its Leave, of kind thread_join, parallel and task 0,
				// named by the call; no pthread_join region left
				joins := listedRegions(listing, locs[0], "pthread_join")
				if len(joins) != 2 {
					t.Fatalf("rank %d: %d pthread_join regions listed, want 2", rank, len(joins))
				}
				var got [][2]int64
				var seq []trace.Kind
				for _, e := range byThread[0] {
					switch e.Kind {
					case trace.SyncBegin, trace.SyncWaitBegin, trace.SyncWaitEnd, trace.SyncEnd:
						seq = append(seq, e.Kind)
						if e.Args[0] != trace.SyncThreadJoin || e.Args[1] != 0 || e.Args[2] != 0 {
							t.Errorf("rank %d: %v args %v, want kind %d, parallel 0, task 0", rank, e.Kind, e.Args[:3], trace.SyncThreadJoin)
						}
						if (e.Kind == trace.SyncBegin || e.Kind == trace.SyncEnd) && tb.Locations[e.Args[3]].Func != "pthread_join" {
							t.Errorf("rank %d: %v at location %+v, want pthread_join", rank, e.Kind, tb.Locations[e.Args[3]])
						}
						switch e.Kind {
						case trace.SyncWaitBegin:
							got = append(got, [2]int64{e.Time, -1})
						case trace.SyncWaitEnd:
							if n := len(got); n > 0 {
								got[n-1][1] = e.Time
							}
						}
					case trace.RegionEnter:
						if tb.String(e.Args[0]) == "pthread_join" {
							t.Errorf("rank %d: pthread_join is still a code region", rank)
						}
					}
				}
				want := []trace.Kind{trace.SyncBegin, trace.SyncWaitBegin, trace.SyncWaitEnd, trace.SyncEnd}
				if len(seq) != 8 || !slices.Equal(seq[:4], want) || !slices.Equal(seq[4:], want) {
					t.Errorf("rank %d: main's sync events %v, want two join quadruples", rank, seq)
				}
				for k, j := range joins {
					if k >= len(got) || got[k] != [2]int64{ticksNS(a, j[0]), ticksNS(a, j[1])} {
						t.Errorf("rank %d: join %d waits %v, the archive's pthread_join %d–%d ns", rank, k, got, ticksNS(a, j[0]), ticksNS(a, j[1]))
					}
				}
			}
		})
	}
}

// TestScalascaPthreads: on the funneled archive (scout refuses MPI calls
// on threads other than the master), ptrace's MPI wait states and MPI time
// per process equal Scalasca 2.6's (scout-pthreads.csv), and the time
// main's joins wait plus its pthread_create calls equal scout's POSIX
// threads management (pthread_management: the pthread_create and
// pthread_join calls).
func TestScalascaPthreads(t *testing.T) {
	dir := "testdata/scorep-8.4-pthreads-funneled"
	sc := scoutValues(t, filepath.Join(dir, "scout-pthreads.csv"))
	anchor := filepath.Join(dir, "traces.otf2")
	a, err := otf2.Open(anchor)
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(analyzeWith(t, driver.Options{Dir: anchor, WholeRun: true, NoClockSync: true}, 1), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.WaitStates == nil {
		t.Fatal("no wait states")
	}
	loc := 0
	for rank := 0; rank < a.NumProcesses(); rank++ {
		n := a.Process(rank).Threads
		sum := func(metric string) float64 {
			var s float64
			for _, v := range sc[metric][loc : loc+n] {
				s += v
			}
			return s
		}
		var ws report.WaitProcess
		for _, p := range rep.WaitStates.PerProcess {
			if p.Rank == rank {
				ws = p
			}
		}
		for _, c := range []struct {
			what   string
			ns     int64
			metric string
		}{{"late sender", ws.LateSenderNS, "mpi_latesender"}, {"late receiver", ws.LateReceiverNS, "mpi_latereceiver"},
			{"wait at barrier", ws.WaitBarrierNS, "mpi_barrier_wait"}, {"wait at N×N", ws.WaitNxNNS, "mpi_wait_nxn"}} {
			if s := sum(c.metric); !near(c.ns, s, 1e-5) {
				t.Errorf("rank %d: %s %.6f s, scout's %s %.6f s", rank, c.what, float64(c.ns)/1e9, c.metric, s)
			}
		}
		if b := rep.Breakdown.PerProcess[rank]; !near(b.MPINS, sum("mpi"), 1e-5) {
			t.Errorf("rank %d: MPI time %.6f s, scout's %.6f s", rank, float64(b.MPINS)/1e9, sum("mpi"))
		}
		if ws.LateSenderNS == 0 && rank == 0 {
			t.Errorf("rank 0 has no late sender: the archive's rank 0 waits for rank 1's slower thread")
		}
		// main's joins and thread creations, from the converted events
		evs, tb := convertProcess(t, anchor, rank)
		var join, create, since int64
		for _, e := range evs {
			if e.thread != 0 {
				continue
			}
			switch {
			case e.Kind == trace.SyncWaitBegin && e.Args[0] == trace.SyncThreadJoin:
				since = e.Time
			case e.Kind == trace.SyncWaitEnd && e.Args[0] == trace.SyncThreadJoin:
				join += e.Time - since
			case e.Kind == trace.RegionEnter && tb.String(e.Args[0]) == "pthread_create":
				since = e.Time
			case e.Kind == trace.RegionExit && tb.String(e.Args[0]) == "pthread_create":
				create += e.Time - since
			}
		}
		if join == 0 || !near(join+create, sum("pthread_management"), 1e-5) {
			t.Errorf("rank %d: joins %d ns + pthread_create %d ns, scout's pthread_management %.6f s", rank, join, create, sum("pthread_management"))
		}
		loc += n
	}
}

// TestReusedLocationThreads: with SCOREP_THREAD_EXPERIMENTAL_REUSE Score-P
// records the threads a program starts one after another on one location,
// a ThreadBegin … ThreadEnd span each. Each is a user thread of its own
// (the location's first keeps its index, the others follow the process's
// locations), from its ThreadBegin to its ThreadEnd: one thread from the
// first begin to the last end would count the time between them as its
// work. Joins in either thread are thread_join waits; a join left without
// its Leave ends with its thread, a Leave without its Enter is skipped
// with a warning, and the archive analyses.
func TestReusedLocationThreads(t *testing.T) {
	type span struct {
		kind       trace.Kind
		begin, end int64
	}
	for _, bad := range []bool{false, true} {
		anchor := otf2.UserThreadArchive(t, t.TempDir(), bad)
		if tool := needTool(t, "otf2-print"); tool != "" {
			sameRecords(t, printRecords(t, tool, anchor), decodeRecords(t, anchor))
		}
		a, err := otf2.Open(anchor)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		st, err := a.Convert(0, &buf)
		if err != nil {
			t.Fatal(err)
		}
		warns := strings.Join(st.Warnings, "; ")
		if st.UserThreads != 2 || st.Unmodelled != 0 || !bad && warns != "" ||
			bad && (len(st.Warnings) != 1 || !strings.Contains(warns, "offset") || !strings.Contains(warns, "Leave of pthread_join without its Enter")) {
			t.Errorf("bad %v: %d user threads, %d unmodelled, warnings %q", bad, st.UserThreads, st.Unmodelled, warns)
		}
		evs, tb := convertProcess(t, anchor, 0)
		types := map[int]int{}
		for _, th := range tb.Threads {
			types[th.Index] = th.Type
		}
		if len(tb.Threads) != 3 || types[0] != trace.ThreadInitial || types[1] != trace.ThreadUser || types[2] != trace.ThreadUser ||
			!strings.HasSuffix(tb.Threads[2].Name, "(thread 2 of the location)") {
			t.Errorf("bad %v: threads %+v, want the master and two user threads", bad, tb.Threads)
		}
		// per thread: its begin and end, its joins' waits
		got := map[int][]span{}
		open := map[int]int64{}
		for _, e := range evs {
			switch e.Kind {
			case trace.ThreadBegin:
				got[e.thread] = append(got[e.thread], span{trace.ThreadBegin, e.Time, -1})
			case trace.ThreadEnd:
				if s := got[e.thread]; len(s) > 0 {
					s[0].end = e.Time
				}
			case trace.SyncBegin:
				if e.Args[0] != trace.SyncThreadJoin || e.Args[1] != 0 || e.Args[2] != 0 || tb.Locations[e.Args[3]].Func != "pthread_join" {
					t.Errorf("bad %v: thread %d: sync_begin %v", bad, e.thread, e.Args)
				}
			case trace.SyncWaitBegin:
				open[e.thread] = e.Time
			case trace.SyncWaitEnd:
				got[e.thread] = append(got[e.thread], span{trace.SyncWaitEnd, open[e.thread], e.Time})
			}
		}
		want := map[int][]span{
			0: {{trace.ThreadBegin, 0, 5000}, {trace.SyncWaitEnd, 300, 2000}, {trace.SyncWaitEnd, 2300, 4000}},
			1: {{trace.ThreadBegin, 250, 1850}},
			2: {{trace.ThreadBegin, 2250, 3950}, {trace.SyncWaitEnd, 3000, 3500}},
		}
		if bad {
			want[1] = append(want[1], span{trace.SyncWaitEnd, 1820, 1850})
		}
		for th, w := range want {
			if !slices.Equal(got[th], w) {
				t.Errorf("bad %v: thread %d: %v, want %v", bad, th, got[th], w)
			}
		}
		// and the whole pipeline reads it
		analyze(t, anchor, 1)
	}
}

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

// listedThreads reads the thread records of an otf2-print listing: by
// thread key (contingent and sequence count as printed), the location
// that began the thread and the one that created it, and per location the
// keys its ThreadWait records name, in order.
func listedThreads(listing []byte) (began, created map[string]uint64, waits map[uint64][]string) {
	began, created, waits = map[string]uint64{}, map[string]uint64{}, map[uint64][]string{}
	for _, line := range strings.Split(string(listing), "\n") {
		f := strings.Fields(line)
		i := strings.Index(line, "Thread Contingent: ")
		if len(f) < 3 || i < 0 {
			continue
		}
		loc, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			continue
		}
		key := line[i:]
		switch f[0] {
		case "THREAD_BEGIN":
			began[key] = loc
		case "THREAD_CREATE":
			created[key] = loc
		case "THREAD_WAIT":
			waits[loc] = append(waits[loc], key)
		}
	}
	return
}

// TestScorepPthreads: Score-P writes a pthread as a CPU-thread location
// whose first record is ThreadBegin and last ThreadEnd, and the joins as
// pthread_join regions (role THREAD_WAIT, paradigm pthread) around a
// ThreadWait. The converter made them threads of type unknown, left out
// of the breakdown and POP, and main's joins code regions (work). Now each
// pthread is a user thread (type 5) from its ThreadBegin to its ThreadEnd,
// at the archive's times, created by the thread whose ThreadCreate names
// it (main: creator 1), and each join is the thread_join wait (sync kind
// 256, parallel 0, task the index + 1 of the thread its ThreadWait names)
// over the pthread_join region; their records are no longer noted as
// unused.
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
			began, created, waits := listedThreads(listing)
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
				index := map[uint64]int{} // location → thread index
				for i, l := range locs {
					index[l] = i
				}
				for _, th := range tb.Threads {
					want, creator := trace.ThreadUser, 0
					if th.Index == 0 {
						want = trace.ThreadInitial
					}
					for key, l := range began {
						if l == locs[th.Index] {
							creator = index[created[key]] + 1
						}
					}
					if th.Type != want || th.Creator != creator {
						t.Errorf("rank %d: thread %d (%s) has type %d, creator %d; want %d, %d", rank, th.Index, th.Name, th.Type, th.Creator, want, creator)
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
						// the thread joined: the one the k-th ThreadWait names
						k := (len(seq) - 1) / 4
						target := int64(-1)
						if w := waits[locs[0]]; k < len(w) {
							target = int64(index[began[w[k]]]) + 1
						}
						if e.Args[0] != trace.SyncThreadJoin || e.Args[1] != 0 || e.Args[2] != target || target < 2 {
							t.Errorf("rank %d: %v args %v, want kind %d, parallel 0, task %d", rank, e.Kind, e.Args[:3], trace.SyncThreadJoin, target)
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

// TestScalascaPthreads: on the funneled and the pool archives (scout
// refuses MPI calls on threads other than the master), ptrace's MPI wait
// states and MPI time per process equal Scalasca 2.6's
// (scout-pthreads.csv), and the time main's joins wait plus its
// pthread_create calls equal scout's POSIX threads management
// (pthread_management: the pthread_create and pthread_join calls).
// ptrace's work is scout's computation plus the time in the pthread API
// (pthread_time: its mutex, signal and broadcast calls are the threads'
// work for ptrace) but the joins and the condition waits (idleness), plus
// each pthread's time between its ThreadBegin and first Enter and between
// its last Leave and ThreadEnd (scout's pthread runs from its first Enter
// to its last Leave).
func TestScalascaPthreads(t *testing.T) {
	for _, dir := range []string{"testdata/scorep-8.4-pthreads-funneled", poolArchive} {
		t.Run(filepath.Base(dir), func(t *testing.T) { scalascaPthreads(t, dir) })
	}
}

func scalascaPthreads(t *testing.T, dir string) {
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
	if rep.WaitStates == nil || rep.WaitStates.OpenMP == nil {
		t.Fatal("no wait states")
	}
	recs := parsePrint(readListing(t, dir))
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
		if ws.LateSenderNS+ws.WaitNxNNS == 0 && rank == 0 {
			t.Errorf("rank 0 waits for nobody: the archive's rank 0 waits for rank 1's slower thread, or its longer production")
		}
		// main's joins and thread creations, every thread's condition
		// waits, from the converted events
		evs, tb := convertProcess(t, anchor, rank)
		var join, create, since, cond int64
		waitFrom := map[int]int64{}
		for _, e := range evs {
			switch {
			case e.Kind == trace.SyncWaitBegin && e.Args[0] == trace.SyncCondWait:
				waitFrom[e.thread] = e.Time
			case e.Kind == trace.SyncWaitEnd && e.Args[0] == trace.SyncCondWait:
				cond += e.Time - waitFrom[e.thread]
			}
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
		var edges int64 // the pthreads' ThreadBegin to first Enter, last Leave to ThreadEnd
		for _, l := range a.Locations(rank)[1:] {
			r := recs[l]
			if len(r) < 4 || r[1].name != "ENTER" || r[len(r)-2].name != "LEAVE" {
				t.Fatalf("rank %d location %d: records %v", rank, l, r)
			}
			edges += ticksNS(a, r[1].time) - ticksNS(a, r[0].time) + ticksNS(a, r[len(r)-1].time) - ticksNS(a, r[len(r)-2].time)
		}
		work := sum("comp") + sum("pthread_time") - float64(join+cond)/1e9 + float64(edges)/1e9
		if b := rep.Breakdown.PerProcess[rank]; cond == 0 || !near(b.WorkNS, work, 1e-5) {
			t.Errorf("rank %d: work %.6f s, scout's computation + pthread API time − joins − condition waits (%d ns) + the pthreads' edges %.6f s",
				rank, float64(b.WorkNS)/1e9, cond, work)
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
// work. Each is the master's creation and join (its ThreadCreate's and
// ThreadWait's key is its ThreadBegin's); joins in either thread are
// thread_join waits, of a thread no ThreadBegin names unknown; a join left
// without its Leave ends with its thread, a Leave without its Enter is
// skipped with a warning, and the archive analyses.
func TestReusedLocationThreads(t *testing.T) {
	type span struct {
		kind       trace.Kind
		begin, end int64
		joined     int64 // a join's thread index + 1
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
		creators := map[int]int{}
		for _, th := range tb.Threads {
			creators[th.Index] = th.Creator
		}
		if len(tb.Threads) != 3 || types[0] != trace.ThreadInitial || types[1] != trace.ThreadUser || types[2] != trace.ThreadUser ||
			!strings.HasSuffix(tb.Threads[2].Name, "(thread 2 of the location)") || creators[0] != 0 || creators[1] != 1 || creators[2] != 1 {
			t.Errorf("bad %v: threads %+v, want the master and two user threads it created", bad, tb.Threads)
		}
		// per thread: its begin and end, its joins' waits
		got := map[int][]span{}
		open := map[int]int64{}
		for _, e := range evs {
			switch e.Kind {
			case trace.ThreadBegin:
				got[e.thread] = append(got[e.thread], span{trace.ThreadBegin, e.Time, -1, 0})
			case trace.ThreadEnd:
				if s := got[e.thread]; len(s) > 0 {
					s[0].end = e.Time
				}
			case trace.SyncBegin:
				if e.Args[0] != trace.SyncThreadJoin || e.Args[1] != 0 || tb.Locations[e.Args[3]].Func != "pthread_join" {
					t.Errorf("bad %v: thread %d: sync_begin %v", bad, e.thread, e.Args)
				}
			case trace.SyncWaitBegin:
				open[e.thread] = e.Time
			case trace.SyncWaitEnd:
				got[e.thread] = append(got[e.thread], span{trace.SyncWaitEnd, open[e.thread], e.Time, e.Args[2]})
			}
		}
		// the master joins the first thread (index 1) and the second (2);
		// the second waits for a thread of no ThreadBegin (unknown: 0)
		want := map[int][]span{
			0: {{trace.ThreadBegin, 0, 5000, 0}, {trace.SyncWaitEnd, 300, 2000, 2}, {trace.SyncWaitEnd, 2300, 4000, 3}},
			1: {{trace.ThreadBegin, 250, 1850, 0}},
			2: {{trace.ThreadBegin, 2250, 3950, 0}, {trace.SyncWaitEnd, 3000, 3500, 0}},
		}
		if bad {
			want[1] = append(want[1], span{trace.SyncWaitEnd, 1820, 1850, 0})
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

// listedNS sums, in converted ns, the time a location spends in the
// regions whose names start with prefix (MPI_: its MPI calls), as an
// otf2-print listing gives them.
func listedNS(a *otf2.Archive, listing []byte, loc uint64, prefix string) int64 {
	var ns int64
	names := map[string]bool{}
	for _, line := range strings.Split(string(listing), "\n") {
		if i := strings.Index(line, `Region: "`+prefix); i >= 0 && strings.Fields(line)[0] == "ENTER" {
			names[line[i+len(`Region: "`):strings.LastIndex(line, `"`)]] = true
		}
	}
	for name := range names {
		for _, r := range listedRegions(listing, loc, name) {
			ns += ticksNS(a, r[1]) - ticksNS(a, r[0])
		}
	}
	return ns
}

// TestPthreadsBreakdown: with the model of user threads, a process's work
// in the Score-P pthread traces is main's code outside MPI, its joins and
// its condition waits plus, for each pthread, its lifetime (ThreadBegin to
// ThreadEnd) minus its MPI time and its condition waits, all as the
// archive's records give them; the joins and the condition waits are
// idleness, the OpenMP wait states' thread_sync, and a process's idleness
// is that and the time of the window each thread was not running (before
// its begin, after its end): a worker blocked in pthread_cond_wait is idle
// for its wait. Before, the pthreads were left out of the breakdown, the
// joins were work, and then (until the condition waits were converted)
// the condition waits were.
func TestPthreadsBreakdown(t *testing.T) {
	for _, dir := range syncArchives {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			anchor := filepath.Join(dir, "traces.otf2")
			a, err := otf2.Open(anchor)
			if err != nil {
				t.Fatal(err)
			}
			listing := readListing(t, dir)
			recs := parsePrint(listing)
			var rep report.Report
			if err := json.Unmarshal(analyzeWith(t, driver.Options{Dir: anchor, WholeRun: true, NoClockSync: true}, 1), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Trace.Warnings != nil || rep.Trace.Partial {
				t.Errorf("warnings %+v", rep.Trace.Warnings)
			}
			if rep.Breakdown == nil || rep.WaitStates == nil || rep.WaitStates.OpenMP == nil {
				t.Fatal("no breakdown or OpenMP wait states")
			}
			for rank := 0; rank < a.NumProcesses(); rank++ {
				locs := a.Locations(rank)
				window := rep.Trace.Window.DurationNS
				// main: from its first record to its last
				r := recs[locs[0]]
				span := ticksNS(a, r[len(r)-1].time) - ticksNS(a, r[0].time)
				var joins int64
				for _, j := range listedRegions(listing, locs[0], "pthread_join") {
					joins += ticksNS(a, j[1]) - ticksNS(a, j[0])
				}
				conds := func(l uint64) (ns int64) {
					for _, name := range []string{"pthread_cond_wait", "pthread_cond_timedwait"} {
						for _, w := range listedRegions(listing, l, name) {
							ns += ticksNS(a, w[1]) - ticksNS(a, w[0])
						}
					}
					return ns
				}
				work := span - listedNS(a, listing, locs[0], "MPI_") - joins - conds(locs[0])
				sync, idle := joins+conds(locs[0]), window-span
				var mpi int64
				for _, l := range locs {
					mpi += listedNS(a, listing, l, "MPI_")
				}
				for _, l := range locs[1:] {
					r := recs[l]
					life := ticksNS(a, r[len(r)-1].time) - ticksNS(a, r[0].time)
					work += life - listedNS(a, listing, l, "MPI_") - conds(l)
					sync += conds(l)
					idle += window - life
					if conds(l) == 0 {
						t.Errorf("rank %d location %d: no condition wait", rank, l)
					}
				}
				idle += sync
				b := rep.Breakdown.PerProcess[rank]
				if b.WorkNS != work || b.MPINS != mpi || b.IdlenessNS != idle {
					t.Errorf("rank %d: work %d ns, MPI %d ns, idleness %d ns; the archive's records give %d, %d and %d", rank, b.WorkNS, b.MPINS, b.IdlenessNS, work, mpi, idle)
				}
				var omp report.OMPWaitProcess
				for _, p := range rep.WaitStates.OpenMP.PerProcess {
					if p.Rank == rank {
						omp = p
					}
				}
				if omp.ThreadSyncNS != sync || joins == 0 {
					t.Errorf("rank %d: thread_sync %d ns, the pthread_join and condition-wait regions %d ns", rank, omp.ThreadSyncNS, sync)
				}
			}
		})
	}
}

// TestPthreadsCriticalPath: the converted thread table names each
// pthread's creator and each join the thread it waited for (the thread
// keys of ThreadCreate, ThreadBegin and ThreadWait), so the critical path
// runs from main through the pthread_create into the thread's code and
// back through the join, across the ranks: without them (creator and
// joined thread unknown) it was the longest thread's code alone, 87 % and
// 89 % of the MPI_Init–MPI_Finalize window, crossing no rank. A condition
// wait names no condition variable in Score-P's archives; its waker is the
// thread that released the mutex before the waiter reacquired it inside
// the wait (the pthread lock records, as scout reads them), and the path
// steps from the waiting thread to it: no segment of the path holds a
// condition wait, and the path covers the run but for the wake-ups
// (pthreads_mpi.c and the funneled run 99.6 and 99.0 %, the pool, whose
// main thread waits 6 times on the workers, 92.3 %). Before, a condition
// wait made no edge and the path waited on the waiting thread: 83.3, 80.4
// and 70.9 % of the run, the rest those waits.
func TestPthreadsCriticalPath(t *testing.T) {
	for _, dir := range syncArchives {
		var rep report.Report
		if err := json.Unmarshal(analyzeWith(t, driver.Options{Dir: dir, NoClockSync: true}, 1), &rep); err != nil {
			t.Fatal(err)
		}
		cp := rep.CriticalPath
		if cp == nil || cp.RankCrossings < 1 || cp.Truncated || len(cp.Segments) == 0 {
			t.Fatalf("%s: critical path %+v, want one across the ranks", dir, cp)
		}
		// each thread's condition waits, [begin, end]
		waits := map[[2]int][][2]int64{}
		anchor := filepath.Join(dir, "traces.otf2")
		for rank := range 2 {
			evs, _ := convertProcess(t, anchor, rank)
			for _, e := range evs {
				k := [2]int{rank, e.thread}
				switch {
				case e.Kind == trace.SyncWaitBegin && e.Args[0] == trace.SyncCondWait:
					waits[k] = append(waits[k], [2]int64{e.Time, -1})
				case e.Kind == trace.SyncWaitEnd && e.Args[0] == trace.SyncCondWait:
					waits[k][len(waits[k])-1][1] = e.Time
				}
			}
		}
		var holes int64
		pthread := false
		for _, sg := range cp.Segments {
			pthread = pthread || sg.Thread > 0
			for _, w := range waits[[2]int{sg.Rank, sg.Thread}] {
				holes += max(0, min(w[1], sg.StartNS+sg.DurNS)-max(w[0], sg.StartNS))
			}
		}
		least := 0.98
		if dir == poolArchive {
			least = 0.9
		}
		if share := float64(cp.LengthNS) / float64(cp.RunTimeNS); share < least || share > 1.0001 || holes != 0 {
			t.Errorf("%s: critical path %d ns = %.4f of the run (%d ns), %d ns of its segments in condition waits; want at least %.2f, none", dir, cp.LengthNS, share, cp.RunTimeNS, holes, least)
		}
		if dir != poolArchive && !pthread {
			t.Errorf("%s: the critical path %+v runs through no pthread", dir, cp.Segments)
		}
	}
}

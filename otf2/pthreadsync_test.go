package otf2_test

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
	"github.com/ptrace-dev/ptrace/waitstate"
)

// poolArchive is the Score-P 8.4 trace of pthreads_pool.c (2 ranks, MPI on
// the main thread only; main feeds 3 workers through a queue guarded by a
// mutex and a condition variable, the workers contend for a second mutex).
const poolArchive = "testdata/scorep-8.4-pthreads-pool"

// syncArchives are the Score-P traces with pthread condition waits and
// mutexes: the pool, and pthreads_mpi.c's gate (a condition variable) and
// counter (a mutex).
var syncArchives = append([]string{poolArchive}, pthreadArchives...)

// lockRec is a record of an otf2-print listing that the conversion of
// POSIX threads synchronization reads: an Enter or Leave (region), a
// THREAD_ACQUIRE_LOCK or THREAD_RELEASE_LOCK (model, lock id, acquisition
// order).
type lockRec struct {
	kind         string
	ts           uint64
	region       string
	model        string
	lock, order  uint64
	loc          uint64
	fileRecIndex int
}

// listedLockRecords returns, per location, the records of an otf2-print
// listing that bear on regions and locks, in order.
func listedLockRecords(listing []byte) map[uint64][]lockRec {
	out := map[uint64][]lockRec{}
	attr := func(line, key string) string {
		i := strings.Index(line, key)
		if i < 0 {
			return ""
		}
		v := line[i+len(key):]
		if j := strings.IndexAny(v, ", "); j >= 0 {
			v = v[:j]
		}
		return v
	}
	for _, line := range strings.Split(string(listing), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		switch f[0] {
		case "ENTER", "LEAVE", "THREAD_ACQUIRE_LOCK", "THREAD_RELEASE_LOCK":
		default:
			continue
		}
		loc, err1 := strconv.ParseUint(f[1], 10, 64)
		ts, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		r := lockRec{kind: f[0], ts: ts, loc: loc, fileRecIndex: len(out[loc])}
		if i := strings.Index(line, `Region: "`); i >= 0 {
			r.region = line[i+len(`Region: "`):]
			r.region = r.region[:strings.Index(r.region, `"`)]
		}
		if strings.HasPrefix(f[0], "THREAD_") {
			r.model = strings.Trim(attr(line, "Model: "), `"`)
			r.lock, _ = strconv.ParseUint(attr(line, "Lock: "), 10, 64)
			r.order, _ = strconv.ParseUint(attr(line, "Acquisition Order: "), 10, 64)
		}
		out[loc] = append(out[loc], r)
	}
	return out
}

func isCondWait(name string) bool {
	return name == "pthread_cond_wait" || name == "pthread_cond_timedwait"
}

// syncEvent is a converted event of a condition wait or a mutex, as the
// tests compare them: kind, time, arguments, and the location's function.
type syncEvent struct {
	kind trace.Kind
	time int64
	a0   int64
	a1   int64
	a2   int64
	fn   string
}

// expectedSync returns what the conversion must make of one location's
// records: each condition-wait region the four events of sync kind
// cond_wait at its Enter and Leave, named by the call; each pthread
// acquisition a mutex_acquire at the Enter of the pthread_mutex_lock or
// pthread_mutex_trylock around it (at the acquisition inside a condition
// wait, named by the wait) and a mutex_acquired at the acquisition, each
// release a mutex_released; wait id 2³² + the lock id.
func expectedSync(a *otf2.Archive, recs []lockRec) []syncEvent {
	var out []syncEvent
	var stack []lockRec
	const pthreadLock = 1 << 32
	for _, r := range recs {
		ns := ticksNS(a, r.ts)
		switch r.kind {
		case "ENTER":
			stack = append(stack, r)
			if isCondWait(r.region) {
				out = append(out, syncEvent{trace.SyncBegin, ns, trace.SyncCondWait, 0, 0, r.region},
					syncEvent{trace.SyncWaitBegin, ns, trace.SyncCondWait, 0, 0, ""})
			}
		case "LEAVE":
			if isCondWait(r.region) {
				out = append(out, syncEvent{trace.SyncWaitEnd, ns, trace.SyncCondWait, 0, 0, ""},
					syncEvent{trace.SyncEnd, ns, trace.SyncCondWait, 0, 0, r.region})
			}
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case "THREAD_ACQUIRE_LOCK":
			if r.model != "Pthread" {
				continue
			}
			id := int64(pthreadLock | r.lock)
			from, fn := ns, ""
			if n := len(stack); n > 0 {
				switch in := stack[n-1]; {
				case in.region == "pthread_mutex_lock" || in.region == "pthread_mutex_trylock":
					from, fn = ticksNS(a, in.ts), in.region
				case isCondWait(in.region):
					fn = in.region
				}
			}
			out = append(out, syncEvent{trace.MutexAcquire, from, trace.MutexPthread, id, 0, fn},
				syncEvent{trace.MutexAcquired, ns, trace.MutexPthread, id, 0, fn})
		case "THREAD_RELEASE_LOCK":
			if r.model == "Pthread" {
				out = append(out, syncEvent{trace.MutexReleased, ns, trace.MutexPthread, int64(pthreadLock | r.lock), 0, ""})
			}
		}
	}
	return out
}

// TestScorepCondWaitsMutexes: Score-P's pthread adapter writes
// pthread_cond_wait and pthread_cond_timedwait as regions (role WRAPPER,
// paradigm pthread) around the release of their mutex and its
// reacquisition after the wake-up (THREAD_RELEASE_LOCK,
// THREAD_ACQUIRE_LOCK), and each pthread_mutex_lock around the
// acquisition. The conversion made the condition waits code regions (the
// waiting threads' work) and dropped the lock records (noted as unused).
// Now each condition wait is the cond_wait wait (sync kind 257) over its
// region, on the pthreads and on main alike, no code region any more, and
// each pthread mutex acquisition mutex_acquire at the call's entry,
// mutex_acquired at the acquisition, mutex_released at the release, of
// ptrace's mutex kind pthread_mutex (256); a condition wait's reacquisition
// is an acquisition of no wait at the wait's location. No lock record is
// left unused, nothing is warned.
func TestScorepCondWaitsMutexes(t *testing.T) {
	for _, dir := range syncArchives {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			anchor := filepath.Join(dir, "traces.otf2")
			a, err := otf2.Open(anchor)
			if err != nil {
				t.Fatal(err)
			}
			listed := listedLockRecords(readListing(t, dir))
			var waits, acquisitions int
			for rank := 0; rank < a.NumProcesses(); rank++ {
				var buf bytes.Buffer
				st, err := a.Convert(rank, &buf)
				if err != nil {
					t.Fatal(err)
				}
				if len(st.Warnings) != 0 || st.Ignored[otf2.EvThreadAcquireLock] != 0 || st.Ignored[otf2.EvThreadReleaseLock] != 0 {
					t.Errorf("rank %d: warnings %q, %d THREAD_ACQUIRE_LOCK and %d THREAD_RELEASE_LOCK unused", rank, st.Warnings,
						st.Ignored[otf2.EvThreadAcquireLock], st.Ignored[otf2.EvThreadReleaseLock])
				}
				evs, tb := convertProcess(t, anchor, rank)
				got := map[int][]syncEvent{}
				for _, e := range evs {
					var s syncEvent
					switch e.Kind {
					case trace.SyncBegin, trace.SyncEnd:
						s = syncEvent{e.Kind, e.Time, e.Args[0], e.Args[1], e.Args[2], tb.Locations[e.Args[3]].Func}
					case trace.SyncWaitBegin, trace.SyncWaitEnd:
						s = syncEvent{e.Kind, e.Time, e.Args[0], e.Args[1], e.Args[2], ""}
					case trace.MutexAcquire, trace.MutexAcquired:
						s = syncEvent{e.Kind, e.Time, e.Args[0], e.Args[1], 0, tb.Locations[e.Args[2]].Func}
					case trace.MutexReleased:
						s = syncEvent{e.Kind, e.Time, e.Args[0], e.Args[1], 0, ""}
					case trace.RegionEnter:
						if isCondWait(tb.String(e.Args[0])) {
							t.Errorf("rank %d: %s is still a code region", rank, tb.String(e.Args[0]))
						}
						continue
					default:
						continue
					}
					if s.a0 == trace.SyncThreadJoin && (s.kind == trace.SyncBegin || s.kind == trace.SyncWaitBegin || s.kind == trace.SyncWaitEnd || s.kind == trace.SyncEnd) {
						continue // the joins: TestScorepPthreads
					}
					got[e.thread] = append(got[e.thread], s)
				}
				for th, l := range a.Locations(rank) {
					want := expectedSync(a, listed[l])
					for _, s := range want {
						switch s.kind {
						case trace.SyncWaitBegin:
							waits++
						case trace.MutexAcquired:
							acquisitions++
						}
					}
					if !slices.Equal(got[th], want) {
						t.Errorf("rank %d thread %d: converted %d events, the archive's records give %d", rank, th, len(got[th]), len(want))
						for i := range min(len(want), len(got[th])) {
							if got[th][i] != want[i] {
								t.Errorf("first difference at %d: %+v, want %+v", i, got[th][i], want[i])
								break
							}
						}
					}
				}
			}
			if waits == 0 || acquisitions == 0 {
				t.Errorf("%d condition waits, %d acquisitions", waits, acquisitions)
			}
		})
	}
}

// runMutexPass converts process rank and runs the OpenMP wait-state pass
// (its mutex part) over it alone, strictly (a warning fails), over the
// whole run: the process's mutex rows, which the report sums over the
// processes.
func runMutexPass(t *testing.T, anchor string, rank int) []waitstate.MutexRow {
	t.Helper()
	a, err := otf2.Open(anchor)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := a.Convert(rank, &buf); err != nil {
		t.Fatal(err)
	}
	p, err := trace.LoadProcessReader(&buf, "converted", trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := sim.New(p, nil, true)
	s.SetWindow(math.MinInt64/4, math.MaxInt64/4)
	omp := waitstate.NewOMPPass(rank, p.NumThreads())
	if err := s.Run(ompt.NewModel(), omp); err != nil {
		t.Fatal(err)
	}
	return omp.Mutexes
}

// scoutCondContention is Scalasca's condition-lock contention of one
// location computed from the listing, as scout's THREAD_ACQUIRE_LOCK
// callback does: for each reacquisition in a condition wait, the time of
// the lock's release of the previous acquisition order minus the wait's
// Enter, when positive. It also returns, in ns, the time from that release
// (or the Enter, when later) to the wait's Leave.
func scoutCondContention(a *otf2.Archive, recs []lockRec, released map[[2]uint64]uint64) (contention, rest int64) {
	var enter uint64
	in := false
	for _, r := range recs {
		switch {
		case r.kind == "ENTER" && isCondWait(r.region):
			enter, in = r.ts, true
		case r.kind == "LEAVE" && isCondWait(r.region):
			in = false
		case r.kind == "THREAD_ACQUIRE_LOCK" && in && r.model == "Pthread":
			rel, ok := released[[2]uint64{r.lock, r.order - 1}]
			from := enter
			if ok && rel > enter {
				contention += ticksNS(a, rel) - ticksNS(a, enter)
				from = rel
			}
			// the Leave follows the acquisition
			for _, l := range recs[r.fileRecIndex+1:] {
				if l.kind == "LEAVE" {
					rest += ticksNS(a, l.ts) - ticksNS(a, from)
					break
				}
			}
		}
	}
	return contention, rest
}

// TestScalascaPthreadSync: on the pool archive, per process, ptrace's
// pthread mutex contention (mutexes[].contention_ns of kind pthread_mutex)
// equals scout's pthread_lock_contention_mutex_lock (Scalasca's
// definition: from the pthread_mutex_lock call to the previous holder's
// release), summed over the process's threads, and the report's total is
// their sum. A condition wait is no lock contention for ptrace but the
// cond_wait wait (idleness): its time is scout's pthread_conditional (the
// time in condition calls) minus the signal and broadcast calls. Scout's
// pthread_lock_contention_conditional is the part of each condition wait
// up to the release of its mutex that preceded the reacquisition (for a
// worker woken by main: main's unlock after the broadcast), computed here
// from the records as scout does; the rest of ptrace's wait is the
// wake-up, from that release to the wait's end.
func TestScalascaPthreadSync(t *testing.T) {
	anchor := filepath.Join(poolArchive, "traces.otf2")
	sc := scoutValues(t, filepath.Join(poolArchive, "scout-pthreads.csv"))
	a, err := otf2.Open(anchor)
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(analyzeWith(t, driver.Options{Dir: anchor, WholeRun: true, NoClockSync: true}, 1), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.WaitStates == nil || rep.WaitStates.OpenMP == nil || rep.Trace.Warnings != nil {
		t.Fatalf("no OpenMP wait states, or warnings %+v", rep.Trace.Warnings)
	}
	listing := readListing(t, poolArchive)
	listed := listedLockRecords(listing)
	var total int64
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
		var contention, acquisitions int64
		for _, m := range runMutexPass(t, anchor, rank) {
			if m.Kind != "pthread_mutex" {
				t.Errorf("rank %d: mutex row %+v", rank, m)
			}
			contention += m.ContentionNS
			acquisitions += m.Acquisitions
			if isCondWait(m.Construct) && (m.WaitNS != 0 || m.ContentionNS != 0) {
				t.Errorf("rank %d: %s's reacquisitions waited: %+v", rank, m.Construct, m)
			}
		}
		total += contention
		if s := sum("pthread_lock_contention_mutex_lock"); contention == 0 || !near(contention, s, 1e-5) {
			t.Errorf("rank %d: pthread mutex contention %.6f s, scout's %.6f s", rank, float64(contention)/1e9, s)
		}
		// 46 pthread_mutex_lock calls (each worker's first and one per
		// batch of the queue's mutex, one per batch of the total's; main's
		// one per batch and the shutdown's) and the condition waits'
		// reacquisitions
		var condWaits, condNS, signals int64
		for _, l := range a.Locations(rank) {
			for _, r := range listedRegions(listing, l, "pthread_cond_wait") {
				condWaits++
				condNS += ticksNS(a, r[1]) - ticksNS(a, r[0])
			}
			for _, r := range listedRegions(listing, l, "pthread_cond_timedwait") {
				condWaits++
				condNS += ticksNS(a, r[1]) - ticksNS(a, r[0])
			}
			for _, name := range []string{"pthread_cond_signal", "pthread_cond_broadcast"} {
				for _, r := range listedRegions(listing, l, name) {
					signals += ticksNS(a, r[1]) - ticksNS(a, r[0])
				}
			}
		}
		if want := int64(3+6*3+6*3+7) + condWaits; acquisitions != want {
			t.Errorf("rank %d: %d acquisitions, want %d", rank, acquisitions, want)
		}
		var joins int64
		for _, r := range listedRegions(listing, a.Locations(rank)[0], "pthread_join") {
			joins += ticksNS(a, r[1]) - ticksNS(a, r[0])
		}
		var omp report.OMPWaitProcess
		for _, p := range rep.WaitStates.OpenMP.PerProcess {
			if p.Rank == rank {
				omp = p
			}
		}
		if cond := omp.ThreadSyncNS - joins; cond != condNS || !near(cond+signals, sum("pthread_conditional"), 1e-5) {
			t.Errorf("rank %d: condition waits %d ns (the archive's %d ns) + signals %d ns, scout's pthread_conditional %.6f s",
				rank, cond, condNS, signals, sum("pthread_conditional"))
		}
		released := map[[2]uint64]uint64{} // the process's pthread lock, acquisition order → release time
		for _, l := range a.Locations(rank) {
			for _, r := range listed[l] {
				if r.kind == "THREAD_RELEASE_LOCK" && r.model == "Pthread" {
					released[[2]uint64{r.lock, r.order}] = r.ts
				}
			}
		}
		var scoutCond, wake int64
		for _, l := range a.Locations(rank) {
			c, r := scoutCondContention(a, listed[l], released)
			scoutCond += c
			wake += r
		}
		if s := sum("pthread_lock_contention_conditional"); !near(scoutCond, s, 1e-5) || condNS-wake != scoutCond || wake <= 0 {
			t.Errorf("rank %d: condition waits %d ns, scout's condition contention %.6f s, from the records %d ns, the wake-ups %d ns",
				rank, condNS, s, scoutCond, wake)
		}
		t.Logf("rank %d: pthread mutex contention %d ns (scout %.6f s); condition waits %d ns = scout's condition contention %d ns + the wake-ups %d ns",
			rank, contention, sum("pthread_lock_contention_mutex_lock"), condNS, scoutCond, wake)
		loc += n
	}
	var reported int64
	for _, m := range rep.WaitStates.OpenMP.Mutexes {
		if m.Kind == "pthread_mutex" {
			reported += m.ContentionNS
		}
	}
	if reported != total {
		t.Errorf("report: pthread mutex contention %d ns, the processes' %d ns", reported, total)
	}
}

// TestPthreadSyncRecords: a hand-encoded archive of pthread mutexes and
// condition waits (otf2.PthreadSyncArchive). A condition wait is the
// cond_wait wait over its region; each acquisition is a mutex wait from
// the pthread_mutex_lock or pthread_mutex_trylock call (its
// reacquisition in a condition wait: at the acquisition, at the wait);
// a failed trylock (no acquisition) is nothing, a recursive mutex taken
// again by its owner is no new acquisition and released at its last
// unlock; an OpenMP lock of the same id is another mutex (the wait ids
// differ). The mutex pass, strict, finds no fault and the contention from
// each call to the previous holder's release: the thread asks for lock 0
// at 400, the master releases it at 510 (110 ns). With bad input — a
// condition wait's Leave without its Enter, one the thread ends in, one
// inside a join — the first and the nested one's Leave are warnings, the
// open one ends with the thread, and the join is kept.
func TestPthreadSyncRecords(t *testing.T) {
	const p = 1 << 32 // a pthread lock's wait id: 2³² + its id
	type ev struct {
		kind       trace.Kind
		time       int64
		a0, a1, a2 int64
		fn         string
	}
	for _, bad := range []bool{false, true} {
		anchor := otf2.PthreadSyncArchive(t, t.TempDir(), bad)
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
		if !bad && warns != "" || bad && (!strings.Contains(warns, "offset") || !strings.Contains(warns, "Leave of pthread_cond_wait without its Enter") || !strings.Contains(warns, "(2 records without their begin")) {
			t.Errorf("bad %v: warnings %q", bad, warns)
		}
		if st.Ignored[otf2.EvThreadAcquireLock] != 0 || st.Ignored[otf2.EvThreadReleaseLock] != 0 {
			t.Errorf("bad %v: lock records unused: %v", bad, st.Ignored)
		}
		evs, tb := convertProcess(t, anchor, 0)
		got := map[int][]ev{}
		for _, e := range evs {
			switch e.Kind {
			case trace.SyncBegin, trace.SyncEnd:
				got[e.thread] = append(got[e.thread], ev{e.Kind, e.Time, e.Args[0], e.Args[1], e.Args[2], tb.Locations[e.Args[3]].Func})
			case trace.MutexAcquire, trace.MutexAcquired:
				got[e.thread] = append(got[e.thread], ev{e.Kind, e.Time, e.Args[0], e.Args[1], 0, tb.Locations[e.Args[2]].Func})
			case trace.MutexReleased:
				got[e.thread] = append(got[e.thread], ev{e.Kind, e.Time, e.Args[0], e.Args[1], 0, ""})
			case trace.RegionEnter:
				got[e.thread] = append(got[e.thread], ev{e.Kind, e.Time, 0, 0, 0, tb.String(e.Args[0])})
			}
		}
		const cond, join, mutex = trace.SyncCondWait, trace.SyncThreadJoin, trace.MutexPthread
		acquire := func(from, at, kind, id int64, fn string) []ev {
			return []ev{{trace.MutexAcquire, from, kind, id, 0, fn}, {trace.MutexAcquired, at, kind, id, 0, fn}}
		}
		enter := func(at int64, fn string) ev { return ev{trace.RegionEnter, at, 0, 0, 0, fn} }
		var master []ev
		master = append(master, enter(0, "main"), enter(100, "pthread_create"), enter(300, "pthread_mutex_lock"))
		master = append(master, acquire(300, 310, mutex, p, "pthread_mutex_lock")...)
		master = append(master, acquire(400, 400, ompt.MutexLock, 0, "")...)
		master = append(master, ev{trace.MutexReleased, 450, ompt.MutexLock, 0, 0, ""},
			ev{trace.SyncBegin, 500, cond, 0, 0, "pthread_cond_wait"}, ev{trace.MutexReleased, 510, mutex, p, 0, ""})
		master = append(master, acquire(1500, 1500, mutex, p, "pthread_cond_wait")...)
		master = append(master, ev{trace.SyncEnd, 1510, cond, 0, 0, "pthread_cond_wait"},
			enter(1600, "pthread_mutex_unlock"), ev{trace.MutexReleased, 1610, mutex, p, 0, ""},
			enter(1700, "pthread_mutex_trylock"), enter(1800, "pthread_mutex_trylock"))
		master = append(master, acquire(1800, 1810, mutex, p|1, "pthread_mutex_trylock")...)
		master = append(master, enter(1830, "pthread_mutex_lock"), enter(1900, "pthread_mutex_unlock"),
			enter(2000, "pthread_mutex_unlock"), ev{trace.MutexReleased, 2010, mutex, p | 1, 0, ""},
			ev{trace.SyncBegin, 2100, join, 0, 2, "pthread_join"}, ev{trace.SyncEnd, 3000, join, 0, 2, "pthread_join"})
		worker := []ev{enter(260, "leaf"), enter(400, "pthread_mutex_lock")}
		worker = append(worker, acquire(400, 1000, mutex, p, "pthread_mutex_lock")...)
		worker = append(worker, enter(1100, "pthread_cond_signal"), enter(1200, "pthread_mutex_unlock"), ev{trace.MutexReleased, 1210, mutex, p, 0, ""})
		if bad {
			worker = append(worker, ev{trace.SyncBegin, 2500, cond, 0, 0, "pthread_cond_wait"}, ev{trace.SyncEnd, 2850, cond, 0, 0, "pthread_cond_wait"})
		}
		for th, want := range [][]ev{master, worker} {
			if !slices.Equal(got[th], want) {
				t.Errorf("bad %v: thread %d:\n got %v\nwant %v", bad, th, got[th], want)
			}
		}
		rows := map[string]waitstate.MutexRow{}
		for _, m := range runMutexPass(t, anchor, 0) {
			rows[m.Kind+" "+m.Construct] = m
		}
		for key, w := range map[string][4]int64{ // acquisitions, wait, contention, hold
			"pthread_mutex pthread_mutex_lock":    {2, 10 + 600, 110, 200 + 210},
			"pthread_mutex pthread_mutex_trylock": {1, 10, 0, 200},
			"pthread_mutex pthread_cond_wait":     {1, 0, 0, 110},
			"lock ":                               {1, 0, 0, 50},
		} {
			m := rows[key]
			if g := [4]int64{m.Acquisitions, m.WaitNS, m.ContentionNS, m.HoldNS}; g != w {
				t.Errorf("bad %v: mutex row %q: %v, want %v", bad, key, g, w)
			}
			delete(rows, key)
		}
		if len(rows) != 0 {
			t.Errorf("bad %v: other mutex rows %+v", bad, rows)
		}
		analyze(t, anchor, 1)
	}
}

package clocksync

import (
	"cmp"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// randomTrace makes processes that exchange messages (several threads,
// tags, self-messages), remote task dependences and collectives of every
// class, causal in true time (every receive at least minLat after its
// send), then records them with random clocks (offset and drift) and
// random offset measurements: exact, noisy, init only, or none. Noisy and
// missing measurements leave violations for the CLC to repair.
func randomTrace(rng *rand.Rand, nproc int, minLat int64) []*trace.Process {
	threads := make([]int, nproc)
	tt := make([][]int64, nproc)
	evs := make([][][]trace.Event, nproc)
	for p := range threads {
		threads[p] = 1 + rng.Intn(3)
		tt[p] = make([]int64, threads[p])
		evs[p] = make([][]trace.Event, threads[p])
	}
	emit := func(p, th int, t int64, k trace.Kind, args ...int64) int64 {
		t = max(t, tt[p][th])
		tt[p][th] = t
		e := trace.Event{Time: t, Kind: k}
		copy(e.Args[:], args)
		evs[p][th] = append(evs[p][th], e)
		return t
	}
	lat := func() int64 { return minLat + rng.Int63n(3000) }
	type msg struct{ sent int64 }
	type chKey struct{ src, dst, tag int }
	pending := map[chKey][]msg{}
	var keys []chKey // channels in creation order, for determinism
	lastSend, lastRecv := map[chKey]int64{}, map[chKey]int64{}
	var now, task int64
	recvOne := func(k chKey) {
		m := pending[k][0]
		pending[k] = pending[k][1:]
		th := rng.Intn(threads[k.dst])
		// Receives of one channel in order: strictly later each time.
		t := emit(k.dst, th, max(now, m.sent+lat(), lastRecv[k]+1), trace.MPIRecv, int64(k.src), int64(k.tag), 0, 8, 0)
		lastRecv[k] = t
	}
	steps := 100 + rng.Intn(300)
	for s := 0; s < steps; s++ {
		if rng.Intn(4) > 0 {
			now += rng.Int63n(2000)
		}
		p := rng.Intn(nproc)
		th := rng.Intn(threads[p])
		switch r := rng.Intn(20); {
		case r < 8:
			emit(p, th, now, trace.RegionEnter, 1)
		case r < 12:
			k := chKey{p, rng.Intn(nproc), 1 + rng.Intn(2)}
			if _, ok := pending[k]; !ok {
				keys = append(keys, k)
			}
			t := emit(p, th, max(now, lastSend[k]+1), trace.MPISend, int64(k.dst), int64(k.tag), 0, 8, 0)
			lastSend[k] = t
			pending[k] = append(pending[k], msg{t})
		case r < 16:
			var ready []chKey
			for _, k := range keys {
				if len(pending[k]) > 0 {
					ready = append(ready, k)
				}
			}
			if len(ready) > 0 {
				recvOne(ready[rng.Intn(len(ready))])
			}
		case r < 18 && nproc > 1:
			q := (p + 1 + rng.Intn(nproc-1)) % nproc
			task += 2
			t := emit(p, th, now, trace.RemoteDepOut, task, int64(q), task+1)
			emit(q, rng.Intn(threads[q]), t+lat(), trace.RemoteDepIn, task+1, int64(p), task)
		case r >= 18 && nproc > 1:
			ops := []trace.CollOp{trace.CollBarrier, trace.CollBcast, trace.CollReduce, trace.CollAllreduce, trace.CollGather, trace.CollScatter}
			op := ops[rng.Intn(len(ops))]
			root := int64(-1)
			if op.Class() != trace.AllToAll {
				root = int64(rng.Intn(nproc))
			}
			enter := make([]int64, nproc)
			for q := range enter {
				// every member sends and receives (a collective without
				// payload synchronizes nobody: graph's edgesOf)
				enter[q] = emit(q, 0, now+rng.Int63n(1000), trace.CollBegin, int64(op), 0, root, 8, 8)
			}
			for q := range enter {
				x := enter[q]
				for r2 := range enter {
					switch op.Class() {
					case trace.AllToAll:
						x = max(x, enter[r2]+lat())
					case trace.OneToAll:
						if q != int(root) && r2 == int(root) {
							x = max(x, enter[r2]+lat())
						}
					case trace.AllToOne:
						if q == int(root) && r2 != int(root) {
							x = max(x, enter[r2]+lat())
						}
					}
				}
				emit(q, 0, x+rng.Int63n(500), trace.CollEnd, int64(op), 0, root)
			}
		}
	}
	for _, k := range keys {
		for len(pending[k]) > 0 {
			recvOne(k)
		}
	}
	var end int64
	for _, ts := range tt {
		for _, t := range ts {
			end = max(end, t)
		}
	}
	// Clocks and measurements.
	members := make([]int, nproc)
	for i := range members {
		members[i] = i
	}
	procs := make([]*trace.Process, nproc)
	for p := range procs {
		off, ppm := int64(0), 0.0
		if p > 0 {
			off, ppm = rng.Int63n(100_001)-50_000, (2*rng.Float64()-1)*50
		}
		local := func(t int64) int64 { return t + off + int64(math.Round(float64(t)*ppm*1e-6)) }
		pr := &trace.Process{Header: trace.Header{Rank: p, NRanks: nproc}}
		pr.Comms = []trace.Communicator{{Index: 0, ID: 0, Name: "MPI_COMM_WORLD", Members: members}}
		noise := func() int64 { return 0 }
		switch rng.Intn(4) {
		case 1:
			noise = func() int64 { return rng.Int63n(10_001) - 5_000 }
			fallthrough
		case 0:
			for _, m := range []struct {
				when string
				t    int64
			}{{"init", 0}, {"finalize", end}} {
				l := local(m.t)
				pr.ClockOffsets = append(pr.ClockOffsets, trace.ClockOffset{When: m.when, LocalNS: l, OffsetNS: m.t - l + noise()})
			}
		case 2:
			pr.ClockOffsets = []trace.ClockOffset{{When: "init", LocalNS: local(0), OffsetNS: -local(0) + rng.Int63n(2001) - 1000}}
		}
		for th := range evs[p] {
			for i := range evs[p][th] {
				evs[p][th][i].Time = local(evs[p][th][i].Time)
			}
		}
		procs[p] = mkProc(pr.Header, pr.Tables, evs[p])
	}
	return procs
}

// refEvent is one event in the reference's global view.
type refEvent struct {
	p, th, idx   int
	raw, t       int64 // recorded and interpolated time
	f, b         int64 // forward and final time
	fint         int64 // forward time without receive constraint
	jump, x0, x1 int64
	preds, succs []*refEvent
	done         bool
}

// refSync is the reference: the same definitions as the package doc,
// computed sequentially over the whole trace with plain data structures —
// sorted lists, maps and repeated sweeps — and direct edges from every
// relevant collective enter to every relevant exit.
func refSync(t *testing.T, procs []*trace.Process, o Options) [][][]int64 {
	P := len(procs)
	evsOf := allRows(procs)
	// Offset model.
	var ref0 int64
	first := func(p int) (int64, bool) {
		var all []int64
		for _, ev := range evsOf[p] {
			for _, e := range ev {
				all = append(all, e.Time)
			}
		}
		if len(all) == 0 {
			return 0, false
		}
		return slices.Min(all), true
	}
	ref0, _ = first(0)
	interp := make([]func(int64) int64, P)
	for p, pr := range procs {
		var init, fin *trace.ClockOffset
		for i := range pr.ClockOffsets {
			if c := &pr.ClockOffsets[i]; c.When == "init" && init == nil {
				init = c
			} else if c.When == "finalize" {
				fin = c
			}
		}
		switch {
		case init != nil && fin != nil && fin.LocalNS > init.LocalNS &&
			math.Abs(float64(fin.OffsetNS-init.OffsetNS)/float64(fin.LocalNS-init.LocalNS)) <= 0.01:
			o0, l0 := init.OffsetNS, init.LocalNS
			s := float64(fin.OffsetNS-init.OffsetNS) / float64(fin.LocalNS-init.LocalNS)
			interp[p] = func(t int64) int64 { return t + o0 + int64(math.Floor(float64(t-l0)*s+0.5)) }
		case init != nil:
			o0 := init.OffsetNS
			interp[p] = func(t int64) int64 { return t + o0 }
		case fin != nil:
			o1 := fin.OffsetNS
			interp[p] = func(t int64) int64 { return t + o1 }
		default:
			d := int64(0)
			if f, ok := first(p); ok && p != 0 {
				d = ref0 - f
			}
			interp[p] = func(t int64) int64 { return t + d }
		}
	}
	// Each process's events merged: repeatedly take the thread head with
	// the least (time, class, thread), class 0 for sends, 2 for receives.
	class := func(k trace.Kind) int {
		switch k {
		case trace.MPISend, trace.CollBegin, trace.RemoteDepOut:
			return 0
		case trace.MPIRecv, trace.CollEnd, trace.RemoteDepIn:
			return 2
		}
		return 1
	}
	lists := make([][]*refEvent, P)
	for p := range procs {
		pev := evsOf[p]
		next := make([]int, len(pev))
		for {
			best := -1
			for th, ev := range pev {
				if next[th] == len(ev) {
					continue
				}
				if best < 0 {
					best = th
					continue
				}
				a, b := &ev[next[th]], &pev[best][next[best]]
				if cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(class(a.Kind), class(b.Kind)), cmp.Compare(th, best)) < 0 {
					best = th
				}
			}
			if best < 0 {
				break
			}
			e := pev[best][next[best]]
			lists[p] = append(lists[p], &refEvent{p: p, th: best, idx: next[best], raw: e.Time, t: interp[p](e.Time)})
			next[best]++
		}
	}
	ev := func(e *refEvent) *trace.Event { return &evsOf[e.p][e.th][e.idx] }
	edge := func(from, to *refEvent) {
		to.preds = append(to.preds, from)
		from.succs = append(from.succs, to)
	}
	// Matching: channels in order, collectives by call number.
	type key struct {
		kind     int
		src, dst int
		a, b     int64
		comm     int64
	}
	sends, recvs := map[key][]*refEvent{}, map[key][]*refEvent{}
	type coll struct{ begin, end *refEvent }
	calls := make([][]coll, P)
	for p := range lists {
		var open *refEvent
		for _, e := range lists[p] {
			x := ev(e)
			switch x.Kind {
			case trace.MPISend:
				k := key{1, p, int(x.Args[0]), x.Args[1], 0, 0}
				sends[k] = append(sends[k], e)
			case trace.MPIRecv:
				k := key{1, int(x.Args[0]), p, x.Args[1], 0, 0}
				recvs[k] = append(recvs[k], e)
			case trace.RemoteDepOut:
				k := key{2, p, int(x.Args[1]), x.Args[0], x.Args[2], 0}
				sends[k] = append(sends[k], e)
			case trace.RemoteDepIn:
				k := key{2, int(x.Args[1]), p, x.Args[2], x.Args[0], 0}
				recvs[k] = append(recvs[k], e)
			case trace.CollBegin:
				open = e
			case trace.CollEnd:
				calls[p] = append(calls[p], coll{open, e})
			}
		}
	}
	for k, rs := range recvs {
		ss := sends[k]
		if len(ss) != len(rs) {
			t.Fatalf("reference: channel %+v has %d sends and %d receives", k, len(ss), len(rs))
		}
		for i := range rs {
			if k.src != k.dst { // within a process: one clock, no constraint
				edge(ss[i], rs[i])
			}
		}
	}
	for i := range calls[0] {
		x := ev(calls[0][i].begin)
		op, root := trace.CollOp(x.Args[0]), int(x.Args[2])
		for q := 0; q < P; q++ {
			for r := 0; r < P; r++ {
				if op.Class() == trace.AllToAll || op.Class() == trace.OneToAll && r == root && q != root ||
					op.Class() == trace.AllToOne && q == root && r != root {
					edge(calls[r][i].begin, calls[q][i].end)
				}
			}
		}
	}
	// Forward: sweep the processes until every event is done; a process
	// stops at a receive whose senders are not done yet.
	type fstate struct {
		ptr                     int
		prev                    *refEvent
		anchT, anchF, lastJumpF int64
	}
	fs := make([]fstate, P)
	for {
		left, progress := false, false
		for p := range lists {
			s := &fs[p]
			for ; s.ptr < len(lists[p]); s.ptr++ {
				e := lists[p][s.ptr]
				ready := true
				for _, q := range e.preds {
					ready = ready && q.done
				}
				if !ready {
					left = true
					break
				}
				g := e.t
				e.fint = e.t
				if s.prev != nil {
					g = s.anchF + int64(math.Floor(o.Gamma*float64(e.t-s.anchT)+0.5))
					e.fint = max(g, s.prev.f+min(o.DeltaNS, max(e.t-s.prev.t, 0)), e.t)
				}
				e.f = e.fint
				for _, q := range e.preds {
					e.f = max(e.f, q.f+o.MinLatencyNS)
				}
				e.jump, e.x1, e.x0 = e.f-e.fint, e.fint, s.lastJumpF
				if s.prev == nil {
					e.x0 = e.fint
				}
				if s.prev == nil || e.f != g {
					s.anchT, s.anchF = e.t, e.f
				}
				if s.prev == nil || e.jump > 0 {
					s.lastJumpF = e.f
				}
				e.done = true
				progress = true
				s.prev = e
			}
		}
		if !left {
			break
		}
		if !progress {
			t.Fatal("reference: cycle")
		}
	}
	// Backward: the same from the end; a send waits for its receivers.
	for _, l := range lists {
		for _, e := range l {
			e.done = false
		}
	}
	type bstate struct {
		ptr                   int
		next                  *refEvent
		rampJ, rampX0, rampX1 int64
	}
	bs := make([]bstate, P)
	for p := range bs {
		bs[p].ptr = len(lists[p]) - 1
	}
	for {
		left, progress := false, false
		for p := range lists {
			s := &bs[p]
			for ; s.ptr >= 0; s.ptr-- {
				e := lists[p][s.ptr]
				ready := true
				for _, q := range e.succs {
					ready = ready && q.done
				}
				if !ready {
					left = true
					break
				}
				e.b = e.f
				if s.rampJ > 0 && s.rampX1 > s.rampX0 && e.f > s.rampX0 {
					e.b += int64(float64(e.f-s.rampX0) * (float64(s.rampJ) / float64(s.rampX1-s.rampX0)))
				}
				for _, q := range e.succs {
					e.b = min(e.b, q.b-o.MinLatencyNS)
				}
				if s.next != nil {
					e.b = min(e.b, s.next.b-min(o.DeltaNS, s.next.f-e.f))
				}
				if e.jump > 0 {
					s.rampJ, s.rampX0, s.rampX1 = e.jump, e.x0, e.x1
				}
				e.done = true
				progress = true
				s.next = e
			}
		}
		if !left {
			break
		}
		if !progress {
			t.Fatal("reference: backward cycle")
		}
	}
	out := make([][][]int64, P)
	for p := range procs {
		out[p] = make([][]int64, len(evsOf[p]))
		for th := range evsOf[p] {
			out[p][th] = make([]int64, len(evsOf[p][th]))
		}
		for _, e := range lists[p] {
			out[p][e.th][e.idx] = e.b
		}
	}
	return out
}

func TestSyncMatchesReference(t *testing.T) {
	opts := []Options{
		DefaultOptions(),
		{Gamma: 0.99, DeltaNS: 1, MinLatencyNS: 100},
		{Gamma: 1, DeltaNS: 0, MinLatencyNS: 7},
		{Gamma: 0.999, DeltaNS: 5, MinLatencyNS: 0},
	}
	var fixed int64
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		nproc := 2 + rng.Intn(8)
		o := opts[seed%int64(len(opts))]
		procs := randomTrace(rng, nproc, 200)
		want := refSync(t, procs, o)
		for k := 1; k <= min(nproc, 4); k++ {
			r := mustSync(t, procs, k, o)
			recorded := allRows(procs)
			for p, pr := range r.rows {
				for th, ev := range pr {
					for i := range ev {
						if ev[i].Time != want[p][th][i] {
							t.Fatalf("seed %d, %d ranks, %+v: process %d thread %d event %d (%s, recorded at %d): %d, reference %d",
								seed, k, o, p, th, i, ev[i].Kind, recorded[p][th][i].Time, ev[i].Time, want[p][th][i])
						}
					}
				}
			}
			monotone(t, r.rows)
			var before, after int64
			for _, s := range r.stats {
				before += s.ViolationsInterpolated
				after += s.ViolationsAfter
			}
			if after != 0 {
				t.Fatalf("seed %d, %d ranks: %d violations after synchronization", seed, k, after)
			}
			if k == 1 {
				fixed += before
			}
		}
	}
	if fixed == 0 {
		t.Fatal("no random trace had violations to repair: the test exercises nothing")
	}
	t.Logf("repaired %d violations", fixed)
}

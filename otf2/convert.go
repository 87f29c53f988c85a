package otf2

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// Producer is the header's producer of converted processes. Analyses that
// need task dependences (which OTF2 cannot carry) key off it.
const Producer = "ptrace otf2"

// Stats counts what a conversion read, skipped and warned about.
type Stats struct {
	Records   int64 // OTF2 event records read
	Emitted   int64 // ptrace events written
	AttrLists int64 // attribute lists skipped
	Unknown   int64 // records of unknown types skipped
	Ignored   int64 // known records without a ptrace counterpart
	Tasks     int64 // explicit tasks created
	// BadCompletes counts task completions of tasks not running there
	// (ignored; the first is described in Warnings).
	BadCompletes int64
	Warnings     []string
}

// WriteProcess converts process i (location group, a ptrace rank) into
// ptrace's format on w. It reads only that process's local definition and
// event files.
func (a *Archive) WriteProcess(i int, w io.Writer) error {
	_, err := a.Convert(i, w)
	return err
}

// region roles (OTF2_RegionRole) the mapping uses
const (
	roleLoop            = 3
	roleSections        = 6
	roleWorkshare       = 8
	roleSingle          = 9
	roleBarrier         = 15
	roleImplicitBarrier = 16
	roleTaskCreate      = 21
	roleTaskWait        = 22
)

// collective operation numbers: OTF2_CollectiveOp → ptrace's op.
var collOps = [...]int64{
	0: 1, 1: 2, 2: 5, 3: 6, 4: 7, 5: 8, 6: 9, 7: 10, 8: 11, 9: 12, 10: 17,
	11: 4, 12: 3, 13: 13, 14: 14, 15: 15, 16: 16,
}

type taskKey struct{ team, creator, gen uint32 }

// conv holds one process's conversion state.
type conv struct {
	a     *Archive
	p     *process
	w     *trace.Writer
	clk   clock
	st    Stats
	local []*LocalDefs
	seq   []int64 // per-thread id counters (tasks and parallel regions)
	rseq  []int64 // per-thread request counters
	forks [][]int64
	tasks map[taskKey]int64
	teams map[uint32][]int64 // team comm → parallel id per instance
	first []uint64
	last  []uint64
	seen  []bool

	commIndex map[uint32]int // OTF2 MPI comm → ptrace comm index
	commRanks map[uint32][]int
	locs      map[uint32]int64 // region → ptrace location id
	noLoc     int64            // an empty location (−1 until defined)
	strs      map[uint32]int64 // region → ptrace string id
}

// Convert is WriteProcess returning what it counted.
func (a *Archive) Convert(i int, out io.Writer) (*Stats, error) {
	if i < 0 || i >= len(a.procs) {
		return nil, fmt.Errorf("otf2: process %d out of range 0..%d", i, len(a.procs)-1)
	}
	p := &a.procs[i]
	n := len(p.locations)
	if n > trace.MaxThreads {
		return nil, fmt.Errorf("%s: process %q has %d locations, more than %d", a.Path, p.group.Name, n, trace.MaxThreads)
	}
	c := &conv{a: a, p: p, clk: clock{res: a.Defs.TimerResolution, offset: a.Defs.GlobalOffset},
		local: make([]*LocalDefs, n), seq: make([]int64, n), rseq: make([]int64, n), forks: make([][]int64, n),
		tasks: map[taskKey]int64{}, teams: map[uint32][]int64{},
		first: make([]uint64, n), last: make([]uint64, n), seen: make([]bool, n),
		locs: map[uint32]int64{}, strs: map[uint32]int64{}, noLoc: -1}
	for t, l := range p.locations {
		ld, err := readLocalDefs(a.defPath(l.ID), a.Anchor.ChunkDefs)
		if errors.Is(err, os.ErrNotExist) {
			c.st.Warnings = append(c.st.Warnings, fmt.Sprintf("%s: missing local definition file: ids taken as global, no clock offsets", a.defPath(l.ID)))
			ld = &LocalDefs{}
		} else if err != nil {
			return nil, err
		}
		c.local[t] = ld
	}
	if err := c.pass1(); err != nil {
		return nil, err
	}
	host, ok := a.Defs.Nodes[p.group.Parent]
	if !ok {
		host = p.group.Name
	}
	h := trace.Header{Rank: p.rank, NRanks: len(a.procs), Host: host, ClockSrc: fmt.Sprintf("OTF2 timer, %d Hz", a.Defs.TimerResolution),
		Producer: Producer, Command: []string{a.Anchor.Creator}}
	w, err := trace.NewWriter(out, h)
	if err != nil {
		return nil, err
	}
	c.w = w
	for t, l := range p.locations {
		typ := trace.ThreadWorker
		if t == 0 {
			typ = trace.ThreadInitial
		}
		w.SetThread(trace.Thread{Index: t, TID: int64(l.ID), Type: typ, Name: l.Name})
	}
	c.comms()
	c.offsets()
	for t := range p.locations {
		if err := c.pass2(t); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	c.st.Emitted = w.Events()
	if c.st.Tasks > 0 {
		c.st.Warnings = append(c.st.Warnings, fmt.Sprintf("%s: %d explicit tasks, but OTF2 records no task dependences: "+
			"tasks count as ready at creation, so task-graph values (critical path and span through tasks, "+
			"parallelism, idleness from readiness) are those of independent tasks", p.group.Name, c.st.Tasks))
	}
	return &c.st, nil
}

// read walks location t's event file; count adds what it skipped to the
// statistics (one of the two passes does).
func (c *conv) read(t int, count bool, fn func(e *Event) error) error {
	l := c.p.locations[t]
	r, err := c.a.OpenEvents(l.ID)
	if err != nil {
		return err
	}
	defer r.Close()
	var e Event
	for {
		ok, err := r.Next(&e)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if err := fn(&e); err != nil {
			return fmt.Errorf("%s: offset %d: %w", r.name, e.Offset, err)
		}
	}
	if count {
		c.st.Records += r.Events
		c.st.AttrLists += r.AttrLists
		c.st.Unknown += r.Unknown
		if r.Unknown > 0 {
			c.st.Warnings = append(c.st.Warnings, fmt.Sprintf("%s (%d unknown records skipped in all)", r.UnknownFirst, r.Unknown))
		}
	}
	if l.Events != 0 && uint64(r.Events+r.Unknown) != l.Events && uint64(r.Events) != l.Events {
		return &FormatError{File: r.name, Offset: r.chunkOff, Msg: fmt.Sprintf("truncated event file: %d events, the location definition counts %d", r.Events, l.Events)}
	}
	return nil
}

// pass1 assigns the ids other threads refer to: parallel regions (made by
// the forking thread) and explicit tasks (made by the creating thread).
func (c *conv) pass1() error {
	for t := range c.p.locations {
		ld := c.local[t]
		pending := int64(0)
		err := c.read(t, true, func(e *Event) error {
			if !c.seen[t] {
				c.first[t], c.seen[t] = e.Time, true
			}
			c.last[t] = e.Time
			switch e.Type {
			case EvThreadFork:
				c.seq[t]++
				pending = trace.MakeID(t, c.seq[t])
				c.forks[t] = append(c.forks[t], pending)
			case EvThreadTeamBegin:
				if pending != 0 {
					team := uint32(ld.Map(mapComm, e.A[0]))
					c.teams[team] = append(c.teams[team], pending)
					pending = 0
				}
			case EvThreadTaskCreate:
				k := taskKey{uint32(ld.Map(mapComm, e.A[0])), uint32(e.A[1]), uint32(e.A[2])}
				c.seq[t]++
				c.tasks[k] = trace.MakeID(t, c.seq[t])
				c.st.Tasks++
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// comms builds the communicator table: every MPI communicator this process
// belongs to, members as world ranks.
func (c *conv) comms() {
	g := c.a.Defs
	c.commIndex = map[uint32]int{}
	c.commRanks = map[uint32][]int{}
	ids := make([]uint32, 0, len(g.Comms))
	for id := range g.Comms {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	nranks := len(c.a.procs)
	for _, id := range ids {
		cm := g.Comms[id]
		grp := g.Groups[cm.Group]
		if grp == nil || grp.Paradigm == paradigmOpenMP {
			continue
		}
		var members []int
		switch grp.Type {
		case groupTypeCommSelf:
			members = []int{c.p.rank}
		case groupTypeCommGroup:
			members = make([]int, len(grp.Members))
			for i, m := range grp.Members {
				members[i] = int(m)
			}
		default:
			continue
		}
		c.commRanks[id] = members
		in := false
		for _, m := range members {
			in = in || m == c.p.rank
		}
		if !in {
			continue
		}
		cid := int64(id) + 1
		if len(members) == nranks && cm.Parent == undefined32 && grp.Type == groupTypeCommGroup {
			world := true
			for i, m := range members {
				world = world && m == i
			}
			if world {
				cid = 0
			}
		}
		idx := len(c.commIndex)
		c.commIndex[id] = idx
		c.w.AddComm(trace.Communicator{Index: idx, ID: cid, Name: cm.Name, Members: members})
	}
}

// offsets converts the master location's ClockOffset definitions: the
// first is the init measurement, the last the finalize one.
func (c *conv) offsets() {
	offs := c.local[0].Offsets
	for k, o := range offs {
		when := "init"
		if k == len(offs)-1 && k > 0 {
			when = "finalize"
		} else if k > 0 {
			when = "intermediate"
		}
		c.w.AddClockOffset(trace.ClockOffset{When: when, LocalNS: c.clk.ns(o.Time), OffsetNS: c.clk.signedSpan(o.Offset),
			ErrorNS: int64(math.Round(o.StdDev * 1e9 / float64(c.clk.res)))})
	}
}

// peer maps a rank in OTF2 communicator comm to a world rank.
func (c *conv) peer(comm uint32, r uint64) int64 {
	if r == undefined32 || r == math.MaxUint64 {
		return -1
	}
	if m, ok := c.commRanks[comm]; ok && r < uint64(len(m)) {
		return int64(m[r])
	}
	return int64(r)
}

func (c *conv) comm(comm uint32) int64 {
	if i, ok := c.commIndex[comm]; ok {
		return int64(i)
	}
	return 0
}

// unknownLoc returns an empty location (named "<unknown>"), defining it on
// first use.
func (c *conv) unknownLoc() int64 {
	if c.noLoc < 0 {
		c.noLoc = c.w.AddLocation(trace.Location{})
	}
	return c.noLoc
}

// regionLoc returns the ptrace location of a region (its source file and
// line), defining it on first use.
func (c *conv) regionLoc(reg uint32, r *Region) int64 {
	if id, ok := c.locs[reg]; ok {
		return id
	}
	id := c.w.AddLocation(trace.Location{Func: r.Name, File: r.file, Line: int(r.line)})
	c.locs[reg] = id
	return id
}

func (c *conv) regionStr(reg uint32, r *Region) int64 {
	if id, ok := c.strs[reg]; ok {
		return id
	}
	id := c.w.String(r.Name)
	c.strs[reg] = id
	return id
}

type parFrame struct {
	par, impl int64
	size, num int64
}

type pendingEvent struct {
	kind trace.Kind
	time int64
	args [trace.MaxArgs]int64
}

// thr is the state of one thread while its events are converted.
type thr struct {
	c     *conv
	t     int
	stack []int64 // running tasks, innermost last
	pars  []parFrame
	forks []int64 // open forks on this thread
	nfork int
	teamK map[uint32]int
	reqs  map[uint64]int64
	coll  bool
	buf   []pendingEvent
	err   error
	// createLoc is the location of the task-creation region being entered
	createLoc int64
}

func (h *thr) cur() int64 {
	if len(h.stack) == 0 {
		return 0
	}
	return h.stack[len(h.stack)-1]
}

func (h *thr) par() parFrame {
	if len(h.pars) == 0 {
		return parFrame{}
	}
	return h.pars[len(h.pars)-1]
}

func (h *thr) emit(k trace.Kind, time int64, args ...int64) {
	if h.err != nil {
		return
	}
	if h.coll {
		e := pendingEvent{kind: k, time: time}
		copy(e.args[:], args)
		h.buf = append(h.buf, e)
		return
	}
	h.err = h.c.w.E(h.t, k, time, args...)
}

func (h *thr) flush() {
	h.coll = false
	for _, e := range h.buf {
		h.emit(e.kind, e.time, e.args[:]...)
	}
	h.buf = h.buf[:0]
}

// pass2 converts thread t's events.
func (c *conv) pass2(t int) error {
	if !c.seen[t] {
		return nil
	}
	ld := c.local[t]
	g := c.a.Defs
	h := &thr{c: c, t: t, teamK: map[uint32]int{}, reqs: map[uint64]int64{}}
	t0 := c.clk.ns(c.first[t])
	typ := int64(trace.ThreadWorker)
	var initial int64
	if t == 0 {
		typ = trace.ThreadInitial
	}
	h.emit(trace.ThreadBegin, t0, typ)
	if t == 0 {
		c.seq[0]++
		initial = trace.MakeID(0, c.seq[0])
		h.emit(trace.ImplicitTaskBegin, t0, 0, initial, 1, 0, ompt.TaskInitial)
		h.stack = append(h.stack, initial)
	}
	err := c.read(t, false, func(e *Event) error {
		now := c.clk.ns(e.Time)
		switch e.Type {
		case EvEnter, EvLeave:
			id := uint32(ld.Map(mapRegion, e.A[0]))
			r := g.Regions[id]
			if r == nil {
				return fmt.Errorf("%s refers to undefined region %d", EventName(e.Type), id)
			}
			c.region(h, e.Type == EvEnter, now, id, r)
		case EvMpiSend, EvMpiIsend, EvMpiRecv, EvMpiIrecv:
			cm := uint32(ld.Map(mapComm, e.A[1]))
			var req int64
			if e.Type == EvMpiIsend {
				c.rseq[t]++
				req = trace.MakeID(t, c.rseq[t])
				h.reqs[e.A[4]] = req
			} else if e.Type == EvMpiIrecv {
				req = h.reqs[e.A[4]]
				delete(h.reqs, e.A[4])
			}
			k := trace.MPISend
			if e.Type == EvMpiRecv || e.Type == EvMpiIrecv {
				k = trace.MPIRecv
			}
			h.emit(k, now, c.peer(cm, e.A[0]), int64(int32(uint32(e.A[2]))), c.comm(cm), int64(e.A[3]), req)
		case EvMpiIsendComplete:
			if req, ok := h.reqs[e.A[0]]; ok {
				h.emit(trace.MPIRequestDone, now, req)
				delete(h.reqs, e.A[0])
			}
		case EvMpiIrecvRequest:
			c.rseq[t]++
			req := trace.MakeID(t, c.rseq[t])
			h.reqs[e.A[0]] = req
			h.emit(trace.MPIRecvPost, now, -1, -1, 0, req)
		case EvMpiRequestCancelled:
			delete(h.reqs, e.A[0])
			c.st.Ignored++
		case EvMpiCollectiveBegin:
			h.flush()
			h.emit(trace.CollBegin, now, 0, 0, -1, 0, 0)
			h.coll = true
		case EvMpiCollectiveEnd:
			cm := uint32(ld.Map(mapComm, e.A[1]))
			op := int64(0)
			if e.A[0] < uint64(len(collOps)) {
				op = collOps[e.A[0]]
			}
			root := c.peer(cm, e.A[2])
			if len(h.buf) > 0 && h.buf[0].kind == trace.CollBegin {
				h.buf[0].args = [trace.MaxArgs]int64{op, c.comm(cm), root, int64(e.A[3]), int64(e.A[4])}
			}
			h.flush()
			h.emit(trace.CollEnd, now, op, c.comm(cm), root)
		case EvThreadFork:
			if h.nfork < len(c.forks[t]) {
				par := c.forks[t][h.nfork]
				h.nfork++
				h.forks = append(h.forks, par)
				// ThreadFork names no region: the parallel region's location
				// is unknown (not location 0, another construct's).
				h.emit(trace.ParallelBegin, now, par, h.cur(), int64(e.A[1]), ompt.ParallelInvokerProgram|ompt.ParallelTeam, c.unknownLoc())
			}
		case EvThreadJoin:
			if n := len(h.forks); n > 0 {
				par := h.forks[n-1]
				h.forks = h.forks[:n-1]
				h.emit(trace.ParallelEnd, now, par, h.cur(), ompt.ParallelInvokerProgram|ompt.ParallelTeam, 0)
			}
		case EvThreadTeamBegin:
			team := uint32(ld.Map(mapComm, e.A[0]))
			k := h.teamK[team]
			h.teamK[team]++
			ids := c.teams[team]
			if k >= len(ids) {
				return fmt.Errorf("thread team %d: instance %d has no ThreadFork on its master (nested or foreign team?)", team, k)
			}
			size, num := c.teamPos(team, c.p.locations[t].ID, t)
			c.seq[t]++
			impl := trace.MakeID(t, c.seq[t])
			h.pars = append(h.pars, parFrame{par: ids[k], impl: impl, size: size, num: num})
			h.stack = append(h.stack, impl)
			h.emit(trace.ImplicitTaskBegin, now, ids[k], impl, size, num, ompt.TaskImplicit)
		case EvThreadTeamEnd:
			if n := len(h.pars); n > 0 {
				f := h.pars[n-1]
				h.pars = h.pars[:n-1]
				for len(h.stack) > 0 && h.cur() != f.impl {
					h.stack = h.stack[:len(h.stack)-1]
				}
				if len(h.stack) > 0 {
					h.stack = h.stack[:len(h.stack)-1]
				}
				h.emit(trace.ImplicitTaskEnd, now, f.par, f.impl, f.size, f.num, ompt.TaskImplicit)
			}
		case EvThreadTaskCreate:
			k := taskKey{uint32(ld.Map(mapComm, e.A[0])), uint32(e.A[1]), uint32(e.A[2])}
			h.emit(trace.TaskCreate, now, c.tasks[k], h.cur(), ompt.TaskExplicit, h.createLoc)
		case EvThreadTaskSwitch:
			k := taskKey{uint32(ld.Map(mapComm, e.A[0])), uint32(e.A[1]), uint32(e.A[2])}
			next, ok := c.tasks[k]
			if !ok {
				next = h.par().impl // an implicit task: this thread's own
			}
			if next != 0 && next != h.cur() {
				h.emit(trace.TaskSchedule, now, h.cur(), ompt.StatusSwitch, next)
				h.stack = append(h.stack, next)
			}
		case EvThreadTaskComplete:
			k := taskKey{uint32(ld.Map(mapComm, e.A[0])), uint32(e.A[1]), uint32(e.A[2])}
			id := c.tasks[k]
			if id == 0 || h.cur() != id {
				// A completion the switches do not explain (a runtime or
				// measurement quirk): keep the schedule as it is.
				if c.st.BadCompletes == 0 {
					c.st.Warnings = append(c.st.Warnings, fmt.Sprintf("%s: offset %d: ThreadTaskComplete of a task (team %d, creator %d, generation %d) not running on this location, ignored",
						c.a.evtPath(c.p.locations[t].ID), e.Offset, k.team, k.creator, k.gen))
				}
				c.st.BadCompletes++
				return nil
			}
			h.stack = h.stack[:len(h.stack)-1]
			h.emit(trace.TaskSchedule, now, id, ompt.StatusComplete, h.cur())
		default:
			c.st.Ignored++
		}
		return h.err
	})
	if err != nil {
		return err
	}
	h.flush()
	t1 := c.clk.ns(c.last[t])
	if t == 0 {
		h.emit(trace.ImplicitTaskEnd, t1, 0, initial, 1, 0, ompt.TaskInitial)
	}
	h.emit(trace.ThreadEnd, t1)
	return h.err
}

// teamPos returns the size of an OpenMP thread team and the position of
// location loc (thread t of the process) in it.
func (c *conv) teamPos(team uint32, loc uint64, t int) (size, num int64) {
	g := c.a.Defs
	cm := g.Comms[team]
	if cm == nil {
		return 1, 0
	}
	grp := g.Groups[cm.Group]
	if grp == nil {
		return 1, 0
	}
	members := grp.Members
	var locs []uint64
	if grp.Type == groupTypeCommGroup {
		// indices into the paradigm's COMM_LOCATIONS group
		for _, og := range g.Groups {
			if og.Type == groupTypeCommLocs && og.Paradigm == grp.Paradigm {
				locs = og.Members
				break
			}
		}
	}
	num = int64(t)
	for i, m := range members {
		l := m
		if locs != nil && m < uint64(len(locs)) {
			l = locs[m]
		}
		if l == loc {
			num = int64(i)
		}
	}
	return int64(len(members)), num
}

// region converts Enter/Leave of a region by paradigm and role.
func (c *conv) region(h *thr, enter bool, now int64, id uint32, r *Region) {
	switch r.Paradigm {
	case paradigmMPI:
		if enter {
			h.emit(trace.MPIEnter, now, c.regionStr(id, r), -1) // the call site is not in the archive
		} else {
			h.emit(trace.MPIExit, now, c.regionStr(id, r))
		}
	case paradigmOpenMP:
		kind := int64(0)
		switch r.Role {
		case roleImplicitBarrier:
			kind = ompt.SyncBarrierImplicitParallel
		case roleBarrier:
			kind = ompt.SyncBarrierExplicit
		case roleTaskWait:
			kind = ompt.SyncTaskwait
			if r.isTaskgroup() {
				kind = ompt.SyncTaskgroup
			}
		case roleTaskCreate:
			if enter {
				h.createLoc = c.regionLoc(id, r)
			}
			return
		case roleLoop, roleSections, roleSingle, roleWorkshare:
			ws := map[uint8]int64{roleLoop: ompt.WorkLoop, roleSections: ompt.WorkSections, roleSingle: ompt.WorkSingleExecutor, roleWorkshare: ompt.WorkWorkshare}[r.Role]
			k := trace.WorkEnd
			if enter {
				k = trace.WorkBegin
			}
			h.emit(k, now, ws, 0, c.regionLoc(id, r))
			return
		default:
			return
		}
		loc := c.regionLoc(id, r)
		par, task := h.par().par, h.cur()
		if enter {
			h.emit(trace.SyncBegin, now, kind, par, task, loc)
			h.emit(trace.SyncWaitBegin, now, kind, par, task)
		} else {
			h.emit(trace.SyncWaitEnd, now, kind, par, task)
			h.emit(trace.SyncEnd, now, kind, par, task, loc)
		}
	case paradigmUser:
		k := trace.RegionExit
		if enter {
			k = trace.RegionEnter
		}
		h.emit(k, now, c.regionStr(id, r))
	}
}

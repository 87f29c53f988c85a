package otf2

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// A hand encoder of OTF2 files, for archives as older OTF2 versions wrote
// them (python3-otf2 writes only its own version) and for the fuzz seeds.
// It follows OTF2_Buffer's encodings: little-endian chunks, compressed
// integers, record lengths.

// enc builds one record's attributes.
type enc struct{ b []byte }

func (e *enc) u8(v uint8) *enc { e.b = append(e.b, v); return e }

// c writes a compressed unsigned integer (0, all ones, else length byte and
// little-endian bytes).
func (e *enc) c(v uint64) *enc {
	switch {
	case v == 0:
		e.b = append(e.b, 0)
	case v == math.MaxUint64 || v == math.MaxUint32:
		e.b = append(e.b, 0xff)
	default:
		n := 0
		for x := v; x != 0; x >>= 8 {
			n++
		}
		e.b = append(e.b, byte(n))
		for i := 0; i < n; i++ {
			e.b = append(e.b, byte(v>>(8*i)))
		}
	}
	return e
}

func (e *enc) full(v uint64) *enc { e.b = binary.LittleEndian.AppendUint64(e.b, v); return e }

func (e *enc) str(s string) *enc { e.b = append(append(e.b, s...), 0); return e }

// file is a chunked OTF2 file: records appended to one chunk.
type file struct {
	chunk int
	b     []byte
	n     uint64 // records
}

func newFile(chunk int) *file {
	f := &file{chunk: chunk}
	f.header()
	return f
}

func (f *file) header() {
	f.b = append(f.b, recChunkHeader, littleEndian)
	f.b = binary.LittleEndian.AppendUint64(f.b, 0)
	f.b = binary.LittleEndian.AppendUint64(f.b, 0)
}

// room starts a new chunk when n more bytes (and the end record) would not
// fit the current one: an end-of-chunk record, padding, a header.
func (f *file) room(n int) {
	if len(f.b)%f.chunk+n+1 <= f.chunk {
		return
	}
	f.b = append(f.b, recEndOfChunk)
	for len(f.b)%f.chunk != 0 {
		f.b = append(f.b, 0)
	}
	f.header()
}

// rec appends a record of type t with a length byte.
func (f *file) rec(t uint8, e *enc) *file {
	if len(e.b) >= 0xff {
		panic("long records are not encoded")
	}
	f.room(2 + len(e.b))
	f.b = append(f.b, t, byte(len(e.b)))
	f.b = append(f.b, e.b...)
	f.n++
	return f
}

// single appends a singleton record (no length byte).
func (f *file) single(t uint8, e *enc) *file {
	f.room(1 + len(e.b))
	f.b = append(append(f.b, t), e.b...)
	return f
}

// time appends a timestamp record.
func (f *file) time(t uint64) *file {
	f.room(9 + 16) // a timestamp stays with its record
	f.b = append(f.b, recTimestamp)
	f.b = binary.LittleEndian.AppendUint64(f.b, t)
	return f
}

// bytes ends the file (a last chunk is not padded to its size).
func (f *file) bytes() []byte { return append(f.b, recEndOfFile) }

// writeLocation writes location name's event file evt into dir's traces/,
// with local definitions of nothing: no mapping tables (ids are global),
// no clock offsets.
func writeLocation(t testing.TB, dir, name string, evt []byte) {
	if err := os.WriteFile(filepath.Join(dir, "traces", name+".evt"), evt, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "traces", name+".def"), newFile(256<<10).bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// recorder collects records.
type recorder struct{ add func(uint8, *enc) }

func (r *recorder) rec(t uint8, e *enc) { r.add(t, e) }

// anchor encodes an anchor file of OTF2 version v (anchor format 2).
func anchor(v [3]uint8, chunk uint64, locations, defs uint64) []byte {
	return anchorBy(v, chunk, locations, defs, "hand encoder")
}

// anchorBy is anchor with creator as the writer's name.
func anchorBy(v [3]uint8, chunk uint64, locations, defs uint64, creator string) []byte {
	e := &enc{}
	e.u8(recChunkHeader).u8(littleEndian).str("OTF2").u8(2).u8(2).u8(v[0]).u8(v[1]).u8(v[2])
	e.full(chunk).full(chunk).u8(substratePOSIX).u8(compressionNone).full(locations).full(defs)
	e.str("").str(creator).str("")
	e.b = binary.LittleEndian.AppendUint32(e.b, 0)
	e.full(1)
	return e.b
}

// oldArchive writes, into dir, a 2-process MPI archive whose definitions
// have the layout of OTF2 1.0 to 2.3: Comm without 3.0's flags,
// LocationGroup without its creator, ClockProperties without the realtime
// timestamp, Groups of the pre-1.2 layout, a Region of OTF2 1.0 (a region
// type, no role or paradigm) beside regions of 1.1. Process 0 sends 42
// bytes to process 1 inside MPI_Send, both call MPI_Allreduce, between
// MPI_Init and MPI_Finalize; each calls a compiler-instrumented "solve".
func oldArchive(t testing.TB, dir string) string { return editedArchive(t, dir, nil) }

// defRec is one global definition record of the hand-encoded archive.
type defRec struct {
	t uint8
	e *enc
}

// editedArchive writes oldArchive with its global definitions passed
// through edit (nil: as they are).
func editedArchive(t testing.TB, dir string, edit func([]defRec) []defRec) string {
	return encodedArchive(t, dir, edit, encPlain)
}

// flushArchive writes oldArchive with trace buffer flushes, as Score-P
// records them: a BUFFER_FLUSH record stamped with the time the buffer
// filled, its stop time an attribute, the record that filled it stamped
// alike after it. Rank 0 flushes 2500–2700 inside solve (work) and
// 4500–6000 inside MPI_Allreduce, which its MpiCollectiveEnd at 5500 cuts
// to 4500–5500 (a flush holds no record of its thread); rank 1 flushes
// 3300–3350 inside MPI_Recv, its MpiRecv at 3300 after the flush record.
func flushArchive(t testing.TB, dir string) string { return encodedArchive(t, dir, nil, encFlushes) }

// unnestedArchive writes oldArchive with Enter and Leave records of code
// regions that do not nest, as Score-P writes them when it records another
// thread's I/O calls on a location: inside rank 0's solve, before its
// MPI_Send, a Leave of read, which is not open (2200), then open entered
// and left around read (2100–2500); open entered (2600), read entered
// (2650), open left (2700) while read is open, read left (2800).
func unnestedArchive(t testing.TB, dir string) string {
	return encodedArchive(t, dir, nil, encUnnested)
}

// The variants of encodedArchive.
const (
	encPlain = iota
	encFlushes
	encUnnested
)

// encodedArchive writes oldArchive, its global definitions edited, with
// buffer flushes (flushArchive), code regions out of nesting
// (unnestedArchive) or as it is.
func encodedArchive(t testing.TB, dir string, edit func([]defRec) []defRec, variant int) string {
	flushes := variant == encFlushes
	const chunk = 256 << 10 // OTF2's least
	var recs []defRec
	g := &recorder{add: func(t uint8, e *enc) { recs = append(recs, defRec{t, e}) }}
	g.rec(gdClockProperties, (&enc{}).c(1_000_000_000).c(1000).c(100_000))
	for i, s := range []string{"", "MPI_Init", "MPI_Send", "MPI_Recv", "MPI_Allreduce", "MPI_Finalize", "solve", "node0",
		"rank 0", "rank 1", "master", "MPI_COMM_WORLD", "world", "locs", "old.c", "machine"} {
		g.rec(gdString, (&enc{}).c(uint64(i)).str(s))
	}
	// SystemTreeNode: id, name, class, parent
	g.rec(gdSystemTreeNode, (&enc{}).c(0).c(7).c(15).c(math.MaxUint32))
	// LocationGroup (before 3.0): id, name, type, parent
	for r := uint64(0); r < 2; r++ {
		g.rec(gdLocationGroup, (&enc{}).c(r).c(8+r).u8(lgTypeProcess).c(0))
	}
	// Location: id, name, type, events, group
	for r := uint64(0); r < 2; r++ {
		g.rec(gdLocation, (&enc{}).c(r).c(10).u8(locationTypeCPU).c(0).c(r))
	}
	// Region of OTF2 1.1 and later: id, name, description, type (attic),
	// file, begin, end; then canonical name, role, paradigm, flags
	for id, name := range []uint64{1, 2, 3, 4, 5} {
		g.rec(gdRegion, (&enc{}).c(uint64(id)).c(name).c(0).u8(0).c(14).c(0).c(0).c(name).u8(roleFunction).u8(paradigmMPI).c(0))
	}
	// Region of OTF2 1.0: region type 1 (function), nothing after
	g.rec(gdRegion, (&enc{}).c(5).c(6).c(0).u8(1).c(14).c(7).c(9))
	if variant == encUnnested {
		// regions 6 open and 7 read: Score-P's POSIX I/O wrappers
		g.rec(gdString, (&enc{}).c(16).str("open"))
		g.rec(gdString, (&enc{}).c(17).str("read"))
		for id := uint64(6); id <= 7; id++ {
			g.rec(gdRegion, (&enc{}).c(id).c(id+10).c(0).u8(0).c(14).c(0).c(0).c(id+10).u8(roleFileIO).u8(0).c(0))
		}
	}
	// Group, pre-1.2 layout: id, name, type (6 MPI locations, 4 MPI
	// group), members; no 1.2 attributes
	g.rec(gdGroup, (&enc{}).c(0).c(13).u8(6).c(2).c(0).c(1))
	g.rec(gdGroup, (&enc{}).c(1).c(12).u8(4).c(2).c(0).c(1))
	// Comm before 3.0: id, name, group, parent
	g.rec(gdComm, (&enc{}).c(0).c(11).c(1).c(math.MaxUint32))
	if edit != nil {
		recs = edit(recs)
	}
	gf := newFile(chunk)
	for _, r := range recs {
		gf.rec(r.t, r.e)
	}
	if err := os.WriteFile(filepath.Join(dir, "traces.def"), gf.bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "traces.otf2"), anchor([3]uint8{2, 3, 0}, chunk, 2, gf.n), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
		t.Fatal(err)
	}
	// events: ticks since 1000, so ns since the global offset are the
	// numbers below
	ev := func(r uint64) []byte {
		f := newFile(chunk)
		at := func(ns uint64) *file { return f.time(1000 + ns) }
		enter := func(ns, reg uint64) { at(ns).single(EvEnter, (&enc{}).c(reg)) }
		leave := func(ns, reg uint64) { at(ns).single(EvLeave, (&enc{}).c(reg)) }
		enter(0, 0)
		leave(1000, 0)
		flush := func(ns, stop uint64) {
			if flushes {
				at(ns).rec(EvBufferFlush, (&enc{}).full(1000+stop))
			}
		}
		enter(2000, 5) // solve
		if r == 0 && variant == encUnnested {
			enter(2100, 6)
			leave(2200, 7)
			enter(2300, 7)
			leave(2400, 7)
			leave(2500, 6)
			enter(2600, 6)
			enter(2650, 7)
			leave(2700, 6)
			leave(2800, 7)
		}
		if r == 0 {
			flush(2500, 2700)
			enter(3000, 1)
			// MpiSend: receiver, comm, tag, length
			at(3100).rec(EvMpiSend, (&enc{}).c(1).c(0).c(7).c(42))
			leave(3200, 1)
		} else {
			enter(2500, 2)
			flush(3300, 3350)
			at(3300).rec(EvMpiRecv, (&enc{}).c(0).c(0).c(7).c(42))
			leave(3400, 2)
		}
		enter(4000+r*1000, 3)
		at(4000+r*1000).rec(EvMpiCollectiveBegin, &enc{})
		if r == 0 {
			flush(4500, 6000)
		}
		// MpiCollectiveEnd: op (11 allreduce), comm, root, sent, received
		at(5500).rec(EvMpiCollectiveEnd, (&enc{}).u8(11).c(0).c(math.MaxUint32).c(8).c(8))
		leave(5600, 3)
		leave(6000, 5)
		enter(7000, 4)
		leave(8000, 4)
		return f.bytes()
	}
	for r := uint64(0); r < 2; r++ {
		writeLocation(t, dir, []string{"0", "1"}[r], ev(r))
	}
	return filepath.Join(dir, "traces.otf2")
}

// legacyOpenMPArchive writes, into dir, one process of two threads as OTF2
// 1.0/1.1 recorded OpenMP: OmpFork and OmpJoin on the master, the parallel
// region's Enter and Leave on each thread (its implicit task: there is no
// ThreadTeamBegin), an implicit barrier (a 1.0 region type), and a task
// created and run by OmpTaskCreate, OmpTaskSwitch and OmpTaskComplete.
// Timeline (ns since the global offset):
//
//	master: fork 1000, region 1000–9000 (work to 5000, barrier 5000–9000), join 9100
//	worker: region 1100–9000: creates task 77 at 2000, runs it 2000–4000,
//	        works to 8900, barrier 8900–9000
//
// With modern set, the same timeline is written as OTF2 1.2 and later
// record it: ThreadFork/ThreadJoin, ThreadTeamBegin/End on a thread-team
// communicator, ThreadTaskCreate/Switch/Complete, regions with roles.
func legacyOpenMPArchive(t testing.TB, dir string, modern bool) string {
	const chunk = 256 << 10
	g := newFile(chunk)
	g.rec(gdClockProperties, (&enc{}).c(1_000_000_000).c(0).c(10_000))
	for i, s := range []string{"", "!$omp parallel @omp.c:5", "!$omp ibarrier @omp.c:9", "!$omp task @omp.c:7",
		"node", "process", "master", "worker", "omp.c", "machine"} {
		g.rec(gdString, (&enc{}).c(uint64(i)).str(s))
	}
	g.rec(gdSystemTreeNode, (&enc{}).c(0).c(4).c(9).c(math.MaxUint32))
	g.rec(gdLocationGroup, (&enc{}).c(0).c(5).u8(lgTypeProcess).c(0))
	g.rec(gdLocation, (&enc{}).c(0).c(6).u8(locationTypeCPU).c(0).c(0))
	g.rec(gdLocation, (&enc{}).c(1).c(7).u8(locationTypeCPU).c(0).c(0))
	if modern {
		lines := []uint64{5, 9, 7}
		for i, role := range []uint8{roleParallel, roleImplicitBarrier, roleTask} {
			g.rec(gdRegion, (&enc{}).c(uint64(i)).c(uint64(i+1)).c(0).u8(0).c(8).c(lines[i]).c(lines[i]).
				c(uint64(i+1)).u8(role).u8(paradigmOpenMP).c(0))
		}
		// the thread team: OpenMP's locations, the team's group of them,
		// its communicator
		g.rec(gdGroup, (&enc{}).c(0).c(0).u8(0).c(2).c(0).c(1).u8(groupTypeCommLocs).u8(paradigmOpenMP).c(0))
		g.rec(gdGroup, (&enc{}).c(1).c(0).u8(0).c(2).c(0).c(1).u8(groupTypeCommGroup).u8(paradigmOpenMP).c(0))
		g.rec(gdComm, (&enc{}).c(0).c(0).c(1).c(math.MaxUint32).c(0))
	} else {
		// Regions of OTF2 1.0: id, name, description, region type, file,
		// begin, end (types 5 OMP parallel, 15 OMP implicit barrier, 20
		// OMP task)
		g.rec(gdRegion, (&enc{}).c(0).c(1).c(0).u8(5).c(8).c(5).c(5))
		g.rec(gdRegion, (&enc{}).c(1).c(2).c(0).u8(15).c(8).c(9).c(9))
		g.rec(gdRegion, (&enc{}).c(2).c(3).c(0).u8(20).c(8).c(7).c(7))
	}
	if err := os.WriteFile(filepath.Join(dir, "traces.def"), g.bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "traces.otf2"), anchor([3]uint8{1, 1, 0}, chunk, 2, g.n), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
		t.Fatal(err)
	}
	task := (&enc{}).c(0).c(1).c(1) // team, creating thread, generation
	m := newFile(chunk)
	if modern {
		m.time(1000).rec(EvThreadFork, (&enc{}).u8(paradigmOpenMP).c(2))
		m.time(1000).rec(EvThreadTeamBegin, (&enc{}).c(0))
	} else {
		m.time(1000).single(EvOmpFork, (&enc{}).c(2))
	}
	m.time(1000).single(EvEnter, (&enc{}).c(0))
	m.time(5000).single(EvEnter, (&enc{}).c(1))
	m.time(9000).single(EvLeave, (&enc{}).c(1))
	m.time(9000).single(EvLeave, (&enc{}).c(0))
	if modern {
		m.time(9000).rec(EvThreadTeamEnd, (&enc{}).c(0))
		m.time(9100).rec(EvThreadJoin, (&enc{}).u8(paradigmOpenMP))
	} else {
		m.time(9100).rec(EvOmpJoin, &enc{})
	}
	w := newFile(chunk)
	if modern {
		w.time(1100).rec(EvThreadTeamBegin, (&enc{}).c(0))
	}
	w.time(1100).single(EvEnter, (&enc{}).c(0))
	if modern {
		w.time(2000).rec(EvThreadTaskCreate, task)
		w.time(2000).rec(EvThreadTaskSwitch, task)
	} else {
		w.time(2000).single(EvOmpTaskCreate, (&enc{}).c(77))
		w.time(2000).single(EvOmpTaskSwitch, (&enc{}).c(77))
	}
	w.time(2000).single(EvEnter, (&enc{}).c(2))
	w.time(4000).single(EvLeave, (&enc{}).c(2))
	if modern {
		w.time(4000).rec(EvThreadTaskComplete, task)
	} else {
		w.time(4000).single(EvOmpTaskComplete, (&enc{}).c(77))
	}
	w.time(8900).single(EvEnter, (&enc{}).c(1))
	w.time(9000).single(EvLeave, (&enc{}).c(1))
	w.time(9000).single(EvLeave, (&enc{}).c(0))
	if modern {
		w.time(9000).rec(EvThreadTeamEnd, (&enc{}).c(0))
	}
	for name, f := range map[string]*file{"0": m, "1": w} {
		writeLocation(t, dir, name, f.bytes())
	}
	return filepath.Join(dir, "traces.otf2")
}

// pthreadArchive is oldArchive with a second CPU location in process 0
// that joins no OpenMP team (a pthread): it runs "solve" from 1500 to 2500.
func pthreadArchive(t testing.TB, dir string) string {
	anchor := editedArchive(t, dir, func(recs []defRec) []defRec {
		return append(recs, defRec{gdLocation, (&enc{}).c(2).c(10).u8(locationTypeCPU).c(0).c(0)})
	})
	f := newFile(256 << 10)
	f.time(1000+1500).single(EvEnter, (&enc{}).c(5))
	f.time(1000+2500).single(EvLeave, (&enc{}).c(5))
	writeLocation(t, dir, "2", f.bytes())
	return anchor
}

// contextArchive is oldArchive recorded as Score-P records it with
// unwinding (SCOREP_ENABLE_UNWINDING): CallingContextEnter and
// CallingContextLeave records of calling-context nodes instead of Enter and
// Leave, the unwound frames "main" and "solve" regions of the SAMPLING
// paradigm on the nodes' paths. As Score-P does, a region's leave names
// another node than its enter (the same region at another instruction) and
// main is a different root node at each call site. Rank 1's event file
// names the nodes by local ids (a mapping table in its local definitions);
// rank 0 has a CallingContextSample, which only the notes count. With bad,
// rank 0 also records an undefined node, OTF2's undefined reference
// (an enter and a leave of it) and a node whose parent chain is a loop
// (two warnings: undefined nodes, the loop).
//
// Rank 0 (ns): main and MPI_Init 0–1000, solve and MPI_Send 3000–3200 (the
// send at 3100), MPI_Allreduce 4000–5600, solve left at MPI_Finalize's
// entry 7000, MPI_Finalize 7000–8000, main closed with the file at 8000.
// Rank 1 the same with MPI_Recv 2500–3400 (the receive at 3300) and
// MPI_Allreduce from 5000.
func contextArchive(t testing.TB, dir string, bad bool) string {
	const chunk = 256 << 10
	const paradigmSampling = 21
	anchor := editedArchive(t, dir, func(recs []defRec) []defRec {
		recs = append(recs, defRec{gdString, (&enc{}).c(16).str("main")})
		// a region of the unwound frames: id, name, description, type,
		// file, begin, end, canonical name, role, paradigm, flags
		recs = append(recs, defRec{gdRegion, (&enc{}).c(6).c(16).c(0).u8(0).c(14).c(1).c(9).c(16).u8(roleFunction).u8(paradigmSampling).c(0)})
		// a runtime frame between main and solve: no source file
		recs = append(recs, defRec{gdString, (&enc{}).c(17).str("GOMP_parallel")})
		recs = append(recs, defRec{gdRegion, (&enc{}).c(7).c(17).c(0).u8(0).c(math.MaxUint32).c(0).c(0).c(17).u8(roleFunction).u8(paradigmSampling).c(0)})
		// CallingContext: id, region, source code location, parent
		for _, n := range [][3]uint64{
			{0, 6, math.MaxUint32}, // main at MPI_Init's call
			{1, 0, 0},              // MPI_Init
			{2, 6, math.MaxUint32}, // main at solve's call
			{3, 5, 12},             // solve, called through the runtime frame
			{4, 1, 3},              // MPI_Send
			{5, 2, 3},              // MPI_Recv
			{6, 3, 3},              // MPI_Allreduce, entered
			{7, 3, 3},              // MPI_Allreduce, left
			{8, 4, 9},              // MPI_Finalize
			{9, 6, math.MaxUint32}, // main at MPI_Finalize's call
			{10, 0, 11},            // a loop: 10 → 11 → 10
			{11, 6, 10},
			{12, 7, 2}, // GOMP_parallel under main
		} {
			recs = append(recs, defRec{gdCallingContext, (&enc{}).c(n[0]).c(n[1]).c(math.MaxUint32).c(n[2])})
		}
		return recs
	})
	ev := func(r uint64) []byte {
		local := func(g uint64) uint64 { return g }
		if r == 1 {
			local = func(g uint64) uint64 { return 11 - g } // the mapping table below
		}
		f := newFile(chunk)
		at := func(ns uint64) *file { return f.time(1000 + ns) }
		enter := func(ns, ctx, d uint64) { at(ns).rec(EvCallingContextEnter, (&enc{}).c(local(ctx)).c(d)) }
		leave := func(ns, ctx uint64) { at(ns).rec(EvCallingContextLeave, (&enc{}).c(local(ctx))) }
		enter(0, 1, 3) // main and MPI_Init new, the root made progress
		leave(1000, 1)
		if r == 0 {
			enter(3000, 4, 3) // solve and MPI_Send new, main ran on
			at(3100).rec(EvMpiSend, (&enc{}).c(1).c(0).c(7).c(42))
			leave(3200, 4)
			if bad {
				enter(3300, 42, 2)
				enter(3400, 10, 2)
				// OTF2_UNDEFINED_CALLING_CONTEXT: no node, no path
				enter(3450, math.MaxUint32, 2)
				leave(3460, math.MaxUint32)
			}
		} else {
			enter(2500, 5, 3)
			at(3300).rec(EvMpiRecv, (&enc{}).c(0).c(0).c(7).c(42))
			leave(3400, 5)
		}
		enter(4000+r*1000, 6, 2) // MPI_Allreduce new, solve ran on
		at(4000+r*1000).rec(EvMpiCollectiveBegin, &enc{})
		at(5500).rec(EvMpiCollectiveEnd, (&enc{}).u8(11).c(0).c(math.MaxUint32).c(8).c(8))
		leave(5600, 7)
		if r == 0 {
			// CallingContextSample: node, unwind distance, interrupt generator
			at(5800).rec(68, (&enc{}).c(3).c(1).c(0))
		}
		enter(7000, 8, 2) // MPI_Finalize new under main: solve was left
		leave(8000, 8)
		return f.bytes()
	}
	for r := uint64(0); r < 2; r++ {
		name := []string{"0", "1"}[r]
		if err := os.WriteFile(filepath.Join(dir, "traces", name+".evt"), ev(r), 0o644); err != nil {
			t.Fatal(err)
		}
		ld := newFile(chunk)
		if r == 1 {
			// MappingTable: type (10 calling context), size, mode (0:
			// dense), the global id of each local id
			m := (&enc{}).u8(mapCallingContext).c(12).u8(0)
			for l := uint64(0); l < 12; l++ {
				m.c(11 - l)
			}
			ld.rec(ldMappingTable, m)
		}
		if err := os.WriteFile(filepath.Join(dir, "traces", name+".def"), ld.bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return anchor
}

// userThreadArchive writes, into dir, one process as Score-P's pthread
// adapter records it with SCOREP_THREAD_EXPERIMENTAL_REUSE: the master
// (location 0) creates a thread and joins it, twice; both threads run on
// location 1, which holds two ThreadBegin … ThreadEnd spans; the second
// joins a thread itself. pthread_create and pthread_join are regions of
// the pthread paradigm (roles THREAD_CREATE and THREAD_WAIT) around
// ThreadCreate and ThreadWait. Timeline (ns since the global offset):
//
//	master:     main 0–5000: create 100–200, join 300–2000, create
//	            2100–2200, join 2300–4000
//	location 1: thread 1 250–1850 (leaf 260–1800), thread 2 2250–3950
//	            (leaf 2260–3900, join 3000–3500)
//
// With bad, the master also leaves pthread_join at 4500 without entering
// it, and thread 1 enters pthread_join at 1820 and ends without leaving it.
func userThreadArchive(t testing.TB, dir string, bad bool) string {
	const chunk = 256 << 10
	const roleThreadCreate, paradigmPthread = 32, 7
	g := newFile(chunk)
	g.rec(gdClockProperties, (&enc{}).c(1_000_000_000).c(0).c(10_000))
	for i, s := range []string{"", "pthread_create", "pthread_join", "main", "leaf", "PTHREAD", "app.c",
		"node", "process", "Master thread", "Pthread thread 1", "machine"} {
		g.rec(gdString, (&enc{}).c(uint64(i)).str(s))
	}
	g.rec(gdSystemTreeNode, (&enc{}).c(0).c(7).c(11).c(math.MaxUint32))
	g.rec(gdLocationGroup, (&enc{}).c(0).c(8).u8(lgTypeProcess).c(0))
	g.rec(gdLocation, (&enc{}).c(0).c(9).u8(locationTypeCPU).c(0).c(0))
	g.rec(gdLocation, (&enc{}).c(1).c(10).u8(locationTypeCPU).c(0).c(0))
	// Region: id, name, description, type (attic), file, begin, end,
	// canonical name, role, paradigm, flags
	for _, r := range []struct {
		name, file, line uint64
		role, paradigm   uint8
	}{{1, 5, 0, roleThreadCreate, paradigmPthread}, {2, 5, 0, roleThreadWait, paradigmPthread},
		{3, 6, 10, roleFunction, paradigmCompiler}, {4, 6, 3, roleFunction, paradigmCompiler}} {
		g.rec(gdRegion, (&enc{}).c(r.name-1).c(r.name).c(0).u8(0).c(r.file).c(r.line).c(0).c(r.name).u8(r.role).u8(r.paradigm).c(0))
	}
	if err := os.WriteFile(filepath.Join(dir, "traces.def"), g.bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "traces.otf2"), anchor([3]uint8{3, 0, 3}, chunk, 2, g.n), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
		t.Fatal(err)
	}
	const create, join, main, leaf = 0, 1, 2, 3
	thread := func(seq uint64) *enc { return (&enc{}).c(0).c(seq) } // contingent, sequence count
	m := newFile(chunk)
	m.time(0).single(EvEnter, (&enc{}).c(main))
	for k, at := range []uint64{100, 2100} {
		end := []uint64{2000, 4000}[k]
		m.time(at).single(EvEnter, (&enc{}).c(create))
		m.time(at+10).rec(EvThreadCreate, thread(uint64(k+1)))
		m.time(at+100).single(EvLeave, (&enc{}).c(create))
		m.time(at+200).single(EvEnter, (&enc{}).c(join))
		m.time(end-100).rec(EvThreadWait, thread(uint64(k+1)))
		m.time(end).single(EvLeave, (&enc{}).c(join))
	}
	if bad {
		m.time(4500).single(EvLeave, (&enc{}).c(join))
	}
	m.time(5000).single(EvLeave, (&enc{}).c(main))
	w := newFile(chunk)
	w.time(250).rec(EvThreadBegin, thread(1))
	w.time(260).single(EvEnter, (&enc{}).c(leaf))
	w.time(1800).single(EvLeave, (&enc{}).c(leaf))
	if bad {
		w.time(1820).single(EvEnter, (&enc{}).c(join))
	}
	w.time(1850).rec(EvThreadEnd, thread(1))
	w.time(2250).rec(EvThreadBegin, thread(2))
	w.time(2260).single(EvEnter, (&enc{}).c(leaf))
	w.time(3000).single(EvEnter, (&enc{}).c(join))
	w.time(3400).rec(EvThreadWait, thread(3))
	w.time(3500).single(EvLeave, (&enc{}).c(join))
	w.time(3900).single(EvLeave, (&enc{}).c(leaf))
	w.time(3950).rec(EvThreadEnd, thread(2))
	for name, f := range map[string]*file{"0": m, "1": w} {
		writeLocation(t, dir, name, f.bytes())
	}
	return filepath.Join(dir, "traces.otf2")
}

// pthreadSyncArchive writes, into dir, one process as Score-P's pthread
// adapter records mutexes and condition variables: pthread_mutex_lock,
// pthread_mutex_trylock, pthread_mutex_unlock and pthread_cond_wait regions
// (role WRAPPER, paradigm pthread) around ThreadAcquireLock and
// ThreadReleaseLock records (paradigm pthread, lock id, acquisition
// order); and an OpenMP lock of the same id 0. Timeline (ns):
//
//	master:   main 0–3100: create 100–200 (thread 1); lock 300–320
//	          (acquires lock 0 at 310); OpenMP lock 0 acquired 400,
//	          released 450; cond_wait 500–1510 (releases lock 0 at 510,
//	          reacquires it at 1500); unlock 1600–1620 (1610); a trylock
//	          that fails 1700–1720; a trylock 1800–1820 that acquires lock
//	          1 at 1810; lock 1830–1850 taking lock 1 again (1840, a
//	          recursive mutex); unlocks 1900–1920 (1910), 2000–2020 (2010);
//	          join 2100–3000
//	thread 1: 250–2850, leaf 260–2800: lock 400–1010 (acquires lock 0 at
//	          1000), signal 1100–1110, unlock 1200–1220 (1210)
//
// With bad, the thread also leaves pthread_cond_wait at 1300 without
// entering it and enters it at 2500 without leaving it, and the master
// enters and leaves it inside its join (2200–2300).
func pthreadSyncArchive(t testing.TB, dir string, bad bool) string {
	const chunk = 256 << 10
	const roleThreadCreate, paradigmPthread = 32, 7
	g := newFile(chunk)
	g.rec(gdClockProperties, (&enc{}).c(1_000_000_000).c(0).c(10_000))
	strs := []string{"", "pthread_create", "pthread_join", "main", "leaf", "pthread_mutex_lock", "pthread_mutex_trylock",
		"pthread_mutex_unlock", "pthread_cond_wait", "pthread_cond_signal", "PTHREAD", "app.c",
		"node", "process", "Master thread", "Pthread thread 1", "machine"}
	for i, s := range strs {
		g.rec(gdString, (&enc{}).c(uint64(i)).str(s))
	}
	g.rec(gdSystemTreeNode, (&enc{}).c(0).c(12).c(16).c(math.MaxUint32))
	g.rec(gdLocationGroup, (&enc{}).c(0).c(13).u8(lgTypeProcess).c(0))
	g.rec(gdLocation, (&enc{}).c(0).c(14).u8(locationTypeCPU).c(0).c(0))
	g.rec(gdLocation, (&enc{}).c(1).c(15).u8(locationTypeCPU).c(0).c(0))
	// Region: id, name, description, type (attic), file, begin, end,
	// canonical name, role, paradigm, flags; region k is named by string
	// k + 1
	for k, r := range []struct {
		file, line     uint64
		role, paradigm uint8
	}{{10, 0, roleThreadCreate, paradigmPthread}, {10, 0, roleThreadWait, paradigmPthread},
		{11, 10, roleFunction, paradigmCompiler}, {11, 3, roleFunction, paradigmCompiler},
		{10, 0, roleWrapper, paradigmPthread}, {10, 0, roleWrapper, paradigmPthread}, {10, 0, roleWrapper, paradigmPthread},
		{10, 0, roleWrapper, paradigmPthread}, {10, 0, roleWrapper, paradigmPthread}} {
		name := uint64(k + 1)
		g.rec(gdRegion, (&enc{}).c(uint64(k)).c(name).c(0).u8(0).c(r.file).c(r.line).c(0).c(name).u8(r.role).u8(r.paradigm).c(0))
	}
	if err := os.WriteFile(filepath.Join(dir, "traces.def"), g.bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "traces.otf2"), anchor([3]uint8{3, 0, 3}, chunk, 2, g.n), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
		t.Fatal(err)
	}
	const create, join, main, leaf, lock, trylock, unlock, condWait, signal = 0, 1, 2, 3, 4, 5, 6, 7, 8
	thread := func(seq uint64) *enc { return (&enc{}).c(0).c(seq) } // contingent, sequence count
	acq := func(f *file, at uint64, paradigm uint8, id, order uint64) {
		f.time(at).rec(EvThreadAcquireLock, (&enc{}).u8(paradigm).c(id).c(order))
	}
	rel := func(f *file, at uint64, paradigm uint8, id, order uint64) {
		f.time(at).rec(EvThreadReleaseLock, (&enc{}).u8(paradigm).c(id).c(order))
	}
	region := func(f *file, r, from, to uint64, inside func()) {
		f.time(from).single(EvEnter, (&enc{}).c(r))
		if inside != nil {
			inside()
		}
		f.time(to).single(EvLeave, (&enc{}).c(r))
	}
	m := newFile(chunk)
	m.time(0).single(EvEnter, (&enc{}).c(main))
	region(m, create, 100, 200, func() { m.time(110).rec(EvThreadCreate, thread(1)) })
	region(m, lock, 300, 320, func() { acq(m, 310, paradigmPthread, 0, 1) })
	acq(m, 400, paradigmOpenMP, 0, 1)
	rel(m, 450, paradigmOpenMP, 0, 1)
	region(m, condWait, 500, 1510, func() { rel(m, 510, paradigmPthread, 0, 1); acq(m, 1500, paradigmPthread, 0, 3) })
	region(m, unlock, 1600, 1620, func() { rel(m, 1610, paradigmPthread, 0, 3) })
	region(m, trylock, 1700, 1720, nil)
	region(m, trylock, 1800, 1820, func() { acq(m, 1810, paradigmPthread, 1, 1) })
	region(m, lock, 1830, 1850, func() { acq(m, 1840, paradigmPthread, 1, 1) })
	region(m, unlock, 1900, 1920, func() { rel(m, 1910, paradigmPthread, 1, 1) })
	region(m, unlock, 2000, 2020, func() { rel(m, 2010, paradigmPthread, 1, 1) })
	region(m, join, 2100, 3000, func() {
		if bad {
			region(m, condWait, 2200, 2300, nil)
		}
		m.time(2900).rec(EvThreadWait, thread(1))
	})
	m.time(3100).single(EvLeave, (&enc{}).c(main))
	w := newFile(chunk)
	w.time(250).rec(EvThreadBegin, thread(1))
	w.time(260).single(EvEnter, (&enc{}).c(leaf))
	region(w, lock, 400, 1010, func() { acq(w, 1000, paradigmPthread, 0, 2) })
	region(w, signal, 1100, 1110, nil)
	region(w, unlock, 1200, 1220, func() { rel(w, 1210, paradigmPthread, 0, 2) })
	if bad {
		w.time(1300).single(EvLeave, (&enc{}).c(condWait))
		w.time(2500).single(EvEnter, (&enc{}).c(condWait))
	} else {
		w.time(2800).single(EvLeave, (&enc{}).c(leaf))
	}
	w.time(2850).rec(EvThreadEnd, thread(1))
	for name, f := range map[string]*file{"0": m, "1": w} {
		writeLocation(t, dir, name, f.bytes())
	}
	return filepath.Join(dir, "traces.otf2")
}

// apexArchive writes, into dir, one process as APEX 1.2 (the HPX runtime's
// tracer, OTF2 2.1.1) records it: location 0 (the main thread) without a
// record, locations 1 and 2 HPX worker threads whose every task is an
// Enter and Leave of a region of role TASK, paradigm USER, with a GUID and
// a parent GUID attribute; no OpenMP, ThreadBegin or thread-creation
// record; every location's event count the number of regions (3); a task
// renamed while it ran entered as "/phylanx/x::eval" and left as
// "eval_action" (the same GUID). Timeline (ns):
//
//	worker 1: run_helper 1000–3000, eval 4000–6000 (renamed), run_helper 10000–11000
//	worker 2: eval_action 2000–2500, eval 5000–9000 (renamed), run_helper 9500–12000
//
// With functions, the regions have role FUNCTION: the threads are no task
// runtime's workers.
func apexArchive(t testing.TB, dir string, functions bool) string {
	const chunk = 1 << 20 // APEX's
	const typeUint64 = 4  // OTF2_TYPE_UINT64
	role := uint8(roleTask)
	if functions {
		role = roleFunction
	}
	g := newFile(chunk)
	for i, s := range []string{"", "run_helper", "eval_action", "/phylanx/x::eval", "GUID", "Globaly unique identifier",
		"Parent GUID", "Globaly unique identifier of the parent task", "node", "geev", "process 1", "thread 0", "thread 1", "thread 2"} {
		g.rec(gdString, (&enc{}).c(uint64(i)).str(s))
	}
	// Attribute (1.4): id, name, type, description
	g.rec(gdAttribute, (&enc{}).c(0).c(4).u8(typeUint64).c(5))
	g.rec(gdAttribute, (&enc{}).c(1).c(6).u8(typeUint64).c(7))
	// Region: id, name, description, type (attic), file, begin, end,
	// canonical name, role, paradigm, flags
	for id := uint64(0); id < 3; id++ {
		g.rec(gdRegion, (&enc{}).c(id).c(id+1).c(0).u8(0).c(0).c(0).c(0).c(0).u8(role).u8(paradigmUser).c(0))
	}
	g.rec(gdClockProperties, (&enc{}).c(1_000_000_000).c(0).c(20_000))
	g.rec(gdSystemTreeNode, (&enc{}).c(0).c(9).c(8).c(math.MaxUint32))
	// LocationGroup before 3.0: id, name, type, parent
	g.rec(gdLocationGroup, (&enc{}).c(0).c(10).u8(lgTypeProcess).c(0))
	// Location: id, name, type, events (APEX: the number of regions), group
	for l := uint64(0); l < 3; l++ {
		g.rec(gdLocation, (&enc{}).c(l).c(11+l).u8(locationTypeCPU).c(3).c(0))
	}
	if err := os.WriteFile(filepath.Join(dir, "APEX.def"), g.bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "APEX.otf2"), anchorBy([3]uint8{2, 1, 1}, chunk, 3, g.n, "APEX version 1.2.0-test"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "APEX"), 0o755); err != nil {
		t.Fatal(err)
	}
	const helper, action, eval = 0, 1, 2
	type rec struct {
		at          uint64
		enter       bool
		region      uint64
		guid, paren uint64
	}
	workers := [][]rec{
		{{1000, true, helper, 1, 0}, {3000, false, helper, 1, 0}, {4000, true, eval, 10, 1}, {6000, false, action, 10, 1},
			{10000, true, helper, 1, 0}, {11000, false, helper, 1, 0}},
		{{2000, true, action, 20, 1}, {2500, false, action, 20, 1}, {5000, true, eval, 21, 20}, {9000, false, action, 21, 20},
			{9500, true, helper, 1, 0}, {12000, false, helper, 1, 0}},
	}
	for l := 0; l < 3; l++ {
		f := newFile(chunk)
		if l > 0 {
			for _, r := range workers[l-1] {
				f.time(r.at)
				// attribute list: count, then id, type, value of each
				f.rec(recAttrList, (&enc{}).c(2).c(0).u8(typeUint64).c(r.guid).c(1).u8(typeUint64).c(r.paren))
				k := uint8(EvLeave)
				if r.enter {
					k = EvEnter
				}
				f.single(k, (&enc{}).c(r.region))
			}
		}
		name := strconv.Itoa(l)
		if err := os.WriteFile(filepath.Join(dir, "APEX", name+".evt"), f.bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "APEX", name+".def"), newFile(chunk).bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "APEX.otf2")
}

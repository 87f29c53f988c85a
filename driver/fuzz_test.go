package driver_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/trace"
)

// Structure-aware fuzzing of the whole analysis (issue 16, item 9). Byte
// mutations of a trace mostly die at a checksum or in the decoder; this
// target instead decodes small valid traces once, applies a program of value
// mutations read from the fuzz input (times, ids and other arguments,
// thread indices, dependence lists, communicator members, header counts and
// run ids, deleted and duplicated events), writes the result as a valid
// trace (correct checksums and encoding) and runs the whole pipeline on it
// in-process. Any error is fine; a panic, a hang or an allocation beyond the
// memory limit is a failure.

// fuzzProc is one decoded process file.
type fuzzProc = trace.Rows

var fuzzBase struct {
	once   sync.Once
	traces [][]fuzzProc
	err    error
	// dirs are where each base's mutants are written, one directory per
	// base reused from execution to execution (on tmpfs when the machine
	// has one): a directory made and removed per execution, on a loaded
	// disk, was most of an execution's time.
	dirs []string
}

// fuzzTraces generates and decodes the base traces (once per process).
// withFlushes returns a copy of procs with a flush_begin … flush_end pair
// inside every fifth gap between two events of a thread.
func withFlushes(procs []fuzzProc) []fuzzProc {
	out := make([]fuzzProc, len(procs))
	for i, p := range procs {
		q := clone(&p)
		for th, evs := range q.Events {
			var row []trace.Event
			for j, e := range evs {
				row = append(row, e)
				if j+1 < len(evs) && j%5 == 4 {
					if dt := evs[j+1].Time - e.Time; dt >= 4 {
						row = append(row, trace.Event{Time: e.Time + dt/4, Kind: trace.FlushBegin}, trace.Event{Time: e.Time + dt/2, Kind: trace.FlushEnd})
					}
				}
			}
			q.Events[th] = row
		}
		out[i] = q
	}
	return out
}

// withNonblocking returns a copy of procs whose coll_begin … coll_end
// pairs are coll_start … coll_complete pairs, each under a request of its
// own.
func withNonblocking(procs []fuzzProc) []fuzzProc {
	out := make([]fuzzProc, len(procs))
	for i, p := range procs {
		q := clone(&p)
		for th, evs := range q.Events {
			var seq int64
			var begin trace.Event
			for j := range evs {
				e := &evs[j]
				switch e.Kind {
				case trace.CollBegin:
					seq++
					begin = *e
					e.Kind, e.Args[4] = trace.CollStart, trace.MakeID(th, seq)
				case trace.CollEnd:
					e.Kind = trace.CollComplete
					e.Args[3], e.Args[4] = begin.Args[4], trace.MakeID(th, seq)
				}
			}
		}
		out[i] = q
	}
	return out
}

func fuzzTraces() ([][]fuzzProc, error) {
	fuzzBase.once.Do(func() {
		tmp, err := os.MkdirTemp("", "ptrace-fuzz-base")
		if err != nil {
			fuzzBase.err = err
			return
		}
		defer os.RemoveAll(tmp)
		for i, cfg := range []gen.Config{
			{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 3, ChunkEvents: 64},
			{Workload: "stencil", Ranks: 2, Threads: 2, Width: 6, Steps: 4, ChunkEvents: 64},
			{Workload: "halo", Ranks: 3, Threads: 2, Iterations: 2, Exchange: "allreduce"},
		} {
			dir := filepath.Join(tmp, string(rune('a'+i)))
			if _, err := gen.Generate(dir, cfg); err != nil {
				fuzzBase.err = err
				return
			}
			var procs []fuzzProc
			for r := 0; r < cfg.Ranks; r++ {
				p, err := decodeFile(filepath.Join(dir, trace.FileName(r)))
				if err != nil {
					fuzzBase.err = err
					return
				}
				procs = append(procs, p)
			}
			fuzzBase.traces = append(fuzzBase.traces, procs)
		}
		// A recorded trace of the program's own threads and their waits
		// (testdata/userthreads/README.md), which gen does not make.
		recorded := func(name string, ranks int) []fuzzProc {
			var procs []fuzzProc
			for r := range ranks {
				p, err := decodeFile(filepath.Join("testdata", name, trace.FileName(r)))
				if err != nil {
					fuzzBase.err = err
					return nil
				}
				procs = append(procs, p)
			}
			return procs
		}
		fuzzBase.traces = append(fuzzBase.traces, recorded("userthreads", 2))
		// The first base with the tracer's buffer flushes (sim/flush.go),
		// which gen does not write.
		fuzzBase.traces = append(fuzzBase.traces, withFlushes(fuzzBase.traces[0]))
		// The allreduce halo with its collectives nonblocking
		// (coll_start … coll_complete by request), which gen does not
		// write.
		fuzzBase.traces = append(fuzzBase.traces, withNonblocking(fuzzBase.traces[2]))
		// Recorded traces of a window's general active target
		// synchronisation (the reserved tags −4/−5) and of MPI 4.0's
		// persistent collectives (entries of their own): testdata/pscw
		// and testdata/pcoll, README.md.
		fuzzBase.traces = append(fuzzBase.traces, recorded("pscw", 4), recorded("pcoll", 2))
		// A receiver polling MPI_Test (mpi_polled): testdata/polled.
		fuzzBase.traces = append(fuzzBase.traces, recorded("polled", 2))
		if fuzzBase.err != nil {
			return
		}
		root := os.TempDir()
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			root = "/dev/shm"
		}
		removeStaleFuzzDirs(root)
		for range fuzzBase.traces {
			d, err := os.MkdirTemp(root, fmt.Sprintf("ptrace-fuzz-%d-", os.Getpid()))
			if err != nil {
				fuzzBase.err = err
				return
			}
			fuzzBase.dirs = append(fuzzBase.dirs, d)
		}
	})
	return fuzzBase.traces, fuzzBase.err
}

// removeFuzzDirs removes the mutants' directories (TestMain, after the
// run; a fuzzing worker killed at the end leaves its own behind in the
// temporary directory).
func removeFuzzDirs() {
	for _, d := range fuzzBase.dirs {
		os.RemoveAll(d)
	}
}

// decodeFile reads a process file as rows.
func decodeFile(path string) (fuzzProc, error) {
	r, err := trace.ReadRows(path)
	if err != nil {
		return fuzzProc{}, err
	}
	return *r, nil
}

// clone deep-copies the parts of p mutations touch.
func clone(p *fuzzProc) fuzzProc {
	q := *p
	q.Events = make([][]trace.Event, len(p.Events))
	q.Deps = make([][]trace.Dep, len(p.Deps))
	for t := range p.Events {
		q.Events[t] = append([]trace.Event(nil), p.Events[t]...)
		q.Deps[t] = append([]trace.Dep(nil), p.Deps[t]...)
	}
	q.Tables.Comms = make([]trace.Communicator, len(p.Tables.Comms))
	for i, c := range p.Tables.Comms {
		c.Members = append([]int(nil), c.Members...)
		if c.Runs != nil {
			c.Runs = append(trace.RankRuns(nil), c.Runs...)
		}
		q.Tables.Comms[i] = c
	}
	return q
}

// extremes are values that break careless arithmetic and sizing.
var extremes = []int64{0, -1, 1, 2, math.MaxInt64, math.MinInt64, 1 << 30, 1<<40 | 1<<30, 1<<56 | 1, 65535, 65536, 1 << 24, -1 << 40, math.MaxInt32}

const fuzzRecord = 12 // op, a, index (2 bytes), value (8 bytes)

// fuzzHugeIDs lets mutations give task and region ids sequence numbers
// beyond 2^20. The OpenMP model bounds its task table by the events of the
// id's thread (issue 16, item 1), so such ids cost nothing; the input
// "\x01\x89\x00\xff\xf2\x01\x01\x01\x01\x01\x01\x01\r", which took
// 13 s and 422 MB before, is in the seed corpus.
const fuzzHugeIDs = true

// idKinds are the kinds whose arguments carry task or region ids.
var idKinds = map[trace.Kind]bool{
	trace.ParallelBegin: true, trace.ParallelEnd: true, trace.ImplicitTaskBegin: true, trace.ImplicitTaskEnd: true,
	trace.TaskCreate: true, trace.TaskDeps: true, trace.TaskDependence: true, trace.TaskSchedule: true,
	trace.SyncBegin: true, trace.SyncEnd: true, trace.SyncWaitBegin: true, trace.SyncWaitEnd: true,
	trace.DetachFulfill: true, trace.Cancel: true, trace.TaskAttr: true, trace.RemoteDepOut: true, trace.RemoteDepIn: true,
}

// tameID keeps an id argument's sequence below 2^20 unless fuzzHugeIDs.
func tameID(k trace.Kind, v int64) int64 {
	if fuzzHugeIDs || !idKinds[k] || v <= 0 || trace.IDSeq(v) < 1<<20 {
		return v
	}
	return trace.MakeID(trace.IDThread(v)%trace.MaxThreads, trace.IDSeq(v)%(1<<20))
}

// mutate applies the mutation program in data to procs.
func mutate(procs []fuzzProc, data []byte) {
	for len(data) >= fuzzRecord {
		op, a, idx := data[0], int(data[1]), int(binary.LittleEndian.Uint16(data[2:]))
		v := int64(binary.LittleEndian.Uint64(data[4:]))
		data = data[fuzzRecord:]
		if op&0x80 != 0 {
			v = extremes[uint64(v)%uint64(len(extremes))]
		}
		p := &procs[a%len(procs)]
		if len(p.Events) == 0 {
			continue
		}
		t := (a / len(procs)) % len(p.Events)
		evs := p.Events[t]
		if len(evs) == 0 {
			continue
		}
		e := &evs[idx%len(evs)]
		switch op & 0x0f {
		case 0: // time: set, or shift
			if op&0x40 != 0 {
				e.Time += v % 100_000
			} else {
				e.Time = v
			}
		case 1, 2, 3: // an argument (ids, peers, tags, comm indices, counts)
			k := int(op>>4) % trace.MaxArgs
			if op&0x40 != 0 && op&0x80 == 0 {
				e.Args[k] += v % 16
			} else {
				e.Args[k] = tameID(e.Kind, v)
			}
		case 4: // move the event to another thread index
			nt := int(uint64(v) % 8)
			if op&0x40 != 0 { // far out: the writer makes every index below a thread
				nt = []int{255, 4095, 16383, 65536, 1 << 20}[uint64(v)%5]
			}
			ev := *e
			p.Events[t] = append(evs[:idx%len(evs)], evs[idx%len(evs)+1:]...)
			if nt < trace.MaxThreads {
				for len(p.Events) <= nt {
					p.Events = append(p.Events, nil)
					p.Deps = append(p.Deps, nil)
				}
				if ev.Kind == trace.TaskDeps { // its list stays behind
					ev.Args[1] = 0
				}
				p.Events[nt] = append(p.Events[nt], ev)
			}
		case 5: // delete or duplicate an event
			i := idx % len(evs)
			if op&0x40 != 0 {
				p.Events[t] = append(evs[:i+1], evs[i:]...)
			} else {
				p.Events[t] = append(evs[:i], evs[i+1:]...)
			}
		case 6: // a dependence entry or a list's count
			if ds := p.Deps[t]; len(ds) > 0 && op&0x40 == 0 {
				d := &ds[idx%len(ds)]
				if op&0x20 != 0 {
					d.Type = uint8(v)
				} else {
					d.Addr = uint64(v)
				}
			} else if e.Kind == trace.TaskDeps {
				e.Args[1] = v % 64
			}
		case 7: // communicator members
			if len(p.Tables.Comms) == 0 {
				continue
			}
			c := &p.Tables.Comms[idx%len(p.Tables.Comms)]
			switch {
			case c.Runs != nil && op&0x40 == 0:
				c.Runs[int(uint64(v>>8)%uint64(len(c.Runs)))] = int(v % (1 << 20))
			case op&0x20 != 0:
				c.Runs, c.Members = nil, append(c.MemberList(), int(v%4096))
			default:
				c.ID = v
			}
		case 8: // header counts and identity
			switch op >> 4 & 3 {
			case 0:
				p.Header.NRanks = int(v)
			case 1:
				p.Header.Rank = int(v)
			case 2:
				p.Header.RunID = "other"
			default:
				p.Header.Version = int(v % 4)
			}
		case 9: // a task id made of the thread index and a huge sequence
			e.Args[int(op>>4)%2] = tameID(e.Kind, trace.MakeID(int(uint64(v)%4), 1+int64(uint64(v>>2)%(1<<32))))
		case 10: // every event of this kind gone from the process (a runtime that never reports it, a cut trace)
			kind := e.Kind
			for th, evs := range p.Events {
				kept := evs[:0]
				for _, x := range evs {
					if x.Kind != kind {
						kept = append(kept, x)
					}
				}
				p.Events[th] = kept
			}
		}
	}
}

// writeTrace writes procs as a trace directory; false if the writer refused.
func writeTrace(dir string, procs []fuzzProc) bool {
	files := make([]trace.FileInfo, len(procs))
	for r := range procs {
		p := &procs[r]
		name := trace.FileName(r)
		if err := p.WriteFile(filepath.Join(dir, name), 64); err != nil {
			return false
		}
		n := int64(0)
		for _, evs := range p.Events {
			n += int64(len(evs))
		}
		files[r] = trace.FileInfo{Rank: r, File: name, Events: n}
	}
	m := &trace.Manifest{Ranks: len(procs), RunID: procs[0].Header.RunID, Files: files}
	return trace.WriteManifest(filepath.Join(dir, trace.ManifestName), m) == nil
}

// fuzzMemLimit bounds the heap a single analysis of these small traces may
// reach: the soft limit keeps the collector tight so the figure read after
// the run is close to the peak.
const fuzzMemLimit = 256 << 20

func FuzzAnalyzeValues(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{1})
	f.Add([]byte{2})
	// the cases: a task id with sequence 2^30, a time jump, a
	// thread index far out, a world size claim, a communicator member
	f.Add([]byte{1, 0x89, 3, 7, 0, 6, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 0x80, 1, 5, 0, 4, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 0x44, 0, 9, 0, 0x70, 0x11, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{2, 0x88, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 0x07, 0, 0, 0, 0x10, 0x20, 0x30, 0, 0, 0, 0, 0})
	f.Add([]byte{1, 0x06, 1, 2, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Add([]byte("\x01\x89\x00\xff\xf2\x01\x01\x01\x01\x01\x01\x01\r")) // an id of sequence 2^40−1: 13 s and 422 MB before the task table was bounded
	f.Add([]byte{3})                                                    // the recorded user threads as they are
	f.Add([]byte{3, 0x12, 2, 1, 0, 0x33, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{4}) // the halo with buffer flushes as it is
	f.Add([]byte{4, 0x21, 1, 3, 0, 0x05, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{5}) // the nonblocking collectives as they are
	f.Add([]byte{5, 0x05, 0, 4, 0, 0x00, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0x15, 0x0a, 1, 2, 0, 0x00, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{6}) // the window epochs as they are
	f.Add([]byte{6, 0x13, 1, 2, 0, 0x07, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{7}) // the persistent collectives as they are
	f.Add([]byte{7, 0x05, 0, 3, 0, 0x01, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{8}) // the polling receiver as it is
	f.Add([]byte{8, 0x27, 1, 4, 0, 0x09, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 1+32*fuzzRecord {
			return
		}
		old := debug.SetMemoryLimit(fuzzMemLimit)
		defer debug.SetMemoryLimit(old)
		bases, err := fuzzTraces()
		if err != nil {
			t.Fatal(err)
		}
		bi := int(data[0]&0x0f) % len(bases)
		base := bases[bi]
		procs := make([]fuzzProc, len(base))
		for i := range base {
			procs[i] = clone(&base[i])
		}
		mutate(procs, data[1:])
		dir := fuzzBase.dirs[bi]
		if !writeTrace(dir, procs) {
			return
		}
		k := 1 + int(data[0]>>4)%2
		salvage := data[0]&0x40 != 0
		err = inproc.Run(k, func(c comm.Comm) error {
			_, err := driver.Run(c, driver.Options{Dir: dir, Salvage: salvage})
			return err
		})
		if len(data) == 1 && err != nil { // no mutation: the base traces analyse
			t.Fatalf("unmutated base trace %d: %v", data[0]&0x0f, err)
		}
		var ab *comm.AbortError
		if err != nil && errors.As(err, &ab) && ab.Err == nil {
			t.Fatalf("abort without a cause: %v", err)
		}
		// The heap's mapped size, read without stopping the world as
		// ReadMemStats does at every execution.
		heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
		metrics.Read(heap)
		if sys := heap[0].Value.Uint64() + heap[1].Value.Uint64() + heap[2].Value.Uint64(); sys > 4*fuzzMemLimit {
			t.Fatalf("heap grew to %d MB analysing a %d-process trace of a few hundred events", sys>>20, len(procs))
		}
	})
}

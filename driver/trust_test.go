package driver_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/ompt/ompfault"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
	"github.com/vmihailenco/msgpack/v5"
)

// A rank file of another gen run (other seed, other thread count) is
// refused with an error naming both files, or analysed with a warning under
// ForceMix; a file the manifest does not list is a counted warning (issue
// 16, item 5).
func TestFilesOfDifferentRunsRefused(t *testing.T) {
	a, _ := generate(t, gen.Config{Workload: "halo", Ranks: 3, Threads: 4, Iterations: 5})
	b, _ := generate(t, gen.Config{Workload: "halo", Ranks: 3, Threads: 2, Iterations: 5, Seed: 9})
	data, err := os.ReadFile(filepath.Join(b, trace.FileName(1)))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(a, trace.FileName(1)), data, 0o644)
	for k := 1; k <= 3; k++ {
		_, err := runWith(k, driver.Options{Dir: a})
		if err == nil || !strings.Contains(err.Error(), "files of different runs") ||
			!strings.Contains(err.Error(), trace.FileName(1)) || !strings.Contains(err.Error(), trace.FileName(0)) {
			t.Errorf("%d ranks: %v", k, err)
		}
	}
	rep, err := runWith(2, driver.Options{Dir: a, ForceMix: true})
	if err != nil {
		t.Fatal(err)
	}
	if w := rep.Trace.Warnings; w == nil || !strings.Contains(strings.Join(w.First, "\n"), "--force-mix") {
		t.Errorf("force-mix warnings: %+v", w)
	}

	c, _ := generate(t, gen.Config{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 5})
	d, _ := generate(t, gen.Config{Workload: "halo", Ranks: 4, Threads: 2, Iterations: 5})
	data, _ = os.ReadFile(filepath.Join(d, trace.FileName(3)))
	os.WriteFile(filepath.Join(c, trace.FileName(3)), data, 0o644)
	rep, err = runWith(1, driver.Options{Dir: c})
	if err != nil {
		t.Fatal(err)
	}
	if w := rep.Trace.Warnings; w == nil || w.Count != 1 || !strings.Contains(w.First[0], "the manifest does not list it") {
		t.Errorf("unlisted file warnings: %+v", w)
	}
	if _, err := runWith(2, driver.Options{Dir: c, Strict: true}); err == nil || !strings.Contains(err.Error(), "--strict") {
		t.Errorf("unlisted file under --strict: %v", err)
	}
}

// A file without its end frame makes the report partial (item 6).
func TestPartialFlag(t *testing.T) {
	dir, _ := generate(t, gen.Config{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 5})
	rep, err := runWith(1, driver.Options{Dir: dir})
	if err != nil || rep.Trace.Partial {
		t.Fatalf("complete trace: %v, partial %v", err, rep != nil && rep.Trace.Partial)
	}
	victim := filepath.Join(dir, trace.FileName(1))
	b, _ := os.ReadFile(victim)
	last := 0
	for off := 0; off < len(b); {
		last = off
		off += 12 + int(uint32(b[off+8])<<24|uint32(b[off+9])<<16|uint32(b[off+10])<<8|uint32(b[off+11]))
	}
	os.WriteFile(victim, b[:last], 0o644) // drop the end frame
	rep, err = runWith(2, driver.Options{Dir: dir, Salvage: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Trace.Partial || rep.Trace.Warnings == nil || !strings.Contains(strings.Join(rep.Trace.Warnings.First, "\n"), "no end frame") {
		t.Errorf("partial %v, warnings %+v", rep.Trace.Partial, rep.Trace.Warnings)
	}
}

// Rank files holding their header frame alone (every rank killed before
// its first flush: IMB-MPI4's Scatter_persist aborting inside MPICH 4.0.2)
// are analysed as a partial trace of no events: the critical path of the
// empty DAG is its orphan node alone, which the path's summary took for a
// node of the last process (it begins where the orphan is) and read its
// attributes from an empty block (index out of range).
func TestHeaderOnlyRankFiles(t *testing.T) {
	dir, _ := generate(t, gen.Config{Workload: "halo", Ranks: 3, Threads: 2, Iterations: 3})
	os.Remove(filepath.Join(dir, "manifest.json"))
	os.Remove(filepath.Join(dir, "expected.json"))
	for r := range 3 {
		p := filepath.Join(dir, trace.FileName(r))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n := 12 + int(uint32(b[8])<<24|uint32(b[9])<<16|uint32(b[10])<<8|uint32(b[11]))
		os.WriteFile(p, b[:n], 0o644)
	}
	for k := 1; k <= 3; k++ {
		rep, err := runWith(k, driver.Options{Dir: dir})
		if err != nil {
			t.Fatalf("%d ranks: %v", k, err)
		}
		if !rep.Trace.Partial || rep.Trace.Events != 0 || rep.Trace.Warnings == nil || rep.Trace.Warnings.Count != 3 ||
			rep.CriticalPath == nil || rep.CriticalPath.Nodes != 0 {
			t.Errorf("%d ranks: partial %v, events %d, warnings %+v, critical path %+v", k, rep.Trace.Partial, rep.Trace.Events, rep.Trace.Warnings, rep.CriticalPath)
		}
	}
}

// setHeaderVersion rewrites the version field of a file's header frame,
// leaving its chunks as they were written (version 3's coding).
func setHeaderVersion(t *testing.T, path string, v int) {
	t.Helper()
	err := ompfault.RewriteFrame(path, trace.FrameHeader, func(b []byte) ([]byte, error) {
		var h trace.Header
		if err := msgpack.Unmarshal(b, &h); err != nil {
			return nil, err
		}
		h.Version = v
		return msgpack.Marshal(&h)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A version-2 header on a version-3 file (issue 42, item 3) decoded every
// argument with the wrong coding: 1 084 warnings, and a report not marked
// partial. The run's files share one writer: a header whose version
// differs from the manifest's or from rank 0's is refused, naming the file
// and the field; a lone file with nothing to compare is decoded as its
// header says, and the model's warnings mark the report partial.
//
// The refusal comes from the header, before the chunks are decoded: a
// halo file's chunks fail under version 2's coding at some event (args
// left over), which said nothing of the header.
func TestHeaderVersionDamage(t *testing.T) {
	for _, cfg := range []gen.Config{
		{Workload: "halo", Ranks: 4, Threads: 4, Iterations: 10},
		{Workload: "forkjoin", Ranks: 2, Threads: 2, Width: 4, Steps: 3},
	} {
		dir, _ := generate(t, cfg)
		setHeaderVersion(t, filepath.Join(dir, trace.FileName(1)), 2)
		for _, manifest := range []bool{true, false} {
			if !manifest {
				os.Remove(filepath.Join(dir, trace.ManifestName))
			}
			_, err := runWith(2, driver.Options{Dir: dir})
			if err == nil || !strings.Contains(err.Error(), trace.FileName(1)) || !strings.Contains(err.Error(), "header field version is 2") {
				t.Errorf("%s, manifest %v: %v", cfg.Workload, manifest, err)
			}
		}
	}
	dir, _ := generate(t, gen.Config{Workload: "forkjoin", Ranks: 2, Threads: 2, Width: 4, Steps: 3})
	os.Remove(filepath.Join(dir, trace.ManifestName))
	setHeaderVersion(t, filepath.Join(dir, trace.FileName(1)), 2)
	setHeaderVersion(t, filepath.Join(dir, trace.FileName(0)), 2)
	if _, err := runWith(1, driver.Options{Dir: dir}); err != nil {
		t.Errorf("both headers say version 2: %v", err)
	}
	one, _ := generate(t, gen.Config{Workload: "forkjoin", Ranks: 1, Threads: 2, Width: 4, Steps: 3})
	os.Remove(filepath.Join(one, trace.ManifestName))
	setHeaderVersion(t, filepath.Join(one, trace.FileName(0)), 2)
	rep, err := runWith(1, driver.Options{Dir: one})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Trace.Partial || rep.Trace.Warnings == nil {
		t.Errorf("a lone version-2 header: partial %v, warnings %+v", rep.Trace.Partial, rep.Trace.Warnings)
	}
}

// headerOnly cuts a rank file to its header frame (a rank killed before
// its first flush).
func headerOnly(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 12 + int(uint32(b[8])<<24|uint32(b[9])<<16|uint32(b[10])<<8|uint32(b[11]))
	if err := os.WriteFile(path, b[:n], 0o644); err != nil {
		t.Fatal(err)
	}
}

// A process without events beside measured ones (MPICH's Hydra killing the
// ranks of an MPI_Abort before their first flush) was counted in POP as a
// process of no useful and no MPI time: it set max_i (T − T_i^M) to T and
// pulled the MPI load balance down (0.55 on an MPICH abort run). It is
// left out of POP, named in pop.processes_without_events and a warning,
// and the efficiencies are TALP's formulas over the measured processes.
func TestEventlessProcessLeftOutOfPOP(t *testing.T) {
	dir, _ := generate(t, gen.Config{Workload: "mpi", Ranks: 4})
	headerOnly(t, filepath.Join(dir, trace.FileName(3)))
	// 5 and 7 ranks: the eventless process is the last busy rank's, the
	// ranks after it own none.
	for _, k := range []int{1, 2, 3, 5, 7} {
		rep, err := runWith(k, driver.Options{Dir: dir})
		if err != nil {
			t.Fatalf("%d ranks: %v", k, err)
		}
		p := rep.POP
		if p.Processes != 3 || len(p.PerProcess) != 3 || len(p.ProcessesWithoutEvents) != 1 || p.ProcessesWithoutEvents[0] != 3 {
			t.Fatalf("%d ranks: pop processes %d, rows %d, without events %v", k, p.Processes, len(p.PerProcess), p.ProcessesWithoutEvents)
		}
		// MPI_LB = (T − T^M) / max_i (T_i − T_i^M) over ranks 0…2.
		var sumC, maxNon float64
		for i, q := range p.PerProcess {
			if q.Rank != i || q.Threads != 1 {
				t.Errorf("%d ranks: row %d is rank %d with %d threads", k, i, q.Rank, q.Threads)
			}
			sumC += float64(q.MPINS)
			maxNon = max(maxNon, float64(q.ElapsedNS-q.MPINS))
		}
		T := float64(p.ElapsedNS)
		if want := (T - sumC/3) / maxNon; math.Abs(p.MPILoadBalance-want) > 1e-6 || p.MPILoadBalance < 0.9 {
			t.Errorf("%d ranks: MPI load balance %.6f, want %.6f", k, p.MPILoadBalance, want)
		}
		if w := rep.Trace.Warnings; w == nil || !strings.Contains(strings.Join(w.First, "\n"), "process 3 has no events: left out of the POP efficiencies") {
			t.Errorf("%d ranks: warnings %+v", k, w)
		}
		var text strings.Builder
		report.WriteText(&text, rep, report.TextOptions{})
		if !strings.Contains(text.String(), "POP efficiencies (3 processes") || !strings.Contains(text.String(), "left out: process 3, with no events") {
			t.Errorf("%d ranks: text report:\n%s", k, text.String())
		}
	}
}

// dropEvents removes from thread 0 of a rank file the n events from the
// k-th (from 0; from the end when k < 0) event of kind kind, shifted by
// back events before it.
func dropEvents(t *testing.T, path string, kind trace.Kind, k, back, n int) {
	t.Helper()
	rows, err := trace.ReadRows(path)
	if err != nil {
		t.Fatal(err)
	}
	evs := rows.Events[0]
	var at []int
	for i, e := range evs {
		if e.Kind == kind {
			at = append(at, i)
		}
	}
	if k < 0 {
		k += len(at)
	}
	i := at[k] - back
	rows.Events[0] = append(evs[:i:i], evs[i+n:]...)
	if err := rows.WriteFile(path, 64); err != nil {
		t.Fatal(err)
	}
}

// One side of a message or one member's collective call missing from a
// trace. Messages pair in order on their channel and collective calls on
// their communicator, so a loss shifts every later pair: at the end of a
// trace (cut short) the last is left over, a counted warning that names
// the channel, both counts and the process whose trace lacks events; in
// the middle, a pair that runs against a synchronizing collective closed
// a happened-before cycle whose error named one coll_end and nothing
// wrong. It now lists the matching's findings, which name the process.
func TestLostMessageNamesDamagedRank(t *testing.T) {
	cases := []struct {
		name     string
		rank     int
		kind     trace.Kind
		k        int
		back, n  int
		fails    bool
		contains []string
	}{
		{"last receive", 1, trace.MPIRecv, -1, 0, 1, false, []string{"unmatched mpi_send: process 0 → 1, tag 11, communicator 0", "process 0 records 6 sends on this channel, process 1 5 receives (process 1's trace lacks receives"}},
		{"last send", 0, trace.MPISend, -1, 0, 1, false, []string{"unmatched mpi_recv: process 1 ← 0, tag 11, communicator 0", "process 0 records 5 sends on this channel, process 1 6 receives (process 0's trace lacks sends"}},
		{"last barrier", 1, trace.CollBegin, -1, 1, 4, false, []string{"MPI_Barrier call #7 on communicator 0: only 3 of its 4 members call it", "process 1 has none"}},
		{"first send", 0, trace.MPISend, 0, 0, 1, true, []string{"happened-before cycle", "the analysis cannot go on", "process 1 ← 0, tag 11, communicator 0", "process 0's trace lacks sends"}},
		{"first allreduce", 1, trace.CollBegin, 0, 1, 4, true, []string{"happened-before cycle", "the analysis cannot go on", "MPI_Barrier call #7 on communicator 0", "process 1 has none"}},
	}
	for _, c := range cases {
		dir, _ := generate(t, gen.Config{Workload: "mpi", Ranks: 4})
		dropEvents(t, filepath.Join(dir, trace.FileName(c.rank)), c.kind, c.k, c.back, c.n)
		for k := 1; k <= 3; k++ {
			rep, err := runWith(k, driver.Options{Dir: dir})
			var got string
			switch {
			case c.fails && err == nil:
				t.Errorf("%s, %d ranks: no error", c.name, k)
				continue
			case c.fails:
				got = err.Error()
			case err != nil:
				t.Errorf("%s, %d ranks: %v", c.name, k, err)
				continue
			case rep.Trace.Warnings == nil || rep.Trace.Warnings.Count != 1:
				t.Errorf("%s, %d ranks: warnings %+v", c.name, k, rep.Trace.Warnings)
				continue
			default:
				got = rep.Trace.Warnings.First[0]
			}
			for _, s := range c.contains {
				if !strings.Contains(got, s) {
					t.Errorf("%s, %d ranks: %q lacks %q", c.name, k, got, s)
				}
			}
		}
	}
}

// Reports of salvaged traces do not depend on the number of analysis
// ranks either:
//   - a process salvaged down to no event at all (its file cut inside the
//     first chunk): the critical path of processes without cross-process
//     edges, replayed one process at a time on one rank, failed on its
//     empty DAG ("no forward values or weights for 0 nodes") while two and
//     three ranks, whose DAG is one for the rank, gave a report;
//   - process 0 cut before its communicators' definitions: a collective it
//     lacks was "process 0 has none" on one rank (another process of the
//     rank knew the communicator) and "member 0 has none" on two.
func TestSalvagedTracesAnyRanks(t *testing.T) {
	for _, c := range []struct{ victim, percent int }{{1, 2}, {0, 5}, {0, 30}} {
		dir, _ := generate(t, gen.Config{Workload: "mpi", Ranks: 3, Events: 30000})
		name := filepath.Join(dir, trace.FileName(c.victim))
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(name, st.Size()*int64(c.percent)/100); err != nil {
			t.Fatal(err)
		}
		var want []byte
		for k := 1; k <= 4; k++ {
			rep, err := runWith(k, driver.Options{Dir: dir, Salvage: true})
			if err != nil {
				t.Fatalf("process %d cut to %d%%, %d ranks: %v", c.victim, c.percent, k, err)
			}
			got := reportJSON(t, rep)
			if k == 1 {
				want = got
				if rep.CriticalPath == nil || rep.CriticalPath.LengthNS <= 0 {
					t.Errorf("process %d cut to %d%%: no critical path: %+v", c.victim, c.percent, rep.CriticalPath)
				}
			} else if string(got) != string(want) {
				t.Errorf("process %d cut to %d%%, %d ranks: report differs from one rank's", c.victim, c.percent, k)
			}
		}
	}
}

package driver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/reduce"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// The two hooks of OTF2 input: openTrace lists an OTF2 archive's processes
// (location groups) as a trace directory's files, and loadProcess converts
// one of them into ptrace's format in memory and loads it like a native
// process file. Everything else sees one data model.

// openTrace lists a ptrace trace directory or an OTF2 archive (its anchor
// file or the directory holding it), with the archive's notes (what it
// holds that the analysis leaves out). The archive's global definitions
// must fit in memLimit bytes (0: no limit).
func openTrace(path string, memLimit int64) (*trace.Dir, []string, error) {
	if !otf2.IsArchive(path) {
		d, err := trace.OpenDir(path)
		if err != nil {
			err = explainInput(path, err)
		}
		return d, nil, err
	}
	a, err := otf2.OpenWith(path, otf2.Options{MemoryLimit: memLimit})
	if err != nil {
		return nil, nil, err
	}
	d := &trace.Dir{Path: path, Manifest: &trace.Manifest{Format: otf2Format, Ranks: a.NumProcesses(),
		Producer: a.Producer(), Command: []string{a.Path}}}
	for i := 0; i < a.NumProcesses(); i++ {
		p := a.Process(i)
		d.Files = append(d.Files, trace.FileInfo{Rank: i, File: p.Name, Events: p.Events, Bytes: p.Bytes})
	}
	n, first := a.Warnings()
	d.Warnings = append(d.Warnings, first...)
	if more := n - int64(len(first)); more > 0 {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%s: %d more problems in the definitions", a.Dir+".def", more))
	}
	return d, a.Notes, nil
}

// otf2Format marks the listing of an OTF2 archive (trace.Manifest.Format).
const otf2Format = "otf2"

// otf2Row is what converting a process left out, for the report's notes:
// records without a ptrace counterpart by OTF2 record name, and threads of
// no OpenMP runtime.
type otf2Row struct {
	Ignored    map[string]int64
	Unmodelled int
	// Workers counts a task runtime's worker threads (otf2.Stats.Workers),
	// Renamed their Leaves that end another region than they name.
	Workers int
	Renamed int64
	// Unreceived counts MPI_Mrecv/MPI_Imrecv calls of a process whose
	// archive holds no receive record inside any of them.
	Unreceived int64
	// Neighbor counts its neighbourhood collective calls, MPI time only
	// (otf2.Stats.NeighborCalls).
	Neighbor int64
	// Gaps are the times the process recorded nothing (otf2.Stats.Gaps);
	// Cut counts its communication records dropped inside the union of
	// every process's gaps.
	Gaps []otf2.Gap
	Cut  int64
	// Kept counts those inside the union recorded before the process's
	// own switching off, kept (otf2.Stats.KeptRecords).
	Kept int64
}

// convertedOverLimit tells the user, on rank 0, when some rank's OTF2
// conversions hold events over its memory limit, where ptrace files of
// those events would have been streamed from disk. It weighs the
// converted events, not the archive: records the model does not keep (the
// OPARI2 flush regions NPB LU-MZ's pipeline spins on: 6.4 GB of archive
// for 0.5 M events) weigh nothing in memory. A notice, as the one for
// held ptrace files, not a warning in the report: the estimate counts
// those events (memoryEstimate), so an analysis that holds them and fits
// is the analysis without a limit, and its report was not (the 1.5 M-event
// PENNANT archive's report under 0.95–1.1× its peak listed the warning
// on every process, forty-third round). Collective.
func (r *run) convertedOverLimit() error {
	if !r.dir.OTF2 || !r.guarded() {
		return nil
	}
	var held int64
	for _, p := range r.procs {
		held += p.HeldBytes()
	}
	over := int64(0)
	if held*BytesPerTraceByte > r.opts.MemoryLimit {
		over = held
	}
	worst, err := r.c.AllreduceInt64(comm.Max, []int64{over})
	if err != nil {
		return err
	}
	if worst[0] > 0 && r.c.Rank() == 0 && r.opts.Notice != nil {
		r.opts.Notice(fmt.Sprintf("OTF2 input is converted in memory: a rank's %s of converted events need about %s in memory, over its share of the memory limit; --memory-limit cannot stream them from disk as it streams ptrace files",
			report.Bytes(worst[0]), report.Bytes(worst[0]*BytesPerTraceByte)))
	}
	return nil
}

// loadProcess loads process i of the trace. An OTF2 process is converted in
// memory and loaded from the bytes; the rank opens the archive once for all
// its processes (its global definitions list every location). A ptrace
// file is read again on the passes after the load (unless HoldEvents); a
// converted process has no file to read again, so it stays in memory
// (convertedOverLimit says when that is over the memory limit).
func (r *run) loadProcess(i int, opts trace.LoadOptions) (*trace.Process, error) {
	path := r.dirPath(i)
	if !r.dir.OTF2 {
		return trace.LoadProcess(path, opts)
	}
	if r.archive == nil {
		a, err := otf2.OpenWith(r.dir.Path, otf2.Options{MemoryLimit: r.opts.MemoryLimit, Salvage: r.opts.Salvage})
		if err != nil {
			return nil, err
		}
		r.archive = a
	}
	// The conversion writes into a pipe the load reads as it goes, on a
	// second core: the converted bytes are held once, by the process's
	// chunks, not also whole in a buffer (the Score-P trace of fib(25):
	// 7 MB, a buffer grown to twice that beside them).
	pr, pw := io.Pipe()
	type converted struct {
		st       *otf2.Stats
		err      error
		panicked any // a panic of the conversion, raised again on the rank's goroutine
	}
	done := make(chan converted, 1)
	if r.convw == nil {
		r.convw = bufio.NewWriterSize(pw, convertBuffer)
	} else {
		r.convw.Reset(pw)
	}
	go func(bw *bufio.Writer) {
		defer func() {
			if p := recover(); p != nil {
				pw.CloseWithError(errLoadStopped)
				done <- converted{panicked: fmt.Sprintf("%v\n%s", p, debug.Stack())}
			}
		}()
		st, err := r.archive.ConvertCut(i, bw, r.cut)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err) // nil: the load reads EOF
		done <- converted{st: st, err: err}
	}(r.convw)
	opts.Stream = false
	p, err := trace.LoadProcessReader(pr, path+" (converted from OTF2)", opts)
	pr.CloseWithError(errLoadStopped) // a conversion still writing stops
	cv := <-done
	if cv.panicked != nil {
		panic(cv.panicked)
	}
	if cv.err != nil && !errors.Is(cv.err, errLoadStopped) {
		// the error names the archive's own file and offset
		return nil, cv.err
	}
	if err != nil {
		return nil, err
	}
	st := cv.st
	p.EvtDir = filepath.Base(r.archive.Dir) // warnings name the location's .evt file
	p.Warnings = append(p.Warnings, st.Warnings...)
	if st.Salvaged > 0 {
		p.Partial = true // events are missing
	}
	row := otf2Row{Unmodelled: st.Unmodelled, Workers: st.Workers, Renamed: st.Renamed, Gaps: st.Gaps, Cut: st.CutRecords, Kept: st.KeptRecords, Neighbor: st.NeighborCalls}
	if st.ProbedRecorded == 0 {
		row.Unreceived = st.ProbedRecvs
	}
	for t, n := range st.Ignored {
		if n > 0 {
			if row.Ignored == nil {
				row.Ignored = map[string]int64{}
			}
			row.Ignored[otf2.EventName(uint8(t))] += n
		}
	}
	r.otf2Rows = append(r.otf2Rows, row)
	return p, nil
}

// convertBuffer is what the conversion writes into the load's pipe at a
// time: each write wakes the load.
const convertBuffer = 64 << 10

// errLoadStopped ends a conversion whose load failed first.
var errLoadStopped = errors.New("the load of the converted process stopped")

// otf2Notes sums the processes' rows into the report's notes.
func otf2Notes(rows []otf2Row) []string {
	ignored := map[string]int64{}
	var threads, procs, probedProcs, workers, workerProcs int
	var renamed int64
	var probed, cut, neighbor int64
	var cutProcs, keptProcs, neighborProcs int
	var kept int64
	for _, r := range rows {
		if r.Kept > 0 {
			kept += r.Kept
			keptProcs++
		}
		for k, n := range r.Ignored {
			ignored[k] += n
		}
		if r.Cut > 0 {
			cut += r.Cut
			cutProcs++
		}
		if r.Unmodelled > 0 {
			threads += r.Unmodelled
			procs++
		}
		if r.Workers > 0 {
			workers += r.Workers
			workerProcs++
			renamed += r.Renamed
		}
		if r.Unreceived > 0 {
			probed += r.Unreceived
			probedProcs++
		}
		if r.Neighbor > 0 {
			neighbor += r.Neighbor
			neighborProcs++
		}
	}
	var notes []string
	if cut > 0 {
		notes = append(notes, fmt.Sprintf("%d message and collective records of %d processes fall inside the recording gaps (some process recorded nothing then) and are left out: "+
			"their partners' records may be missing", cut, cutProcs))
	}
	if kept > 0 {
		notes = append(notes, fmt.Sprintf("%d message and collective records of %d processes fall inside the recording gaps but before their own process switched recording off, and are kept: "+
			"they pair with what the other processes recorded before switching off, and one whose partner was not recording is unmatched", kept, keptProcs))
	}
	if probed > 0 {
		notes = append(notes, fmt.Sprintf("%d MPI_Mrecv/MPI_Imrecv calls (the receives of matched probes) in %d processes have no receive record: "+
			"the archive's writer records none for them (Score-P 8.4 does not), so the messages they received count as unmatched sends", probed, probedProcs))
	}
	if neighbor > 0 {
		notes = append(notes, fmt.Sprintf("%d neighbourhood collective calls (MPI_Neighbor_*, MPI_Ineighbor_*) in %d processes are MPI time only: "+
			"the archive records neither their communicator nor their messages (Score-P 8.4 does not), so their waiting is no wait state "+
			"and the critical path does not follow their neighbours", neighbor, neighborProcs))
	}
	if threads > 0 {
		notes = append(notes, fmt.Sprintf("%d threads in %d processes are no OpenMP threads and record no ThreadBegin (runtime helpers...): their MPI calls and regions are kept, their time is left out of the breakdown and POP", threads, procs))
	}
	if workers > 0 {
		n := fmt.Sprintf("%d threads in %d processes run a task runtime's tasks (regions of role TASK outside OpenMP, as APEX records HPX's worker threads; no OpenMP and no ThreadBegin records): "+
			"each is modelled from its first record to its last, working inside its regions and waiting for work between them (worker_idle); "+
			"which task created which and what each waited for are not in the archive, so the critical path does not cross between them", workers, workerProcs)
		if renamed > 0 {
			n += fmt.Sprintf("; %d of their Leaves name another region than the innermost open one, which each ends (APEX writes a task renamed while it ran with its first name)", renamed)
		}
		notes = append(notes, n)
	}
	if len(ignored) > 0 {
		names := make([]string, 0, len(ignored))
		for k := range ignored {
			names = append(names, k)
		}
		sort.Slice(names, func(i, j int) bool {
			if ignored[names[i]] != ignored[names[j]] {
				return ignored[names[i]] > ignored[names[j]]
			}
			return names[i] < names[j]
		})
		parts := make([]string, len(names))
		for i, k := range names {
			parts[i] = fmt.Sprintf("%s %d", k, ignored[k])
		}
		notes = append(notes, "OTF2 records without a counterpart in ptrace's model, not used: "+strings.Join(parts, ", "))
	}
	return notes
}

// cutGaps gathers the recording gaps of every OTF2 process (Score-P's
// recording switched off: otf2/gaps.go) onto every rank as their union,
// r.cut, and converts the owned processes again with it, so that no
// message or collective pairs across a gap. An archive without gaps costs
// one gather and one broadcast of nothing. Collective.
func (r *run) cutGaps() error {
	if !r.dir.OTF2 {
		return nil
	}
	var mine []otf2.Gap
	for _, row := range r.otf2Rows {
		mine = append(mine, row.Gaps...)
	}
	all, err := reduce.GatherRows(r.c, mine)
	if err != nil {
		return err
	}
	if r.c.Rank() == 0 {
		r.cut = otf2.MergeGaps(all)
	}
	if err := reduce.Broadcast(r.c, &r.cut); err != nil {
		return err
	}
	if len(r.cut) == 0 {
		return nil
	}
	// Converted again with the cut: the first conversion's processes go
	// first, so that the two are not held at once.
	r.procs, r.otf2Rows = nil, nil
	return r.load()
}

// cutWindow applies the recording gaps (r.cut) to the analysis window
// [r.first, r.last]: by default the window becomes the longest stretch
// every process recorded; a window asked for (--window, --whole-run) is
// kept, with a warning saying how much of it no record covers. Rank 0
// puts the explanation first among the report's warnings. It returns the
// window's bounds label.
func (r *run) cutWindow(bounds string) string {
	var in []otf2.Gap // the cut's gaps inside the window, clipped to it
	var missing int64
	for _, g := range r.cut {
		if a, b := max(g.Off, r.first), min(g.On, r.last); b > a {
			in = append(in, otf2.Gap{Off: a, On: b})
			missing += b - a
		}
	}
	if len(in) == 0 {
		return bounds
	}
	ms := report.Dur
	var msg string
	if r.opts.WholeRun || r.opts.Window != nil {
		msg = fmt.Sprintf("recording was switched off (Score-P's SCOREP_RECORDING_OFF or selective recording): %s of the %s window hold no record of some process "+
			"(%d gaps, the first %s … %s after the trace's start); each such process's time there counts as what it was doing when recording stopped "+
			"(its work, mostly), and its messages and collectives there are left out", ms(missing), ms(r.last-r.first), len(in), ms(in[0].Off-r.traceFirst), ms(in[0].On-r.traceFirst))
		if r.c.Rank() == 0 {
			r.rep.Trace.Partial = true
		}
	} else {
		// the stretches between the gaps; the longest is the window
		var stretches []otf2.Gap
		from := r.first
		for _, g := range in {
			if g.Off > from {
				stretches = append(stretches, otf2.Gap{Off: from, On: g.Off})
			}
			from = g.On
		}
		if r.last > from {
			stretches = append(stretches, otf2.Gap{Off: from, On: r.last})
		}
		best := -1
		for k, s := range stretches {
			if best < 0 || s.On-s.Off > stretches[best].On-stretches[best].Off {
				best = k
			}
		}
		total := r.last - r.first
		if best < 0 {
			// nothing recorded by every process at once: an empty window
			// at the first gap's start
			r.last = r.first
		} else {
			r.first, r.last = stretches[best].Off, stretches[best].On
		}
		// the longest other stretches, in time order: selective recording
		// of a loop makes a stretch per iteration, and the warning names a
		// few, not every one
		var rest []int
		for k := range stretches {
			if k != best {
				rest = append(rest, k)
			}
		}
		sort.SliceStable(rest, func(i, j int) bool {
			a, b := stretches[rest[i]], stretches[rest[j]]
			return a.On-a.Off > b.On-b.Off
		})
		shown := rest[:min(len(rest), maxListedStretches)]
		sort.Ints(shown)
		var others []string
		for _, k := range shown {
			s := stretches[k]
			others = append(others, fmt.Sprintf("--window %s:%s", wdur(s.Off-r.traceFirst), wdur(s.On-r.traceFirst)))
		}
		if n := len(rest) - len(shown); n > 0 {
			others = append(others, fmt.Sprintf("and %d more, none longer", n))
		}
		msg = fmt.Sprintf("recording was switched off (Score-P's SCOREP_RECORDING_OFF or selective recording): %s of the %s window hold no record of some process (%d gaps); "+
			"the analysis measures the longest stretch every process recorded, %s (%s … %s after the trace's start), and leaves out the messages and collectives recorded inside a gap",
			ms(missing), ms(total), len(in), ms(r.last-r.first), ms(r.first-r.traceFirst), ms(r.last-r.traceFirst))
		if len(others) > 0 {
			msg += "; the other stretches: " + strings.Join(others, ", ")
		}
		bounds = "recorded"
	}
	if r.c.Rank() == 0 {
		addWarnings(r.rep, 1, nil)
		w := r.rep.Trace.Warnings
		w.First = append([]string{msg}, w.First...)
		if len(w.First) > maxListedWarnings {
			w.First = w.First[:maxListedWarnings]
		}
	}
	return bounds
}

// maxListedStretches bounds the other recorded stretches the window's
// warning names (cutWindow).
const maxListedStretches = 4

// wdur prints ns as a duration --window parses, to the µs.
func wdur(ns int64) string { return time.Duration(ns).Round(time.Microsecond).String() }

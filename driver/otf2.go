package driver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/ptrace-dev/ptrace/otf2"
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
	// Unreceived counts MPI_Mrecv/MPI_Imrecv calls of a process whose
	// archive holds no receive record inside any of them.
	Unreceived int64
}

// convertedOverLimit adds a warning to every process of the rank when the
// events its OTF2 conversions hold are over the memory limit, where ptrace
// files of those events would have been streamed from disk. It weighs the
// converted events, not the archive: records the model does not keep (the
// OPARI2 flush regions NPB LU-MZ's pipeline spins on: 6.4 GB of archive
// for 0.5 M events) weigh nothing in memory. It returns the first warning
// under --strict.
func (r *run) convertedOverLimit() error {
	if !r.dir.OTF2 || r.opts.MemoryLimit <= 0 {
		return nil
	}
	var held int64
	for _, p := range r.procs {
		held += p.HeldBytes()
	}
	if held*BytesPerTraceByte <= r.opts.MemoryLimit {
		return nil
	}
	for k, p := range r.procs {
		w := fmt.Sprintf("%s: OTF2 input is converted in memory; --memory-limit cannot stream it from disk", r.dirPath(r.lo+k))
		p.Warnings = append(p.Warnings, w)
		if r.opts.Strict {
			return fmt.Errorf("rank %d: %s (--strict)", r.lo+k, w)
		}
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
		a, err := otf2.OpenWith(r.dir.Path, otf2.Options{MemoryLimit: r.opts.MemoryLimit})
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
		st, err := r.archive.Convert(i, bw)
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
	p.Warnings = append(p.Warnings, st.Warnings...)
	row := otf2Row{Unmodelled: st.Unmodelled}
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
	var threads, procs, probedProcs int
	var probed int64
	for _, r := range rows {
		for k, n := range r.Ignored {
			ignored[k] += n
		}
		if r.Unmodelled > 0 {
			threads += r.Unmodelled
			procs++
		}
		if r.Unreceived > 0 {
			probed += r.Unreceived
			probedProcs++
		}
	}
	var notes []string
	if probed > 0 {
		notes = append(notes, fmt.Sprintf("%d MPI_Mrecv/MPI_Imrecv calls (the receives of matched probes) in %d processes have no receive record: "+
			"the archive's writer records none for them (Score-P 8.4 does not), so the messages they received count as unmatched sends", probed, probedProcs))
	}
	if threads > 0 {
		notes = append(notes, fmt.Sprintf("%d threads in %d processes are no OpenMP threads and record no ThreadBegin (runtime helpers...): their MPI calls and regions are kept, their time is left out of the breakdown and POP", threads, procs))
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

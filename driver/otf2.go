package driver

import (
	"bytes"
	"fmt"

	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/trace"
)

// The two hooks of OTF2 input: openTrace lists an OTF2 archive's processes
// (location groups) as a trace directory's files, and loadProcess converts
// one of them into ptrace's format in memory and loads it like a native
// process file. Everything else sees one data model.

// openTrace lists a ptrace trace directory or an OTF2 archive (its anchor
// file or the directory holding it).
func openTrace(path string) (*trace.Dir, error) {
	if !otf2.IsArchive(path) {
		return trace.OpenDir(path)
	}
	a, err := otf2.Open(path)
	if err != nil {
		return nil, err
	}
	d := &trace.Dir{Path: path, Manifest: &trace.Manifest{Format: otf2Format, Ranks: a.NumProcesses(),
		Producer: a.Producer(), Command: []string{a.Path}}}
	for i := 0; i < a.NumProcesses(); i++ {
		p := a.Process(i)
		d.Files = append(d.Files, trace.FileInfo{Rank: i, File: p.Name, Events: p.Events, Bytes: p.Bytes})
	}
	return d, nil
}

// otf2Format marks the listing of an OTF2 archive (trace.Manifest.Format).
const otf2Format = "otf2"

// loadProcess loads process i of the trace. An OTF2 process is converted in
// memory and loaded from the bytes; the rank opens the archive once for all
// its processes (its global definitions list every location). A ptrace
// file is read again on the passes after the load (unless HoldEvents); a
// converted process has no file to read again, so it stays in memory, and
// says so when the rank's traces are over its memory limit (overLimit),
// which would have had it streamed.
func (r *run) loadProcess(i int, opts trace.LoadOptions, overLimit bool) (*trace.Process, error) {
	path := r.dirPath(i)
	if !r.dir.OTF2 {
		return trace.LoadProcess(path, opts)
	}
	if r.archive == nil {
		a, err := otf2.Open(r.dir.Path)
		if err != nil {
			return nil, err
		}
		r.archive = a
	}
	var buf bytes.Buffer
	st, err := r.archive.Convert(i, &buf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	opts.Stream = false
	p, err := trace.LoadProcessReader(&buf, path+" (converted from OTF2)", opts)
	if err != nil {
		return nil, err
	}
	p.Warnings = append(p.Warnings, st.Warnings...)
	if overLimit {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s: OTF2 input is converted in memory; --memory-limit cannot stream it from disk", path))
	}
	return p, nil
}

package driver

import (
	"fmt"
	"os"

	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/trace"
)

// The two hooks of OTF2 input: openTrace lists an OTF2 archive's processes
// (location groups) as a trace directory's files, and loadProcess converts
// one of them into ptrace's format (a temporary file, removed at once) and
// loads it like a native process file. Everything else sees one data model.

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
	d := &trace.Dir{Path: path, Manifest: &trace.Manifest{Format: "otf2", Ranks: a.NumProcesses(),
		Producer: a.Producer(), Command: []string{a.Path}}}
	for i := 0; i < a.NumProcesses(); i++ {
		p := a.Process(i)
		d.Files = append(d.Files, trace.FileInfo{Rank: i, File: p.Name, Events: p.Events, Bytes: p.Bytes})
	}
	return d, nil
}

// loadProcess loads process i of the trace at root; path is its file in a
// ptrace directory (a display name for OTF2).
func loadProcess(root, path string, i int, opts trace.LoadOptions) (*trace.Process, error) {
	if !otf2.IsArchive(root) {
		return trace.LoadProcess(path, opts)
	}
	a, err := otf2.Open(root)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "ptrace-otf2-*.ptrace")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	st, err := a.Convert(i, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p, err := trace.LoadProcess(f.Name(), opts)
	if err != nil {
		return nil, fmt.Errorf("%s (converted from OTF2): %w", path, err)
	}
	p.File = path
	p.Warnings = append(p.Warnings, st.Warnings...)
	return p, nil
}

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/trace"
)

// The OTF2 paths of the commands that read a trace without analysing it
// (dump, export, validate): an OTF2 archive is converted process by
// process into ptrace's format, the data model every command reads, and
// problems are named by the archive's own files and offsets.

// numProcesses returns the number of processes of a ptrace trace directory
// or an OTF2 archive, or an error.
func numProcesses(dir string) (int, error) {
	if otf2.IsArchive(dir) {
		a, err := otf2.Open(dir)
		if err != nil {
			return 0, err
		}
		return a.NumProcesses(), nil
	}
	d, err := trace.OpenDir(dir)
	if err != nil {
		return 0, err
	}
	return d.NRanks(), nil
}

// convertedProcess converts process rank of an OTF2 archive in memory.
func convertedProcess(a *otf2.Archive, rank int) ([]byte, *otf2.Stats, error) {
	if rank < 0 || rank >= a.NumProcesses() {
		return nil, nil, fmt.Errorf("--rank %d: the archive has processes 0..%d", rank, a.NumProcesses()-1)
	}
	var buf bytes.Buffer
	st, err := a.Convert(rank, &buf)
	if err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), st, nil
}

// convertArchive writes every process of the OTF2 archive at path as a
// ptrace trace into the new directory dst (rank-NNNNN.ptrace files), for
// the commands that stream a trace directory. It returns the conversions'
// statistics, one per process.
func convertArchive(path, dst string) ([]*otf2.Stats, error) {
	a, err := otf2.Open(path)
	if err != nil {
		return nil, err
	}
	stats := make([]*otf2.Stats, a.NumProcesses())
	for i := range stats {
		f, err := os.Create(filepath.Join(dst, trace.FileName(i)))
		if err != nil {
			return nil, err
		}
		stats[i], err = a.Convert(i, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	return stats, nil
}

// validateArchive checks an OTF2 archive: its definitions, then every
// process's local definitions and events as the conversion reads them
// (every record decoded, references checked), and the converted stream
// as validate checks a ptrace file. Tolerated problems of the archive
// (the conversion's warnings) are problems here, with the archive's file
// and offset in the message; a process whose files cannot be read is one
// fatal problem.
func validateArchive(path string, progress func(done, total int)) ([]trace.Problem, trace.ValidateStats, error) {
	var st trace.ValidateStats
	a, err := otf2.Open(path)
	if err != nil {
		return nil, st, err
	}
	var problems []trace.Problem
	_, defWarnings := a.Warnings()
	for _, w := range defWarnings {
		problems = append(problems, trace.Problem{File: a.Dir + ".def", Offset: -1, Message: w})
	}
	tmp, err := os.MkdirTemp("", "ptrace-validate-")
	if err != nil {
		return nil, st, err
	}
	defer os.RemoveAll(tmp)
	n := a.NumProcesses()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s process %d (%s)", a.Path, i, a.Process(i).Name)
		conv := filepath.Join(tmp, trace.FileName(i))
		f, err := os.Create(conv)
		if err != nil {
			return nil, st, err
		}
		cs, err := a.Convert(i, f)
		f.Close()
		if err != nil {
			problems = append(problems, trace.Problem{File: name, Offset: -1, Message: err.Error(), Fatal: true})
			continue
		}
		for _, w := range cs.Warnings {
			problems = append(problems, trace.Problem{File: name, Offset: -1, Message: w})
		}
		// The converted stream must be valid whatever the archive holds:
		// a problem here is the converter's, reported for a bug report.
		ps, fs, err := trace.ValidateFile(conv)
		if err != nil {
			problems = append(problems, trace.Problem{File: name + " (converted)", Offset: -1, Message: err.Error(), Fatal: true})
		}
		for _, p := range ps {
			p.File = name + " (converted)"
			problems = append(problems, p)
		}
		os.Remove(conv)
		st.Events += fs.Events
		st.Threads += fs.Threads
		st.Chunks += fs.Chunks
		if i == 0 || fs.First < st.First {
			st.First = fs.First
		}
		st.Last = max(st.Last, fs.Last)
		if progress != nil {
			progress(i+1, n)
		}
	}
	return problems, st, nil
}

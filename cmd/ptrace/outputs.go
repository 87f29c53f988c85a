package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ptrace-dev/ptrace/internal/outfile"
	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/trace"
)

// Outputs never replace inputs. Every file a command is asked to write is
// checked against what it reads before the work starts (an hour of
// analysis is not spent to refuse at the end): an output may not be a file
// of an input trace (a rank file, the manifest, an OTF2 archive's anchor,
// definitions or location files), an input report or CSV, nor an input
// directory itself; nor may two outputs name one file. Files are written
// through outfile (a temporary file renamed into place), and what goes to
// standard output through a checked writer, so a lost output is an error.

// inputs is what a command reads.
type inputs struct {
	files []namedStat // regular files read
	dirs  []namedStat // trace directories: their trace-named entries are read
	trees []namedStat // directories everything under which is read (OTF2 location files)
}

type namedStat struct {
	name string
	st   os.FileInfo
}

// traceFileRE matches the names a ptrace trace directory is read from.
var traceFileRE = regexp.MustCompile(`^(rank-[0-9]{5,}\.ptrace|` + regexp.QuoteMeta(trace.ManifestName) + `)$`)

// addFile records a regular file read as input (a report, a CSV); a path
// that does not exist is left to the command to report.
func (in *inputs) addFile(path string) {
	if st, err := os.Stat(path); err == nil {
		in.files = append(in.files, namedStat{path, st})
	}
}

// addTrace records a trace argument: a ptrace directory, an OTF2 archive
// (its directory or anchor file) or a report file (compare).
func (in *inputs) addTrace(path string) {
	st, err := os.Stat(path)
	if err != nil {
		return
	}
	if st.IsDir() {
		in.dirs = append(in.dirs, namedStat{path, st})
	} else {
		in.files = append(in.files, namedStat{path, st})
	}
	if !otf2.IsArchive(path) {
		return
	}
	anchor := path
	if st.IsDir() {
		m, _ := filepath.Glob(filepath.Join(path, "*.otf2"))
		if len(m) != 1 {
			return
		}
		anchor = m[0]
	}
	in.addFile(anchor)
	base := strings.TrimSuffix(anchor, ".otf2")
	in.addFile(base + ".def")
	if st, err := os.Stat(base); err == nil && st.IsDir() {
		in.trees = append(in.trees, namedStat{base, st})
	}
}

// output is one file or directory a command writes.
type output struct {
	flag, path string
	dir        bool // --csv: a directory of files
}

// check refuses outputs that would replace an input or each other.
func (in *inputs) check(outs []output) error {
	var seen []namedStat
	for _, o := range outs {
		if o.path == "" || o.path == "-" {
			continue
		}
		if err := in.checkOne(o); err != nil {
			return fmt.Errorf("%s %s: %w (choose another path)", o.flag, o.path, err)
		}
		abs, err := filepath.Abs(o.path)
		if err != nil {
			continue
		}
		st, _ := os.Stat(o.path)
		for _, s := range seen {
			if s.name == abs || st != nil && s.st != nil && os.SameFile(st, s.st) {
				return fmt.Errorf("%s %s: another output flag names the same path", o.flag, o.path)
			}
		}
		seen = append(seen, namedStat{abs, st})
	}
	return nil
}

func (in *inputs) checkOne(o output) error {
	if st, err := os.Stat(o.path); err == nil {
		for _, f := range in.files {
			if os.SameFile(st, f.st) {
				return fmt.Errorf("it is the input %s", f.name)
			}
		}
		for _, d := range in.dirs {
			if os.SameFile(st, d.st) {
				return fmt.Errorf("it is the input directory %s", d.name)
			}
		}
	}
	// Where the output lands: through symbolic links when it exists.
	real := o.path
	if r, err := filepath.EvalSymlinks(o.path); err == nil {
		real = r
	}
	parent, err := filepath.Abs(filepath.Dir(real))
	if err != nil {
		return nil
	}
	if pst, err := os.Stat(parent); err == nil && !o.dir {
		for _, d := range in.dirs {
			if os.SameFile(pst, d.st) && traceFileRE.MatchString(filepath.Base(real)) {
				return fmt.Errorf("it is a trace file of the input %s", d.name)
			}
		}
	}
	// Anything under an OTF2 archive's location directory is its input.
	start := parent
	if o.dir {
		start, _ = filepath.Abs(real)
	}
	for p, depth := start, 0; depth < 256; p, depth = filepath.Dir(p), depth+1 {
		if st, err := os.Stat(p); err == nil {
			for _, t := range in.trees {
				if os.SameFile(st, t.st) {
					return fmt.Errorf("it lies inside the OTF2 archive's location files %s", t.name)
				}
			}
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	return nil
}

// writable checks, before the work starts, that each output can be
// written where it is to go: a file's directory exists and takes a new
// file, a file is not a directory, and a directory output (--csv, which
// is created with its parents) has an existing directory above it that
// takes one. Otherwise the analysis would run to its end and then fail
// on a mistyped path. It creates and removes a probe file. Under MPI only
// the rank that writes the outputs (rank 0) calls it: the others may run
// on nodes where the path does not exist.
func writable(outs []output) error {
	for _, o := range outs {
		if o.path == "" || o.path == "-" {
			continue
		}
		if err := writableOne(o); err != nil {
			return fmt.Errorf("%s %s: %w", o.flag, o.path, err)
		}
	}
	return nil
}

func writableOne(o output) error {
	st, err := os.Stat(o.path)
	switch {
	case err == nil && o.dir && !st.IsDir():
		return fmt.Errorf("not a directory")
	case err == nil && !o.dir && st.IsDir():
		return fmt.Errorf("is a directory (give a file name)")
	case err == nil && o.dir:
		return probe(o.path)
	}
	dir := filepath.Dir(o.path)
	if !o.dir {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("directory %s does not exist", dir)
		}
		return probe(dir)
	}
	// The nearest directory that exists above a directory to create.
	for {
		st, err := os.Stat(dir)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("%s is not a directory", dir)
			}
			return probe(dir)
		}
		if filepath.Dir(dir) == dir {
			return err
		}
		dir = filepath.Dir(dir)
	}
}

// probe checks that dir takes a new file.
func probe(dir string) error {
	f, err := os.CreateTemp(dir, ".ptrace-probe-*")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// writeOutput writes path through fn: to stdout for "-", else through a
// temporary file renamed into place (outfile).
func writeOutput(path string, stdout io.Writer, fn func(io.Writer) error) error {
	if path == "-" {
		cw := &outfile.Checked{W: stdout}
		err := fn(cw)
		if err == nil {
			err = cw.Err
		}
		if err != nil {
			return fmt.Errorf("standard output: %w", err)
		}
		return nil
	}
	return outfile.Write(path, fn)
}

// toStdout reports whether a command with these outputs and quiet flag
// writes anything of its result to standard output.
func toStdout(quiet bool, outs ...string) bool {
	if !quiet {
		return true
	}
	for _, o := range outs {
		if o == "-" {
			return true
		}
	}
	return false
}

// checkStdout refuses to start a command whose result goes to standard
// output when standard output was closed: the Go runtime then opens
// /dev/null in its place (read-write, which no shell redirection does), so
// every write would succeed and the result would be lost.
func checkStdout(writes bool) error {
	if writes && stdoutClosed() {
		return fmt.Errorf("standard output is closed, so the report would be lost: redirect it to a file, or write the report with --json/--html/--csv and -q")
	}
	return nil
}

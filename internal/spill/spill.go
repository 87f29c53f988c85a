// Package spill is an append-only scratch file: what an analysis keeps
// for a later look at a few of its entries (the fragment nodes' attributes,
// which only the critical path's nodes are read of) written out and read
// back where needed, so that it holds page cache, which the system can
// reclaim, instead of the process's resident memory.
package spill

import (
	"errors"
	"fmt"
	"os"
)

// File is an unnamed temporary file: removed once created, so that it
// goes when it is closed or the process ends, whatever ends it.
type File struct {
	f   *os.File
	off int64
	err error // the first write's error: nothing is written after it
}

// ErrInMemory is Create's error for a directory on a file system held in
// memory (tmpfs, ramfs: /tmp on many diskless compute nodes), where what
// is spilled takes the memory it would have taken in the process, and
// counts against the job's memory all the same, only out of the process's
// sight: there the caller keeps its data.
var ErrInMemory = errors.New("spill file: the temporary directory is held in memory (tmpfs); set TMPDIR to a disk's directory to spill")

// Create makes a File in dir (os.TempDir(), so $TMPDIR, when dir is ""),
// or fails with ErrInMemory where dir's file system is held in memory.
func Create(dir string) (*File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	if inMemory(dir) {
		return nil, ErrInMemory
	}
	f, err := os.CreateTemp(dir, "ptrace-spill-*")
	if err != nil {
		return nil, fmt.Errorf("spill file: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("spill file: %w", err)
	}
	return &File{f: f}, nil
}

// Append writes p at the file's end and returns where it begins. After a
// failed write every Append fails: where the file ends is then unknown.
func (s *File) Append(p []byte) (int64, error) {
	if s.err != nil {
		return 0, s.err
	}
	at := s.off
	n, err := s.f.WriteAt(p, at)
	s.off += int64(n)
	if err != nil {
		s.err = fmt.Errorf("spill file: writing %d bytes at %d: %w", len(p), at, err)
		return 0, s.err
	}
	return at, nil
}

// ReadAt reads len(p) bytes at off.
func (s *File) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.f.ReadAt(p, off)
	if err != nil {
		return n, fmt.Errorf("spill file: reading %d bytes at %d: %w", len(p), off, err)
	}
	return n, nil
}

// Size returns the bytes written.
func (s *File) Size() int64 { return s.off }

// Close closes the file, which goes with it.
func (s *File) Close() error { return s.f.Close() }

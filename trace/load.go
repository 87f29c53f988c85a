package trace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// FileName returns the file name of rank's process in a trace directory.
func FileName(rank int) string { return fmt.Sprintf("rank-%05d.ptrace", rank) }

// ManifestName is the manifest's file name in a trace directory.
const ManifestName = "manifest.json"

// ErrMissingRank marks a trace directory without the file of some rank.
var ErrMissingRank = errors.New("missing rank file")

// FileInfo describes one process file of a trace directory.
type FileInfo struct {
	Rank   int    `json:"rank"`
	File   string `json:"file"`             // name inside the directory
	Events int64  `json:"events,omitempty"` // 0 when unknown
	Bytes  int64  `json:"bytes"`
}

// Dir is an opened trace directory: where every rank's file is and how big
// it is, known without reading events (partitioning needs just that).
type Dir struct {
	Path     string
	Manifest *Manifest // nil when the directory has none
	Files    []FileInfo
}

// Path returns the full path of rank's file.
func (d *Dir) FilePath(rank int) string { return filepath.Join(d.Path, d.Files[rank].File) }

// NRanks returns the number of traced processes.
func (d *Dir) NRanks() int { return len(d.Files) }

// OpenDir lists a trace directory. With a manifest it checks every listed
// file exists; without one it takes rank-*.ptrace files and the rank count
// from the first file's header. A missing rank file is an error.
func OpenDir(path string) (*Dir, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory (a trace is a directory of rank-*.ptrace files)", path)
	}
	d := &Dir{Path: path}
	m, err := ReadManifest(filepath.Join(path, ManifestName))
	switch {
	case err == nil:
		d.Manifest = m
		if m.Ranks <= 0 {
			return nil, fmt.Errorf("%s: manifest lists %d ranks", filepath.Join(path, ManifestName), m.Ranks)
		}
		d.Files = make([]FileInfo, m.Ranks)
		for i := range d.Files {
			d.Files[i] = FileInfo{Rank: i, File: FileName(i)}
		}
		for _, f := range m.Files {
			if f.Rank < 0 || f.Rank >= m.Ranks {
				return nil, fmt.Errorf("%s: file %s has rank %d outside 0..%d", filepath.Join(path, ManifestName), f.File, f.Rank, m.Ranks-1)
			}
			d.Files[f.Rank] = f
		}
	case errors.Is(err, os.ErrNotExist):
		first := filepath.Join(path, FileName(0))
		f, err := os.Open(first)
		if err != nil {
			matches, _ := filepath.Glob(filepath.Join(path, "rank-*.ptrace"))
			if len(matches) == 0 {
				return nil, fmt.Errorf("%s: no manifest and no rank-*.ptrace files: not a ptrace trace directory", path)
			}
			return nil, fmt.Errorf("rank 0: %w: %v", ErrMissingRank, err)
		}
		r, err := NewReader(f, first)
		f.Close()
		if err != nil {
			return nil, err
		}
		n := r.Header().NRanks
		if n <= 0 {
			return nil, &FormatError{File: first, Offset: 0, Frame: FrameHeader, Err: fmt.Errorf("header gives %d ranks", n)}
		}
		d.Files = make([]FileInfo, n)
		for i := range d.Files {
			d.Files[i] = FileInfo{Rank: i, File: FileName(i)}
		}
	default:
		return nil, err
	}
	for i := range d.Files {
		st, err := os.Stat(d.FilePath(i))
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w: %s: %v", i, ErrMissingRank, d.FilePath(i), errors.Unwrap(err))
		}
		d.Files[i].Bytes = st.Size()
	}
	return d, nil
}

package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// LoadOptions tune LoadProcess.
type LoadOptions struct {
	// Salvage keeps the events before a truncated or corrupt tail (as a
	// crashed collector may leave) and records a warning instead of failing.
	Salvage bool
}

// LoadProcess reads a whole process file into memory. Events of each thread
// must be in time order; the first violation is an error naming the event's
// byte offset. A file without an end frame loads with a warning.
func LoadProcess(path string, opts LoadOptions) (*Process, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := NewReader(f, path)
	if err != nil {
		return nil, err
	}
	p := &Process{File: path, Header: r.Header()}
	var c Chunk
	for {
		err := r.NextChunk(&c)
		if err == io.EOF {
			break
		}
		if err != nil {
			if opts.Salvage {
				p.Warnings = append(p.Warnings, fmt.Sprintf("salvaged %d events before: %v", p.NumEvents(), err))
				break
			}
			return nil, err
		}
		if err := p.appendChunk(&c); err != nil {
			return nil, err
		}
	}
	p.Tables = *r.Tables()
	if !r.Complete() {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s: no end frame: the traced program did not finish writing its trace (crash or kill?); analysing the %d events present", path, p.NumEvents()))
	} else if e := p.Tables.End; e != nil {
		for t, n := range e.Events {
			if t < len(p.Events) && int64(len(p.Events[t])) != n && !opts.Salvage {
				return nil, &FormatError{File: path, Offset: r.LastFrameOffset(), Frame: FrameEnd,
					Err: fmt.Errorf("thread %d: end frame counts %d events, file holds %d", t, n, len(p.Events[t]))}
			}
		}
		if e.Dropped > 0 {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s: the collector dropped %d events (buffer full?)", path, e.Dropped))
		}
	}
	return p, nil
}

func (p *Process) appendChunk(c *Chunk) error {
	for len(p.Events) <= c.Thread {
		p.Events = append(p.Events, nil)
		p.Deps = append(p.Deps, nil)
	}
	evs := p.Events[c.Thread]
	last := int64(-1 << 63)
	if len(evs) > 0 {
		last = evs[len(evs)-1].Time
	}
	for i := range c.Events {
		if c.Events[i].Time < last {
			return &FormatError{File: p.File, Offset: c.Offset + int64(i),
				Err: fmt.Errorf("thread %d: event %d (%s) at %d ns goes back in time (previous event at %d ns)",
					c.Thread, len(evs)+i, c.Events[i].Kind, c.Events[i].Time, last)}
		}
		last = c.Events[i].Time
	}
	base := int64(len(p.Deps[c.Thread]))
	start := len(evs)
	evs = append(evs, c.Events...)
	if len(c.Deps) > 0 {
		for i := start; i < len(evs); i++ {
			if evs[i].Kind == TaskDeps {
				evs[i].Args[2] += base
			}
		}
		p.Deps[c.Thread] = append(p.Deps[c.Thread], c.Deps...)
	}
	p.Events[c.Thread] = evs
	return nil
}

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

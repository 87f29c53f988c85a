package trace

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
)

// FileName returns the file name of rank's process in a trace directory.
func FileName(rank int) string { return fmt.Sprintf("rank-%05d.ptrace", rank) }

// ManifestName is the manifest's file name in a trace directory.
const ManifestName = "manifest.json"

// ErrMissingRank marks a trace directory without the file of some rank.
var ErrMissingRank = errors.New("missing rank file")

// missingRankWhy says why a missing rank file stops the analysis: without
// it the other ranks' messages to and from it and their collective calls
// have no partner, and the results (wait states, clocks, POP over the
// ranks) would be silently wrong.
const missingRankWhy = "every rank's file is needed: the others' messages to and from that rank and their collective calls would have no partner; copy it back, or analyse a run whose files are all present"

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
	// RunID is the run identity of rank 0's file ("" for files written
	// before version 2); every other file must carry the same (see SameRun).
	RunID string
	// Version is the format version of rank 0's file; every file of the
	// run must have the same (its chunks are decoded by it).
	Version int
	// Warnings are tolerated problems of the listing, e.g. rank files the
	// manifest does not list.
	Warnings []string
}

// FilePath returns the full path of rank's file.
func (d *Dir) FilePath(rank int) string { return filepath.Join(d.Path, d.Files[rank].File) }

// NRanks returns the number of traced processes.
func (d *Dir) NRanks() int { return len(d.Files) }

var rankFileRE = regexp.MustCompile(`^rank-[0-9]{5,}\.ptrace$`)

// OpenDir lists a trace directory. With a manifest it checks every listed
// file exists; without one it takes rank-*.ptrace files and the rank count
// from the first file's header. A missing rank file is an error.
//
// Nothing a manifest or header claims is trusted before the directory
// backs it: the rank count may not exceed the files present (so a claimed
// count cannot size an allocation), file names must stay inside the
// directory, and every rank file must be a regular file. Rank files present
// but not part of the listed trace become warnings.
func OpenDir(path string) (*Dir, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory (a trace is a directory of rank-*.ptrace files)", path)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var rankFiles []string // rank-*.ptrace names present, sorted
	for _, e := range entries {
		if rankFileRE.MatchString(e.Name()) {
			rankFiles = append(rankFiles, e.Name())
		}
	}
	d := &Dir{Path: path}
	var h0 *Header // rank 0's header, once read
	mpath := filepath.Join(path, ManifestName)
	m, err := readManifestIn(mpath, len(entries))
	switch {
	case err == nil:
		d.Manifest = m
		if m.Ranks <= 0 {
			return nil, fmt.Errorf("%s: manifest lists %d ranks", mpath, m.Ranks)
		}
		// Every rank needs a file of its own: a count beyond the entries
		// of the directory is a corrupt manifest, found before anything is
		// sized by it.
		if m.Ranks > len(entries) {
			return nil, fmt.Errorf("%s: manifest lists %d ranks, but the directory holds only %d entries: corrupt manifest or missing rank files", mpath, m.Ranks, len(entries))
		}
		d.Files = make([]FileInfo, m.Ranks)
		for i := range d.Files {
			d.Files[i] = FileInfo{Rank: i, File: FileName(i)}
		}
		for _, f := range m.Files {
			if f.Rank < 0 || f.Rank >= m.Ranks {
				return nil, fmt.Errorf("%s: file %s has rank %d outside 0..%d", mpath, f.File, f.Rank, m.Ranks-1)
			}
			if _, err := confined(path, f.File); err != nil {
				return nil, fmt.Errorf("%s: rank %d: %w", mpath, f.Rank, err)
			}
			d.Files[f.Rank] = f
		}
	case errors.Is(err, os.ErrNotExist):
		if len(rankFiles) == 0 {
			return nil, fmt.Errorf("%s: no manifest and no rank-*.ptrace files: not a ptrace trace directory", path)
		}
		h, err := readHeaderOf(filepath.Join(path, FileName(0)))
		if err != nil {
			return nil, fmt.Errorf("rank 0: %w", err)
		}
		h0 = &h
		n := h.NRanks
		if n <= 0 {
			return nil, &FormatError{File: filepath.Join(path, FileName(0)), Offset: 0, Frame: FrameHeader, Err: fmt.Errorf("header gives %d ranks", n)}
		}
		if n > len(rankFiles) {
			// Name the first missing rank: it is among the first
			// len(rankFiles)+1, so the search is bounded by the directory.
			missing := len(rankFiles)
			for i := range rankFiles {
				if _, ok := slices.BinarySearch(rankFiles, FileName(i)); !ok {
					missing = i
					break
				}
			}
			return nil, fmt.Errorf("rank %d: %w: %s (the header of %s gives %d ranks, the directory holds %d rank-*.ptrace files; %s)",
				missing, ErrMissingRank, filepath.Join(path, FileName(missing)), FileName(0), n, len(rankFiles), missingRankWhy)
		}
		d.Files = make([]FileInfo, n)
		for i := range d.Files {
			d.Files[i] = FileInfo{Rank: i, File: FileName(i)}
		}
	default:
		return nil, err
	}
	for i := range d.Files {
		p, err := confined(path, d.Files[i].File)
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", i, err)
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w: %s: %v (%s)", i, ErrMissingRank, p, errors.Unwrap(err), missingRankWhy)
		}
		if err := checkRegular(p, st); err != nil {
			return nil, fmt.Errorf("rank %d: %w", i, err)
		}
		d.Files[i].Bytes = st.Size()
	}
	if h0 == nil {
		h, err := readHeaderOf(d.FilePath(0))
		if err != nil {
			return nil, fmt.Errorf("rank 0: %w", err)
		}
		h0 = &h
	}
	h := *h0
	if h.NRanks != len(d.Files) {
		return nil, &FormatError{File: d.FilePath(0), Offset: 0, Frame: FrameHeader,
			Err: fmt.Errorf("header gives %d ranks, the manifest %d: files of different runs?", h.NRanks, len(d.Files))}
	}
	d.RunID, d.Version = h.RunID, h.Version
	if d.Manifest != nil && d.Manifest.Version != h.Version {
		// One writer wrote the run: a version differing between its
		// manifest and a header is damage, and decoding the events with
		// the wrong version's coding would misread every argument.
		return nil, &FormatError{File: d.FilePath(0), Offset: 0, Frame: FrameHeader,
			Err: fmt.Errorf("header field version is %d, the manifest's is %d: a damaged header, or files of different runs", h.Version, d.Manifest.Version)}
	}
	if d.Manifest != nil && d.Manifest.RunID != "" && d.Manifest.RunID != h.RunID {
		return nil, fmt.Errorf("%s: run id %s, but %s has run id %q: files of different runs", mpath, d.Manifest.RunID, d.FilePath(0), h.RunID)
	}
	listed := make([]string, len(d.Files))
	for i, f := range d.Files {
		listed[i] = filepath.Clean(f.File)
	}
	slices.Sort(listed)
	for _, name := range rankFiles {
		if _, ok := slices.BinarySearch(listed, name); !ok {
			why := "the manifest does not list it"
			if d.Manifest == nil {
				why = fmt.Sprintf("beyond the %d ranks rank 0's header gives", len(d.Files))
			}
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s: ignored: %s (a file of another run?)", filepath.Join(path, name), why))
		}
	}
	return d, nil
}

// readHeaderOf reads the header frame of a regular file.
func readHeaderOf(path string) (Header, error) {
	f, err := OpenRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return Header{}, fmt.Errorf("%w: %v", ErrMissingRank, err)
	}
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	r, err := NewReader(f, path)
	if err != nil {
		return Header{}, err
	}
	return r.Header(), nil
}

// readManifestIn reads a manifest only if it is a regular file (a FIFO named
// manifest.json must not hang the listing) of a size its directory of n
// entries justifies: one line per rank file plus the command line.
func readManifestIn(path string, n int) (*Manifest, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(path, st); err != nil {
		return nil, err
	}
	if limit := int64(1<<20) + 4096*int64(n); st.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than a manifest of %d files can hold (%d): corrupt manifest", path, st.Size(), n, limit)
	}
	return ReadManifest(path)
}

// SameRun checks that a loaded file belongs to the run of rank 0's file
// (run id ref, file refFile). Files of version 1 carry no run id: two such
// files pass, but a file with a run id never mixes with one without.
func SameRun(ref, refFile string, h Header, file string) error {
	if h.RunID == ref {
		return nil
	}
	show := func(id string) string {
		if id == "" {
			return "none (format version 1)"
		}
		return id
	}
	return fmt.Errorf("%s has run id %s, %s has run id %s: files of different runs (use --force-mix to analyse them together; "+
		"an MPI program recorded without the collector's MPI wrappers leaves a run per process: record it with ptrace record --mpi)",
		file, show(h.RunID), refFile, show(ref))
}

// NewRunID returns a fresh run identity: 128 random bits as 32 hex digits.
// Producers write it into every header of one run (and the manifest).
func NewRunID() string {
	// math/rand/v2's generator is seeded from the system's entropy at
	// start; crypto/rand would link the FIPS module (0.2 MB) for an identity
	// that needs to be unique, not secret.
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	return hex.EncodeToString(b[:])
}

package trace

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeRankFiles writes n minimal complete rank files (header, one event,
// world communicator, end) into dir and a manifest when withManifest.
func writeRankFiles(t *testing.T, dir string, n int, runID string, withManifest bool) {
	t.Helper()
	files := make([]FileInfo, n)
	for r := 0; r < n; r++ {
		w, err := Create(filepath.Join(dir, FileName(r)), Header{Rank: r, NRanks: n, RunID: runID})
		if err != nil {
			t.Fatal(err)
		}
		w.AddComm(Communicator{Index: 0, ID: 0, Name: "MPI_COMM_WORLD", Runs: RankRuns{0, n, 1}})
		w.E(0, ThreadBegin, 10, ThreadInitial)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files[r] = FileInfo{Rank: r, File: FileName(r), Events: 1}
	}
	if withManifest {
		if err := WriteManifest(filepath.Join(dir, ManifestName), &Manifest{Ranks: n, RunID: runID, Files: files}); err != nil {
			t.Fatal(err)
		}
	}
}

func editManifest(t *testing.T, dir string, f func(m *Manifest)) {
	t.Helper()
	m, err := ReadManifest(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	f(m)
	if err := WriteManifest(filepath.Join(dir, ManifestName), m); err != nil {
		t.Fatal(err)
	}
}

// Claimed counts far beyond the files present fail at once, before any
// allocation sized by them (issue 16, item 2).
func TestOpenDirClaimedCountsBoundedByDirectory(t *testing.T) {
	for _, ranks := range []int{1e7, 1e9, 2e18} {
		dir := t.TempDir()
		writeRankFiles(t, dir, 2, "r", true)
		editManifest(t, dir, func(m *Manifest) { m.Ranks = ranks })
		start := time.Now()
		_, err := OpenDir(dir)
		if err == nil || !strings.Contains(err.Error(), "directory holds only") {
			t.Errorf("manifest ranks %d: %v", ranks, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("manifest ranks %d: %v to fail", ranks, d)
		}
	}
	// no manifest: the header's world size is checked the same way
	dir := t.TempDir()
	w, _ := Create(filepath.Join(dir, FileName(0)), Header{Rank: 0, NRanks: 1 << 20})
	w.Close()
	_, err := OpenDir(dir)
	if !errors.Is(err, ErrMissingRank) || !strings.Contains(err.Error(), "rank 1:") || !strings.Contains(err.Error(), "1048576 ranks") {
		t.Errorf("header nranks 2^20: %v", err)
	}
	w, _ = Create(filepath.Join(dir, FileName(0)), Header{Rank: 0, NRanks: 1 << 40})
	w.Close()
	if _, err := OpenDir(dir); err == nil || !strings.Contains(err.Error(), "world size") {
		t.Errorf("header nranks 2^40: %v", err)
	}
	// manifest and rank 0's header disagree
	dir = t.TempDir()
	writeRankFiles(t, dir, 2, "r", true)
	os.WriteFile(filepath.Join(dir, "spare"), nil, 0o644)
	editManifest(t, dir, func(m *Manifest) { m.Ranks = 3; m.Files = append(m.Files, FileInfo{Rank: 2, File: FileName(1)}) })
	if _, err := OpenDir(dir); err == nil || !strings.Contains(err.Error(), "header gives 2 ranks, the manifest 3") {
		t.Errorf("manifest 3 ranks, headers 2: %v", err)
	}
}

// Manifest file entries stay inside the trace directory (item 3).
func TestOpenDirConfinesManifestPaths(t *testing.T) {
	outside := t.TempDir()
	writeRankFiles(t, outside, 2, "r", false)
	for _, tc := range []struct{ name, file, want string }{
		{"dotdot", "../elsewhere/rank-00001.ptrace", "leaves the trace directory"},
		{"absolute", filepath.Join(outside, FileName(1)), "leaves the trace directory"},
		{"symlink", "link.ptrace", "outside the trace directory"},
		{"symlinked dir", "sub/rank-00001.ptrace", "outside the trace directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRankFiles(t, dir, 2, "r", true)
			os.Symlink(filepath.Join(outside, FileName(1)), filepath.Join(dir, "link.ptrace"))
			os.Symlink(outside, filepath.Join(dir, "sub"))
			editManifest(t, dir, func(m *Manifest) { m.Files[1].File = tc.file })
			_, err := OpenDir(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("file %q: %v", tc.file, err)
			}
		})
	}
	// a symbolic link that stays inside is fine
	dir := t.TempDir()
	writeRankFiles(t, dir, 2, "r", true)
	os.Rename(filepath.Join(dir, FileName(1)), filepath.Join(dir, "real.ptrace"))
	os.Symlink("real.ptrace", filepath.Join(dir, "in.ptrace"))
	editManifest(t, dir, func(m *Manifest) { m.Files[1].File = "in.ptrace" })
	if _, err := OpenDir(dir); err != nil {
		t.Errorf("link inside the directory: %v", err)
	}
}

// A FIFO, a directory or a device in place of a rank file is refused, never
// opened for reading (item 4).
func TestNonRegularFilesRefused(t *testing.T) {
	for _, kind := range []string{"fifo", "dir", "device"} {
		dir := t.TempDir()
		writeRankFiles(t, dir, 2, "r", false)
		victim := filepath.Join(dir, FileName(1))
		os.Remove(victim)
		switch kind {
		case "fifo":
			if err := syscall.Mkfifo(victim, 0o644); err != nil {
				t.Fatal(err)
			}
		case "dir":
			os.Mkdir(victim, 0o755)
		case "device":
			if err := os.Symlink("/dev/zero", victim); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan error, 2)
		go func() { _, err := OpenDir(dir); done <- err }()
		go func() { _, err := LoadProcess(victim, LoadOptions{}); done <- err }()
		for i := 0; i < 2; i++ {
			select {
			case err := <-done:
				// (the device is a link to /dev/zero, which the directory
				// listing refuses as leaving the directory already)
				if err == nil || !strings.Contains(err.Error(), "not a regular file") && !strings.Contains(err.Error(), "refused") {
					t.Errorf("%s: %v", kind, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: hangs", kind)
			}
		}
	}
}

// Files present but not part of the trace are counted warnings; run ids are
// read from rank 0 and compared by SameRun (item 5).
func TestOpenDirRunIdentity(t *testing.T) {
	dir := t.TempDir()
	writeRankFiles(t, dir, 2, "aaaa", true)
	other := t.TempDir()
	writeRankFiles(t, other, 4, "bbbb", false)
	b, _ := os.ReadFile(filepath.Join(other, FileName(3)))
	os.WriteFile(filepath.Join(dir, FileName(3)), b, 0o644)
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.RunID != "aaaa" || len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "rank-00003.ptrace: ignored: the manifest does not list it") {
		t.Errorf("run id %q, warnings %q", d.RunID, d.Warnings)
	}
	p, err := LoadProcess(filepath.Join(other, FileName(1)), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = SameRun(d.RunID, d.FilePath(0), p.Header, p.File)
	if err == nil || !strings.Contains(err.Error(), "run id bbbb") || !strings.Contains(err.Error(), "run id aaaa") ||
		!strings.Contains(err.Error(), d.FilePath(0)) || !strings.Contains(err.Error(), p.File) {
		t.Errorf("SameRun: %v", err)
	}
	if err := SameRun("", "a", Header{}, "b"); err != nil {
		t.Errorf("two version 1 files: %v", err)
	}
	if err := SameRun("", "a", Header{RunID: "x"}, "b"); err == nil {
		t.Error("a version 2 file mixed with a version 1 file passes")
	}
	// the manifest's run id must be rank 0's
	editManifest(t, dir, func(m *Manifest) { m.RunID = "cccc" })
	if _, err := OpenDir(dir); err == nil || !strings.Contains(err.Error(), "files of different runs") {
		t.Errorf("manifest of another run: %v", err)
	}
	if id := NewRunID(); len(id) != 32 || id == NewRunID() {
		t.Errorf("run id %q", id)
	}
}

// Runs spell any member list exactly, in order.
func TestRankRuns(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	lists := [][]int{{}, {5}, {0, 1, 2, 3}, {3, 2, 1, 0}, {0, 4, 8, 1, 5, 9}, {7, 7, 7}, {1, 3, 2}}
	for i := 0; i < 200; i++ {
		l := make([]int, rng.Intn(40))
		for j := range l {
			l[j] = rng.Intn(16)
		}
		lists = append(lists, l)
	}
	for _, l := range lists {
		c := Communicator{Runs: Compress(l)}
		if c.Size() != len(l) || !slices.Equal(c.MemberList(), l) && len(l) > 0 {
			t.Fatalf("%v: runs %v give %v", l, c.Runs, c.MemberList())
		}
		for i, m := range l {
			if c.Member(i) != m {
				t.Fatalf("%v: member %d is %d", l, i, c.Member(i))
			}
			if j := c.IndexOf(m); j != slices.Index(l, m) {
				t.Fatalf("%v: index of %d is %d, want %d", l, m, j, slices.Index(l, m))
			}
		}
		for r := -2; r < 20; r++ {
			if c.Contains(r) != slices.Contains(l, r) {
				t.Fatalf("%v: contains %d = %v", l, r, c.Contains(r))
			}
		}
		if c.Member(len(l)) != -1 || c.Member(-1) != -1 {
			t.Fatalf("%v: member out of range", l)
		}
	}
	if got := Compress([]int{0, 3, 6, 9, 12}); !slices.Equal(got, []int{0, 5, 3}) {
		t.Errorf("strided column: %v", got)
	}
}

// readComms writes comms with a header of nranks and the given version and
// reads them back, returning the comms frame's size too.
func readComms(t *testing.T, nranks, version int, comms ...Communicator) ([]Communicator, int) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{NRanks: nranks, Version: version})
	if err != nil {
		t.Fatal(err)
	}
	before := 0
	for _, c := range comms {
		w.AddComm(c)
	}
	w.Flush()
	before = buf.Len()
	w.Close()
	r, err := NewReader(bytes.NewReader(buf.Bytes()), "c")
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range r.Chunks() {
		if err != nil {
			t.Fatal(err)
		}
	}
	return r.Tables().Comms, buf.Len() - before
}

// Version 2 communicators cost the same bytes whatever the world size; the
// world is implicit; version 1 member lists still read (item 8).
func TestCommsCompactAndVersion1(t *testing.T) {
	grid := func(n int) []Communicator {
		col := make([]int, 0, n/64)
		for r := 5; r < n; r += 64 {
			col = append(col, r)
		}
		return []Communicator{
			{Index: 0, ID: 0, Name: "MPI_COMM_WORLD", Members: MemberRange(n)},
			{Index: 1, ID: 7, Name: "column", Members: col},
			{Index: 2, ID: 8, Name: "odd", Members: []int{9, 2, 4}},
		}
	}
	var sizes []int
	for _, n := range []int{256, 4096, 100000} {
		got, size := readComms(t, n, 0, grid(n)...)
		sizes = append(sizes, size)
		for i, c := range grid(n) {
			if !slices.Equal(got[i].MemberList(), c.Members) || got[i].ID != c.ID || got[i].Name != c.Name {
				t.Fatalf("%d ranks: comm %d read back as %+v", n, i, got[i])
			}
		}
		if got[0].Members != nil || len(got[0].Runs) != 3 {
			t.Errorf("%d ranks: world held as %d members, %d run values", n, len(got[0].Members), len(got[0].Runs))
		}
	}
	if sizes[2]-sizes[0] > 16 {
		t.Errorf("comm frame + end frame bytes grow with the world: %v", sizes)
	}
	got, size1 := readComms(t, 4096, 1, grid(4096)...)
	if !slices.Equal(got[1].MemberList(), grid(4096)[1].Members) || got[0].Size() != 4096 || size1 < 4096 {
		t.Errorf("version 1: %d bytes, world size %d", size1, got[0].Size())
	}
}

// Corrupt runs are errors, not allocations.
func TestCommsCorruptRuns(t *testing.T) {
	for _, runs := range [][]int{{0, 1}, {0, 5, 1}, {-1, 1, 1}, {0, 1 << 40, 0}, {3, 2, -4}, {0, 4, 1, 0, 4, 1}} {
		_, err := commFromWire(&commWire{ID: 3, Runs: runs}, 4)
		if err == nil {
			t.Errorf("runs %v accepted in a 4-rank world", runs)
		}
	}
	if c, err := commFromWire(&commWire{ID: 3, Runs: []int{3, 4, -1}}, 4); err != nil || !slices.Equal(c.MemberList(), []int{3, 2, 1, 0}) {
		t.Errorf("reversed world: %v %v", c.MemberList(), err)
	}
}

// replaceEnd rewrites the end frame (the last frame) of a file image.
func replaceEnd(t *testing.T, b []byte, e End) []byte {
	t.Helper()
	off := 0
	last := -1
	for off < len(b) {
		_, _, n, err := parseFrameHeader(b[off : off+frameHeaderLen])
		if err != nil {
			t.Fatal(err)
		}
		last = off
		off += frameHeaderLen + int(n)
	}
	var end bytes.Buffer
	w2 := &Writer{w: bufioWriter(&end)}
	w2.writeMsgpack(FrameEnd, &e)
	w2.w.Flush()
	return append(append([]byte(nil), b[:last]...), end.Bytes()...)
}

// Salvage says what it did (issue 16, item 6): a count mismatch, a dropped
// tail and a time-order cut are each a warning and make the process
// partial; without salvage they are errors naming file and offset.
func TestSalvageSaysWhatItDid(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, times []int64) []byte {
		var buf bytes.Buffer
		w, _ := NewWriter(&buf, Header{NRanks: 1})
		w.SetChunkEvents(2)
		for _, tm := range times {
			w.E(0, RegionEnter, tm, 0)
			w.E(1, RegionEnter, 100, 0)
		}
		w.String("x")
		w.Close()
		os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644)
		return buf.Bytes()
	}
	load := func(name string, salvage bool) (*Process, error) {
		return LoadProcess(filepath.Join(dir, name), LoadOptions{Salvage: salvage})
	}

	// counts: the end frame claims 7 events on thread 0, 4 are present
	b := write("counts", []int64{1, 2, 3, 4})
	os.WriteFile(filepath.Join(dir, "counts"), replaceEnd(t, b, End{Events: []int64{7, 4}}), 0o644)
	if _, err := load("counts", false); err == nil || !strings.Contains(err.Error(), "end frame counts 7 events, file holds 4") || !strings.Contains(err.Error(), "offset") {
		t.Errorf("count mismatch without salvage: %v", err)
	}
	p, err := load("counts", true)
	if err != nil || !p.Partial || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "end frame counts 7") {
		t.Errorf("count mismatch with salvage: %v, partial %v, %q", err, p != nil && p.Partial, p.Warnings)
	}

	// time order: thread 0 jumps to 2^63-1 and back; salvage cuts it there
	// and drops its later chunks, thread 1 stays whole
	write("order", []int64{1, 2, 1<<63 - 1, 4, 5, 6})
	if _, err := load("order", false); err == nil || !strings.Contains(err.Error(), "goes back in time") {
		t.Errorf("time order without salvage: %v", err)
	}
	p, err = load("order", true)
	if err != nil {
		t.Fatal(err)
	}
	if p.Events[0].N != 3 || p.Events[1].N != 6 || !p.Partial || len(p.Warnings) != 1 ||
		!strings.Contains(p.Warnings[0], "thread 0 cut") || !strings.Contains(p.Warnings[0], "dropped 3 events") {
		t.Errorf("time order with salvage: %d+%d events, partial %v, %q", p.Events[0].N, p.Events[1].N, p.Partial, p.Warnings)
	}

	// a damaged tail: kept events before it, one warning, partial
	b = write("tail", []int64{1, 2, 3, 4})
	b[len(b)-40] ^= 0xff
	os.WriteFile(filepath.Join(dir, "tail"), b, 0o644)
	p, err = load("tail", true)
	if err != nil || !p.Partial || !strings.Contains(strings.Join(p.Warnings, "\n"), "salvage: kept the") {
		t.Errorf("damaged tail: %v %v %q", err, p != nil && p.Partial, p.Warnings)
	}
	// a complete file is not partial
	write("ok", []int64{1, 2})
	if p, err := load("ok", true); err != nil || p.Partial || len(p.Warnings) != 0 {
		t.Errorf("complete file: %v %+v", err, p)
	}
}

func TestSalvageHelpers(t *testing.T) {
	evs := []Event{{Time: 1}, {Time: 3}, {Time: 2}, {Time: 9}}
	if TimeOrderCut(evs, 0) != 2 || TimeOrderCut(evs[:2], 0) != 2 || TimeOrderCut(evs, 5) != 0 {
		t.Error("TimeOrderCut")
	}
	got := CountMismatches(&End{Events: []int64{2, 3}}, []int64{2, 1, 4})
	if len(got) != 2 || got[0] != (CountMismatch{1, 3, 1}) || got[1] != (CountMismatch{2, 0, 4}) {
		t.Errorf("CountMismatches: %v", got)
	}
}

// A manifest larger than its directory can justify is refused unread.
func TestOpenDirManifestSizeBounded(t *testing.T) {
	dir := t.TempDir()
	writeRankFiles(t, dir, 2, "r", true)
	big := bytes.Repeat([]byte(" "), 2<<20)
	os.WriteFile(filepath.Join(dir, ManifestName), big, 0o644)
	if _, err := OpenDir(dir); err == nil || !strings.Contains(err.Error(), "corrupt manifest") {
		t.Errorf("2 MiB manifest: %v", err)
	}
}

// validate names files of other runs and files not part of the trace.
func TestValidateDirRunIdentity(t *testing.T) {
	dir := t.TempDir()
	writeRankFiles(t, dir, 2, "aaaa", true)
	other := t.TempDir()
	writeRankFiles(t, other, 3, "bbbb", false)
	for _, r := range []int{1, 2} {
		b, _ := os.ReadFile(filepath.Join(other, FileName(r)))
		os.WriteFile(filepath.Join(dir, FileName(r)), b, 0o644)
	}
	ps, _, err := ValidateDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range ps {
		msgs = append(msgs, p.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"rank-00002.ptrace: ignored", "has run id bbbb"} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
}

package otf2

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// seeds adds the committed archive's files of the given kind to f's corpus
// (on top of the committed testdata/fuzz corpus).
func seeds(f *testing.F, files ...string) {
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// oldSeeds returns the files of the hand-encoded archive of OTF2 1.0 to 2.3
// record layouts (encode_test.go) whose names match suffix.
func oldSeeds(f *testing.F, suffix string) []string {
	return archiveSeeds(f, oldArchive, suffix)
}

// archiveSeeds returns the files whose names match suffix of the archive
// write writes.
func archiveSeeds(f *testing.F, write func(testing.TB, string) string, suffix string) []string {
	dir := f.TempDir()
	write(f, dir)
	m, err := filepath.Glob(filepath.Join(dir, "*"+suffix))
	if err != nil {
		f.Fatal(err)
	}
	m2, _ := filepath.Glob(filepath.Join(dir, "traces", "*"+suffix))
	return append(m, m2...)
}

// FuzzEvents: the event decoder never panics, loops or allocates beyond its
// chunk on arbitrary bytes; it returns records or an error.
func FuzzEvents(f *testing.F) {
	seeds(f, "testdata/halo/traces/0.evt", "testdata/halo/traces/1.evt", "testdata/halo/traces/2.evt",
		"testdata/scorep-7.1-pingpong/traces/0.evt", "testdata/scorep-7.1-pingpong/traces/1.evt",
		"testdata/scorep-4.0-unwind-waits/traces/0.evt")
	seeds(f, oldSeeds(f, ".evt")...)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, chunk := range []uint64{256, 4096, 256 << 10} {
			r, err := NewEventReader(bytes.NewReader(data), "fuzz.evt", chunk)
			if err != nil {
				t.Fatal(err)
			}
			var e Event
			for n := 0; ; n++ {
				ok, err := r.Next(&e)
				if err != nil || !ok {
					break
				}
				if n > len(data) {
					t.Fatalf("%d events from %d bytes", n, len(data))
				}
			}
		}
	})
}

// FuzzDefinitions: the global and local definition decoders never panic or
// allocate beyond the data's size on arbitrary bytes.
func FuzzDefinitions(f *testing.F) {
	seeds(f, "testdata/halo/traces.def", "testdata/halo/traces/0.def", "testdata/halo/traces/2.def",
		"testdata/scorep-7.1-pingpong/traces.def", "testdata/scorep-7.1-pingpong/traces/1.def",
		"testdata/scorep-4.0-unwind-waits/traces.def", "testdata/scorep-4.0-unwind-waits/traces/1.def")
	seeds(f, oldSeeds(f, ".def")...)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, chunk := range []uint64{256, 256 << 10, 4 << 20} {
			// The limit bounds what the definitions may hold, whatever
			// their counts claim.
			if g, err := decodeGlobalDefs(bytes.NewReader(data), "fuzz.def", chunk, 16<<20); err == nil && g.Memory > 16<<20 {
				t.Fatalf("definitions hold %d bytes, over the limit", g.Memory)
			}
			decodeLocalDefs(bytes.NewReader(data), "fuzz.def", chunk)
		}
	})
}

// FuzzAnchor: the anchor-file parser on arbitrary bytes.
func FuzzAnchor(f *testing.F) {
	seeds(f, "testdata/halo/traces.otf2", "testdata/scorep-7.1-pingpong/traces.otf2")
	seeds(f, oldSeeds(f, ".otf2")...)
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeAnchor(data, "fuzz.otf2")
	})
}

// FuzzConvert: whatever a location's event file holds, a conversion that
// succeeds writes a stream ptrace loads: every problem of the archive is
// the conversion's (an error or a warning naming the archive's file and
// offset), never one of the converted stream.
func FuzzConvert(f *testing.F) {
	seeds(f, "testdata/halo/traces/0.evt", "testdata/halo/traces/1.evt", "testdata/scorep-4.0-unwind-waits/traces/0.evt")
	for _, p := range oldSeeds(f, ".evt") {
		seeds(f, p)
	}
	seeds(f, archiveSeeds(f, flushArchive, ".evt")...)
	src := "testdata/halo"
	files := rank0Free(f, src)
	f.Fuzz(func(t *testing.T, data []byte) {
		convertsOrErrs(t, files, data, nil)
	})
}

// FuzzConvertPthreads: FuzzConvert's property on the master's events of a
// process of pthread mutexes, condition waits and joins (encode_test.go's
// pthreadSyncArchive, whose definitions give those regions), seeded with
// its own event files: whatever the records, the conversion errs or
// writes a stream that loads.
func FuzzConvertPthreads(f *testing.F) {
	src := f.TempDir()
	pthreadSyncArchive(f, src, false)
	bad := f.TempDir()
	pthreadSyncArchive(f, bad, true)
	seeds(f, filepath.Join(src, "traces", "0.evt"), filepath.Join(src, "traces", "1.evt"),
		filepath.Join(bad, "traces", "0.evt"), filepath.Join(bad, "traces", "1.evt"))
	files := rank0Free(f, src)
	f.Fuzz(func(t *testing.T, data []byte) {
		convertsOrErrs(t, files, data, nil)
	})
}

// FuzzConvertCut: FuzzConvert's property under a cut of recording gaps
// (gaps.go: the communication records inside dropped, the others on a copy
// of their communicator per stretch), on the hand-encoded archive's rank 0
// seeded with its event files with gaps, flushes and unnested regions; the
// input's first byte gives the number of gaps of the cut (up to 15), laid
// every 700 ns from 1500 ns.
func FuzzConvertCut(f *testing.F) {
	var evts []string
	for _, write := range []func(testing.TB, string) string{oldArchive, flushArchive, unnestedArchive,
		func(t testing.TB, d string) string { return gapsArchive(t, d, 3) }} {
		evts = append(evts, archiveSeeds(f, write, "0.evt")...)
	}
	for _, p := range evts {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, n := range []byte{0, 1, 3} {
			f.Add(append([]byte{n}, b...))
		}
	}
	src := f.TempDir()
	gapsArchive(f, src, 3)
	files := rank0Free(f, src)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		var cut []Gap
		for i := range int64(data[0] & 15) {
			cut = append(cut, Gap{Off: 1500 + 700*i, On: 1800 + 700*i})
		}
		convertsOrErrs(t, files, data[1:], cut)
	})
}

// rank0Free reads the files of the two-process archive in src but rank 0's
// events, which the fuzz targets write from their input (withRank0).
func rank0Free(f *testing.F, src string) map[string][]byte {
	files := map[string][]byte{}
	for _, name := range []string{"traces.otf2", "traces.def", "traces/0.def", "traces/1.def", "traces/1.evt"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			f.Fatal(err)
		}
		files[name] = b
	}
	return files
}

// convertsOrErrs checks the conversion targets' property on the archive of
// files with rank 0's events evt: converting rank 0 under cut (nil: none,
// as Convert) errs, or writes a stream that loads.
func convertsOrErrs(t *testing.T, files map[string][]byte, evt []byte, cut []Gap) {
	a, err := Open(withRank0(t, files, evt))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := a.ConvertCut(0, &buf, cut); err != nil {
		return
	}
	if _, err := trace.LoadProcessReader(&buf, "converted", trace.LoadOptions{}); err != nil {
		t.Fatalf("the conversion succeeded, its stream does not load: %v", err)
	}
}

// withRank0 writes files and rank 0's events evt as an archive in a new
// directory, which it returns.
func withRank0(t *testing.T, files map[string][]byte, evt []byte) string {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "traces"), 0o755)
	for name, b := range files {
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "traces", "0.evt"), evt, 0o644)
	return dir
}

// realArchives reads every committed archive written by a real tracer
// (Score-P 2.0–8.4, TAU 2.35) but its location 0's events, in the order of
// their directory names.
func realArchives(f *testing.F) (names []string, archives []map[string][]byte, evts [][]byte) {
	dirs, err := filepath.Glob("testdata/*/traces.otf2")
	if err != nil {
		f.Fatal(err)
	}
	for _, anchor := range dirs {
		dir := filepath.Dir(anchor)
		if filepath.Base(dir) == "halo" { // the hand-encoded one FuzzConvert takes
			continue
		}
		files := map[string][]byte{}
		var evt []byte
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			if rel != "traces.otf2" && rel != "traces.def" && filepath.Dir(rel) != "traces" {
				return nil // the archive's notes, scout's figures
			}
			b, err := os.ReadFile(p)
			if rel == filepath.Join("traces", "0.evt") {
				evt = b
			} else {
				files[rel] = b
			}
			return err
		})
		if err != nil {
			f.Fatal(err)
		}
		if evt == nil {
			f.Fatalf("%s: no location 0", dir)
		}
		names = append(names, dir)
		archives = append(archives, files)
		evts = append(evts, evt)
	}
	if len(archives) == 0 {
		f.Fatal("no archive in testdata")
	}
	return names, archives, evts
}

// FuzzConvertArchives: FuzzConvert's property on the archives real tracers
// wrote, each with its own definitions: the input's first byte picks the
// archive, the rest is its location 0's events, seeded with the recorded
// ones. Their records (nonblocking collectives and their requests,
// one-sided windows, persistent requests, threads, recording gaps, the
// older Score-P and TAU layouts) meet definitions that name them, which a
// mutation of the hand-encoded archive's events seldom reaches.
func FuzzConvertArchives(f *testing.F) {
	_, archives, evts := realArchives(f)
	for i, evt := range evts {
		f.Add(append([]byte{byte(i)}, evt...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		convertsOrErrs(t, archives[int(data[0])%len(archives)], data[1:], nil)
	})
}

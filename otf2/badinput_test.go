package otf2_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/otf2"
)

// copyArchive copies the committed archive into a temporary directory.
func copyArchive(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk("testdata/halo", func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/halo", p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// firstRecord returns the file offset of location loc's first event of type
// typ in the archive at dir.
func firstRecord(t *testing.T, dir string, loc uint64, typ uint8) int64 {
	t.Helper()
	a, err := otf2.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.OpenEvents(loc)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var e otf2.Event
	for {
		ok, err := r.Next(&e)
		if err != nil || !ok {
			t.Fatalf("no record of type %d in location %d: %v", typ, loc, err)
		}
		if e.Type == typ {
			return e.Offset
		}
	}
}

func patch(t *testing.T, path string, off int64, b byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[off] = b
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func convertAll(dir string) (*otf2.Stats, error) {
	a, err := otf2.Open(dir)
	if err != nil {
		return nil, err
	}
	var st *otf2.Stats
	for i := 0; i < a.NumProcesses(); i++ {
		if st, err = a.Convert(i, io.Discard); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one with %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

func TestValidArchiveConverts(t *testing.T) {
	a, err := otf2.Open(copyArchive(t))
	if err != nil {
		t.Fatal(err)
	}
	if a.NumProcesses() != 2 {
		t.Fatalf("%d processes, want 2", a.NumProcesses())
	}
	for i := 0; i < 2; i++ {
		p := a.Process(i)
		if p.Threads != 2 || p.Events == 0 || p.Bytes == 0 {
			t.Errorf("process %d: %+v", i, p)
		}
		st, err := a.Convert(i, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		// the archive's MPI enters carry attribute lists, which must be skipped
		if st.Records != p.Events || st.AttrLists == 0 || st.Unknown != 0 || len(st.Warnings) != 0 {
			t.Errorf("process %d: %+v, location definitions count %d events", i, st, p.Events)
		}
	}
}

func TestBadInput(t *testing.T) {
	t.Run("missing event file", func(t *testing.T) {
		dir := copyArchive(t)
		os.Remove(filepath.Join(dir, "traces", "3.evt"))
		_, err := convertAll(dir)
		wantErr(t, err, filepath.Join("traces", "3.evt"), "no such file")
	})
	t.Run("missing global definitions", func(t *testing.T) {
		dir := copyArchive(t)
		os.Remove(filepath.Join(dir, "traces.def"))
		_, err := otf2.Open(dir)
		wantErr(t, err, "traces.def", "no such file")
	})
	t.Run("missing local definitions", func(t *testing.T) {
		dir := copyArchive(t)
		os.Remove(filepath.Join(dir, "traces", "2.def"))
		st, err := convertAll(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "2.def") {
			t.Errorf("warnings %q, want one naming 2.def", st.Warnings)
		}
	})
	t.Run("truncated event file", func(t *testing.T) {
		dir := copyArchive(t)
		p := filepath.Join(dir, "traces", "0.evt")
		b, _ := os.ReadFile(p)
		for _, n := range []int{len(b) - 2, len(b) / 2, 30} {
			os.WriteFile(p, b[:n], 0o644)
			_, err := convertAll(dir)
			wantErr(t, err, p, "offset", "truncated")
		}
	})
	t.Run("corrupt compressed integer", func(t *testing.T) {
		dir := copyArchive(t)
		off := firstRecord(t, dir, 0, otf2.EvEnter)
		p := filepath.Join(dir, "traces", "0.evt")
		patch(t, p, off+1, 7) // a region id of 7 bytes: more than 4
		_, err := convertAll(dir)
		wantErr(t, err, p, "offset", "corrupt compressed integer")
	})
	t.Run("unknown record type", func(t *testing.T) {
		dir := copyArchive(t)
		off := firstRecord(t, dir, 2, otf2.EvMpiIsend)
		patch(t, filepath.Join(dir, "traces", "2.evt"), off, 200)
		a, err := otf2.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		st, err := a.Convert(1, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if st.Unknown != 1 || len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "2.evt") {
			t.Errorf("unknown %d, warnings %q: want one counted warning naming 2.evt", st.Unknown, st.Warnings)
		}
	})
	t.Run("newer trace format", func(t *testing.T) {
		dir := copyArchive(t)
		anchor := filepath.Join(dir, "traces.otf2")
		patch(t, anchor, 8, 3) // trace format version (OTF2 3.x writes 2)
		_, err := otf2.Open(dir)
		wantErr(t, err, anchor, "offset 8", "newer")
	})
	t.Run("newer OTF2 version", func(t *testing.T) {
		// The OTF2 version number gates nothing: records appended by later
		// versions are skipped by their length (OTF2's own rule).
		dir := copyArchive(t)
		patch(t, filepath.Join(dir, "traces.otf2"), 9, 4) // major version
		if _, err := convertAll(dir); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("not an archive", func(t *testing.T) {
		dir := copyArchive(t)
		anchor := filepath.Join(dir, "traces.otf2")
		patch(t, anchor, 3, 'X')
		_, err := otf2.Open(dir)
		wantErr(t, err, anchor, "not an OTF2 anchor")
	})
}

package outfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// failAfter is a writer that fails once n bytes are written, as a file
// system does when the disk fills.
type failAfter struct {
	w io.Writer
	n int
}

var errFull = errors.New("no space left on device")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k, _ := f.w.Write(p[:f.n])
		f.n = 0
		return k, errFull
	}
	f.n -= len(p)
	return f.w.Write(p)
}

// A write that fails midway leaves the destination as it was (absent, or
// its previous content) and no temporary file; one that succeeds replaces
// it whole, keeping the permission bits of the file it replaces.
func TestWriteWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "report.json")
	big := bytes.Repeat([]byte("x"), 10000)
	err := Write(dst, func(w io.Writer) error {
		_, err := (&failAfter{w, 8192}).Write(big)
		return err
	})
	if !errors.Is(err, errFull) {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Errorf("a failed write left %s (%v)", dst, err)
	}
	if err := os.WriteFile(dst, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	// A renderer that ignores its write errors still fails the write.
	err = Write(dst, func(w io.Writer) error {
		w.Write([]byte("new"))
		w.(*Checked).W = &failAfter{io.Discard, 0}
		w.Write(big)
		w.Write([]byte("more"))
		return nil
	})
	if !errors.Is(err, errFull) {
		t.Errorf("ignored write error: %v", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "old" {
		t.Errorf("destination now %q", b)
	}
	if err := Write(dst, func(w io.Writer) error { _, err := w.Write(big); return err }); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dst)
	if err != nil || st.Size() != int64(len(big)) || st.Mode().Perm() != 0o640 {
		t.Errorf("replaced file: %v, %v", st, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d entries in the directory, want the destination only", len(entries))
	}
}

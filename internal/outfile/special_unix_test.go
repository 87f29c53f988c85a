//go:build unix

package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A destination that is no file is written in place and stays what it
// is: a named pipe gives its reader the content, a character device (a
// node like /dev/null, made here) stays a device; a symbolic link to a
// file keeps pointing at it, and the file gets the content.
func TestWriteSpecialDestinations(t *testing.T) {
	dir := t.TempDir()
	content := []byte("{\"report\": 1}\n")
	write := func(w io.Writer) error { _, err := w.Write(content); return err }

	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // opening blocks until the writer opens
		got <- b
	}()
	if err := Write(fifo, write); err != nil {
		t.Fatalf("named pipe: %v", err)
	}
	select {
	case b := <-got:
		if string(b) != string(content) {
			t.Errorf("the pipe's reader got %q, want %q", b, content)
		}
	case <-time.After(10 * time.Second):
		// Nothing opened the pipe: let the reader go.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Errorf("the pipe's reader got nothing: Write did not write to the pipe")
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the named pipe is now %v (%v)", st.Mode(), err)
	}

	target := filepath.Join(dir, "real.json")
	if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, write); err != nil {
		t.Fatalf("link: %v", err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is now %v (%v)", st.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != string(content) {
		t.Errorf("the link's file holds %q", b)
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o640 {
		t.Errorf("the link's file has mode %v, want its own 0640", st.Mode().Perm())
	}

	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		if errors.Is(err, syscall.EPERM) {
			t.Skip("making a device node needs root: the device case is not run")
		}
		t.Fatal(err)
	}
	if err := Write(null, write); err != nil {
		t.Fatalf("device: %v", err)
	}
	if st, err := os.Lstat(null); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("the device node is now %v (%v): replaced by a file", st.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Errorf("%d entries in the directory, want the pipe, the link, its file and the device: a temporary file left behind?", len(ents))
	}
}

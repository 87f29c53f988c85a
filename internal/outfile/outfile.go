// Package outfile writes output files so that a failed write never leaves
// a truncated file behind nor replaces a good one: the content goes to a
// temporary file in the destination's directory, every write is checked,
// the file is synced and closed, and only then renamed over the
// destination. On a full disk the destination keeps what it held before
// (or does not exist), and the caller gets the error. A destination that
// is no file (/dev/null, a named pipe, /dev/stdout on a pipe or a
// terminal) is written in place, and a symbolic link to a file keeps
// pointing at it.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// Write creates or replaces path with what fn writes. The temporary file is
// created with mode 0666 less the umask, as os.Create would create path; a
// file being replaced keeps its permission bits.
func Write(path string, fn func(io.Writer) error) (err error) {
	st, serr := os.Stat(path) // through a link: what the write replaces
	if serr == nil && !st.Mode().IsRegular() && !st.IsDir() {
		// Renaming a file over a device or a pipe would replace it (run
		// as root, --json /dev/null replaced the system's /dev/null with
		// the report), and whatever reads the pipe would get nothing.
		return writeInPlace(path, fn)
	}
	if real, rerr := filepath.EvalSymlinks(path); rerr == nil {
		// The file a link names is replaced, not the link.
		path = real
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := createTemp(dir, base)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := &Checked{W: f}
	err = fn(w)
	if err == nil {
		err = w.Err
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if serr == nil && st.Mode().IsRegular() {
		if err = f.Chmod(st.Mode().Perm()); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	// A write error the file system reports late (a quota, NFS) comes out
	// of Sync or Close, not Write.
	if err = f.Sync(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return nil
}

// writeInPlace writes what fn writes to path, which exists and is no
// regular file, as a shell's redirection would: no temporary file, no
// truncation, every write checked.
func writeInPlace(path string, fn func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	w := &Checked{W: f}
	err = fn(w)
	if err == nil {
		err = w.Err
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// createTemp opens a new file beside base in dir, exclusively, with mode
// 0666 so that the umask decides its permissions (os.CreateTemp uses 0600).
func createTemp(dir, base string) (*os.File, error) {
	for range 100 {
		// A name that is unused, not secret: math/rand/v2, whose generator
		// the runtime seeds, rather than crypto/rand and the FIPS module.
		name := filepath.Join(dir, fmt.Sprintf(".%s.%012x.tmp", base, rand.Uint64()>>16))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("%s: no unused temporary name in %s", base, dir)
}

// Checked is a writer that keeps the first error of W and refuses every
// write after it, so that a writer whose callers ignore errors (a text
// renderer printing line by line) still reports a lost output at the end.
type Checked struct {
	W   io.Writer
	Err error
}

func (c *Checked) Write(p []byte) (int, error) {
	if c.Err != nil {
		return 0, c.Err
	}
	n, err := c.W.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		c.Err = err
	}
	return n, err
}

package trace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// OpenRegular opens path for reading only if it is a regular file. A named
// pipe, device or directory in place of a rank file would block a reader
// forever or feed it unbounded data, so it is refused with an error naming
// the file. The file is opened non-blocking (which leaves reads of regular
// files unchanged) and checked again through the descriptor, so a file
// swapped for a pipe between the two checks cannot block the open either.
func OpenRegular(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(path, st); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err = f.Stat()
	if err == nil {
		err = checkRegular(path, st)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkRegular explains why a non-regular file cannot be a trace file.
func checkRegular(path string, st os.FileInfo) error {
	m := st.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&os.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		what = "a socket"
	case m&os.ModeDevice != 0:
		what = "a device"
	}
	return fmt.Errorf("%s: %s, not a regular file: refusing to read it as a trace file", path, what)
}

// confined returns the path of name inside dir, refusing names that leave
// the directory: absolute paths, ".." components, and symbolic links whose
// target lies outside dir. A manifest is data, and a trace directory copied
// from elsewhere must not make ptrace read arbitrary files.
func confined(dir, name string) (string, error) {
	if name == "" || !filepath.IsLocal(name) || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("file name %q leaves the trace directory (absolute or with \"..\"): refused", name)
	}
	p := filepath.Join(dir, name)
	st, err := os.Lstat(p)
	if err != nil || st.Mode()&os.ModeSymlink == 0 {
		// A missing file is reported by the caller; intermediate symbolic
		// links are resolved below as well.
		if err != nil || !hasSymlinkedParent(dir, name) {
			return p, nil
		}
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("file %q: %w", name, err)
	}
	rel, err := filepath.Rel(realDir, target)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("file %q is a symbolic link to %s, outside the trace directory: refused", name, target)
	}
	return p, nil
}

// hasSymlinkedParent reports whether a directory component of name (inside
// dir) is a symbolic link.
func hasSymlinkedParent(dir, name string) bool {
	for d := filepath.Dir(name); d != "." && d != "/"; d = filepath.Dir(d) {
		if st, err := os.Lstat(filepath.Join(dir, d)); err == nil && st.Mode()&os.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

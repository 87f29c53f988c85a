package spill

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestAppendReadAt: what is appended reads back at the offsets Append
// returned, the file is gone from its directory from the start, and a
// read past the end fails.
func TestAppendReadAt(t *testing.T) {
	dir := diskDir(t)
	f, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Fatalf("directory holds %d entries (%v); want the file unnamed", len(ents), err)
	}
	var parts [][]byte
	var offs []int64
	for i := range 50 {
		p := bytes.Repeat([]byte{byte(i)}, 1+i*37)
		off, err := f.Append(p)
		if err != nil {
			t.Fatal(err)
		}
		parts, offs = append(parts, p), append(offs, off)
	}
	for i, p := range parts {
		got := make([]byte, len(p))
		if _, err := f.ReadAt(got, offs[i]); err != nil || !bytes.Equal(got, p) {
			t.Fatalf("part %d at %d: %v, read back differs", i, offs[i], err)
		}
	}
	if _, err := f.ReadAt(make([]byte, 8), f.Size()-4); err == nil {
		t.Error("a read past the end did not fail")
	}
}

// TestCreateFails: a directory that is not there is an error naming the
// spill file, not a panic.
func TestCreateFails(t *testing.T) {
	if _, err := Create(t.TempDir() + "/missing/dir"); err == nil {
		t.Fatal("Create in a missing directory succeeded")
	}
}

// diskDir returns a temporary directory on a disk: t.TempDir() unless
// it is held in memory (a tmpfs /tmp), then one in the package's own.
func diskDir(t *testing.T) string {
	dir := t.TempDir()
	if !inMemory(dir) {
		return dir
	}
	dir, err := os.MkdirTemp(".", "spilltest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestCreateInMemory: a directory on a tmpfs or ramfs (found in the
// mount table) is refused with ErrInMemory, and no file is made there.
func TestCreateInMemory(t *testing.T) {
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Skipf("no mount table to find a tmpfs in: %v", err)
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || (f[2] != "tmpfs" && f[2] != "ramfs") {
			continue
		}
		before, _ := os.ReadDir(f[1])
		s, err := Create(f[1])
		if !errors.Is(err, ErrInMemory) {
			if s != nil {
				s.Close()
			}
			t.Fatalf("Create(%q) on a %s: %v, want ErrInMemory", f[1], f[2], err)
		}
		if after, _ := os.ReadDir(f[1]); len(after) != len(before) {
			t.Errorf("Create(%q) left %d entries where there were %d", f[1], len(after), len(before))
		}
		return
	}
	t.Skip("no tmpfs or ramfs mounted here")
}

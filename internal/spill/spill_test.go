package spill

import (
	"bytes"
	"os"
	"testing"
)

// TestAppendReadAt: what is appended reads back at the offsets Append
// returned, the file is gone from its directory from the start, and a
// read past the end fails.
func TestAppendReadAt(t *testing.T) {
	dir := t.TempDir()
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

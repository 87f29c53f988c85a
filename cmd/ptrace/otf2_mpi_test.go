//go:build mpi

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// An OTF2 archive analyses under mpirun as in the embedded default: each
// analysis rank converts only its own processes.
func TestAnalyzeOTF2UnderMPI(t *testing.T) {
	ptraceMPI(t)
	archive, err := filepath.Abs("../../otf2/testdata/halo/traces.otf2")
	if err != nil {
		t.Fatal(err)
	}
	want := run(t, ptraceBin(), "analyze", "--ranks", "2", "--json", "-", archive)
	if want.code != 0 {
		t.Fatalf("inproc: %s", want.stderr)
	}
	for _, np := range []int{1, 2} {
		out := filepath.Join(t.TempDir(), "r.json")
		r := mpirun(t, np, "analyze", "-q", "--json", out, archive)
		if r.code != 0 {
			t.Fatalf("np %d: exit %d: %s", np, r.code, r.stderr)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want.stdout {
			t.Errorf("np %d: the OTF2 report differs from the in-process one", np)
		}
	}
}

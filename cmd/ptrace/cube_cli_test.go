package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
)

// tarNames lists the members of the archive at path.
func tarNames(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		names = append(names, h.Name)
	}
}

// analyze --cube writes a CUBE archive beside the other outputs, and a
// name CubeLib would not open is refused before anything is analysed.
func TestAnalyzeCube(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "trace")
	if _, err := gen.Generate(tr, gen.Config{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 3, RankImbalance: 0.5}); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(binDir, "ptrace")
	if r := run(t, bin, "analyze", tr, "-q", "--cube", filepath.Join(dir, "r.cube")); r.code == 0 || !strings.Contains(r.stderr, ".cubex") || strings.Contains(r.stderr, "analy") {
		t.Errorf("--cube r.cube: exit %d, %q", r.code, r.stderr)
	}
	out := filepath.Join(dir, "r.cubex")
	js := filepath.Join(dir, "r.json")
	if r := run(t, bin, "analyze", tr, "-q", "--cube", out, "--json", js); r.code != 0 {
		t.Fatalf("analyze --cube: %s", r.stderr)
	}
	names := tarNames(t, out)
	if !slices.Contains(names, "anchor.xml") || !slices.Contains(names, "0.data") || !slices.Contains(names, "0.index") {
		t.Errorf("members %v", names)
	}
	b, err := os.ReadFile(js)
	if err != nil || !json.Valid(b) {
		t.Errorf("--json beside --cube: %v", err)
	}
}

// compare --cube writes one file per run in Extra-P's directory layout.
func TestCompareCube(t *testing.T) {
	dir := t.TempDir()
	var runs []string
	for _, n := range []int{2, 3} {
		tr := filepath.Join(dir, "halo"+string(rune('0'+n)))
		if _, err := gen.Generate(tr, gen.Config{Workload: "halo", Ranks: n, Threads: 2, Iterations: 3}); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, tr)
	}
	bin := filepath.Join(binDir, "ptrace")
	cubes := filepath.Join(dir, "cubes")
	args := append([]string{"compare", "-q", "--cube", cubes}, runs...)
	args = append(args, runs[0]) // a repetition of the first run's parameters
	if r := run(t, bin, args...); r.code != 0 {
		t.Fatalf("compare --cube: %s", r.stderr)
	}
	for _, sub := range []string{"ptrace.p2.t2.r1", "ptrace.p3.t2.r1", "ptrace.p2.t2.r2"} {
		if names := tarNames(t, filepath.Join(cubes, sub, "profile.cubex")); !slices.Contains(names, "anchor.xml") {
			t.Errorf("%s: members %v", sub, names)
		}
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// committedArchive is a public Score-P 7.1 archive (OTF2 2.3) in the otf2
// package's testdata: an MPI ping-pong of 2 processes, 16 messages.
const committedArchive = "../../otf2/testdata/scorep-7.1-pingpong"

// TestOTF2Commands: dump, validate and export read an OTF2 archive as
// analyze does, and every help text says so.
func TestOTF2Commands(t *testing.T) {
	bin := ptraceBin()
	t.Run("dump", func(t *testing.T) {
		r := run(t, bin, "dump", "--rank", "1", committedArchive)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		// rank 1 receives 8 messages and sends 8
		if n := strings.Count(r.stdout, " mpi_recv peer=0 "); n != 8 {
			t.Errorf("%d receives from rank 0, want 8:\n%s", n, r.stdout)
		}
		if n := strings.Count(r.stdout, " mpi_send peer=0 "); n != 8 {
			t.Errorf("%d sends to rank 0, want 8", n)
		}
		if !strings.Contains(r.stdout, "mpi_enter func=MPI_Init") || !strings.Contains(r.stdout, "region_enter name=int main(int, char**)") {
			t.Errorf("no MPI_Init or main:\n%s", r.stdout)
		}
		if r := run(t, bin, "dump", "--rank", "2", committedArchive); r.code == 0 || !strings.Contains(r.stderr, "0..1") {
			t.Errorf("--rank 2 of 2 processes: exit %d, %s", r.code, r.stderr)
		}
	})
	t.Run("validate", func(t *testing.T) {
		r := run(t, bin, "validate", committedArchive)
		if r.code != 0 || !strings.Contains(r.stdout, "0 problems") {
			t.Errorf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
		// a damaged event file: a problem naming the archive's file and
		// offset, exit 1
		dir := copyDir(t, committedArchive)
		evt := filepath.Join(dir, "traces", "0.evt")
		b, _ := os.ReadFile(evt)
		os.WriteFile(evt, b[:len(b)/2], 0o644)
		r = run(t, bin, "validate", dir)
		if r.code != 1 || !strings.Contains(r.stdout, evt+": offset") {
			t.Errorf("damaged archive: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("export", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run.json")
		r := run(t, bin, "export", "-q", "--perfetto", out, committedArchive)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			TraceEvents []map[string]any `json:"traceEvents"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		flows := 0
		for _, e := range doc.TraceEvents {
			if e["ph"] == "s" && e["cat"] == "message" {
				flows++
			}
		}
		if flows != 16 {
			t.Errorf("%d message arrows, want 16", flows)
		}
		// an archive that cannot be read leaves no output behind
		dir := copyDir(t, committedArchive)
		os.Remove(filepath.Join(dir, "traces.def"))
		bad := filepath.Join(t.TempDir(), "bad.json")
		r = run(t, bin, "export", "-q", "--perfetto", bad, dir)
		if r.code == 0 || !strings.Contains(r.stderr, "traces.def") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
		if _, err := os.Stat(bad); !os.IsNotExist(err) {
			t.Errorf("a failed export left %s behind", bad)
		}
	})
	t.Run("help", func(t *testing.T) {
		for _, cmd := range [][]string{{"--help"}, {"analyze", "--help"}, {"dump", "--help"}, {"export", "--help"}, {"validate", "--help"}} {
			if r := run(t, bin, cmd...); !strings.Contains(r.stdout, "OTF2") {
				t.Errorf("ptrace %s does not mention OTF2", strings.Join(cmd, " "))
			}
		}
	})
}

// copyDir copies a directory tree into a temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
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

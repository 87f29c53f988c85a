package otf2_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/otf2"
)

// TestScorepConfigGroups: an archive whose scorep.cfg restricts the MPI
// event groups (SCOREP_MPI_ENABLE_GROUPS='p2p': no collectives, no
// MPI_Init/MPI_Finalize) says so in a definition warning naming what is
// missing and what that does to the numbers (before: nothing said, the
// collectives' time silently work); the default groups, 'all', or no
// scorep.cfg add nothing.
func TestScorepConfigGroups(t *testing.T) {
	src := "testdata/scorep-8.4-recording-off-skew"
	for _, c := range []struct {
		cfg  string
		want []string
	}{
		{"SCOREP_MPI_ENABLE_GROUPS='p2p'\n", []string{"coll: collectives", "env: MPI_Init and MPI_Finalize", "the default window is the whole trace"}},
		{"SCOREP_TIMER='tsc'\nSCOREP_MPI_ENABLE_GROUPS='cg','coll','p2p'\n", []string{"env: MPI_Init and MPI_Finalize"}},
		{"SCOREP_MPI_ENABLE_GROUPS='coll','env'\n", []string{"p2p: point-to-point"}},
		{"SCOREP_MPI_ENABLE_GROUPS='cg','coll','env','io','p2p','rma','topo','xnonblock'\n", nil},
		{"SCOREP_MPI_ENABLE_GROUPS='all'\n", nil},
		{"", nil},
	} {
		dir := withConfigOf(t, src)
		if c.cfg != "" {
			if err := os.WriteFile(filepath.Join(dir, "scorep.cfg"), []byte(c.cfg), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		a, err := otf2.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		n, ws := a.Warnings()
		all := strings.Join(ws, "\n")
		if c.want == nil {
			if n != 0 {
				t.Errorf("%q: warnings %v", c.cfg, ws)
			}
			continue
		}
		if n != 1 || !strings.Contains(all, "scorep.cfg: SCOREP_MPI_ENABLE_GROUPS=") {
			t.Errorf("%q: warnings %v", c.cfg, ws)
		}
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("%q: no %q in %v", c.cfg, w, ws)
			}
		}
	}
}

// TestScorepConfigHostile: a scorep.cfg that is not Score-P's (a value of
// 1 MiB, binary bytes) gives one warning of bounded length that prints no
// control bytes (before: the whole value, 1 MiB, in the warning).
func TestScorepConfigHostile(t *testing.T) {
	src := "testdata/scorep-8.4-recording-off-skew"
	for _, cfg := range []string{
		"SCOREP_MPI_ENABLE_GROUPS=" + strings.Repeat("x,", 1<<19) + "\n",
		"SCOREP_MPI_ENABLE_GROUPS=p2p\x00\x1b[2J\xff\xfe\n",
	} {
		dir := withConfigOf(t, src)
		if err := os.WriteFile(filepath.Join(dir, "scorep.cfg"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := otf2.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		n, ws := a.Warnings()
		if n != 1 || len(ws[0]) > 1000 || strings.ContainsAny(ws[0], "\x00\x1b") || !strings.Contains(ws[0], "coll: collectives") {
			t.Errorf("%.40q: %d warnings, the first of %d bytes: %.300q", cfg, n, len(ws[0]), ws[0])
		}
	}
}

// withConfigOf copies the anchor and the global definitions of the archive
// in src into a new directory, where a test writes its scorep.cfg: Open
// reads no more.
func withConfigOf(t *testing.T, src string) string {
	dir := t.TempDir()
	for _, f := range []string{"traces.otf2", "traces.def"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

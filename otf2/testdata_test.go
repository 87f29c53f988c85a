package otf2_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
)

// smallArchive is a committed OTF2 archive (2 processes of 2 threads, halo
// exchange with clock skew and drift, 2.1 GHz timer, written by
// python3-otf2) for the tests that need no python and the fuzz seeds.
const smallArchive = "testdata/halo/traces.otf2"

// TestRegenTestdata rewrites testdata/halo when PTRACE_REGEN_OTF2=1.
func TestRegenTestdata(t *testing.T) {
	if os.Getenv("PTRACE_REGEN_OTF2") != "1" {
		t.Skip("set PTRACE_REGEN_OTF2=1 to rewrite testdata/halo")
	}
	needOTF2(t)
	dir := filepath.Join(t.TempDir(), "native")
	if _, err := gen.Generate(dir, gen.Config{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 2,
		SkewNS: 1_000_000, DriftPPM: 20, LatencyNS: 2000, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll("testdata/halo"); err != nil {
		t.Fatal(err)
	}
	writeOTF2(t, dir, "testdata/halo", 2_100_000_000)
}

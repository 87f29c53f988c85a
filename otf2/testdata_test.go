package otf2_test

import (
	"fmt"
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

// TestWriteArchive converts the ptrace trace named by PTRACE_OTF2_FROM into
// an OTF2 archive in PTRACE_OTF2_TO (timer PTRACE_OTF2_HZ, default 1 GHz),
// for scripts/otf2-bench.sh.
func TestWriteArchive(t *testing.T) {
	from, to := os.Getenv("PTRACE_OTF2_FROM"), os.Getenv("PTRACE_OTF2_TO")
	if from == "" || to == "" {
		t.Skip("set PTRACE_OTF2_FROM and PTRACE_OTF2_TO to write an archive")
	}
	needOTF2(t)
	hz := int64(1_000_000_000)
	if s := os.Getenv("PTRACE_OTF2_HZ"); s != "" {
		if _, err := fmt.Sscan(s, &hz); err != nil {
			t.Fatal(err)
		}
	}
	writeOTF2(t, from, to, hz)
}

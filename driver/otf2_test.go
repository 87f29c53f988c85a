package driver_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/driver"
)

// TestOTF2MemoryLimitWarnsOnConvertedSize: an OTF2 process is converted
// in memory, so under a --memory-limit its events cannot be streamed from
// disk; the warning saying so must follow what the conversion holds, not
// the archive's bytes. Records ptrace's model does not keep (Score-P's
// OPARI2 flush regions: NPB LU-MZ's pipeline spins on `!$omp flush`, 6.4
// GB of archive for 0.5 M events) made the archive 8 bytes a byte over
// any limit, and every OTF2 process warned (and --strict refused it)
// although what it held was far below the limit.
func TestOTF2MemoryLimitWarnsOnConvertedSize(t *testing.T) {
	dir := filepath.Join("..", "otf2", "testdata", "scorep-8.4-halo-opari2")
	evts, _ := filepath.Glob(filepath.Join(dir, "traces", "*.evt"))
	var archive int64
	for _, f := range evts {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		archive += st.Size()
	}
	// Over the archive's bytes at driver.BytesPerTraceByte (what would
	// have a ptrace file streamed) but far over what the conversion holds.
	limit := archive*driver.BytesPerTraceByte - 1
	rep, err := runWith(1, driver.Options{Dir: dir, MemoryLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	if w := rep.Trace.Warnings; w != nil {
		for _, m := range w.First {
			if strings.Contains(m, "cannot stream") {
				t.Errorf("limit %d B, archive %d B: %q", limit, archive, m)
			}
		}
	}
	// Converted events over the limit still say so, on every process
	// (lulesh-small-nc's 8 processes hold about 50 KiB of events).
	rep, err = runWith(1, driver.Options{Dir: filepath.Join("..", "otf2", "testdata", "scorep-8.4-lulesh-small-nc"), MemoryLimit: 400_000})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if w := rep.Trace.Warnings; w != nil {
		for _, m := range w.First {
			if strings.Contains(m, "cannot stream") {
				n++
			}
		}
	}
	if n != 8 {
		t.Errorf("events held over the limit: %d processes warn, want 8", n)
	}
}

// Score-P archives analysed on more ranks than they have processes (a
// one-process OpenMP program, MPI waits with their delay costs, MPI-3 RMA
// epochs): the report is the same byte for byte as on one rank.
func TestOTF2IdleRanksSameReport(t *testing.T) {
	for _, name := range []string{"scorep-8.4-fib-ompt", "scorep-8.4-mpi-waits4", "scorep-8.4-rma-pscw"} {
		dir := filepath.Join("..", "otf2", "testdata", name)
		rep, first := analyze(t, dir, 1)
		n := len(rep.Breakdown.PerProcess)
		for _, k := range idleRankCounts(n) {
			if _, js := analyze(t, dir, k); !bytes.Equal(js, first) {
				t.Errorf("%s (%d processes): report on %d ranks differs from 1 rank", name, n, k)
			}
		}
	}
}

package driver_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ptrace-dev/ptrace/driver"
)

// TestOTF2MemoryLimitWarnsOnConvertedSize: an OTF2 process is converted
// in memory, so under a --memory-limit its events cannot be streamed from
// disk; the notice saying so must follow what the conversion holds, not
// the archive's bytes. Records ptrace's model does not keep (Score-P's
// OPARI2 flush regions: NPB LU-MZ's pipeline spins on `!$omp flush`, 6.4
// GB of archive for 0.5 M events) made the archive 8 bytes a byte over
// any limit, and every OTF2 process warned (and --strict refused it)
// although what it held was far below the limit. It is said on standard
// error, not in the report: an analysis that fits its limit reports what
// it reports without one (the PENNANT archive's report listed the warning
// on every process under limits it fitted in).
func TestOTF2MemoryLimitWarnsOnConvertedSize(t *testing.T) {
	var mu sync.Mutex
	var notices []string
	notice := func(m string) {
		mu.Lock()
		defer mu.Unlock()
		notices = append(notices, m)
	}
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
	if _, err := runWith(2, driver.Options{Dir: dir, MemoryLimit: limit, Notice: notice}); err != nil {
		t.Fatal(err)
	}
	if len(notices) > 0 {
		t.Errorf("limit %d B, archive %d B: %q", limit, archive, notices)
	}
	// Converted events over the limit still say so, once (lulesh-small-nc's
	// 8 processes hold about 50 KiB of events, 25 a rank), and the report is the one
	// without a limit, under --strict too.
	lulesh := filepath.Join("..", "otf2", "testdata", "scorep-8.4-lulesh-small-nc")
	free, err := runWith(2, driver.Options{Dir: lulesh, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := runWith(2, driver.Options{Dir: lulesh, MemoryLimit: 150_000, Strict: true, Notice: notice})
	if err != nil {
		t.Fatal(err)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "cannot stream") {
		t.Errorf("events held over the limit: notices %q, want one", notices)
	}
	if !bytes.Equal(reportJSON(t, rep), reportJSON(t, free)) {
		t.Error("the report under a limit the analysis fits differs from the one without")
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

package otf2_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/otf2"
)

// needTool skips without the tool, except under CI=true.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (apt-get install -y otf2-tools); CI must run this test", name)
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

// record is one event as otf2-print and the decoder see it.
type record struct {
	name string
	time uint64
}

// printRecords runs otf2-print and returns each location's records.
func printRecords(t *testing.T, tool, anchor string) map[uint64][]record {
	t.Helper()
	out, err := exec.Command(tool, anchor).Output()
	if err != nil {
		t.Fatalf("otf2-print %s: %v", anchor, err)
	}
	return parsePrint(out)
}

// parsePrint reads otf2-print's event listing.
func parsePrint(out []byte) map[uint64][]record {
	recs := map[uint64][]record{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// event lines: NAME LOCATION TIMESTAMP ...; attribute and header
		// lines do not have two numbers there
		if len(f) < 3 || f[0] != strings.ToUpper(f[0]) || strings.HasPrefix(f[0], "=") {
			continue
		}
		loc, err1 := strconv.ParseUint(f[1], 10, 64)
		ts, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		recs[loc] = append(recs[loc], record{f[0], ts})
	}
	return recs
}

// sameRecords compares the decoder's records with otf2-print's, location
// by location: counts by type, then record by record.
func sameRecords(t *testing.T, want, got map[uint64][]record) {
	t.Helper()
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("otf2-print shows %d locations, the decoder %d", len(want), len(got))
	}
	for loc, w := range want {
		g := got[loc]
		cw, cg := map[string]int{}, map[string]int{}
		for _, r := range w {
			cw[r.name]++
		}
		for _, r := range g {
			cg[r.name]++
		}
		if fmt.Sprint(cw) != fmt.Sprint(cg) {
			t.Errorf("location %d: record counts: otf2-print %v, decoder %v", loc, cw, cg)
		}
		if len(w) != len(g) {
			continue
		}
		for i := range w {
			if w[i] != g[i] {
				t.Errorf("location %d record %d: otf2-print %v, decoder %v", loc, i, w[i], g[i])
				break
			}
		}
	}
}

// committed returns the archives in testdata that come with the listing
// otf2-print gave (otf2-print.txt, or .txt.gz) and a SOURCE.md: public
// archives and Score-P traces of this repository's programs.
func committed(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob("testdata/*/SOURCE.md")
	if err != nil || len(m) < 8 {
		t.Fatalf("committed archives: %v %v", m, err)
	}
	out := make([]string, len(m))
	for i, p := range m {
		out[i] = filepath.Dir(p)
	}
	return out
}

// readListing reads an archive's committed otf2-print listing.
func readListing(t *testing.T, dir string) []byte {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(dir, "otf2-print.txt")); err == nil {
		return b
	}
	f, err := os.Open(filepath.Join(dir, "otf2-print.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCommittedArchives: the decoder agrees with otf2-print's listing of
// every committed archive, record by record (no tool needed).
func TestCommittedArchives(t *testing.T) {
	for _, dir := range committed(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			sameRecords(t, parsePrint(readListing(t, dir)), decodeRecords(t, filepath.Join(dir, "traces.otf2")))
		})
	}
}

// decodeRecords decodes every location's event file with the Go decoder.
func decodeRecords(t *testing.T, anchor string) map[uint64][]record {
	t.Helper()
	a, err := otf2.Open(anchor)
	if err != nil {
		t.Fatal(err)
	}
	recs := map[uint64][]record{}
	for i := 0; i < a.NumProcesses(); i++ {
		for _, loc := range a.Locations(i) {
			r, err := a.OpenEvents(loc)
			if err != nil {
				t.Fatal(err)
			}
			offs, err := a.ClockOffsets(loc)
			if err != nil {
				t.Fatal(err)
			}
			var e otf2.Event
			for {
				ok, err := r.Next(&e)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				recs[loc] = append(recs[loc], record{otf2.EventName(e.Type), corrected(offs, e.Time)})
			}
			r.Close()
		}
	}
	return recs
}

// TestAgreesWithOTF2Print: the decoder sees the same records as the
// reference reader, record by record (type and timestamp) on every location
// of every test archive.
func TestAgreesWithOTF2Print(t *testing.T) {
	needOTF2(t)
	tool := needTool(t, "otf2-print")
	for _, tc := range []struct {
		cfg gen.Config
		hz  int64
	}{
		{gen.Config{Workload: "halo", Ranks: 3, Threads: 2, Iterations: 4, LatencyNS: 2000, Seed: 3}, 1_000_000_000},
		{gen.Config{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 3, Exchange: "allreduce", SkewNS: 500_000, DriftPPM: 20, Seed: 4}, 2_100_000_000},
		{gen.Config{Workload: "forkjoin", Ranks: 2, Threads: 3, Width: 5, Steps: 3, Seed: 5}, 2_100_000_000},
		{gen.Config{Workload: "imbalance", Ranks: 1, Threads: 3, Iterations: 3}, 1_000_000_000},
	} {
		name := fmt.Sprintf("%s-%d", tc.cfg.Workload, tc.hz)
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "native")
			if _, err := gen.Generate(dir, tc.cfg); err != nil {
				t.Fatal(err)
			}
			anchor := writeOTF2(t, dir, filepath.Join(t.TempDir(), "otf2"), tc.hz)
			sameRecords(t, printRecords(t, tool, anchor), decodeRecords(t, anchor))
		})
	}
}

// corrected applies OTF2's clock correction as its event reader does (and
// otf2-print shows): linear interpolation of the offsets between two
// consecutive ClockOffset definitions, the first interval extrapolated
// before it, the last after it; no correction with fewer than two.
func corrected(offs []otf2.ClockOffset, t uint64) uint64 {
	if len(offs) < 2 {
		return t
	}
	i := 0
	for i+2 < len(offs) && t > offs[i+1].Time {
		i++
	}
	a, b := offs[i], offs[i+1]
	slope := float64(b.Offset-a.Offset) / float64(b.Time-a.Time)
	var diff float64
	if t >= a.Time {
		diff = float64(t - a.Time)
	} else {
		diff = -float64(a.Time - t)
	}
	return t + uint64(a.Offset+int64(math.RoundToEven(slope*diff)))
}

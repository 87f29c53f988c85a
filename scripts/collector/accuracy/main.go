// Command accuracy prints the accuracy table of docs/ACCURACY.md from the
// traces scripts/collector/accuracy.sh wrote: for each task grain g, POT's
// ideal work and idleness of the load-imbalance benchmark, what
// "ptrace analyze" measured, and the divergence. Where the analysis did not
// produce a time breakdown the measured columns say so; no number is made up.
//
//	go run ./scripts/collector/accuracy OUT
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ptrace-dev/ptrace/report"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: accuracy OUT")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "accuracy:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	f, err := os.Open(filepath.Join(out, "index.tsv"))
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Println("| g | iterations | ideal work | measured work | divergence | ideal idleness | measured idleness | divergence | overhead |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 4 {
			return fmt.Errorf("index.tsv: bad line %q", sc.Text())
		}
		g, _ := strconv.ParseFloat(c[0], 64)
		it, _ := strconv.ParseFloat(c[1], 64)
		n, _ := strconv.ParseFloat(c[2], 64)
		work := it * g * 1e3 * n * (n + 1) / 2 // ns
		idle := it * g * 1e3 * n * (n - 1) / 2
		mw, mi, dw, di, ov := "pending: no time breakdown yet", "pending", "–", "–", "–"
		if b, err := breakdown(c[3] + ".json"); err == nil && b != nil && b.WorkNS > 0 {
			// The benchmark's ideal covers its parallel region: idleness
			// outside it (before the workers exist, after the region) is
			// the program's start-up, not the benchmark.
			mw, mi = ms(float64(b.WorkNS)), ms(float64(b.IdlenessParallelNS))
			dw = fmt.Sprintf("%+.1f %%", 100*(float64(b.WorkNS)-work)/work)
			di = fmt.Sprintf("%+.1f %%", 100*(float64(b.IdlenessParallelNS)-idle)/idle)
			ov = ms(float64(b.OverheadNS))
		}
		fmt.Printf("| %g µs | %g | %s | %s | %s | %s | %s | %s | %s |\n", g, it, ms(work), mw, dw, ms(idle), mi, di, ov)
	}
	return sc.Err()
}

func breakdown(path string) (*report.Breakdown, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r.Breakdown, nil
}

func ms(ns float64) string { return fmt.Sprintf("%.2f ms", ns/1e6) }

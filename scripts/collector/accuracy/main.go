// Command accuracy prints the accuracy table of docs/ACCURACY.md from the
// traces scripts/collector/accuracy.sh wrote: for each task grain g, POT's
// ideal work and idleness of the load-imbalance benchmark, what
// "ptrace analyze" measured, and the divergence; then the same against the
// program's own timing of each run (its busy time and non-work), and the
// collector's slowdown (traced/untraced wall of paired runs, median and
// min–max). Where the analysis did not produce a time breakdown the
// measured columns say so; no number is made up.
//
//	go run ./scripts/collector/accuracy OUT
//	go run ./scripts/collector/accuracy -stamps FILE TRACE   (see stamps.go)
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ptrace-dev/ptrace/report"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == "-stamps" {
		if err := stampsReport(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "accuracy:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: accuracy OUT | accuracy -stamps FILE TRACE")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "accuracy:", err)
		os.Exit(1)
	}
}

// grain is what the runs of one task grain measured.
type grain struct {
	g, it, n         float64
	work, idle, over []float64 // ns, one per analysed run
	nonwork          []float64 // idleness + overhead, ns
	corr             []float64 // instrumentation correction, ns
	ownWork, ownNon  []float64 // the program's own timing, ns
	dWork, dNon      []float64 // per run: measured vs own, relative
	slow             []float64 // traced/untraced wall per pair
	dIter, dIterRaw  []float64 // median iteration: trace vs own, relative
	dIterPOT         []float64 // the same with the sync regions' runtime code as work
	ownIter, trIter  []float64 // median iteration's work, ns
	runs             int
}

func run(out string) error {
	f, err := os.Open(filepath.Join(out, "index.tsv"))
	if err != nil {
		return err
	}
	defer f.Close()
	var grains []*grain
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 4 && len(c) != 8 && len(c) != 9 {
			return fmt.Errorf("index.tsv: bad line %q", sc.Text())
		}
		g, _ := strconv.ParseFloat(c[0], 64)
		it, _ := strconv.ParseFloat(c[1], 64)
		n, _ := strconv.ParseFloat(c[2], 64)
		if len(grains) == 0 || grains[len(grains)-1].g != g {
			grains = append(grains, &grain{g: g, it: it, n: n})
		}
		gr := grains[len(grains)-1]
		gr.runs++
		var ownW, ownN float64
		if len(c) >= 8 {
			ownW, _ = strconv.ParseFloat(c[4], 64)
			ownN, _ = strconv.ParseFloat(c[5], 64)
			tw, _ := strconv.ParseFloat(c[6], 64)
			pw, _ := strconv.ParseFloat(c[7], 64)
			if tw > 0 && pw > 0 {
				gr.slow = append(gr.slow, tw/pw)
			}
		}
		if len(c) == 9 {
			own, _ := strconv.ParseFloat(c[8], 64)
			raw, corr, err := iterWork(c[3], false)
			var pot float64
			if err == nil {
				_, pot, err = iterWork(c[3], true)
			}
			if err == nil && own > 0 {
				gr.ownIter = append(gr.ownIter, own)
				gr.trIter = append(gr.trIter, corr)
				gr.dIter = append(gr.dIter, (corr-own)/own)
				gr.dIterRaw = append(gr.dIterRaw, (raw-own)/own)
				gr.dIterPOT = append(gr.dIterPOT, (pot-own)/own)
			} else if err != nil {
				fmt.Fprintln(os.Stderr, "accuracy:", err)
			}
		}
		if b, err := breakdown(c[3] + ".json"); err == nil && b != nil && b.WorkNS > 0 {
			// The benchmark's ideal covers its parallel region: idleness
			// outside it (before the workers exist, after the region) is
			// the program's start-up, not the benchmark.
			gr.work = append(gr.work, float64(b.WorkNS))
			gr.idle = append(gr.idle, float64(b.IdlenessParallelNS))
			gr.over = append(gr.over, float64(b.OverheadNS))
			non := float64(b.IdlenessParallelNS + b.OverheadNS)
			gr.nonwork = append(gr.nonwork, non)
			gr.corr = append(gr.corr, float64(b.InstrumentationNS))
			if ownW > 0 && ownN > 0 {
				gr.ownWork = append(gr.ownWork, ownW)
				gr.ownNon = append(gr.ownNon, ownN)
				gr.dWork = append(gr.dWork, (float64(b.WorkNS)-ownW)/ownW)
				gr.dNon = append(gr.dNon, (non-ownN)/ownN)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	fmt.Println("| g | iterations | runs | ideal work | measured work | divergence | ideal idleness | measured idleness | divergence | overhead |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, gr := range grains {
		work := gr.it * gr.g * 1e3 * gr.n * (gr.n + 1) / 2 // ns
		idle := gr.it * gr.g * 1e3 * gr.n * (gr.n - 1) / 2
		mw, mi, dw, di, ov := "no time breakdown", "–", "–", "–", "–"
		if len(gr.work) > 0 {
			w, i := median(gr.work), median(gr.idle)
			mw, mi = ms(w), ms(i)
			dw = fmt.Sprintf("%+.1f %%", 100*(w-work)/work)
			di = fmt.Sprintf("%+.1f %%", 100*(i-idle)/idle)
			ov = ms(median(gr.over))
		}
		fmt.Printf("| %g µs | %g | %d/%d | %s | %s | %s | %s | %s | %s | %s |\n", gr.g, gr.it, len(gr.work), gr.runs, ms(work), mw, dw, ms(idle), mi, di, ov)
	}
	fmt.Println()
	fmt.Println("Against the program's own timing of the same runs (divergence per run, median [min, max]); non-work = idleness + overhead in the trace, n·span − busy in the program:")
	fmt.Println()
	fmt.Println("| g | runs | own work | measured work | divergence | own non-work | measured non-work | divergence | instrumentation correction | slowdown (wall, paired) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, gr := range grains {
		ow, mw, dw, on, mn, dn, corr := "–", "–", "–", "–", "–", "–", "–"
		if len(gr.dWork) > 0 {
			ow, mw, dw = ms(median(gr.ownWork)), ms(median(gr.work)), spread(gr.dWork, 100, "%+.1f %%")
			on, mn, dn = ms(median(gr.ownNon)), ms(median(gr.nonwork)), spread(gr.dNon, 100, "%+.1f %%")
			corr = ms(median(gr.corr))
		}
		sl := "–"
		if len(gr.slow) > 0 {
			sl = spread(gr.slow, 1, "%.3f")
		}
		fmt.Printf("| %g µs | %d/%d | %s | %s | %s | %s | %s | %s | %s | %s |\n", gr.g, len(gr.dWork), gr.runs, ow, mw, dw, on, mn, dn, corr, sl)
	}
	fmt.Println()
	fmt.Println("The median iteration (work of all threads in one iteration; an iteration in which no thread was descheduled), trace against the program's own timing, per run: median [min, max]:")
	fmt.Println()
	fmt.Println("| g | runs | own | trace (corrected) | divergence | without the correction | sync runtime as work (POT), corrected |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, gr := range grains {
		if len(gr.dIter) == 0 {
			fmt.Printf("| %g µs | 0/%d | – | – | – | – | – |\n", gr.g, gr.runs)
			continue
		}
		fmt.Printf("| %g µs | %d/%d | %s | %s | %s | %s | %s |\n", gr.g, len(gr.dIter), gr.runs, us(median(gr.ownIter)), us(median(gr.trIter)),
			spread(gr.dIter, 100, "%+.1f %%"), spread(gr.dIterRaw, 100, "%+.1f %%"), spread(gr.dIterPOT, 100, "%+.1f %%"))
	}
	return nil
}

func us(ns float64) string { return fmt.Sprintf("%.2f µs", ns/1e3) }

// spread formats the median of v and its range, each scaled by k.
func spread(v []float64, k float64, f string) string {
	return fmt.Sprintf(f+" ["+f+", "+f+"]", k*median(v), k*slices.Min(v), k*slices.Max(v))
}

// median of v (the mean of the middle two for an even count).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 0 {
		return (s[m-1] + s[m]) / 2
	}
	return s[m]
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

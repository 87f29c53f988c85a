package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ptrace-dev/ptrace/report"
)

// WriteJSON writes the comparison as indented JSON; field order follows
// the types, so equal comparisons are equal byte for byte.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// TextOptions tune the terminal summary.
type TextOptions struct {
	Color bool // ANSI colours (only on a terminal)
	// TopConstructs bounds the inflation table (default 8).
	TopConstructs int
}

const (
	ansiBold   = "\033[1m"
	ansiRed    = "\033[31m"
	ansiGreen  = "\033[32m"
	ansiYellow = "\033[33m"
	ansiReset  = "\033[0m"
)

type printer struct {
	w     io.Writer
	color bool
}

func (p *printer) paint(code, s string) string {
	if !p.color {
		return s
	}
	return code + s + ansiReset
}

func (p *printer) line(format string, args ...any) { fmt.Fprintf(p.w, format+"\n", args...) }
func (p *printer) head(s string)                   { p.line(""); fmt.Fprintln(p.w, p.paint(ansiBold, s)) }

// eff pads an efficiency to width and colours it by POP's reading: ≥ 0.8
// good, ≥ 0.6 fair, below poor (padding first, so colour codes do not
// break the columns).
func (p *printer) eff(v float64, width int) string {
	s := fmt.Sprintf("%*.2f", width, v)
	switch {
	case v >= 0.8:
		return p.paint(ansiGreen, s)
	case v >= 0.6:
		return p.paint(ansiYellow, s)
	}
	return p.paint(ansiRed, s)
}

// WriteText writes the terminal summary: runs, the POP scaling table,
// inflation per construct, bounds, what changed and the runs left out.
func WriteText(w io.Writer, r *Result, o TextOptions) {
	if o.TopConstructs <= 0 {
		o.TopConstructs = 8
	}
	p := &printer{w: w, color: o.Color}
	fmt.Fprintln(w, p.paint(ansiBold, fmt.Sprintf("ptrace compare  %d runs, %s scaling, reference %s", len(r.Runs), r.Scaling, r.Reference)))
	for i, run := range r.Runs {
		size := ""
		if run.ProblemSize > 0 {
			size = fmt.Sprintf(", problem size %g", run.ProblemSize)
		}
		p.line("  #%d  %s  (%s, %s%s)", i+1, run.Name, plural(run.Processes, "process"), plural(run.Cores, "core"), size)
	}
	const col = 9
	cols := func(f func(i int, run *Run) string) string {
		var s strings.Builder
		for i := range r.Runs {
			s.WriteString(" ")
			s.WriteString(f(i, &r.Runs[i]))
		}
		return s.String()
	}
	if len(r.Runs) > 0 {
		p.head("POP scaling (computation scalability from useful time summed over all threads, against the reference)")
		p.line("  %-40s%s", "", cols(func(i int, _ *Run) string { return fmt.Sprintf("%*s", col, fmt.Sprintf("#%d", i+1)) }))
		p.line("  %-40s%s", "cores", cols(func(_ int, run *Run) string { return fmt.Sprintf("%*d", col, run.Cores) }))
		p.line("  %-40s%s", "elapsed", cols(func(_ int, run *Run) string { return fmt.Sprintf("%*s", col, report.Dur(run.ElapsedNS)) }))
		p.line("  %-40s%s", "speedup", cols(func(_ int, run *Run) string { return fmt.Sprintf("%*.3g", col, run.Speedup) }))
		for _, f := range FactorTree {
			label := strings.Repeat("  ", f.Depth) + f.Label
			p.line("  %-40s%s", label, cols(func(_ int, run *Run) string { return p.eff(f.Get(&run.Efficiencies), col) }))
		}
		p.line("  %s", r.Note)
	}
	if len(r.Constructs) > 0 && len(r.Runs) > 1 {
		p.head("Work-time inflation per construct (total task time against the reference's; mean task duration)")
		p.line("  %-32s%s", "construct", cols(func(i int, _ *Run) string { return fmt.Sprintf("%*s", 20, fmt.Sprintf("#%d", i+1)) }))
		for j, c := range r.Constructs {
			if j == o.TopConstructs {
				p.line("  … %d more constructs in the JSON and CSV output", len(r.Constructs)-j)
				break
			}
			p.line("  %-32s%s", clip(c.Name, 32), cols(func(i int, _ *Run) string {
				cr := c.Runs[i]
				if cr.Missing {
					return fmt.Sprintf("%20s", "—")
				}
				return fmt.Sprintf("%20s", fmt.Sprintf("×%.2f (%s)", cr.Inflation, report.Dur(cr.MeanNS)))
			}))
		}
		for i, run := range r.Runs {
			if len(run.MostInflated) == 0 {
				continue
			}
			var parts []string
			for _, m := range run.MostInflated {
				parts = append(parts, fmt.Sprintf("%s +%s (×%.2f, %s)", clip(m.Construct, 40), report.Dur(m.ExtraNS), m.Inflation, report.Pct(m.ShareOfLost)))
			}
			p.line("  #%d lost %s of task time: %s", i+1, report.Dur(run.LostWorkNS), strings.Join(parts, "; "))
		}
	}
	if hasBounds(r) {
		p.head("Bounds (T1 work, T∞ span, P cores; speedup range of a greedy scheduler, burdened span with the measured overhead per task)")
		p.line("  %-4s %6s %10s %10s %11s %10s %10s %15s %10s %8s", "", "P", "T1", "T∞", "parallelism", "T1/P", "burdened", "speedup", "measured", "×bound")
		for i, run := range r.Runs {
			b := run.Bounds
			if b == nil {
				p.line("  #%-3d no critical path in the report", i+1)
				continue
			}
			p.line("  #%-3d %6d %10s %10s %11.3g %10s %10s %15s %10s %8.2f", i+1, b.Cores, report.Dur(b.WorkNS), report.Dur(b.SpanNS),
				b.Parallelism, report.Dur(b.AreaBoundNS), report.Dur(b.BurdenedSpanNS), fmt.Sprintf("%.3g–%.3g", b.SpeedupMin, b.SpeedupMax),
				report.Dur(b.MeasuredNS), b.Distance)
		}
		for i, run := range r.Runs {
			if run.Bounds != nil {
				p.line("  #%d %s", i+1, run.Bounds.Text)
			}
		}
	}
	if len(r.Changes) > 0 {
		p.head("What changed")
		for _, c := range r.Changes {
			p.line("  %s", c.Text)
		}
	}
	if len(r.Problems) > 0 {
		p.head("Left out")
		for _, pr := range r.Problems {
			fmt.Fprintln(w, p.paint(ansiYellow, fmt.Sprintf("  %s: %s", pr.Run, pr.Message)))
		}
	}
}

func hasBounds(r *Result) bool {
	for _, run := range r.Runs {
		if run.Bounds != nil {
			return true
		}
	}
	return false
}

// clip shortens s to n characters, keeping its end (the file:line of a
// construct matters more than the path before it).
func clip(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return "…" + string(rs[len(rs)-n+1:])
}

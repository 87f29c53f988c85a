package report

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// TextOptions tune the terminal summary.
type TextOptions struct {
	Color bool // ANSI colours (only on a terminal)
}

// WriteText writes the one-screen terminal summary.
func WriteText(w io.Writer, r *Report, o TextOptions) {
	p := &printer{w: w, color: o.Color}
	t := &r.Trace
	p.head("ptrace report")
	p.line("trace      %s", t.Dir)
	if t.Producer != "" {
		p.line("producer   %s", t.Producer)
	}
	p.line("size       %d processes on %d hosts, %d threads, %d events, %s", t.Processes, t.Hosts, t.Threads, t.Events, Bytes(t.Bytes))
	p.line("span       %s", Dur(t.DurationNS))
	if cs := r.ClockSync; cs != nil {
		p.line("clock sync: %d messages, %d violations → %d, max correction %s, method %s",
			cs.Messages+cs.RemoteDependences+cs.Collectives, cs.ViolationsBefore, cs.ViolationsAfter, Dur(cs.MaxCorrectionNS), cs.Method)
	}
	if t.Warnings != nil && t.Warnings.Count > 0 {
		p.warn("warnings   %d (first: %s)", t.Warnings.Count, t.Warnings.First[0])
	}
}

type printer struct {
	w     io.Writer
	color bool
}

func (p *printer) head(s string) {
	if p.color {
		fmt.Fprintf(p.w, "\033[1m%s\033[0m\n", s)
	} else {
		fmt.Fprintln(p.w, s)
	}
}

func (p *printer) line(format string, args ...any) { fmt.Fprintf(p.w, format+"\n", args...) }

func (p *printer) warn(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if p.color {
		s = "\033[33m" + s + "\033[0m"
	}
	fmt.Fprintln(p.w, s)
}

// Dur formats nanoseconds for people: 1.23 s, 45.6 ms, 789 µs.
func Dur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second || d <= -time.Second:
		return fmt.Sprintf("%.3g s", d.Seconds())
	case d >= time.Millisecond || d <= -time.Millisecond:
		return fmt.Sprintf("%.3g ms", float64(d)/1e6)
	case d >= time.Microsecond || d <= -time.Microsecond:
		return fmt.Sprintf("%.3g µs", float64(d)/1e3)
	}
	return fmt.Sprintf("%d ns", ns)
}

// Bytes formats a byte count for people.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Pct formats a ratio as a percentage.
func Pct(r float64) string { return strings.TrimSpace(fmt.Sprintf("%5.1f%%", 100*r)) }

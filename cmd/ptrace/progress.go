package main

import (
	"fmt"
	"github.com/ptrace-dev/ptrace/internal/outfile"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress shows a phase and its completed fraction on one terminal line,
// "simulate  42% [==========>             ] 3.1s", redrawn at most ten times
// a second and erased at the end; on anything else (a file, a pipe, CI
// logs) it stays silent. Its own ~60 lines, not a progress-bar library:
// the one used before linked net/http and TLS into every run (2.6 MB of
// binary, 1.1 MB more of it resident, docs/PERFORMANCE.md).
type progress struct {
	mu    sync.Mutex // ranks in one process report concurrently
	w     io.Writer  // nil: silent
	name  string
	frac  float64
	start time.Time
	drawn time.Time
	shown int // the drawn line's length, which the next one overwrites
}

// progressEvery is the shortest time between two redraws.
const progressEvery = 100 * time.Millisecond

// progressWidth is the bar's width in characters.
const progressWidth = 24

func isTerminal(w io.Writer) bool {
	if c, ok := w.(*outfile.Checked); ok {
		w = c.W
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newProgress(w io.Writer, phase string) *progress {
	if !isTerminal(w) {
		return &progress{}
	}
	return &progress{w: w, name: phase, start: time.Now()}
}

// update sets the fraction done, in [0,1].
func (p *progress) update(frac float64) { p.phase("", frac) }

// phase changes the description (unless name is empty) and sets the
// fraction; a new description is drawn at once.
func (p *progress) phase(name string, frac float64) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	renamed := name != "" && name != p.name
	if renamed {
		p.name = name
	}
	p.frac = min(max(frac, 0), 1)
	if now := time.Now(); renamed || now.Sub(p.drawn) >= progressEvery {
		p.drawn = now
		p.draw(progressLine(p.name, p.frac, now.Sub(p.start)))
	}
}

// done erases the line and leaves the cursor at its start.
func (p *progress) done() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw("")
	fmt.Fprint(p.w, "\r")
}

// note writes msg as a line of its own to w (the terminal p draws on, when
// it draws): the progress line is erased first and drawn again after, so
// that a note during a phase does not run on from the bar. A nil p writes
// msg alone.
func (p *progress) note(w io.Writer, msg string) {
	if p == nil || p.w == nil {
		fmt.Fprintln(w, msg)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	shown := p.shown > 0
	if shown {
		p.draw("")
		fmt.Fprint(p.w, "\r")
	}
	fmt.Fprintln(p.w, msg)
	p.shown = 0
	if shown {
		p.draw(progressLine(p.name, p.frac, time.Since(p.start)))
	}
}

// draw writes line over the one shown, blanking what it leaves.
func (p *progress) draw(line string) {
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", max(p.shown-len(line), 0)))
	p.shown = len(line)
}

// progressLine is the text of one state: name, percent, bar, elapsed.
func progressLine(name string, frac float64, elapsed time.Duration) string {
	full := int(frac * progressWidth)
	bar := strings.Repeat("=", full)
	if full < progressWidth {
		bar += ">" + strings.Repeat(" ", progressWidth-full-1)
	}
	return fmt.Sprintf("%s %3d%% [%s] %.1fs", name, int(frac*100), bar, elapsed.Seconds())
}

package main

import (
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows a phase and its completed fraction on a terminal; on
// anything else (a file, a pipe, CI logs) it stays silent.
type progress struct {
	bar *progressbar.ProgressBar
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newProgress(w io.Writer, phase string) *progress {
	if !isTerminal(w) {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions(1000,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(phase),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionShowElapsedTimeOnFinish(),
	)}
}

// update sets the fraction done, in [0,1].
func (p *progress) update(frac float64) {
	if p.bar != nil {
		p.bar.Set(int(frac * 1000))
	}
}

// phase changes the description and restarts the fraction.
func (p *progress) phase(name string, frac float64) {
	if p.bar != nil {
		p.bar.Describe(name)
		p.bar.Set(int(frac * 1000))
	}
}

func (p *progress) done() {
	if p.bar != nil {
		p.bar.Finish()
		p.bar.Clear()
	}
}

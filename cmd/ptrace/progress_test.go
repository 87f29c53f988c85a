package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The progress line: silent off a terminal; on one, a new phase drawn at
// once, fractions at most every progressEvery, each line blanking what the
// longer one before it left, and the line erased at the end.
func TestProgress(t *testing.T) {
	var off bytes.Buffer
	q := newProgress(&off, "analyze")
	q.phase("load", 0.5)
	q.update(1)
	q.done()
	if off.Len() != 0 {
		t.Fatalf("off a terminal: wrote %q", off.String())
	}

	var buf bytes.Buffer
	p := &progress{w: &buf, name: "analyze", start: time.Now()}
	p.phase("critical path", 0.25)
	first := buf.String()
	if want := "\r" + progressLine("critical path", 0.25, 0)[:len("critical path  25% [======>")]; !strings.HasPrefix(first, want) {
		t.Fatalf("first draw %q, want it to begin %q", first, want)
	}
	p.update(0.5) // within progressEvery of the last: not drawn
	if buf.String() != first {
		t.Fatalf("a fraction within %v of the last draw was drawn: %q", progressEvery, buf.String()[len(first):])
	}
	buf.Reset()
	p.phase("load", 0.5) // a shorter name, drawn at once
	short := progressLine("load", 0.5, 0)
	if got := buf.String(); !strings.HasPrefix(got, "\r"+short) || len(got) != len(first) {
		t.Fatalf("redraw %q (%d bytes), want the line padded to the %d before", got, len(got), len(first)-1)
	}
	if len(short) >= len(first)-1 {
		t.Fatalf("test premise: %q not shorter than %q", short, first)
	}
	buf.Reset()
	p.done()
	if got := buf.String(); got != "\r"+strings.Repeat(" ", len(short))+"\r" {
		t.Fatalf("done wrote %q", got)
	}
	if p.shown != 0 {
		t.Fatalf("after done, %d characters shown", p.shown)
	}
}

func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		frac float64
		want string
	}{
		{0, "x   0% [>                       ] 1.5s"},
		{0.5, "x  50% [============>           ] 1.5s"},
		{1, "x 100% [========================] 1.5s"},
	} {
		if got := progressLine("x", c.frac, 1500*time.Millisecond); got != c.want {
			t.Errorf("frac %v: %q, want %q", c.frac, got, c.want)
		}
	}
}

// A note (the idle ranks', --memory-limit's) while the line is drawn erases
// it, stands on a line of its own and draws the line again after; off a
// terminal, or without a progress line, it is the note alone.
func TestProgressNote(t *testing.T) {
	var buf bytes.Buffer
	var none *progress
	none.note(&buf, "ptrace: a")
	newProgress(&buf, "analyze").note(&buf, "ptrace: b")
	if got := buf.String(); got != "ptrace: a\nptrace: b\n" {
		t.Fatalf("without a drawn line: %q", got)
	}
	buf.Reset()
	p := &progress{w: &buf, name: "analyze", start: time.Now()}
	p.note(&buf, "ptrace: c") // nothing drawn yet: nothing to erase
	p.phase("open", 0)
	line := buf.String()[len("ptrace: c\n"):]
	buf.Reset()
	p.note(&buf, "ptrace: d")
	blank := "\r" + strings.Repeat(" ", len(line)-1) + "\r"
	if got := buf.String(); !strings.HasPrefix(got, blank+"ptrace: d\n\ropen   0% [>") {
		t.Fatalf("note over a drawn line %q: %q", line, got)
	}
	if p.shown != len(line)-1 {
		t.Fatalf("after the note, %d characters shown, want %d", p.shown, len(line)-1)
	}
}

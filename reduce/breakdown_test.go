package reduce

import (
	"strings"
	"testing"
)

// Overhead advice names the runtime's re-queues when they are what the
// tasks cost (untied tasks under LLVM libomp), and only then.
func TestNoteRequeues(t *testing.T) {
	for _, c := range []struct {
		dominant           string
		executed, requeued int64
		note               bool
	}{
		{"overhead", 1000, 1000, true}, // every task untied: one stub re-queue each
		{"overhead", 1000, 250, true},
		{"overhead", 1000, 249, false}, // a few yields: granularity is the advice
		{"overhead", 1000, 0, false},
		{"starvation", 1000, 1000, false},
	} {
		a := Advice{Dominant: c.dominant, Text: "base"}
		a.NoteRequeues(c.executed, c.requeued)
		if got := strings.Contains(a.Text, "untied tasks cost a re-queue each"); got != c.note || !strings.HasPrefix(a.Text, "base") {
			t.Errorf("%s, %d of %d re-queued: %q", c.dominant, c.requeued, c.executed, a.Text)
		}
	}
}

// A program whose threads are its own idles before they start, after they
// end and in its joins: serial advice says so instead of naming parallel
// regions it does not have; other advice stays.
func TestNoteUserThreads(t *testing.T) {
	tm := Times{ThreadTime: 100, Work: 40, Idle: 60, IdleSerial: 60}
	a := Advise(tm, nil, Thresholds{Idleness: 0.1})
	if a.Dominant != "serial" || !strings.Contains(a.Text, "parallel regions") {
		t.Fatalf("advice %+v, want serial about parallel regions", a)
	}
	a.NoteUserThreads()
	if a.Dominant != "serial" || strings.Contains(a.Text, "parallel regions") || !strings.Contains(a.Text, "joins") {
		t.Errorf("user threads: %q", a.Text)
	}
	b := Advice{Dominant: "mpi_calls", Text: "base"}
	if b.NoteUserThreads(); b.Text != "base" {
		t.Errorf("mpi_calls advice rewritten: %q", b.Text)
	}
}

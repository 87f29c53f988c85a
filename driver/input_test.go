package driver

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptrace-dev/ptrace/trace"
)

// What is not a trace is named, with what to give instead; a path that is
// nothing known keeps the listing's error.
func TestExplainInput(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string, dir bool) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if dir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk("profile/profile.cubex", false)
	mk("profile/scorep.cfg", false)
	mk("tau/tautrace.0.0.0.trc", false)
	mk("tau/events.0.edf", false)
	mk("tauprof/profile.0.0.0", false)
	mk("prv/app.prv", false)
	mk("two/a.otf2", false)
	mk("two/b.otf2", false)
	mk("runs/r1/traces.otf2", false)
	mk("runs/r2/"+trace.ManifestName, false)
	mk("runs/notes", true)
	mk("one/r1/"+trace.FileName(0), false)
	mk("empty", true)
	mk("killed/scorep.cfg", false)
	mk("killed/MANIFEST.md", false)
	mk("killed/traces", true)
	mk("flushed/scorep.cfg", false)
	mk("flushed/traces/0.evt", false)
	mk("flushed/traces/1.evt", false)
	if err := os.WriteFile(mk("off/scorep.cfg", false), []byte("SCOREP_ENABLE_PROFILING=true\nSCOREP_ENABLE_TRACING=false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mk("other/readme.txt", false)
	for _, c := range []struct{ path, want string }{
		{"profile", "a Score-P experiment with a profile (profile.cubex) and no trace"},
		{"profile/profile.cubex", "a CUBE profile, not an event trace"},
		{"tau", "TAU traces in TAU's own format"},
		{"tau/tautrace.0.0.0.trc", "a trace in TAU's own format"},
		{"tauprof", "TAU profiles"},
		{"prv", "a Paraver trace"},
		{"prv/app.prv", "a Paraver trace"},
		{"two", "2 OTF2 anchor files (a.otf2, b.otf2); name one"},
		{"runs", "no trace here, but 2 in its subdirectories (r1, r2); name one"},
		{"one", "no trace here, but one in " + filepath.Join(root, "one", "r1")},
		{"one/r1/" + trace.FileName(0), "one process's file of a ptrace trace; give the trace's directory, " + filepath.Join(root, "one", "r1")},
		{"empty", "an empty directory"},
		{"killed", "a Score-P experiment without a trace (no traces.otf2): Score-P writes the trace when the program ends"},
		{"flushed", "(the 2 event files in traces/ are trace buffer flushes"},
		{"off", "its scorep.cfg says SCOREP_ENABLE_TRACING=false"},
		{"other", "not a ptrace trace directory"},
	} {
		p := filepath.Join(root, c.path)
		_, _, err := openTrace(p, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), p+": ") {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
}

// A scorep.cfg that is a FIFO does not hang the hint (nothing writes to it).
func TestExplainInputFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "scorep.cfg"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := openTrace(dir, 0); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "a Score-P experiment without a trace") {
			t.Errorf("%v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("hangs on a FIFO named scorep.cfg")
	}
}

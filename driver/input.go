package driver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/trace"
)

// What a user names that is not a trace ptrace reads: the error of the
// listing says so, and what to give instead, when the path is something
// performance tools commonly leave behind (a Score-P profile, a CUBE file,
// TAU's or Paraver's own trace formats, one rank file, a directory of
// several runs).

// salvageHint adds to a damaged file's error (or a missing OTF2 event
// file's) that --salvage analyses what precedes the damage, when it was
// not given.
func salvageHint(err error, salvage bool) error {
	var fe *trace.FormatError
	var oe *otf2.FormatError
	missingEvents := errors.Is(err, os.ErrNotExist) && strings.Contains(err.Error(), ".evt")
	if salvage || !errors.As(err, &fe) && !errors.As(err, &oe) && !missingEvents {
		return err
	}
	return fmt.Errorf("%w (analyze --salvage keeps what precedes the damage)", err)
}

// maxLooked bounds the entries looked at in a directory that is not a
// trace: the hint is best effort and must not read a huge directory.
const maxLooked = 4096

// maxSubdirs bounds the subdirectories looked into for traces.
const maxSubdirs = 64

// explainInput returns err, or an error that says what path is instead of
// a trace and what to analyse, when it can tell.
func explainInput(path string, err error) error {
	st, serr := os.Stat(path)
	if serr != nil {
		return err
	}
	if !st.IsDir() {
		if hint := fileHint(path); hint != "" {
			return fmt.Errorf("%s: %s", path, hint)
		}
		return err
	}
	f, oerr := os.Open(path)
	if oerr != nil {
		return err
	}
	entries, _ := f.ReadDir(maxLooked)
	f.Close()
	if hint := dirHint(path, entries); hint != "" {
		return fmt.Errorf("%s: %s", path, hint)
	}
	return err
}

// fileHint names a file that is not a trace's directory or OTF2 anchor.
func fileHint(path string) string {
	switch base := filepath.Base(path); {
	case strings.HasSuffix(base, ".cubex") || strings.HasSuffix(base, ".cube"):
		return "a CUBE profile, not an event trace; ptrace analyses traces: record one (Score-P: SCOREP_ENABLE_TRACING=true) and give its traces.otf2"
	case strings.HasSuffix(base, ".prv") || strings.HasSuffix(base, ".pcf") || strings.HasSuffix(base, ".row"):
		return "a Paraver trace (Extrae), a format ptrace does not read; it reads its own traces (ptrace record) and OTF2 archives (Score-P, TAU with TAU_TRACE_FORMAT=otf2)"
	case strings.HasSuffix(base, ".trc") || strings.HasSuffix(base, ".edf"):
		return "a trace in TAU's own format, which ptrace does not read; record with TAU_TRACE_FORMAT=otf2 for an OTF2 archive"
	case strings.HasSuffix(base, ".ptrace"):
		return fmt.Sprintf("one process's file of a ptrace trace; give the trace's directory, %s", filepath.Dir(path))
	}
	return ""
}

// dirHint names a directory that holds neither a ptrace trace nor one OTF2
// archive, from the entries read (at most maxLooked).
func dirHint(path string, entries []os.DirEntry) string {
	has := func(pred func(string) bool) []string {
		var m []string
		for _, e := range entries {
			if !e.IsDir() && pred(e.Name()) {
				m = append(m, e.Name())
			}
		}
		sort.Strings(m)
		return m
	}
	suffix := func(s ...string) func(string) bool {
		return func(n string) bool {
			for _, x := range s {
				if strings.HasSuffix(n, x) {
					return true
				}
			}
			return false
		}
	}
	if a := has(suffix(".otf2")); len(a) > 1 {
		return fmt.Sprintf("%d OTF2 anchor files (%s); name one", len(a), strings.Join(first(a, 4), ", "))
	}
	if len(has(func(n string) bool { return n == "profile.cubex" })) > 0 {
		return "a Score-P experiment with a profile (profile.cubex) and no trace; ptrace analyses traces: run again with SCOREP_ENABLE_TRACING=true"
	}
	if len(has(func(n string) bool { return n == "scorep.cfg" })) > 0 {
		return scorepNoTrace(path)
	}
	if len(has(func(n string) bool { return strings.HasPrefix(n, "tautrace.") && strings.HasSuffix(n, ".trc") })) > 0 {
		return "TAU traces in TAU's own format (tautrace.*.trc), which ptrace does not read; record with TAU_TRACE_FORMAT=otf2 for an OTF2 archive"
	}
	if len(has(func(n string) bool { return strings.HasPrefix(n, "profile.") && strings.Count(n, ".") == 3 })) > 0 {
		return "TAU profiles (profile.N.C.T), not a trace; record with TAU_TRACE=1 TAU_TRACE_FORMAT=otf2 for an OTF2 archive"
	}
	if len(has(suffix(".prv"))) > 0 {
		return "a Paraver trace (Extrae), a format ptrace does not read; it reads its own traces (ptrace record) and OTF2 archives (Score-P, TAU with TAU_TRACE_FORMAT=otf2)"
	}
	var subs []string
	looked := 0 // each look lists a subdirectory: a few suffice for a hint
	for _, e := range entries {
		if !e.IsDir() || looked == maxSubdirs {
			continue
		}
		looked++
		if isTrace(filepath.Join(path, e.Name())) {
			subs = append(subs, e.Name())
		}
	}
	sort.Strings(subs)
	switch {
	case len(subs) == 1:
		return fmt.Sprintf("no trace here, but one in %s", filepath.Join(path, subs[0]))
	case len(subs) > 1:
		return fmt.Sprintf("no trace here, but %d in its subdirectories (%s); name one", len(subs), strings.Join(first(subs, 4), ", "))
	case len(entries) == 0:
		return "an empty directory: no trace was written there (ptrace record -o DIR names where it writes)"
	}
	return ""
}

// isTrace reports whether dir holds a ptrace trace or an OTF2 archive, from
// its names alone.
func isTrace(dir string) bool {
	if otf2.IsArchive(dir) {
		return true
	}
	if _, err := os.Stat(filepath.Join(dir, trace.ManifestName)); err == nil {
		return true
	}
	_, err := os.Stat(filepath.Join(dir, trace.FileName(0)))
	return err == nil
}

// readSmall reads at most limit bytes of a regular file (a FIFO or a
// device is refused, not waited on).
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := trace.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}

// scorepNoTrace explains a Score-P experiment directory without a trace or
// a profile. Score-P writes both when the program ends (MPI_Finalize, or
// exit): a run killed (a signal, a time limit) or aborted (MPI_Abort, a
// crash) before leaves only its configuration, and event files of trace
// buffer flushes, if any, without the definitions that would make them
// readable. Its scorep.cfg says whether tracing was on.
func scorepNoTrace(path string) string {
	if b, err := readSmall(filepath.Join(path, "scorep.cfg"), 1<<20); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "SCOREP_ENABLE_TRACING="); ok &&
				strings.EqualFold(strings.Trim(v, `'"`), "false") {
				return "a Score-P experiment without a trace: its scorep.cfg says SCOREP_ENABLE_TRACING=false; " +
					"run again with SCOREP_ENABLE_TRACING=true"
			}
		}
	}
	msg := "a Score-P experiment without a trace (no traces.otf2): Score-P writes the trace when the program ends " +
		"(at MPI_Finalize), so a run killed or aborted before that (MPI_Abort, a signal, a time limit, a crash) leaves none; " +
		"run it again to its end"
	if f, err := os.Open(filepath.Join(path, "traces")); err == nil {
		names, _ := f.Readdirnames(maxLooked)
		f.Close()
		n := 0
		for _, nm := range names {
			if strings.HasSuffix(nm, ".evt") {
				n++
			}
		}
		if n > 0 {
			msg += fmt.Sprintf(" (the %d event files in traces/ are trace buffer flushes, unreadable without the definitions Score-P writes at the end)", n)
		}
	}
	return msg
}

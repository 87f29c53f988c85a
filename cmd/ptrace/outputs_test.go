package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// digest hashes every file under dir, so a test can tell that nothing of
// an input changed.
func digest(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = sha256.Sum256(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err == nil {
			err = os.WriteFile(filepath.Join(dst, rel), b, 0o644)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// No output flag may replace what the command reads (issue 42, item 3):
// a rank file, the manifest, the input directory, an OTF2 archive's files,
// a report given to compare, the critical-path CSV given to export. Each
// is refused before any work, naming the flag, and the inputs stay as
// they were.
func TestOutputsNeverReplaceInputs(t *testing.T) {
	dir := genTrace(t, "forkjoin", "--ranks", "2", "--threads", "2", "--width", "4", "--steps", "3")
	otf := filepath.Join(t.TempDir(), "halo")
	copyTree(t, filepath.Join("..", "..", "otf2", "testdata", "halo"), otf)
	work := t.TempDir()
	rep := filepath.Join(work, "run.json")
	if r := run(t, ptraceBin(), "analyze", "-q", "--json", rep, dir); r.code != 0 {
		t.Fatalf("analyze: %s", r.stderr)
	}
	cp := filepath.Join(work, "path.csv")
	if r := run(t, ptraceBin(), "analyze", "-q", "--critical-path", cp, dir); r.code != 0 {
		t.Fatalf("analyze: %s", r.stderr)
	}
	link := filepath.Join(work, "link.json")
	if err := os.Symlink(filepath.Join(dir, "rank-00001.ptrace"), link); err != nil {
		t.Fatal(err)
	}
	before := [3]map[string][32]byte{digest(t, dir), digest(t, otf), digest(t, work)}
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"analyze", "-q", "--json", filepath.Join(dir, "rank-00001.ptrace"), dir}, "--json"},
		{[]string{"analyze", "-q", "--html", filepath.Join(dir, "manifest.json"), dir}, "--html"},
		{[]string{"analyze", "-q", "--critical-path", filepath.Join(dir, "rank-00000.ptrace"), dir}, "--critical-path"},
		{[]string{"analyze", "-q", "--csv", dir, dir}, "--csv"},
		{[]string{"analyze", "-q", "--json", dir, dir}, "--json"},
		{[]string{"analyze", "-q", "--json", link, dir}, "--json"},
		{[]string{"analyze", "-q", "--cpuprofile", filepath.Join(dir, "rank-00000.ptrace"), dir}, "--cpuprofile"},
		{[]string{"analyze", "-q", "--json", filepath.Join(otf, "traces.otf2"), otf}, "--json"},
		{[]string{"analyze", "-q", "--json", filepath.Join(otf, "traces.def"), filepath.Join(otf, "traces.otf2")}, "--json"},
		{[]string{"analyze", "-q", "--html", filepath.Join(otf, "traces", "0.evt"), otf}, "--html"},
		{[]string{"analyze", "-q", "--json", filepath.Join(work, "a.json"), "--html", filepath.Join(work, "a.json"), dir}, "--html"},
		{[]string{"compare", "-q", "--json", rep, rep, dir}, "--json"},
		{[]string{"compare", "-q", "--html", filepath.Join(dir, "rank-00000.ptrace"), rep, dir}, "--html"},
		{[]string{"compare", "-q", "--csv", dir, dir}, "--csv"},
		{[]string{"export", "-q", "--perfetto", filepath.Join(dir, "rank-00001.ptrace"), dir}, "--perfetto"},
		{[]string{"export", "-q", "--perfetto", cp, "--critical-path", cp, dir}, "--perfetto"},
	} {
		r := run(t, ptraceBin(), c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.flag+" ") {
			t.Errorf("%v: exit %d, stderr %q; want a refusal naming %s", c.args, r.code, r.stderr, c.flag)
		}
	}
	for i, d := range []string{dir, otf, work} {
		after := digest(t, d)
		if len(after) != len(before[i]) {
			t.Errorf("%s: %d files, %d before", d, len(after), len(before[i]))
		}
		for p, h := range before[i] {
			if after[p] != h {
				t.Errorf("%s changed", p)
			}
		}
	}
	// A report beside the trace files is no input: writing it is fine.
	if r := run(t, ptraceBin(), "analyze", "-q", "--json", filepath.Join(dir, "report.json"), dir); r.code != 0 {
		t.Errorf("report inside the trace directory: %s", r.stderr)
	}
}

// shell runs a bash command line with $PT set to the ptrace binary.
func shell(t *testing.T, line string) result {
	t.Helper()
	c := exec.Command("bash", "-c", line)
	c.Env = append(os.Environ(), "PT="+ptraceBin())
	return runCmd(t, c)
}

// A report that cannot be written is an error, never a success (issue 42,
// item 3): standard output on a full device or closed, and files on a
// full disk (bash's ulimit -f: writes past the limit fail with EFBIG, as
// they would with ENOSPC). A failed file leaves nothing behind — no
// truncated JSON, no empty HTML, no temporary file — and a file it was
// to replace keeps its content.
func TestLostOutputsFail(t *testing.T) {
	dir := genTrace(t, "halo", "--ranks", "16", "--threads", "2", "--iterations", "10")
	for _, c := range []struct{ line, want string }{
		{`"$PT" analyze "$D" > /dev/full`, "no space left"},
		{`"$PT" analyze -q --json - "$D" > /dev/full`, "no space left"},
		{`"$PT" compare "$D" > /dev/full`, "no space left"},
		{`"$PT" analyze "$D" >&-`, "standard output is closed"},
		{`"$PT" analyze -q --json - "$D" >&-`, "standard output is closed"},
		{`"$PT" export --perfetto - "$D" >&-`, "standard output is closed"},
	} {
		r := shell(t, "D="+dir+"; "+c.line)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want an error saying %q", c.line, r.code, r.stderr, c.want)
		}
	}
	// Discarding the output on purpose is no error, nor is -q with a
	// file when standard output is closed.
	out := t.TempDir()
	for _, line := range []string{
		`"$PT" analyze "$D" > /dev/null`,
		`"$PT" analyze -q --json "$O/ok.json" "$D" >&-`,
	} {
		if r := shell(t, "D="+dir+"; O="+out+"; "+line); r.code != 0 {
			t.Errorf("%s: exit %d: %s", line, r.code, r.stderr)
		}
	}

	old := []byte("the previous report\n")
	for _, flag := range []string{"--json", "--html", "--critical-path", "--csv"} {
		o := t.TempDir()
		target := filepath.Join(o, "out")
		if flag == "--csv" {
			os.Mkdir(target, 0o755)
			os.WriteFile(filepath.Join(target, "breakdown_per_process.csv"), old, 0o644)
		} else {
			os.WriteFile(target, old, 0o644)
		}
		// 1 KiB: the report's JSON, HTML and path, and some of its CSV
		// tables, are larger.
		r := shell(t, "ulimit -f 1; exec \"$PT\" analyze -q "+flag+" "+target+" "+dir)
		if r.code == 0 || !strings.Contains(r.stderr, "file too large") {
			t.Errorf("%s on a full disk: exit %d, stderr %q", flag, r.code, r.stderr)
		}
		if flag != "--csv" {
			if b, err := os.ReadFile(target); err != nil || !bytes.Equal(b, old) {
				t.Errorf("%s: %s now holds %d bytes (%v), want the previous content", flag, target, len(b), err)
			}
		}
		// Tables are written one by one: each is complete, or the
		// previous content, or absent.
		filepath.WalkDir(o, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, _ := os.ReadFile(p)
			switch {
			case strings.HasSuffix(p, ".tmp"):
				t.Errorf("%s: temporary file %s left behind", flag, p)
			case len(b) == 0 || b[len(b)-1] != '\n':
				t.Errorf("%s: %s is truncated (%d bytes)", flag, p, len(b))
			}
			return nil
		})
	}
}

// An output that cannot be written where it is to go (its directory does
// not exist, it names a directory, a directory output lies under a file)
// is refused before any work, naming the flag and the reason: before, the
// analysis ran to its end and then failed to create the file. The trace
// here is damaged, so an analysis that started would fail on it instead.
func TestUnwritableOutputsRefusedFirst(t *testing.T) {
	dir := damage(t, genTrace(t, "halo", "--ranks", "4", "--threads", "2", "--iterations", "4"), "corrupt")
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("x\n"), 0o644)
	gone := filepath.Join(t.TempDir(), "no", "such")
	for _, c := range []struct{ line, want string }{
		{`"$PT" analyze -q --json "$G/r.json" "$D"`, "--json " + gone + "/r.json: directory " + gone + " does not exist"},
		{`"$PT" analyze -q --ranks 2 --html "$G/r.html" "$D"`, "--html " + gone + "/r.html: directory " + gone + " does not exist"},
		{`"$PT" analyze -q --critical-path "$T" "$D"`, "is a directory"},
		{`"$PT" analyze -q --csv "$F/csv" "$D"`, "--csv " + file + "/csv: " + file + " is not a directory"},
		{`"$PT" compare --json "$G/c.json" "$D" "$D"`, "--json " + gone + "/c.json: directory " + gone + " does not exist"},
		{`"$PT" export --perfetto "$G/t.json" "$D"`, "--perfetto " + gone + "/t.json: directory " + gone + " does not exist"},
	} {
		r := shell(t, "D="+dir+"; G="+gone+"; F="+file+"; T="+t.TempDir()+"; "+c.line)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "rank-0000") {
			t.Errorf("%s: exit %d, stderr %q; want a refusal saying %q before the trace is read", c.line, r.code, r.stderr, c.want)
		}
	}
	// A --csv directory is created with its parents; the probe leaves
	// nothing behind.
	out := t.TempDir()
	good := genTrace(t, "halo", "--ranks", "2", "--threads", "2", "--iterations", "2")
	if r := shell(t, "D="+good+"; O="+out+"; \"$PT\" analyze -q --csv \"$O/a/b\" --json \"$O/r.json\" \"$D\""); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(out, ".ptrace-probe-*")); len(m) > 0 {
		t.Errorf("probe files left: %v", m)
	}
	if _, err := os.Stat(filepath.Join(out, "a", "b", "breakdown_per_process.csv")); err != nil {
		t.Error(err)
	}
}

// A report written to what is not a file goes there and leaves it as it
// is: a named pipe's reader gets the JSON (process substitution and
// --json /dev/stdout are such pipes), and a symbolic link keeps naming
// its file, which gets the report. Renamed over them, the report replaced
// the pipe or the link, as it replaced /dev/null itself when run as root.
func TestOutputsToPipesAndLinks(t *testing.T) {
	dir := genTrace(t, "halo", "--ranks", "2", "--threads", "2", "--iterations", "5")
	out := t.TempDir()
	line := `mkfifo "$O/pipe" && ln -s real.json "$O/link.json" && echo old > "$O/real.json" &&
		{ cat "$O/pipe" > "$O/got.json" & } &&
		"$PT" analyze -q --json "$O/pipe" --html "$O/link.json" "$D" | cat && wait &&
		test -p "$O/pipe" && test -L "$O/link.json" &&
		"$PT" analyze -q --json /dev/stdout "$D" | cat > "$O/stdout.json"`
	if r := shell(t, "D="+dir+"; O="+out+"; "+line); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, f := range []string{"got.json", "stdout.json"} {
		var rep map[string]any
		if b, err := os.ReadFile(filepath.Join(out, f)); err != nil || json.Unmarshal(b, &rep) != nil || rep["schema"] == nil {
			t.Errorf("%s: %d bytes, not the report (%v)", f, len(b), err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "real.json")); !bytes.Contains(b, []byte("<html")) {
		t.Errorf("the link's file holds %.40q, not the HTML report", b)
	}
}

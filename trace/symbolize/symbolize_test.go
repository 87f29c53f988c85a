package symbolize

import (
	"bufio"
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptrace-dev/ptrace/trace"
)

// The program reports where its calls to where() return to, as the collector
// records code addresses: module path from dladdr and offset from its base.
const prog = `#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

__attribute__((noinline)) static void where(void)
{
	void *ra = __builtin_return_address(0);
	Dl_info i;
	if (dladdr(ra, &i))
		printf("%s %lx\n", i.dli_fname, (unsigned long)((char *)ra - (char *)i.dli_fbase));
}

__attribute__((noinline)) static void second(void)
{
	where(); /* line 15 */
}

int main(void)
{
	where(); /* line 20 */
	second();
	  where(); /* line 22, column 4 */
	return 0;
}
`

// compilers returns the C compilers on PATH (each has its own DWARF habits).
func compilers(t *testing.T) []string { return onPath(t, "C compiler", "gcc", "clang") }

// onPath returns those of the programs named that are on PATH; with none,
// the test skips, or fails under CI=true, which must have them.
func onPath(t testing.TB, what string, names ...string) []string {
	var found []string
	for _, n := range names {
		if _, err := exec.LookPath(n); err == nil {
			found = append(found, n)
		}
	}
	if len(found) == 0 {
		msg := fmt.Sprintf("no %s (%s) on PATH", what, strings.Join(names, ", "))
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return found
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cc := range compilers(t) {
		for _, mode := range []struct {
			name  string
			flags []string
		}{
			{"pie", []string{"-fPIE", "-pie"}},
			{"nopie", []string{"-fno-PIE", "-no-pie"}},
		} {
			testResolve(t, cc, mode.name, mode.flags, dir, src)
		}
	}
}

func testResolve(t *testing.T, cc, name string, flags []string, dir, src string) {
	t.Run(cc+"-"+name, func(t *testing.T) {
		bin := filepath.Join(dir, "prog-"+cc+"-"+name)
		args := append([]string{"-g", "-O0", "-o", bin, src}, flags...)
		if out, err := exec.Command(cc, append(args, "-ldl")...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", cc, args, err, out)
		}
		out, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		var locs []trace.Location
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			off, err := strconv.ParseUint(f[1], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			// dladdr names the executable as it was started
			mod := f[0]
			if !filepath.IsAbs(mod) {
				mod = bin
			}
			locs = append(locs, trace.Location{ID: len(locs), Module: mod, Offset: off})
		}
		if len(locs) != 3 {
			t.Fatalf("program printed %q", out)
		}
		r := New()
		got := r.Resolve(locs)
		if err := r.Err(bin); err != nil {
			t.Fatal(err)
		}
		want := []struct {
			line, col int
			fn        string
		}{{20, 2, "main"}, {15, 2, "second"}, {22, 4, "main"}}
		for i, w := range want {
			g := got[i]
			// the program was compiled from src, an absolute path, in
			// another directory: DWARF 5 names it so
			if g.File != src || g.Line != w.line || g.Func != w.fn {
				t.Errorf("location %d (offset %#x): %s:%d:%d in %q, want prog.c:%d in %q", i, locs[i].Offset, g.File, g.Line, g.Col, g.Func, w.line, w.fn)
			}
			// compiled from another directory: the source's own absolute
			// path, not joined to the compilation directory (DWARF 5)
			if g.File != src {
				t.Errorf("location %d: file %s, want %s", i, g.File, src)
			}
			// gcc and clang both emit columns (-gcolumn-info is the default)
			if g.Col != w.col {
				t.Errorf("location %d: column %d, want %d", i, g.Col, w.col)
			}
		}
		if locs[0].File != "" {
			t.Error("Resolve modified its argument")
		}
	})
}

func TestResolveUnknownModule(t *testing.T) {
	r := New()
	in := []trace.Location{{ID: 1, Module: "/nonexistent/module.so", Offset: 0x10}, {ID: 2, Addr: 0x42}}
	got := r.Resolve(in)
	if got[0] != in[0] || got[1] != in[1] {
		t.Errorf("unresolvable locations changed: %+v", got)
	}
	if r.Err("/nonexistent/module.so") == nil {
		t.Error("no error for a missing module")
	}
}

// An address whose line-table row has line 0 (optimised code) resolves to
// its enclosing function's own line, flagged approximate, with the C++ name
// demangled; an address with a line keeps it.
func TestApproximateLineAndDemangle(t *testing.T) {
	const mangled = "_ZN9OpenMPApp11insert_taskEP11task_args_si9payload_sm"
	m := &module{
		funcs: []fn{{addr: 0x1000, size: 0x100, name: mangled}, {addr: 0x1100, size: 0x10, name: "main"}},
		rows: []row{
			{addr: 0x1000, file: "app.cc", line: 41, col: 1},
			{addr: 0x1010, file: "app.cc", line: 44, col: 3},
			{addr: 0x1040, file: "app.cc", line: 0},
			{addr: 0x1080, file: "app.cc", line: 47, col: 5},
			{addr: 0x1100, end: true},
		},
	}
	r := New()
	r.modules["/app"] = m
	got := r.Resolve([]trace.Location{
		{ID: 0, Module: "/app", Offset: 0x1051}, // inside the line-0 row
		{ID: 1, Module: "/app", Offset: 0x1021}, // line 44
	})
	const name = "OpenMPApp::insert_task(task_args_s*, int, payload_s, unsigned long)"
	want := trace.Location{ID: 0, Module: "/app", Offset: 0x1051, Func: name, File: "app.cc", Line: 41, Approx: true, FuncOffset: 0x51}
	if got[0] != want {
		t.Errorf("line-0 address: %+v, want %+v", got[0], want)
	}
	if n := got[0].Name(); n != name+" at app.cc:41 (approximate)" {
		t.Errorf("name %q", n)
	}
	if l := got[1]; l.Line != 44 || l.Col != 3 || l.Approx || l.Func != name {
		t.Errorf("address with a line: %+v", l)
	}
}

// Without -g (no line table) a location is its function and the return
// address's offset in it: two calls of one function stay apart ("main+0x1c"
// and "main+0x2a"), where the function's name alone would merge them.
func TestResolveWithoutDebugInfo(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cc := range compilers(t) {
		bin := filepath.Join(dir, "prog-nog-"+cc)
		if out, err := exec.Command(cc, "-O0", "-o", bin, src, "-ldl").CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cc, err, out)
		}
		out, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		var locs []trace.Location
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			off, err := strconv.ParseUint(f[1], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			locs = append(locs, trace.Location{ID: len(locs), Module: bin, Offset: off})
		}
		got := New().Resolve(locs)
		if len(got) != 3 {
			t.Fatalf("%s: %d locations", cc, len(got))
		}
		// calls 0 and 2 are in main, 1 in second
		for i, fn := range []string{"main", "second", "main"} {
			g := got[i]
			want := fn + "+0x" + strconv.FormatUint(g.FuncOffset, 16)
			if g.File != "" || g.Func != fn || g.FuncOffset == 0 || g.Name() != want {
				t.Errorf("%s: location %d: %+v named %q, want function %s with an offset", cc, i, g, g.Name(), fn)
			}
		}
		if got[0].Name() == got[2].Name() || got[2].FuncOffset <= got[0].FuncOffset {
			t.Errorf("%s: main's two calls are named %q and %q", cc, got[0].Name(), got[2].Name())
		}
	}
}

// dwarfOf returns a program's DWARF sections, .debug_info apart, and a
// module of it built from info instead: the DWARF a damaged file would give.
type dwarfOf struct {
	sec   map[string][]byte
	bias  uint64
	funcs []fn
}

func readDWARFOf(t testing.TB, bin string) *dwarfOf {
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := &dwarfOf{sec: map[string][]byte{}, funcs: symbols(f)}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Off == 0 {
			d.bias = p.Vaddr
		}
	}
	for _, s := range f.Sections {
		if name, ok := strings.CutPrefix(s.Name, ".debug_"); ok && s.Type != elf.SHT_NOBITS {
			b, err := s.Data() // uncompressed
			if err != nil {
				t.Fatal(err)
			}
			d.sec[name] = b
		}
	}
	if d.sec["info"] == nil {
		t.Fatal("no .debug_info")
	}
	return d
}

// module parses info with the other sections; nil when debug/dwarf refuses
// it (as elf.File.DWARF would).
func (d *dwarfOf) module(info []byte) *module {
	s := d.sec
	dw, err := dwarf.New(s["abbrev"], s["aranges"], s["frame"], info, s["line"], s["pubnames"], s["ranges"], s["str"])
	if err != nil {
		return nil
	}
	for _, name := range []string{"addr", "line_str", "loclists", "rnglists", "str_offsets"} {
		if b := s[name]; b != nil {
			if dw.AddSection(".debug_"+name, b) != nil {
				return nil
			}
		}
	}
	m := &module{bias: d.bias, funcs: d.funcs}
	if m.readLines(dw) != nil {
		return nil
	}
	return m
}

// A .debug_info whose last byte is an abbreviation code's first byte with
// the continuation bit set (the section cut inside a code): debug/dwarf
// returns a null entry there without moving on, again and again. The line
// tables of the units before it are read, and reading returns.
func TestReadLinesCutAbbreviationCode(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cc := range compilers(t) {
		bin := filepath.Join(dir, "prog-"+cc)
		if out, err := exec.Command(cc, "-g", "-O0", "-o", bin, src, "-ldl").CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cc, err, out)
		}
		d := readDWARFOf(t, bin)
		info := append([]byte(nil), d.sec["info"]...)
		// the unit's last byte: the null entry ending its children
		if info[len(info)-1] != 0 {
			t.Fatalf("%s: .debug_info ends with %#x, not a null entry", cc, info[len(info)-1])
		}
		info[len(info)-1] = 0x80
		done := make(chan *module, 1)
		go func() { done <- d.module(info) }()
		select {
		case m := <-done:
			if m == nil || len(m.rows) == 0 {
				t.Errorf("%s: the line table of the unit before the cut was not read", cc)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: reading the DWARF did not return in 10 s", cc)
		}
	}
}

// A header found through a relative include directory (-Iinc), built in
// its directory: its lines resolve to its absolute path, as in DWARF 4, not
// to "inc/h.h" (DWARF 5 directory entries are relative to the compilation
// directory, which debug/dwarf does not join them to).
func TestResolveRelativeIncludeDirectory(t *testing.T) {
	const hdr = `static inline __attribute__((always_inline)) void call_where(void)
{
	where(); /* line 3 */
}
`
	// prog with the header included after where() and called from main
	src := strings.Replace(prog, "int main(void)\n{\n", "#include \"h.h\"\n\nint main(void)\n{\n\tcall_where();\n", 1)
	for _, cc := range compilers(t) {
		for _, dw := range []string{"-gdwarf-5", "-gdwarf-4"} {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "inc"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "inc", "h.h"), []byte(hdr), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "prog.c"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			c := exec.Command(cc, "-g", dw, "-O0", "-Iinc", "-o", "prog", "prog.c", "-ldl")
			c.Dir = dir
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", cc, err, out)
			}
			bin := filepath.Join(dir, "prog")
			out, err := exec.Command(bin).Output()
			if err != nil {
				t.Fatal(err)
			}
			// the first call is the header's
			f := strings.Fields(strings.SplitN(string(out), "\n", 2)[0])
			off, err := strconv.ParseUint(f[1], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			got := New().Resolve([]trace.Location{{ID: 1, Module: bin, Offset: off}})[0]
			if want := filepath.Join(dir, "inc", "h.h"); got.File != want || got.Line != 3 {
				t.Errorf("%s %s: %s, want %s:3", cc, dw, got.Name(), want)
			}
		}
	}
}

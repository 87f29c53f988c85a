package cube

import (
	"strings"
	"testing"
)

func TestSplitLoc(t *testing.T) {
	for _, c := range []struct {
		loc  string
		file string
		line int
	}{
		{"halo.c:40:1", "halo.c", 40},
		{"/a/b:c/x.f90:7:3", "/a/b:c/x.f90", 7},
		{"x.c:12", "x.c", 12},
		{"iterate+0x1c", "", -1},
		{"libfoo.so+0x10", "", -1},
		{"", "", -1},
		{"a.c:-1:2", "", -1},
	} {
		if f, l := splitLoc(c.loc); f != c.file || l != c.line {
			t.Errorf("splitLoc(%q) = %q, %d; want %q, %d", c.loc, f, l, c.file, c.line)
		}
	}
}

// An MPI call's own location, when the report carries it, is the call
// path's file and line; two calls of one function at different places are
// two call paths, with or without lines.
func TestCallSiteLocations(t *testing.T) {
	ct := newCallTree("prog")
	sites := []callSite{
		siteOf("MPI_Send", "solve", "a.c:12:5"),
		siteOf("MPI_Send", "solve", "a.c:30:5"),
		siteOf("MPI_Send", "", "solve+0x1c"),
		siteOf("MPI_Send", "", "solve+0x40"),
		siteOf("MPI_Send", "", ""),
	}
	for _, s := range sites {
		ct.insert(sitePath(s))
	}
	ct.finish()
	seen := map[*Cnode]bool{}
	for _, s := range sites {
		c := ct.lookup(sitePath(s))
		if c == nil || seen[c] {
			t.Fatalf("%+v: call path %p (seen before: %v)", s, c, seen[c])
		}
		seen[c] = true
	}
	if c := ct.lookup(sitePath(sites[0])); c.Mod != "a.c" || c.Line != 12 || c.Callee.Name != "MPI_Send" {
		t.Errorf("a.c:12:5: mod %q line %d region %q", c.Mod, c.Line, c.Callee.Name)
	}
	if c := ct.lookup(sitePath(sites[2])); c.Mod != "solve+0x1c" || c.Line != -1 {
		t.Errorf("solve+0x1c: mod %q line %d", c.Mod, c.Line)
	}
	// Both MPI_Send call paths under "solve" share the user region's node.
	if got := len(ct.root.cnode.Children); got != 4 {
		t.Errorf("%d children of the root, want solve + 3 MPI_Send", got)
	}
}

// A delay's code is a parallel region where it, or what its last
// parentheses hold, is a location; any other name is a user region's, colons
// and parentheses included (a C++ function Score-P's compiler
// instrumentation names).
func TestDelayPathKinds(t *testing.T) {
	for _, c := range []struct {
		code, name, descr string
	}{
		{"serial code", "serial code", "code outside parallel regions"},
		{"main", "main", ""},
		{"std::vector<char, std::allocator<char> >::_M_default_append(unsigned long)",
			"std::vector<char, std::allocator<char> >::_M_default_append(unsigned long)", ""},
		{"ns::f<void (*)(int)>(int)", "ns::f<void (*)(int)>(int)", ""},
		{"halo.c:40:1", "!$omp parallel @halo.c:40:1", ""},
		{"x.c:12", "!$omp parallel @x.c:12", ""},
		{"solve (halo.c:40:1)", "!$omp parallel @halo.c:40:1", "in solve"},
		{"ns::solve(int) (halo.c:40:1)", "!$omp parallel @halo.c:40:1", "in ns::solve(int)"},
		{"solve+0x1c", "!$omp parallel @solve+0x1c", ""},
		{"solve (solve+0x1c)", "!$omp parallel @solve+0x1c", "in solve"},
		{"libfoo.so+0x10", "!$omp parallel @libfoo.so+0x10", ""},
		{"0x401000", "!$omp parallel @0x401000", ""},
		{"f (f at a.c:3 (approximate))", "!$omp parallel @f at a.c:3 (approximate)", "in f"},
	} {
		p := delayPath(c.code)
		if len(p) != 1 || p[0].reg.Name != c.name || p[0].reg.Descr != c.descr {
			t.Errorf("delayPath(%q) = %+v, want region %q (%q)", c.code, p, c.name, c.descr)
		}
	}
	// An MPI call site's time outside waits is the call site's path (the
	// MPI function, with the call's file and line when the name has them).
	for _, c := range []struct {
		code, mod string
		line      int
	}{
		{"MPI_Waitall at nonblock.cc:199:20", "nonblock.cc", 199},
		{"MPI_Waitall at main+0x4f", "main+0x4f", -1},
		{"MPI_Barrier", "", -1},
	} {
		p := delayPath(c.code)
		want := sitePath(siteOf(c.code[:max(0, strings.Index(c.code, " at "))], "", ""))
		if len(want[0].reg.Name) == 0 {
			want = sitePath(siteOf(c.code, "", ""))
		}
		if len(p) != 1 || p[0].reg.Name != want[0].reg.Name || p[0].reg.Paradigm != "mpi" || p[0].mod != c.mod || p[0].line != c.line {
			t.Errorf("delayPath(%q) = %+v, want MPI function %q at %q line %d", c.code, p, want[0].reg.Name, c.mod, c.line)
		}
	}
}

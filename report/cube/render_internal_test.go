package cube

import "testing"

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

package symbolize

import (
	"debug/dwarf"
	"fmt"
	"path"
	"sort"

	"github.com/ianlancetaylor/demangle"
)

// The line table names an address's innermost position. Where that is a
// system header (code of a template or inline function inlined into the
// program), the DWARF tree of the address's compile unit tells the chain of
// inlined calls that led there: a DW_TAG_subprogram (the function the code
// is in) holds DW_TAG_inlined_subroutine entries (through lexical blocks),
// each with the address ranges of its inlined code (DW_AT_low_pc/high_pc or
// DW_AT_ranges), its call site in the code around it (DW_AT_call_file, an
// index in the unit's line-table file list, DW_AT_call_line and
// DW_AT_call_column) and the function inlined (DW_AT_abstract_origin).
// The frames of an address are, innermost first: the line table's position
// in the innermost inlined function, then each inlined call's call site in
// the function around it, up to the subprogram. caller walks them outward
// to the first position in a file of the program — as llvm-symbolizer
// --inlining or addr2line -i list the frames, keeping one.
//
// Cost: a unit's tree is read once, the first time an address of it needs
// its chain (an address in a system header), and kept as a flat index of its
// concrete subprograms and inlined calls; units without such an address are
// not read. A lookup is a binary search among the unit's subprograms and a
// scan of that subprogram's inlined calls.
//
// Bad DWARF never panics the caller (debug/dwarf does not promise that: a
// recover turns it into an unusable unit) nor loops: the tree is read
// forward once, parents come before their children, and the chains of
// DW_AT_abstract_origin/DW_AT_specification followed for a name are bounded.

// cuRef is a compile unit whose line table the module read.
type cuRef struct {
	off                   dwarf.Offset
	name, joined, compDir string // see fileName
}

func newCURef(cu *dwarf.Entry) cuRef {
	// debug/dwarf joins a DWARF 5 file entry's directory with its name
	// even when the name is absolute (clang names the source file as it
	// was given, with directory 0, the compilation directory): "/build"
	// + "/src/a.c" becomes "/build/src/a.c". The unit's own name undoes
	// it for its main file.
	c := cuRef{off: cu.Offset}
	c.name, _ = cu.Val(dwarf.AttrName).(string)
	c.compDir, _ = cu.Val(dwarf.AttrCompDir).(string)
	if path.IsAbs(c.name) && c.compDir != "" {
		c.joined = path.Join(c.compDir, c.name)
	}
	return c
}

// fileName is a line-table file's name as the unit means it.
func (c *cuRef) fileName(f *dwarf.LineFile) string {
	if f == nil {
		return ""
	}
	if f.Name == c.joined && c.joined != c.name {
		return c.name
	}
	// A DWARF 5 directory entry other than 0 may be relative: to the
	// compilation directory (DWARF 5, 6.2.4.1, as in DWARF 4). debug/dwarf
	// joins DWARF 4's to it but leaves DWARF 5's as they are, so a header
	// found through -Iinc was "inc/h.h".
	if f.Name != "" && !path.IsAbs(f.Name) && path.IsAbs(c.compDir) {
		return path.Join(c.compDir, f.Name)
	}
	return f.Name
}

// unitInfo is the index of one compile unit's concrete subprograms and
// inlined calls.
type unitInfo struct {
	subs  []span  // subprograms' ranges, sorted by low
	nodes []frame // DIE order: a node's subtree is nodes[i+1:nodes[i].end]
}

// span is an address range [lo, hi) of the node at index node.
type span struct {
	lo, hi uint64
	node   int32
}

// frame is a concrete subprogram (parent −1) or an inlined call.
type frame struct {
	parent, end int32
	depth       int32
	ranges      [][2]uint64
	// an inlined call: where it is called from, in the code of its
	// parent, and the function inlined (its abstract origin)
	callFile          string
	callLine, callCol int
	origin            dwarf.Offset
}

// site is a caller frame's position and function ("" for the subprogram:
// the symbol table names it).
type site struct {
	file      string
	line, col int
	fn        string
}

// maxDepth bounds the DIE nesting followed; deeper entries are skipped.
const maxDepth = 256

// caller returns, for an address pc of compile unit cu whose line lies in a
// system file, the innermost call site of its chain of inlined calls that
// does not (system says which files are not the program's). ok is false
// when there is none: pc is in no inlined call, every call site is in a
// system file, a call site has no line, or the unit's DWARF is unusable.
func (m *module) caller(cu int32, pc uint64, system func(string) bool) (site, bool) {
	u := m.unit(cu)
	if u == nil {
		return site{}, false
	}
	chain := u.chain(pc)
	// chain[0] is the innermost inlined call, chain[len-1] the subprogram
	for k := 0; k+1 < len(chain); k++ {
		f := &u.nodes[chain[k]]
		if f.callFile == "" || f.callLine <= 0 {
			return site{}, false // a frame without a position: stop
		}
		if system(f.callFile) {
			continue
		}
		s := site{file: f.callFile, line: f.callLine, col: max(f.callCol, 0)}
		if k+1 < len(chain)-1 {
			// the call is in the code of another inlined function
			s.fn = m.funcName(u.nodes[chain[k+1]].origin)
		}
		return s, true
	}
	return site{}, false
}

// chain returns the indices of the frames holding pc, innermost first,
// ending with its subprogram; nil when no subprogram of the unit holds it.
func (u *unitInfo) chain(pc uint64) []int32 {
	i := sort.Search(len(u.subs), func(i int) bool { return u.subs[i].lo > pc }) - 1
	root := int32(-1)
	// subprograms do not overlap; a few tries where bad DWARF has them
	for k := i; k >= 0 && k > i-8; k-- {
		if pc < u.subs[k].hi {
			root = u.subs[k].node
			break
		}
	}
	if root < 0 {
		return nil
	}
	// the deepest inlined call holding pc; its parents make the chain
	// even where a parent's ranges do not cover its child's
	best := root
	for n := root + 1; n < u.nodes[root].end; n++ {
		if u.nodes[n].depth > u.nodes[best].depth && u.nodes[n].contains(pc) {
			best = n
		}
	}
	var c []int32
	for n := best; n >= 0 && len(c) <= maxDepth; n = u.nodes[n].parent {
		c = append(c, n)
		if u.nodes[n].parent < 0 {
			break
		}
	}
	if c[len(c)-1] != root {
		return nil // a nested subprogram's call: not this one's
	}
	return c
}

func (f *frame) contains(pc uint64) bool {
	for _, r := range f.ranges {
		if r[0] <= pc && pc < r[1] {
			return true
		}
	}
	return false
}

// unit returns compile unit cu's index, reading it the first time; nil when
// it cannot be read.
func (m *module) unit(cu int32) *unitInfo {
	if m.dw == nil || cu < 0 || int(cu) >= len(m.cus) {
		return nil
	}
	if u, ok := m.units[cu]; ok {
		return u
	}
	if m.units == nil {
		m.units = map[int32]*unitInfo{}
	}
	u, err := readUnit(m.dw, &m.cus[cu])
	if err != nil {
		u = nil
	}
	m.units[cu] = u
	return u
}

// readUnit indexes one compile unit's concrete subprograms and inlined
// calls.
func readUnit(d *dwarf.Data, c *cuRef) (u *unitInfo, err error) {
	defer func() {
		if p := recover(); p != nil {
			u, err = nil, fmt.Errorf("bad DWARF in the unit at %#x: %v", c.off, p)
		}
	}()
	r := d.Reader()
	r.Seek(c.off)
	cu, err := r.Next()
	if err != nil || cu == nil || cu.Tag != dwarf.TagCompileUnit {
		return nil, fmt.Errorf("no compile unit at %#x", c.off)
	}
	// the unit's file list, for the call sites' DW_AT_call_file
	var files []string
	if lr, err := d.LineReader(cu); err == nil && lr != nil {
		var e dwarf.LineEntry
		for lr.Next(&e) == nil {
			// the list grows as the table is read (DW_LNE_define_file)
		}
		for _, f := range lr.Files() {
			files = append(files, c.fileName(f))
		}
	}
	u = &unitInfo{}
	if !cu.Children {
		return u, nil
	}
	// open entries: the frame their children belong to (−1: none), and
	// whether the entry is that frame (its subtree ends with it)
	type open struct {
		node int32
		own  bool
	}
	stack := []open{{-1, false}}
	closeFrame := func(o open) {
		if o.own {
			u.nodes[o.node].end = int32(len(u.nodes))
		}
	}
	for len(stack) > 0 {
		e, err := r.Next()
		if err != nil || e == nil || e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			break // the end of the section, or of a unit without its last null entries
		}
		if e.Tag == 0 {
			closeFrame(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
			continue
		}
		ctx := stack[len(stack)-1].node
		n := ctx
		switch e.Tag {
		case dwarf.TagSubprogram, dwarf.TagInlinedSubroutine:
			rs, err := d.Ranges(e)
			if err != nil || len(rs) == 0 {
				if e.Tag == dwarf.TagSubprogram {
					n = -1 // a declaration or an abstract instance
				}
				break
			}
			f := frame{parent: -1, ranges: rs}
			if e.Tag == dwarf.TagInlinedSubroutine {
				if ctx < 0 {
					break // an inlined call outside any function
				}
				f.parent, f.depth = ctx, u.nodes[ctx].depth+1
				if k, ok := intVal(e.Val(dwarf.AttrCallFile)); ok && k >= 0 && k < int64(len(files)) {
					f.callFile = files[k]
				}
				f.callLine, _ = intOf(e.Val(dwarf.AttrCallLine))
				f.callCol, _ = intOf(e.Val(dwarf.AttrCallColumn))
				f.origin, _ = e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
			}
			n = int32(len(u.nodes))
			f.end = n + 1
			u.nodes = append(u.nodes, f)
			if f.parent < 0 {
				for _, rg := range rs {
					if rg[0] < rg[1] {
						u.subs = append(u.subs, span{lo: rg[0], hi: rg[1], node: n})
					}
				}
			}
		}
		own := n >= 0 && n != ctx
		if e.Children {
			if len(stack) >= maxDepth {
				r.SkipChildren()
				continue // (a frame's end is already its own index + 1)
			}
			stack = append(stack, open{n, own})
		}
	}
	// entries left open by a truncated unit end where it ends
	for _, o := range stack {
		closeFrame(o)
	}
	sort.SliceStable(u.subs, func(i, j int) bool { return u.subs[i].lo < u.subs[j].lo })
	return u, nil
}

// funcName names the function whose abstract instance (or declaration) is
// at off: its demangled linkage name, else its name, looked for along
// DW_AT_abstract_origin and DW_AT_specification; "" when it has none.
func (m *module) funcName(off dwarf.Offset) (name string) {
	if off == 0 || m.dw == nil {
		return ""
	}
	if n, ok := m.names[off]; ok {
		return n
	}
	if m.names == nil {
		m.names = map[dwarf.Offset]string{}
	}
	defer func() {
		if p := recover(); p != nil {
			name = ""
		}
		m.names[off] = name
	}()
	r := m.dw.Reader()
	plain := ""
	for k := 0; k < 8 && off != 0; k++ {
		r.Seek(off)
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		for _, a := range []dwarf.Attr{dwarf.AttrLinkageName, dwarf.Attr(0x2007)} { // DW_AT_MIPS_linkage_name: older GCC {
			if s, ok := e.Val(a).(string); ok && s != "" {
				return demangle.Filter(s)
			}
		}
		if s, ok := e.Val(dwarf.AttrName).(string); ok && plain == "" {
			plain = s
		}
		next, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			next, _ = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		}
		off = next
	}
	return plain
}

// intVal reads a constant attribute (debug/dwarf gives int64, or uint64
// for some forms).
func intVal(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case uint64:
		if x <= 1<<62 {
			return int64(x), true
		}
	}
	return 0, false
}

// intOf is intVal as an int in a line's range (0 when out of it).
func intOf(v any) (int, bool) {
	x, ok := intVal(v)
	if !ok || x < 0 || x > 1<<31-1 {
		return 0, false
	}
	return int(x), true
}

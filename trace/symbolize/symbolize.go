// Package symbolize owns the mapping of recorded code addresses to source
// positions: it resolves location-table entries (module path + offset, as the
// collector records them with dladdr) to file:line:col and function, reading
// the module's DWARF line table and symbol table with debug/elf and
// debug/dwarf (no subprocess). Modules are parsed once per Resolver.
//
// Offsets are relative to the module's load base (dladdr's dli_fbase, the
// address where the file's first byte is mapped); they are turned into ELF
// virtual addresses through the PT_LOAD segments, so position-independent
// executables, shared libraries and fixed-address executables all resolve.
// Recorded addresses are return addresses (OMPT's codeptr_ra): the lookup
// uses offset − 1, which lies inside the call instruction.
//
// A line table names the innermost source position of an address: inside
// code inlined from a header, the header's line. When that file is not the
// program's own (isSystem: a system include or library directory, a
// compiler's headers), the address is named after its call site in the
// program instead: the DWARF inlined-subroutine tree (inline.go) gives the
// chain of inlined calls, walked outward to the first call site in a file of
// the program, whose function becomes the location's function.
package symbolize

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ianlancetaylor/demangle"
	"github.com/ptrace-dev/ptrace/trace"
)

// Resolver resolves locations and caches what it learnt about each module.
// It is not safe for concurrent use.
type Resolver struct {
	modules map[string]*module
	// DebugDirs are searched for separate debug files by build id
	// (DIR/.build-id/xx/rest.debug); default /usr/lib/debug.
	DebugDirs []string
	// SystemDirs hold the source files that are not the program's: an
	// address whose line lies in one of them, in code inlined there, is
	// named after the call site in the program (see isSystem); default
	// DefaultSystemDirs.
	SystemDirs []string
}

// DefaultSystemDirs are the directories of the system's headers and of the
// compilers' and libraries' own headers (/usr/lib/gcc/…/include,
// /usr/lib/llvm-14/lib/clang/…/include, Open MPI's
// /usr/lib/x86_64-linux-gnu/openmpi/include): files under them are not the
// program's. Besides them, a path holding a toolchain's header directory
// (toolchainDirs: /include/c++/, /lib/gcc/, /lib/clang/) is a system file
// wherever the toolchain is installed.
var DefaultSystemDirs = []string{"/usr/include", "/usr/local/include", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec", "/usr/local/lib", "/usr/local/lib64"}

// toolchainDirs mark a compiler's or its C++ library's headers anywhere: a
// GCC or LLVM installed under /opt, a Spack or module tree
// (/opt/gcc-13/include/c++/13/…, …/lib/gcc/x86_64-pc-linux-gnu/13/include/omp.h).
var toolchainDirs = []string{"/include/c++/", "/lib/gcc/", "/lib64/gcc/", "/lib/clang/", "/lib64/clang/"}

// New returns a Resolver with an empty cache.
func New() *Resolver {
	return &Resolver{modules: map[string]*module{}, DebugDirs: []string{"/usr/lib/debug"}, SystemDirs: DefaultSystemDirs}
}

// isSystem reports whether a source file is not the program's: an absolute
// path under one of SystemDirs or holding a toolchain's header directory. A
// relative name (a line table without directories) is the program's.
func (r *Resolver) isSystem(file string) bool {
	if !path.IsAbs(file) {
		return false
	}
	file = path.Clean(file)
	for _, d := range r.SystemDirs {
		d = path.Clean(d)
		if file == d || strings.HasPrefix(file, d+"/") || d == "/" {
			return true
		}
	}
	for _, m := range toolchainDirs {
		if strings.Contains(file, m) {
			return true
		}
	}
	return false
}

// Resolve returns a copy of locs with File/Line/Col/Func filled wherever the
// module's debug information resolves the address; entries that do not
// resolve, or that were resolved already, are left as they are. Function
// names are demangled (C++, Rust, D). An address whose line table has no
// line gets its function's own line, with Approx set. An address in code
// inlined from a system header (see Resolver.SystemDirs) is named after the
// innermost call of its chain of inlined calls that lies in the program's
// files, and its function is the one that call is in.
func Resolve(locs []trace.Location) []trace.Location { return New().Resolve(locs) }

// Resolve is the package function with this Resolver's cache.
func (r *Resolver) Resolve(locs []trace.Location) []trace.Location {
	out := make([]trace.Location, len(locs))
	copy(out, locs)
	for i := range out {
		l := &out[i]
		if l.Module == "" || l.File != "" || l.Offset == 0 {
			continue
		}
		m := r.module(l.Module)
		if m.err != nil {
			continue
		}
		pc := l.Offset - 1 + m.bias
		f, inFunc := m.function(pc)
		if ri, ok := m.line(pc); ok {
			rw := &m.rows[ri]
			l.File, l.Line, l.Col = rw.file, rw.line, rw.col
			if r.isSystem(rw.file) {
				// code inlined from a header: its call site in
				// the program, if the chain of inlined calls has one
				if c, ok := m.caller(rw.cu, pc, r.isSystem); ok {
					l.File, l.Line, l.Col = c.file, c.line, c.col
					if c.fn != "" && l.Func == "" {
						// a function of the program inlined where
						// the address is: its name, without an
						// offset (it has no start of its own)
						l.Func = c.fn
						continue
					}
				}
			}
		} else if inFunc {
			// No line for the address itself (optimised code often has
			// line-0 rows): the enclosing function's own line, flagged.
			if file, line, ok := m.funcLine(f); ok {
				l.File, l.Line, l.Col, l.Approx = file, line, 0, true
			}
		}
		if l.Func == "" && inFunc {
			l.Func = demangle.Filter(f.name)
			// the return address's place in the function: what names
			// it without a line table ("main+0x4f")
			l.FuncOffset = pc + 1 - f.addr
		}
	}
	return out
}

// Err reports why a module could not be used (nil when it could).
func (r *Resolver) Err(path string) error { return r.module(path).err }

// module is one parsed ELF object.
type module struct {
	err   error
	bias  uint64 // ELF virtual address of the file's first byte
	rows  []row  // line table, sorted by address
	funcs []fn   // function symbols, sorted by address

	// for the inlined calls (inline.go): the DWARF data, its compile
	// units (rows refer to them by index) and what was read of them
	dw    *dwarf.Data
	cus   []cuRef
	units map[int32]*unitInfo
	names map[dwarf.Offset]string
}

type row struct {
	addr      uint64
	file      string
	line, col int
	cu        int32 // index in module.cus of the unit whose table holds it
	end       bool  // end of a sequence: no code from here
}

type fn struct {
	addr, size uint64
	name       string
}

func (r *Resolver) module(path string) *module {
	if m, ok := r.modules[path]; ok {
		return m
	}
	m := &module{}
	m.err = m.load(path, r.DebugDirs)
	if m.err != nil {
		m.err = fmt.Errorf("symbolize %s: %w", path, m.err)
	}
	r.modules[path] = m
	return m
}

func (m *module) load(path string, debugDirs []string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// dladdr's base is where the file's first byte is mapped: the segment
	// with the lowest file offset (0) gives its virtual address
	var load *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && (load == nil || p.Off < load.Off) {
			load = p
		}
	}
	if load == nil || load.Off > load.Vaddr {
		return errors.New("no usable PT_LOAD segment")
	}
	m.bias = load.Vaddr - load.Off
	m.funcs = symbols(f)
	d, err := f.DWARF()
	if err != nil || !hasLines(d) {
		// separate debug file, by build id
		if dbg := debugFile(f, debugDirs); dbg != "" {
			if g, err2 := elf.Open(dbg); err2 == nil {
				defer g.Close()
				d, err = g.DWARF()
				if len(m.funcs) == 0 {
					m.funcs = symbols(g)
				}
			}
		}
	}
	if err != nil {
		if len(m.funcs) > 0 {
			return nil // functions only
		}
		return fmt.Errorf("no debug information: %w", err)
	}
	return m.readLines(d)
}

// maxNulls bounds the consecutive null entries read between units.
const maxNulls = 1 << 12

func hasLines(d *dwarf.Data) bool {
	r := d.Reader()
	e, err := r.Next()
	return err == nil && e != nil
}

func (m *module) readLines(d *dwarf.Data) error {
	m.dw = d
	r := d.Reader()
	nulls := 0
	for {
		cu, err := r.Next()
		if err != nil {
			return fmt.Errorf("read DWARF: %w", err)
		}
		if cu == nil {
			break
		}
		if cu.Tag == 0 {
			// A null entry between units is padding, a byte each.
			// debug/dwarf also returns one, without moving on, for
			// an abbreviation code cut by the end of the section (a
			// ULEB128 byte with its continuation bit set): the
			// units read so far are what there is.
			if nulls++; nulls > maxNulls {
				break
			}
			continue
		}
		nulls = 0
		if cu.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(cu)
		if err != nil {
			return fmt.Errorf("read DWARF line table: %w", err)
		}
		r.SkipChildren()
		if lr == nil {
			continue
		}
		c := newCURef(cu)
		ci := int32(len(m.cus))
		m.cus = append(m.cus, c)
		var e dwarf.LineEntry
		for {
			if err := lr.Next(&e); err != nil {
				break
			}
			m.rows = append(m.rows, row{addr: e.Address, file: c.fileName(e.File), line: e.Line, col: e.Column, cu: ci, end: e.EndSequence})
		}
	}
	// Stable: at one address an end of sequence comes before the start of
	// the next sequence, and the last row of several wins (it describes the
	// instruction).
	sort.SliceStable(m.rows, func(i, j int) bool {
		if m.rows[i].addr != m.rows[j].addr {
			return m.rows[i].addr < m.rows[j].addr
		}
		return m.rows[i].end && !m.rows[j].end
	})
	return nil
}

func symbols(f *elf.File) []fn {
	var fns []fn
	for _, get := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, err := get()
		if err != nil {
			continue
		}
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
				fns = append(fns, fn{addr: s.Value, size: s.Size, name: s.Name})
			}
		}
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].addr < fns[j].addr })
	return fns
}

func debugFile(f *elf.File, dirs []string) string {
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		return ""
	}
	b, err := s.Data()
	if err != nil || len(b) < 16 {
		return ""
	}
	id := b[16:] // namesz(4) descsz(4) type(4) "GNU\0"(4) then the id
	if len(id) < 2 {
		return ""
	}
	hex := fmt.Sprintf("%x", id)
	for _, dir := range dirs {
		p := filepath.Join(dir, ".build-id", hex[:2], hex[2:]+".debug")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// line finds the row covering pc: the last row at or before pc, unless that
// row ends a sequence. It returns the row's index.
func (m *module) line(pc uint64) (int, bool) {
	i := sort.Search(len(m.rows), func(i int) bool { return m.rows[i].addr > pc }) - 1
	if i < 0 || m.rows[i].end || m.rows[i].line == 0 {
		return 0, false
	}
	return i, true
}

// function returns the function symbol covering pc.
func (m *module) function(pc uint64) (fn, bool) {
	i := sort.Search(len(m.funcs), func(i int) bool { return m.funcs[i].addr > pc }) - 1
	// the covering symbol is the last one at or below pc, or an alias of it
	for k := i; k >= 0 && k > i-8; k-- {
		if f := m.funcs[k]; pc < f.addr+f.size {
			return f, true
		}
	}
	return fn{}, false
}

// funcLine returns a function's own line: the first line-table row inside
// it that names a line (its opening line, where the prologue is).
func (m *module) funcLine(f fn) (string, int, bool) {
	i := sort.Search(len(m.rows), func(i int) bool { return m.rows[i].addr >= f.addr })
	for ; i < len(m.rows) && m.rows[i].addr < f.addr+f.size; i++ {
		if r := m.rows[i]; !r.end && r.line != 0 {
			return r.file, r.line, true
		}
	}
	return "", 0, false
}

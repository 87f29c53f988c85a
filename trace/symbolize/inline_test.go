package symbolize

import (
	"bufio"
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

// syshdr is a header of the test's "system" directory: templates and inline
// functions the program's calls go through, as a C++ library's header-only
// wrappers (an MPI binding, std::condition_variable::wait) are.
const syshdr = `#pragma once
typedef void (*fnp)(void);
template <class F> __attribute__((always_inline)) inline void lib_call(F f) { f(); /* LIB_CALL */ }
template <class F> __attribute__((always_inline)) inline void lib_outer(F f) { lib_call(f); }
__attribute__((noinline)) inline void lib_own(fnp f) { f(); /* LIB_OWN */ asm volatile("" ::: "memory"); }
`

// cxxprog prints, per call of where(), its return address as the collector
// records code addresses (module path from dladdr, offset from its base).
// Each call's line is marked by a comment: where the location must point.
const cxxprog = `#include <dlfcn.h>
#include <stdio.h>
#include <functional>
#include "lib.h"

__attribute__((noinline)) static void where(void)
{
	void *ra = __builtin_return_address(0);
	Dl_info i;
	if (dladdr(ra, &i))
		printf("%s %lx\n", i.dli_fname, (unsigned long)((char *)ra - (char *)i.dli_fbase));
	asm volatile("" ::: "memory");
}

__attribute__((always_inline)) static inline void helper(void)
{
	lib_call(where); /* HELPER */
}

int main(void)
{
	lib_call(where); /* MAIN_CALL */
	lib_outer(where); /* MAIN_OUTER */
	helper();
	lib_own(where);
	where(); /* MAIN_PLAIN */
	std::invoke(where); /* MAIN_STD */
	return 0;
}
`

// cxxCompilers returns the C++ compilers on PATH.
func cxxCompilers(t testing.TB) []string { return onPath(t, "C++ compiler", "g++", "clang++") }

// markLine returns the line of src holding marker.
func markLine(t testing.TB, src, marker string) int {
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("no %s in the source", marker)
	return 0
}

// buildInline writes the program and its "system" header under dir and
// builds it with cxx and flags; it returns the program and the header's
// directory.
func buildInline(t testing.TB, dir, cxx string, flags ...string) (bin, src, sys string) {
	sys = filepath.Join(dir, "sys")
	if err := os.MkdirAll(sys, 0o755); err != nil {
		t.Fatal(err)
	}
	src = filepath.Join(dir, "prog.cpp")
	if err := os.WriteFile(filepath.Join(sys, "lib.h"), []byte(syshdr), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte(cxxprog), 0o644); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "prog-"+cxx+strings.Join(flags, ""))
	args := append([]string{"-O2", "-g", "-std=c++17", "-isystem", sys, "-o", bin, src}, flags...)
	if out, err := exec.Command(cxx, append(args, "-ldl")...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", cxx, args, err, out)
	}
	return bin, src, sys
}

// runLocs runs the program and returns its printed code addresses as
// location-table entries.
func runLocs(t testing.TB, bin string) []trace.Location {
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
		locs = append(locs, trace.Location{ID: len(locs), Module: bin, Offset: off})
	}
	return locs
}

// lineTable resolves locs by their line-table rows alone (as before inlined
// calls were followed).
func lineTable(t *testing.T, locs []trace.Location) []trace.Location {
	r := New()
	out := make([]trace.Location, len(locs))
	for i, l := range locs {
		m := r.module(l.Module)
		if m.err != nil {
			t.Fatal(m.err)
		}
		if ri, ok := m.line(l.Offset - 1 + m.bias); ok {
			l.File, l.Line, l.Col = m.rows[ri].file, m.rows[ri].line, m.rows[ri].col
		}
		out[i] = l
	}
	return out
}

// An address in code inlined from a system header is named after the
// innermost call in the program's files of its chain of inlined calls, with
// that call's function; an address in a header's own (not inlined) function
// keeps the header's line; an address in the program keeps its own.
func TestResolveInlinedFromSystemHeader(t *testing.T) {
	for _, cxx := range cxxCompilers(t) {
		// DWARF 5 numbers the line table's files from 0, DWARF 4 from 1:
		// DW_AT_call_file indexes them
		for _, dw := range []string{"-gdwarf-5", "-gdwarf-4"} {
			t.Run(cxx+dw, func(t *testing.T) {
				dir := t.TempDir()
				bin, src, sys := buildInline(t, dir, cxx, dw)
				locs := runLocs(t, bin)
				if len(locs) != 6 {
					t.Fatalf("program printed %d addresses, want 6", len(locs))
				}
				hdr := filepath.Join(sys, "lib.h")
				type want struct {
					file string
					line int
					fn   string // or fn(parameters)
				}
				wants := []want{
					{src, markLine(t, cxxprog, "MAIN_CALL"), "main"},
					{src, markLine(t, cxxprog, "MAIN_OUTER"), "main"},
					// helper is the program's, inlined into main:
					// its call, in its name (g++ gives a static
					// function no linkage name)
					{src, markLine(t, cxxprog, "HELPER"), "helper"},
					// lib_own is not inlined: its frame is the header's
					{hdr, markLine(t, syshdr, "LIB_OWN"), "lib_own"},
					{src, markLine(t, cxxprog, "MAIN_PLAIN"), "main"},
					// std::invoke (libstdc++'s bits/invoke.h), three
					// inlined calls deep
					{src, markLine(t, cxxprog, "MAIN_STD"), "main"},
				}
				// the line table's innermost lines: the headers'
				before := lineTable(t, locs)
				if before[0].File != hdr || before[0].Line != markLine(t, syshdr, "LIB_CALL") {
					t.Errorf("line table: %s, want the header's line", before[0].Name())
				}
				r := New()
				r.SystemDirs = append([]string{sys}, DefaultSystemDirs...)
				got := r.Resolve(locs)
				if err := r.Err(bin); err != nil {
					t.Fatal(err)
				}
				for i, w := range wants {
					g := got[i]
					if g.File != w.file || g.Line != w.line || (g.Func != w.fn && !strings.HasPrefix(g.Func, w.fn+"(")) {
						t.Errorf("address %d (%#x): %s in %q, want %s:%d in %q (line table: %s)", i, g.Offset, g.Name(), g.Func, w.file, w.line, w.fn, before[i].Name())
					}
					if g.Col <= 0 {
						t.Errorf("address %d: %s has no column", i, g.Name())
					}
				}
				// the call through std::invoke: libstdc++'s line before
				if !strings.Contains(before[5].File, "/include/c++/") {
					t.Errorf("std::invoke's call is at %s before: not libstdc++'s header", before[5].Name())
				}
				// a function of the program inlined: no offset from a
				// start it does not have
				if got[2].FuncOffset != 0 || got[0].FuncOffset == 0 {
					t.Errorf("function offsets %#x (helper) and %#x (main)", got[2].FuncOffset, got[0].FuncOffset)
				}
			})
		}
	}
}

func TestIsSystem(t *testing.T) {
	r := New()
	for file, want := range map[string]bool{
		"/usr/include/c++/12/condition_variable":                                  true,
		"/usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits": true,
		"/usr/lib/gcc/x86_64-linux-gnu/12/include/omp.h":                          true,
		"/usr/lib/llvm-14/lib/clang/14.0.6/include/omp.h":                         true,
		"/usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h":                         true,
		"/usr/local/include/boost/mpi/communicator.hpp":                           true,
		"/opt/gcc-13/include/c++/13/bits/std_thread.h":                            true,
		"/opt/spack/linux/gcc-13/lib/gcc/x86_64-pc-linux-gnu/13/include/omp.h":    true,
		"/home/u/app/src/main.cpp":                                                false,
		"/usr/src/app/main.c":                                                     false,
		"/usr/includes/x.h":                                                       false,
		"main.cpp":                                                                false,
		"include/c++/x.h":                                                         false,
		"":                                                                        false,
	} {
		if got := r.isSystem(file); got != want {
			t.Errorf("isSystem(%q) = %v, want %v", file, got, want)
		}
	}
}

// resolveBad resolves locs in a module of damaged DWARF: it must answer,
// without panicking, within a bound.
func resolveBad(t *testing.T, what string, d *dwarfOf, info []byte, locs []trace.Location, sys string) {
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		m := d.module(info)
		if m == nil {
			return
		}
		r := New()
		r.SystemDirs = append([]string{sys}, DefaultSystemDirs...)
		r.modules[locs[0].Module] = m
		r.Resolve(locs)
	}()
	select {
	case p := <-done:
		if p != nil {
			t.Fatalf("%s: panic: %v", what, p)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: no answer in 20 s", what)
	}
}

// Damaged DWARF (the program's .debug_info with bytes changed or cut)
// resolves to something or nothing, never panics or hangs.
func TestResolveInlinedBadDWARF(t *testing.T) {
	for _, cxx := range cxxCompilers(t) {
		dir := t.TempDir()
		bin, _, sys := buildInline(t, dir, cxx)
		locs := runLocs(t, bin)
		d := readDWARFOf(t, bin)
		orig := d.sec["info"]
		if m := d.module(orig); m == nil || len(m.cus) == 0 {
			t.Fatalf("%s: the undamaged DWARF does not load", cxx)
		}
		n := len(orig)
		step := max(n/500, 1)
		for off := 0; off < n; off += step {
			for k, mutate := range []func(b []byte){
				func(b []byte) { b[off] ^= 0xff },
				func(b []byte) { b[off] = 0 },
				func(b []byte) { b[off]++ },
				func(b []byte) { clear(b[off:]) }, // the unit cut short
			} {
				b := append([]byte(nil), orig...)
				mutate(b)
				resolveBad(t, fmt.Sprintf("%s: .debug_info byte %d, mutation %d", cxx, off, k), d, b, locs, sys)
			}
		}
	}
}

// FuzzInlineDWARF resolves the test program's addresses with arbitrary
// .debug_info bytes (and the program's other sections).
func FuzzInlineDWARF(f *testing.F) {
	dir := f.TempDir()
	bin, _, sys := buildInline(f, dir, cxxCompilers(f)[0])
	locs := runLocs(f, bin)
	d := readDWARFOf(f, bin)
	f.Add(d.sec["info"])
	f.Fuzz(func(t *testing.T, info []byte) { resolveBad(t, "fuzz", d, info, locs, sys) })
}

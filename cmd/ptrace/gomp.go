package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GCC's OpenMP runtime (libgomp) never loads an OMPT tool, so a program
// built with gcc -fopenmp or gfortran -fopenmp records nothing. LLVM's libomp
// implements libgomp's GOMP_* ABI (and its Fortran omp_* entry points), so
// record preloads libomp: the program's GOMP_* calls bind to libomp, which
// loads the collector. The functions below find out whether a command uses
// libgomp (its ELF dynamic dependencies, followed through its libraries) and
// where libomp is.

// libDirs are the directories the dynamic loader searches by default on
// Debian-like systems (after DT_RPATH/DT_RUNPATH and LD_LIBRARY_PATH).
var libDirs = []string{
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
}

// programOf returns the program a command runs: the command itself, or for
// an MPI launcher the first argument that is an ELF file (mpirun -np 2 ./app).
func programOf(args []string) string {
	if len(args) == 0 {
		return ""
	}
	if !isLauncher(filepath.Base(args[0])) {
		return args[0]
	}
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if p, err := exec.LookPath(a); err == nil && isELF(p) {
			return p
		}
	}
	return ""
}

func isELF(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// openMPRuntimes reports whether the program at path, or a library it
// depends on (transitively), needs GCC's libgomp, and whether it needs
// LLVM's libomp.
func openMPRuntimes(path string) (gomp, omp bool) {
	p, err := exec.LookPath(path)
	if err != nil {
		return false, false
	}
	seen := map[string]bool{}
	var walk func(file string, depth int)
	walk = func(file string, depth int) {
		if seen[file] || depth > 8 || len(seen) > 256 {
			return
		}
		seen[file] = true
		f, err := elf.Open(file)
		if err != nil {
			return
		}
		needed, _ := f.ImportedLibraries()
		search := runPaths(f, filepath.Dir(file))
		f.Close()
		for _, lib := range needed {
			switch {
			case strings.HasPrefix(lib, "libgomp.so"):
				gomp = true
				continue
			case strings.HasPrefix(lib, "libomp.so"), strings.HasPrefix(lib, "libomp5.so"), strings.HasPrefix(lib, "libiomp5.so"):
				omp = true
				continue
			}
			if next := findLib(lib, search); next != "" {
				walk(next, depth+1)
			}
		}
	}
	walk(p, 0)
	return gomp, omp
}

// runPaths returns the directories a file's DT_RPATH and DT_RUNPATH name
// ($ORIGIN expanded), then LD_LIBRARY_PATH's, then the default ones.
func runPaths(f *elf.File, origin string) []string {
	var dirs []string
	for _, tag := range []elf.DynTag{elf.DT_RPATH, elf.DT_RUNPATH} {
		vals, _ := f.DynString(tag)
		for _, v := range vals {
			for _, d := range strings.Split(v, ":") {
				if d != "" {
					dirs = append(dirs, strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", origin), "$ORIGIN", origin))
				}
			}
		}
	}
	return append(dirs, defaultDirs()...)
}

// defaultDirs returns LD_LIBRARY_PATH's directories, then the default ones.
func defaultDirs() []string {
	var dirs []string
	for _, d := range strings.Split(os.Getenv("LD_LIBRARY_PATH"), ":") {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	return append(dirs, libDirs...)
}

func findLib(name string, dirs []string) string {
	if strings.ContainsRune(name, '/') {
		return name
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// findLibOMP returns the path of LLVM's libomp: $PTRACE_LIBOMP, the loader's
// directories, then any installed LLVM.
func findLibOMP() string {
	if p := os.Getenv("PTRACE_LIBOMP"); p != "" {
		return p
	}
	dirs := defaultDirs()
	llvm, _ := filepath.Glob("/usr/lib/llvm-*/lib")
	// The newest LLVM first (lexical order of llvm-NN is fine for 2 digits).
	for i := len(llvm) - 1; i >= 0; i-- {
		dirs = append(dirs, llvm[i])
	}
	for _, name := range []string{"libomp.so.5", "libomp.so"} {
		if p := findLib(name, dirs); p != "" {
			return p
		}
	}
	return ""
}

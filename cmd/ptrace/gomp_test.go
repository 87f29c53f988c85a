package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A program that links a library built with gcc -fopenmp needs libgomp
// through that library (found by its RUNPATH); the same program built
// against libomp does not; the launcher's program is its first ELF argument.
func TestOpenMPRuntimes(t *testing.T) {
	for _, tool := range []string{"gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true and %s is not installed", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "work.c")
	if err := os.WriteFile(src, []byte("#include <omp.h>\nint work(void) { int n = 0;\n#pragma omp parallel reduction(+:n)\n n++;\n return n; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mainSrc := filepath.Join(dir, "main.c")
	if err := os.WriteFile(mainSrc, []byte("int work(void);\nint main(void) { return work() > 0 ? 0 : 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	lib := filepath.Join(dir, "lib")
	if err := os.Mkdir(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	run("gcc", "-fopenmp", "-shared", "-fPIC", "-o", filepath.Join(lib, "libwork.so"), src)
	app := filepath.Join(dir, "app")
	run("gcc", "-o", app, mainSrc, "-L"+lib, "-lwork", "-Wl,-rpath,$ORIGIN/lib")
	if gomp, omp := openMPRuntimes(app); !gomp || omp {
		t.Errorf("app over a gcc -fopenmp library: libgomp %v, libomp %v; want true, false", gomp, omp)
	}
	if gomp, _ := openMPRuntimes(mainSrc); gomp {
		t.Error("a C source file needs libgomp?")
	}
	if got := programOf([]string{"mpirun", "-np", "2", "--oversubscribe", app, "-x"}); got != app {
		t.Errorf("programOf(mpirun … app) = %q, want %q", got, app)
	}
	if got := programOf([]string{app, "3"}); got != app {
		t.Errorf("programOf(app) = %q", got)
	}
	if _, err := exec.LookPath("clang"); err == nil {
		if libomp := findLibOMP(); libomp != "" {
			run("clang", "-fopenmp", "-shared", "-fPIC", "-o", filepath.Join(lib, "libwork.so"), src)
			if gomp, omp := openMPRuntimes(app); gomp || !omp {
				t.Errorf("app over a clang -fopenmp library: libgomp %v, libomp %v; want false, true", gomp, omp)
			}
		}
	}
	m := envMap(preloadFirst([]string{"PATH=/bin", "LD_PRELOAD=/c/libptrace.so"}, "/l/libomp.so.5"))
	if m["LD_PRELOAD"] != "/l/libomp.so.5:/c/libptrace.so" || m["PATH"] != "/bin" {
		t.Errorf("preloadFirst: %v", m)
	}
}

package main

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	mpiLauncher "github.com/ptrace-dev/ptrace/comm/mpi"
	"github.com/ptrace-dev/ptrace/internal/units"
	"github.com/ptrace-dev/ptrace/trace"
	"github.com/ptrace-dev/ptrace/trace/symbolize"
	"github.com/spf13/cobra"
)

// Collector libraries (make collector builds them into build/collector/).
const (
	libOMP = "libptrace-omp.so" // OMPT tool only
	libMPI = "libptrace.so"     // OMPT tool + PMPI wrappers
)

type recordFlags struct {
	out         string
	bufferMB    float64
	mpi, noMPI  bool
	noSymbolize bool
	force       bool
	noSwap      bool
}

func newRecordCmd() *cobra.Command {
	var rf recordFlags
	cmd := &cobra.Command{
		Use:   "record [-o DIR] [--buffer-mb N] -- CMD ARGS...",
		Short: "Run a program with the ptrace collector loaded",
		Long: `record runs CMD with the ptrace collector loaded and writes its trace to DIR
(default ptrace-<timestamp> in the current directory). The OpenMP runtime must
be LLVM's libomp: GCC's libgomp loads no OMPT tool. A program built with
gcc -fopenmp or gfortran -fopenmp (it, or a library it loads, needs libgomp)
runs with LLVM's libomp preloaded in libgomp's place, which implements
libgomp's GOMP_* ABI; record says so in one line. --no-libomp-swap keeps
libgomp (and records no OpenMP events). $PTRACE_LIBOMP names the libomp to use.

MPI programs: put record in front of the launcher,
    ptrace record -o DIR -- mpirun -np 4 ./app
The collector reaches the ranks through the environment (LD_PRELOAD,
OMP_TOOL_LIBRARIES, PTRACE_DIR), which mpirun passes to local ranks; on
several nodes add "-x LD_PRELOAD -x OMP_TOOL_LIBRARIES -x PTRACE_DIR
-x PTRACE_BUFFER_MB" to the mpirun command.

The PMPI wrappers are used when the command is an MPI launcher or a program
linked with libmpi (--mpi / --no-mpi decide otherwise). Inside a launcher
(srun -n 64 ptrace record -o DIR -- ./app), each copy records its rank
into the one directory of the job. After the run, code
locations are resolved to file:line:col from the programs' debug information.

The collector library is looked up in $PTRACE_COLLECTOR_DIR, next to the
ptrace binary, and in the build/collector directory of the ptrace repository.
The exit status is the program's.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRecord(cmd.OutOrStdout(), cmd.ErrOrStderr(), &rf, args)
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // flags after CMD belong to CMD
	f.StringVarP(&rf.out, "output", "o", "", "trace directory (default ptrace-<timestamp>)")
	f.Float64Var(&rf.bufferMB, "buffer-mb", 0, "per-thread event buffer in MiB (default 8; PTRACE_BUFFER_MB)")
	f.BoolVar(&rf.mpi, "mpi", false, "load the PMPI wrappers (LD_PRELOAD libptrace.so) even if CMD does not look like MPI")
	f.BoolVar(&rf.noMPI, "no-mpi", false, "OpenMP events only (OMP_TOOL_LIBRARIES libptrace-omp.so)")
	f.BoolVar(&rf.noSymbolize, "no-symbolize", false, "do not resolve code locations after the run")
	f.BoolVar(&rf.force, "force", false, "replace a trace already in DIR")
	f.BoolVar(&rf.noSwap, "no-libomp-swap", false, "run a program linked with GCC's libgomp as it is (no OMPT events), not with LLVM's libomp preloaded")
	return cmd
}

func runRecord(stdout, stderr io.Writer, rf *recordFlags, args []string) error {
	if rf.mpi && rf.noMPI {
		return errors.New("record: --mpi and --no-mpi exclude each other")
	}
	if rf.bufferMB < 0 {
		return fmt.Errorf("record: --buffer-mb %g: must be positive", rf.bufferMB)
	}
	mpi := rf.mpi || (!rf.noMPI && looksMPI(args))
	name := libOMP
	if mpi {
		name = libMPI
	}
	lib, err := findCollector(name)
	if err != nil {
		return err
	}
	// Started by the launcher as one of its processes (mpirun -np N
	// ptrace record -- ./app, srun ptrace record ./app), each copy records
	// one rank of an MPI program into the job's one directory.
	job := jobRank{}
	if mpi && mpiLauncher.UnderLauncher() {
		job.rank, job.ok = mpiLauncher.LauncherRank()
	}
	var dir, dirOut string
	if job.ok {
		dir, dirOut, err = prepareJobDir(rf, job.rank)
	} else {
		dir, err = prepareDir(rf.out, rf.force)
	}
	if err != nil {
		return err
	}
	gompNote := ""
	prog := programOf(args)
	gomp, omp := false, false
	swapTo := "" // LLVM's libomp, to run a libgomp program with
	if prog != "" {
		if gomp, omp = openMPRuntimes(prog); gomp && !omp {
			if rf.noSwap {
				gompNote = ". It uses GCC's libgomp and --no-libomp-swap kept it"
			} else if swapTo = findLibOMP(); swapTo == "" {
				gompNote = ". It uses GCC's libgomp, and LLVM's libomp to run it with was not found (apt-get install libomp-dev, or set PTRACE_LIBOMP)"
				fmt.Fprintf(stderr, "ptrace record: %s uses GCC's libgomp, which loads no OMPT tool, and LLVM's libomp was not found: no OpenMP events (install libomp-dev or set PTRACE_LIBOMP)\n", filepath.Base(prog))
			} else {
				fmt.Fprintf(stderr, "ptrace record: %s uses GCC's libgomp, which loads no OMPT tool: running it with LLVM's %s in its place (--no-libomp-swap to keep libgomp)\n", filepath.Base(prog), swapTo)
			}
		}
	}
	// The collector is preloaded where it records: for its PMPI wrappers,
	// and for the wrappers of pthread_create and pthread_join (threads the
	// program starts) in a program known to run on libomp; a command
	// record cannot see into (a script) gets the OpenMP tool alone.
	env := recordEnv(os.Environ(), lib, dir, mpi || omp || swapTo != "", rf.bufferMB)
	if swapTo != "" {
		env = preloadFirst(env, swapTo)
	}
	if dirOut != "" {
		defer os.Remove(dirOut)
		env = append(env, "PTRACE_DIR_OUT="+dirOut)
	}
	st, runErr := runChild(args, env)
	if se := (*startError)(nil); errors.As(runErr, &se) {
		// A mistyped name or a file that is no program: say so, not what
		// a program that ran without recording would be told.
		return fmt.Errorf("record: cannot run %s: %w", args[0], se.err)
	}
	code := st.code
	if dirOut != "" {
		// The ranks agreed on rank 0's choice at MPI_Init (nothing
		// written: the program did not get that far).
		if b, err := os.ReadFile(dirOut); err == nil && len(b) > 0 {
			dir = string(b)
		} else {
			dir = "(none: MPI_Init was not reached)"
		}
	}
	var files []string
	if job.ok {
		// This rank's file only: the others are written (and symbolized)
		// by their own copies of ptrace record, some still running; and
		// no copy lists a directory of thousands of ranks' files.
		if f := filepath.Join(dir, fmt.Sprintf("rank-%05d.ptrace", job.rank)); fileExists(f) {
			files = []string{f}
		}
	} else {
		files, _ = filepath.Glob(filepath.Join(dir, "rank-*.ptrace"))
	}
	if len(files) == 0 {
		msg := noTrace(dir, args[0], st, gompNote, prog != "" && !mpi && !gomp && !omp)
		if runErr != nil {
			return fmt.Errorf("%s (%v)", msg, runErr)
		}
		return &exitError{code: max(code, 1), err: errors.New(msg)}
	}
	if !rf.noSymbolize {
		resolved, total, err := symbolizeDir(files)
		if err != nil {
			fmt.Fprintf(stderr, "ptrace record: symbolize: %v\n", err)
		} else if total > 0 && !job.ok {
			fmt.Fprintf(stderr, "ptrace record: %d of %d code locations resolved to source lines\n", resolved, total)
		}
	}
	switch {
	case job.ok && job.rank == 0:
		fmt.Fprintf(stderr, "ptrace record: trace in %s (a file per rank, each written as its process ends); check it with: ptrace validate %s\n", dir, dir)
	case !job.ok:
		var bytes int64
		for _, f := range files {
			if st, err := os.Stat(f); err == nil {
				bytes += st.Size()
			}
		}
		fmt.Fprintf(stderr, "ptrace record: trace in %s (%d process files, %s); check it with: ptrace validate %s\n", dir, len(files), units.Bytes(bytes), dir)
		if !mpi && !rf.noMPI && len(files) > 1 {
			// Ranks the launcher's environment numbered, recorded by the
			// OpenMP tool alone: no MPI call, and each its own run.
			fmt.Fprintf(stderr, "ptrace record: warning: %s started %d MPI processes, but record did not take it for an MPI launcher: their MPI calls were not recorded and their files are separate runs; record again with --mpi\n", filepath.Base(args[0]), len(files))
		}
	}
	if runErr != nil {
		return fmt.Errorf("record: %w", runErr)
	}
	if code != 0 {
		return &exitError{code: code, err: fmt.Errorf("record: %s", st.describe(args[0]))}
	}
	return nil
}

// childStatus is how the traced command ended.
type childStatus struct {
	code   int            // exit status, 128+n when killed by signal n
	signal syscall.Signal // the signal that killed it, 0 when it exited
}

// describe says how the command name ended, naming the signal: the one
// that killed it, or the one an exit status above 128 stands for (a
// launcher such as mpirun exits so when a process was killed).
func (s childStatus) describe(name string) string {
	switch {
	case s.signal != 0:
		return fmt.Sprintf("%s was killed by %s", name, signalName(s.signal))
	case s.code > 128 && s.code < 128+65:
		return fmt.Sprintf("%s exited with status %d (128 + %d: a process killed by %s?)", name, s.code, s.code-128, signalName(syscall.Signal(s.code-128)))
	}
	return fmt.Sprintf("%s exited with status %d", name, s.code)
}

// noTrace explains why dir holds no rank file after command name ended as
// st: nothing of the collector ran before the program ended, so a
// program killed by a signal died before it started the OpenMP tool
// interface or MPI. noRuntime says the program links neither LLVM's
// libomp nor GCC's libgomp and is not an MPI run (a libgomp program runs
// with libomp in its place, gompNote says when it did not).
func noTrace(dir, name string, st childStatus, gompNote string, noRuntime bool) string {
	msg := "record: no trace was written to " + dir + ": "
	if st.signal != 0 || st.code > 128 {
		msg += st.describe(name) + " before it started the OpenMP tool interface or MPI, so nothing was recorded"
	} else {
		msg += "the program started neither the OpenMP tool interface nor MPI"
	}
	switch {
	case gompNote != "":
		msg += gompNote
	case noRuntime:
		msg += ". It is linked with no OpenMP runtime (LLVM's libomp or GCC's libgomp)"
	}
	return msg
}

// startError is runChild's failure to start the command at all.
type startError struct{ err error }

func (e *startError) Error() string { return "start: " + e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

// runChild runs the command with env and returns how it ended (status
// 128+n when killed by signal n). ptrace itself ignores SIGINT (the
// terminal sends it to the program too) and passes SIGTERM on, so the
// collector can write the trace before the program dies.
func runChild(args, env []string) (childStatus, error) {
	c := exec.Command(args[0], args[1:]...)
	c.Env = env
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := c.Start(); err != nil {
		return childStatus{}, &startError{err}
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if s == syscall.SIGTERM {
					_ = c.Process.Signal(s)
				}
			case <-done:
				return
			}
		}
	}()
	err := c.Wait()
	close(done)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return childStatus{128 + int(ws.Signal()), ws.Signal()}, nil
		}
		return childStatus{code: ee.ExitCode()}, nil
	}
	return childStatus{}, err
}

// recordEnv returns env with the collector's variables set: lib is named as
// OMPT tool, and with preload also preloaded (the PMPI wrappers and the
// pthread wrappers need that): the MPI library always, the OpenMP-only one
// for a program that runs on libomp, so that programs without libomp never
// load it.
func recordEnv(env []string, lib, dir string, preload bool, bufferMB float64) []string {
	get := func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	set := map[string]string{"PTRACE_DIR": dir, "OMP_TOOL_LIBRARIES": prependList(lib, get("OMP_TOOL_LIBRARIES"))}
	if dir == "" {
		// One rank of a job without -o: its collector takes the job's
		// directory from rank 0 at MPI_Init (prepareJobDir), which any
		// PTRACE_DIR would stop; an inherited one is dropped below.
		delete(set, "PTRACE_DIR")
	}
	if preload {
		set["LD_PRELOAD"] = prependList(lib, get("LD_PRELOAD"))
	}
	if bufferMB > 0 {
		set["PTRACE_BUFFER_MB"] = strconv.FormatFloat(bufferMB, 'g', -1, 64)
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok && k != "PTRACE_DIR" {
			out = append(out, kv)
		}
	}
	for _, k := range []string{"PTRACE_DIR", "OMP_TOOL_LIBRARIES", "LD_PRELOAD", "PTRACE_BUFFER_MB"} {
		if v, ok := set[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// preloadFirst puts lib at the head of env's LD_PRELOAD, so that its symbols
// (libomp's GOMP_* and omp_*) bind before libgomp's.
func preloadFirst(env []string, lib string) []string {
	out := make([]string, 0, len(env)+1)
	cur := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "LD_PRELOAD="); ok {
			cur = v
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LD_PRELOAD="+prependList(lib, cur))
}

func prependList(item, list string) string {
	if list == "" {
		return item
	}
	for _, e := range strings.Split(list, ":") {
		if e == item {
			return list
		}
	}
	return item + ":" + list
}

// isLauncher reports whether name is an MPI process starter (its children
// are MPI programs): mpirun and mpiexec under every suffix a distribution
// or an MPI gives them (mpirun.openmpi, mpiexec.mpich, mpiexec.hydra,
// mpiexec_mpt, mpirun_rsh), and the job launchers of resource managers and
// vendors that start MPI ranks.
func isLauncher(name string) bool {
	if strings.HasPrefix(name, "mpirun") || strings.HasPrefix(name, "mpiexec") {
		return true
	}
	switch name {
	case "orterun", "prterun", "prun", "srun", "aprun", "jsrun", "ibrun", "poe", "lrun", "flux":
		return true
	}
	return false
}

// maxMPIArgs bounds how many of a command's words looksMPI inspects.
const maxMPIArgs = 64

// isWrapper reports whether name is a command that runs the command its
// words name (time mpirun ..., env A=1 mpirun ...): a launcher may follow.
func isWrapper(name string) bool {
	switch name {
	case "time", "env", "nice", "nohup", "numactl", "taskset", "stdbuf", "chrt", "ionice", "setsid", "timeout":
		return true
	}
	return false
}

// looksMPI reports whether a command runs an MPI program: it is an MPI
// launcher, or one behind wrappers (time mpirun ..., env A=1 mpiexec ...),
// or it or a program among its words (a launcher this list lacks:
// mpilaunch -n 4 ./app) links an MPI library. A launcher's name counts
// only where a command stands: the program's own arguments (--log
// mpirun.log) do not make it an MPI run.
func looksMPI(args []string) bool {
	command := true // the word may be the command: the first, or after a wrapper
	for _, a := range args[:min(len(args), maxMPIArgs)] {
		if command && isLauncher(filepath.Base(a)) {
			return true
		}
		if strings.HasPrefix(a, "-") || command && strings.Contains(a, "=") {
			continue // an option, or an environment assignment of env
		}
		path, err := exec.LookPath(a)
		if err != nil {
			continue // no program: an argument
		}
		if linksMPI(path) {
			return true
		}
		if command {
			command = isWrapper(filepath.Base(a))
		}
	}
	return false
}

// linksMPI reports whether the file at path is an ELF program that links
// an MPI library (libmpi, libmpich, libmpi_cray, ...).
func linksMPI(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		return false
	}
	for _, l := range libs {
		if strings.HasPrefix(l, "libmpi") {
			return true
		}
	}
	return false
}

// findCollector returns the path of a collector library: in
// $PTRACE_COLLECTOR_DIR, next to the ptrace binary, or in the build/collector
// directory of the repository holding the binary or the working directory.
func findCollector(name string) (string, error) {
	var dirs []string
	if d := os.Getenv("PTRACE_COLLECTOR_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	var starts []string
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			d := filepath.Dir(exe)
			dirs = append(dirs, d, filepath.Join(d, "build", "collector"), filepath.Join(d, "..", "lib", "ptrace"))
			starts = append(starts, d)
		}
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, s := range starts {
		if root := repoRoot(s); root != "" {
			dirs = append(dirs, filepath.Join(root, "build", "collector"))
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			abs, err := filepath.Abs(p)
			if err != nil {
				return "", fmt.Errorf("record: collector library: %w", err)
			}
			return abs, nil
		}
	}
	return "", fmt.Errorf("record: collector library %s not found (looked in %s): run \"make collector\" in the ptrace repository, or set PTRACE_COLLECTOR_DIR to the directory holding it",
		name, strings.Join(dirs, ", "))
}

// repoRoot returns the ptrace repository containing dir, or "".
func repoRoot(dir string) string {
	for d := dir; ; {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			sc := bufio.NewScanner(strings.NewReader(string(b)))
			for sc.Scan() {
				if strings.TrimSpace(sc.Text()) == "module github.com/ptrace-dev/ptrace" {
					return d
				}
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// prepareDir returns the absolute trace directory, created. A directory that
// holds a trace already is refused unless force, which removes that trace.
func prepareDir(dir string, force bool) (string, error) {
	if dir == "" {
		base := "ptrace-" + time.Now().Format("20060102-150405")
		dir = base
		for i := 2; ; i++ {
			if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
				break
			}
			dir = fmt.Sprintf("%s-%d", base, i)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("record: trace directory: %w", err)
	}
	old, _ := filepath.Glob(filepath.Join(abs, "rank-*.ptrace"))
	if _, err := os.Stat(filepath.Join(abs, trace.ManifestName)); err == nil {
		old = append(old, filepath.Join(abs, trace.ManifestName))
	}
	if len(old) > 0 {
		if !force {
			return "", fmt.Errorf("record: %s holds a trace already (%d files); choose another -o DIR or use --force to replace it", abs, len(old))
		}
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				return "", fmt.Errorf("record: %w", err)
			}
		}
	}
	if err := os.MkdirAll(abs, 0o777); err != nil {
		return "", fmt.Errorf("record: %w", err)
	}
	return abs, nil
}

// jobRank is this process's rank when a launcher started ptrace record.
type jobRank struct {
	rank int
	ok   bool
}

// prepareJobDir is prepareDir for one rank of a job: the trace directory
// is the job's, so only rank 0 checks it holds no trace (or, with
// --force, removes it: no rank writes its file before every rank is in
// MPI_Init, which rank 0's program enters after this). Without -o (and
// without PTRACE_DIR in the environment) the ranks' collectors agree on
// rank 0's choice at MPI_Init and write it to the file dirOut names.
func prepareJobDir(rf *recordFlags, rank int) (dir, dirOut string, err error) {
	out := rf.out
	if out == "" {
		out = os.Getenv("PTRACE_DIR")
	}
	if out == "" {
		f, err := os.CreateTemp("", "ptrace-record-dir-")
		if err != nil {
			return "", "", fmt.Errorf("record: %w", err)
		}
		f.Close()
		return "", f.Name(), nil
	}
	if rank == 0 {
		dir, err := prepareDir(out, rf.force)
		return dir, "", err
	}
	abs, err := filepath.Abs(out)
	if err == nil {
		err = os.MkdirAll(abs, 0o777)
	}
	if err != nil {
		return "", "", fmt.Errorf("record: %w", err)
	}
	return abs, "", nil
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// symbolizeDir resolves the location tables of the process files and adds
// the resolved entries to each file. It returns how many of the recorded
// locations resolved to a source line.
func symbolizeDir(files []string) (resolved, total int, err error) {
	r := symbolize.New()
	for _, path := range files {
		tables, err := readTables(path)
		if err != nil {
			return resolved, total, fmt.Errorf("read locations: %w", err)
		}
		locs := tables.Locations
		got := r.Resolve(locs)
		var changed []trace.Location
		for i := range got {
			if got[i].Addr == 0 && got[i].Module == "" {
				continue // the "unknown" entry
			}
			total++
			if got[i].File != "" {
				resolved++
			}
			if got[i] != locs[i] {
				changed = append(changed, got[i])
			}
		}
		if err := trace.AddLocations(path, changed); err != nil {
			return resolved, total, fmt.Errorf("add resolved locations: %w", err)
		}
	}
	return resolved, total, nil
}

// Package mpi is the MPI backend of comm: a thin cgo binding of the system MPI
// (built through its compiler wrapper, CC=mpicc: Open MPI, MPICH or any other
// MPI whose mpicc cgo can call), compiled only with the build tag
// "mpi". It owns MPI's lifetime (Start, Stop), the mapping of every comm
// operation onto MPI calls, and the detection of an MPI launcher
// (UnderLauncher), which every build has so the pure-Go binary can tell it was
// started by mpirun and say that it lacks MPI.
//
// The binding is ours because github.com/sbromberger/gompi is not available
// here; it follows gompi's shape (Start/Stop, WorldRank/WorldSize, a
// Communicator with Rank/Size/Send/Recv/Allreduce...) so that it could be
// swapped for gompi later.
//
// Threads: Go moves goroutines between OS threads, so Start asks for
// MPI_THREAD_SERIALIZED, under which any thread may call MPI as long as calls
// never overlap. The rule for callers is comm's: one goroutine uses the
// Communicator. If the library offers less than SERIALIZED, Start locks the
// calling goroutine to its thread and that goroutine must make every call.
//
// Errors: an error from a Communicator is local to its rank, while the other
// ranks may be waiting for this one; callers should treat it as fatal and
// Abort, which prints "ptrace: rank R: <err>" and ends the whole job.
//
// Built without the tag, the package has only UnderLauncher, LauncherProcs,
// LauncherRank, ErrNotBuilt, a
// Start that returns ErrNotBuilt and a Stop that does nothing; the rest needs
// the tag and Open MPI's development files (Debian: openmpi-bin
// libopenmpi-dev).
package mpi

import (
	"errors"
	"os"
	"strconv"
)

// ErrNotBuilt is what Start returns in a binary built without the "mpi" tag.
var ErrNotBuilt = errors.New("mpi: this binary was built without MPI support (rebuild it with make ptrace-mpi: CC=mpicc go build -tags mpi)")

// UnderLauncher reports whether the environment shows that an MPI launcher
// (mpirun, mpiexec, srun) started this process, that is, whether it should run
// as one rank of an MPI job.
func UnderLauncher() bool { return underLauncher(os.LookupEnv) }

func underLauncher(lookup func(string) (string, bool)) bool {
	// Variables launchers set in the processes they start: mpirun/orterun
	// (Open MPI), Hydra (MPICH, Intel MPI), PMI and PMIx clients, MVAPICH,
	// and srun job steps (not the batch script itself).
	for _, v := range [...]string{
		"OMPI_COMM_WORLD_SIZE",
		"OMPI_COMM_WORLD_RANK",
		"PMI_SIZE",
		"PMI_RANK",
		"PMIX_RANK",
		"PMIX_NAMESPACE",
		"MPI_LOCALNRANKS",
		"MV2_COMM_WORLD_SIZE",
		"SLURM_STEP_NUM_TASKS",
	} {
		if _, ok := lookup(v); ok {
			return true
		}
	}
	return false
}

// LauncherProcs returns how many processes the launcher started, at least,
// as far as the environment says (0 when it says nothing): the world size
// when a variable gives it, else one more than the rank (a PMIx client
// may carry only its rank). A binary without MPI uses it to refuse to run
// as one of several copies, each of which would analyse the whole trace.
func LauncherProcs() int { return launcherProcs(os.LookupEnv) }

func launcherProcs(lookup func(string) (string, bool)) int {
	for _, v := range [...]string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS"} {
		if s, ok := lookup(v); ok {
			if n, err := strconv.Atoi(s); err == nil && n > 0 {
				return n
			}
		}
	}
	if r, ok := launcherRank(lookup); ok {
		return r + 1
	}
	return 0
}

// LauncherRank returns this process's rank in the job the launcher started
// (false when the environment does not say): Open MPI, PMI and PMIx
// clients, MVAPICH, srun job steps.
func LauncherRank() (int, bool) { return launcherRank(os.LookupEnv) }

func launcherRank(lookup func(string) (string, bool)) (int, bool) {
	for _, v := range [...]string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID"} {
		if s, ok := lookup(v); ok {
			if r, err := strconv.Atoi(s); err == nil && r >= 0 {
				return r, true
			}
		}
	}
	return 0, false
}

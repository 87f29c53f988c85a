# bench-traces.sh — sourced by the benchmark scripts: the shapes of trace
# the analysis engine is measured on, each `ptrace gen` at about EVENTS
# events with seed 7. stencil, halo and nearest are the issue #12 set; the
# others are the shapes issue 44 adds ("for every shape of trace"): a pure
# MPI program of 64 processes, tasks chained through every rank, spread
# and fork-join task graphs, POT's imbalance, an allreduce halo, a chain of
# untied tasks, two one-process task-heavy traces (the recorded Task
# Bench shape: about 4 events a task) and a one-process tree of tasks
# that create tasks and wait for them (the BOTS fib and health shape).
#
#   WORKLOADS="stencil mpi" scripts/bench-analyze.sh   # a choice
#   WORKLOADS=all scripts/bench-analyze.sh             # every shape

all_workloads="stencil halo nearest mpi pipeline spread forkjoin imbalance allreduce untied lean spreadlean tree"

# workloads prints the list WORKLOADS asks for (default: the issue #12 set).
workloads() {
	case "${WORKLOADS:-}" in
	"") echo stencil halo nearest ;;
	all) echo "$all_workloads" ;;
	*) echo "$WORKLOADS" ;;
	esac
}

# gen_workload PTRACE NAME DIR EVENTS writes the trace NAME into DIR.
gen_workload() {
	local p=$1 w=$2 dir=$3 events=$4
	local common=(--events "$events" --seed 7 -o "$dir")
	case $w in
	stencil | halo | nearest | spread | forkjoin | pipeline | imbalance)
		"$p" gen "$w" --ranks 16 --threads 4 "${common[@]}" ;;
	mpi) "$p" gen mpi --ranks 64 "${common[@]}" ;;
	allreduce) "$p" gen halo --exchange allreduce --ranks 16 --threads 4 "${common[@]}" ;;
	untied) "$p" gen untied --ranks 1 --threads 4 "${common[@]}" ;;
	lean) "$p" gen stencil --lean --ranks 1 --threads 4 "${common[@]}" ;;
	spreadlean) "$p" gen spread --lean --ranks 1 --threads 4 "${common[@]}" ;;
	tree) "$p" gen tree --ranks 1 --threads 4 "${common[@]}" ;;
	*)
		echo "unknown workload $w (known: $all_workloads)" >&2
		return 2
		;;
	esac >/dev/null
}

package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ptrace-dev/ptrace/internal/outfile"
)

// CSV table file names, one table per file as OMPC Bench writes them. The
// columns are the report's JSON keys (docs/report-schema.md).
const (
	CSVBreakdown     = "breakdown_per_process.csv"
	CSVPOP           = "pop_per_process.csv"
	CSVPOPSummary    = "pop_summary.csv"
	CSVConstructs    = "constructs.csv"
	CSVPathShares    = "critical_path_composition.csv"
	CSVPathSegments  = "critical_path.csv"
	CSVPathOff       = "critical_path_off_path.csv"
	CSVAnomalies     = "anomalies.csv"
	CSVClockSync     = "clocksync_per_process.csv"
	CSVAnomalyModels = "anomaly_models.csv"
	CSVAdvice        = "advice.csv"
	CSVWaitSites     = "wait_states_call_sites.csv"
	CSVWaitProcesses = "wait_states_per_process.csv"
	CSVWaitCauses    = "wait_states_causes.csv"
	CSVWaitDelays    = "wait_states_delays.csv"
	CSVOMPWaits      = "wait_states_openmp_constructs.csv"
	CSVOMPProcesses  = "wait_states_openmp_per_process.csv"
	CSVOMPMutexes    = "wait_states_openmp_mutexes.csv"
)

// waitHeader is the columns of WaitTimes in the wait-state tables: the
// same in every report, so that positional consumers read a stable schema.
var waitHeader = []string{"mpi_ns", "calls", "late_sender_ns", "late_receiver_ns", "wait_nxn_ns", "wait_barrier_ns", "late_broadcast_ns", "early_reduce_ns", "other_ns", "waiting_calls",
	"wait_at_fence_ns", "wait_at_win_create_ns", "wait_at_win_free_ns", "wait_for_progress_ns", "late_post_ns", "early_wait_ns", "lock_contention_ns"}

func (w *WaitTimes) cells() []string {
	return []string{i64(w.MPINS), i64(w.Calls), i64(w.LateSenderNS), i64(w.LateReceiverNS), i64(w.WaitNxNNS), i64(w.WaitBarrierNS),
		i64(w.LateBroadcastNS), i64(w.EarlyReduceNS), i64(w.OtherNS), i64(w.WaitingCalls),
		i64(w.WaitAtFenceNS), i64(w.WaitAtWinCreateNS), i64(w.WaitAtWinFreeNS), i64(w.WaitForProgressNS),
		i64(w.LatePostNS), i64(w.EarlyWaitNS), i64(w.LockContentionNS)}
}

// PathCSVHeader is the header of the critical-path segment table, which
// `ptrace export --critical-path` reads back: one row per segment, times in
// reference-clock ns (the report's time base).
var PathCSVHeader = []string{"rank", "thread", "start_ns", "dur_ns", "kind", "construct"}

type table struct {
	header []string
	rows   [][]string
}

func i64(v int64) string   { return strconv.FormatInt(v, 10) }
func itoa(v int) string    { return strconv.Itoa(v) }
func f64(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// csvTables returns the tables of r's sections that are present, by file name.
func csvTables(r *Report) (names []string, tables map[string]table) {
	tables = map[string]table{}
	add := func(name string, t table) {
		names = append(names, name)
		tables[name] = t
	}
	if b := r.Breakdown; b != nil {
		t := table{header: []string{"rank", "host", "threads", "thread_time_ns", "work_ns", "mpi_ns", "overhead_ns", "idleness_ns", "idleness_serial_ns", "idleness_parallel_ns",
			"fork_join_ns", "idle_during_mpi_ns", "idle_serial_during_mpi_ns", "sync_runtime_ns", "class"}}
		for _, p := range b.PerProcess {
			t.rows = append(t.rows, []string{itoa(p.Rank), p.Host, itoa(p.Threads), i64(p.ThreadTimeNS), i64(p.WorkNS), i64(p.MPINS), i64(p.OverheadNS), i64(p.IdlenessNS), i64(p.IdlenessSerialNS), i64(p.IdlenessParallelNS),
				i64(p.ForkJoinNS), i64(p.IdleDuringMPINS), i64(p.IdleSerialDuringMPINS), i64(p.SyncRuntimeNS), p.Class})
		}
		add(CSVBreakdown, t)
		if a := b.Advice; a != nil {
			add(CSVAdvice, table{header: []string{"dominant", "text", "serial_ns", "imbalance_ns", "starvation_ns", "overhead_ns", "mpi_wait_ns", "mpi_calls_ns"},
				rows: [][]string{{a.Dominant, a.Text, i64(a.SerialNS), i64(a.ImbalanceNS), i64(a.StarvationNS), i64(a.OverheadNS), i64(a.MPIWaitNS), i64(a.MPICallsNS)}}})
		}
	}
	if p := r.POP; p != nil {
		t := table{header: []string{"rank", "threads", "elapsed_ns", "useful_ns", "mpi_ns", "idle_ns", "idle_serial_ns", "idle_lb_ns", "idle_sched_ns",
			"fork_join_ns", "idle_during_mpi_ns", "idle_serial_during_mpi_ns", "omp_parallel_efficiency", "omp_serialization_efficiency", "omp_load_balance", "omp_scheduling_efficiency"}}
		for _, q := range p.PerProcess {
			t.rows = append(t.rows, []string{itoa(q.Rank), itoa(q.Threads), i64(q.ElapsedNS), i64(q.UsefulNS), i64(q.MPINS), i64(q.IdleNS), i64(q.IdleSerialNS), i64(q.IdleLBNS), i64(q.IdleSchedNS),
				i64(q.ForkJoinNS), i64(q.IdleDuringMPINS), i64(q.IdleSerialDuringMPINS), f64(q.OMPParallelEfficiency), f64(q.OMPSerializationEfficiency), f64(q.OMPLoadBalance), f64(q.OMPSchedulingEfficiency)})
		}
		add(CSVPOP, t)
		s := table{header: []string{"metric", "value"}}
		for _, kv := range []struct {
			k string
			v string
		}{
			{"hybrid_efficiency", f64(p.HybridEfficiency)}, {"mpi_parallel_efficiency", f64(p.MPIParallelEfficiency)},
			{"mpi_load_balance", f64(p.MPILoadBalance)}, {"mpi_communication_efficiency", f64(p.MPICommunicationEfficiency)},
			{"omp_parallel_efficiency", f64(p.OMPParallelEfficiency)}, {"omp_serialization_efficiency", f64(p.OMPSerializationEfficiency)},
			{"omp_load_balance", f64(p.OMPLoadBalance)}, {"omp_scheduling_efficiency", f64(p.OMPSchedulingEfficiency)},
			{"elapsed_ns", i64(p.ElapsedNS)}, {"useful_ns", i64(p.UsefulNS)}, {"mpi_ns", i64(p.MPINS)}, {"idle_ns", i64(p.IdleNS)},
			{"idle_serial_ns", i64(p.IdleSerialNS)}, {"idle_lb_ns", i64(p.IdleLBNS)}, {"idle_sched_ns", i64(p.IdleSchedNS)}, {"max_non_mpi_ns", i64(p.MaxNonMPINS)},
			{"fork_join_ns", i64(p.ForkJoinNS)}, {"idle_during_mpi_ns", i64(p.IdleDuringMPINS)}, {"idle_serial_during_mpi_ns", i64(p.IdleSerialDuringMPINS)},
		} {
			s.rows = append(s.rows, []string{kv.k, kv.v})
		}
		if len(p.ProcessesWithoutEvents) > 0 {
			ranks := make([]string, len(p.ProcessesWithoutEvents))
			for i, r := range p.ProcessesWithoutEvents {
				ranks[i] = itoa(r)
			}
			s.rows = append(s.rows, []string{"processes_without_events", strings.Join(ranks, " ")})
		}
		add(CSVPOPSummary, s)
	}
	if ts := r.Tasks; ts != nil && len(ts.Constructs) > 0 {
		t := table{header: []string{"name", "kind", "count", "sum_ns", "mean_ns", "min_ns", "max_ns", "share", "create_ns", "tasks_per_thread"}}
		for _, c := range ts.Constructs {
			t.rows = append(t.rows, []string{c.Name, c.Kind, i64(c.Count), i64(c.SumNS), i64(c.MeanNS), i64(c.MinNS), i64(c.MaxNS), f64(c.Share), i64(c.CreateNS), f64(c.TasksPerThread)})
		}
		add(CSVConstructs, t)
	}
	if cp := r.CriticalPath; cp != nil {
		t := table{header: []string{"by", "name", "ns", "share", "nodes"}}
		for _, g := range []struct {
			by string
			ss []PathShare
		}{{"kind", cp.ByKind}, {"construct", cp.ByConstruct}, {"process", cp.ByProcess}} {
			for _, s := range g.ss {
				t.rows = append(t.rows, []string{g.by, s.Name, i64(s.NS), f64(s.Share), i64(s.Nodes)})
			}
		}
		add(CSVPathShares, t)
		if len(cp.Segments) > 0 {
			add(CSVPathSegments, pathTable(cp.Segments))
		}
		if op := cp.OffPath; op != nil {
			add(CSVPathOff, table{header: []string{"ns", "share", "before_first_ns", "between_ns", "after_last_ns", "wake_up_ns", "fork_ns", "tasks_ns",
				"across_threads_ns", "across_processes_ns", "mpi_ns", "start_skew_ns"},
				rows: [][]string{{i64(op.NS), f64(op.Share), i64(op.Before), i64(op.Between), i64(op.After), i64(op.WakeUp), i64(op.Fork), i64(op.Tasks),
					i64(op.Threads), i64(op.Processes), i64(op.MPI), i64(op.StartSkew)}}})
		}
	}
	if a := r.Anomalies; a != nil {
		t := table{header: []string{"rank", "thread", "task", "construct", "start_ns", "dur_ns", "predicted_ns", "bound_ns", "score", "group"}}
		for _, x := range a.Tasks {
			t.rows = append(t.rows, []string{itoa(x.Rank), itoa(x.Thread), i64(x.Task), x.Construct, i64(x.StartNS), i64(x.DurNS), i64(x.PredictedNS), i64(x.BoundNS), f64(x.Score), itoa(x.Group)})
		}
		add(CSVAnomalies, t)
		m := table{header: []string{"construct", "kind", "attribute", "tasks", "intercept", "slope", "scale", "bound_factor", "found"}}
		for _, x := range a.Models {
			m.rows = append(m.rows, []string{x.Construct, x.Kind, x.Attribute, i64(x.Tasks), f64(x.Intercept), f64(x.Slope), f64(x.Scale), f64(x.BoundFactor), i64(x.Found)})
		}
		add(CSVAnomalyModels, m)
	}
	if ws := r.WaitStates; ws != nil && (ws.Calls > 0 || ws.MPINS > 0) {
		t := table{header: append([]string{"func", "site", "region"}, waitHeader...)}
		for i := range ws.CallSites {
			c := &ws.CallSites[i]
			t.rows = append(t.rows, append([]string{c.Func, c.Site, c.Region}, c.cells()...))
		}
		add(CSVWaitSites, t)
		u := table{header: append(append([]string{"rank"}, waitHeader...), "caused_ns", "delay_ns")}
		for i := range ws.PerProcess {
			q := &ws.PerProcess[i]
			u.rows = append(u.rows, append(append([]string{itoa(q.Rank)}, q.cells()...), i64(q.CausedNS), i64(q.DelayNS)))
		}
		add(CSVWaitProcesses, u)
		v := table{header: []string{"rank", "func", "site", "region", "pattern", "ns", "share", "calls"}}
		for _, c := range ws.Causes {
			v.rows = append(v.rows, []string{itoa(c.Rank), c.Func, c.Site, c.Region, c.Pattern, i64(c.NS), f64(c.Share), i64(c.Calls)})
		}
		add(CSVWaitCauses, v)
		d := table{header: []string{"rank", "code", "site", "pattern", "ns", "share", "long_term_ns", "propagated_ns", "waits"}}
		for _, x := range ws.Delays {
			d.rows = append(d.rows, []string{itoa(x.Rank), x.Code, x.Site, x.Pattern, i64(x.NS), f64(x.Share), i64(x.LongTermNS), i64(x.PropagatedNS), i64(x.Waits)})
		}
		add(CSVWaitDelays, d)
	}
	if ws := r.WaitStates; ws != nil && ws.OpenMP != nil {
		o := ws.OpenMP
		t := table{header: []string{"kind", "construct", "region", "count", "waiting_ns", "task_ready_ns", "dependences_ns", "no_task_ns"}}
		for _, c := range o.Constructs {
			t.rows = append(t.rows, []string{c.Kind, c.Construct, c.Region, i64(c.Count), i64(c.WaitingNS), i64(c.TaskReadyNS), i64(c.DependencesNS), i64(c.NoTaskNS)})
		}
		add(CSVOMPWaits, t)
		u := table{header: []string{"rank", "waiting_ns", "barrier_implicit_ns", "barrier_explicit_ns", "taskwait_ns", "taskgroup_ns", "other_sync_ns", "outside_sync_ns", "task_ready_ns", "dependences_ns", "no_task_ns", "mutex_wait_ns", "thread_sync_ns"}}
		for _, q := range o.PerProcess {
			u.rows = append(u.rows, []string{itoa(q.Rank), i64(q.WaitingNS), i64(q.BarrierImplicitNS), i64(q.BarrierExplicitNS), i64(q.TaskwaitNS), i64(q.TaskgroupNS),
				i64(q.OtherSyncNS), i64(q.OutsideSyncNS), i64(q.TaskReadyNS), i64(q.DependencesNS), i64(q.NoTaskNS), i64(q.MutexWaitNS), i64(q.ThreadSyncNS)})
		}
		add(CSVOMPProcesses, u)
		if len(o.Mutexes) > 0 {
			m := table{header: []string{"kind", "construct", "acquisitions", "wait_ns", "max_wait_ns", "hold_ns", "contention_ns"}}
			for _, x := range o.Mutexes {
				m.rows = append(m.rows, []string{x.Kind, x.Construct, i64(x.Acquisitions), i64(x.WaitNS), i64(x.MaxWaitNS), i64(x.HoldNS), i64(x.ContentionNS)})
			}
			add(CSVOMPMutexes, m)
		}
	}
	if cs := r.ClockSync; cs != nil {
		t := table{header: []string{"rank", "offset_init_ns", "offset_final_ns", "drift_ppm", "max_correction_ns", "violations", "violations_interpolated"}}
		for _, p := range cs.PerProcess {
			t.rows = append(t.rows, []string{itoa(p.Rank), i64(p.OffsetInitNS), i64(p.OffsetFinalNS), f64(p.DriftPPM), i64(p.MaxCorrectionNS), i64(p.Violations), i64(p.ViolationsInterpolated)})
		}
		add(CSVClockSync, t)
	}
	return names, tables
}

func pathTable(segs []PathNode) table {
	t := table{header: PathCSVHeader}
	for _, s := range segs {
		t.rows = append(t.rows, pathRow(make([]string, len(PathCSVHeader)), s))
	}
	return t
}

// pathRow fills rec with s's columns, in PathCSVHeader's order.
func pathRow(rec []string, s PathNode) []string {
	rec[0], rec[1], rec[2], rec[3], rec[4], rec[5] = itoa(s.Rank), itoa(s.Thread), i64(s.StartNS), i64(s.DurNS), s.Kind, s.Construct
	return rec
}

func (t table) write(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.header); err != nil {
		return err
	}
	if err := cw.WriteAll(t.rows); err != nil { // WriteAll flushes
		return err
	}
	return cw.Error()
}

// WriteCSV writes one CSV file per table of the sections present in r into
// dir (created if needed) and returns the paths written.
func WriteCSV(dir string, r *Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	names, tables := csvTables(r)
	var paths []string
	for _, n := range names {
		p := filepath.Join(dir, n)
		// Each table is written whole or not at all (a full disk leaves
		// no truncated table behind).
		if err := outfile.Write(p, tables[n].write); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// WritePathCSV writes critical-path segments in the format ReadPathCSV reads.
func WritePathCSV(w io.Writer, segs []PathNode) error {
	return WritePathSource(w, func(fn func(PathNode)) error {
		for _, s := range segs {
			fn(s)
		}
		return nil
	})
}

// PathSource gives a critical path's nodes in time order, one at a time,
// to fn: the analysis keeps a long path packed (a few bytes a node) and
// makes its rows only as they are written.
type PathSource func(fn func(PathNode)) error

// WritePathSource writes the nodes src gives as WritePathCSV does, one row
// at a time.
func WritePathSource(w io.Writer, src PathSource) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(PathCSVHeader); err != nil {
		return err
	}
	rec := make([]string, len(PathCSVHeader))
	var werr error
	err := src(func(s PathNode) {
		if werr != nil {
			return
		}
		werr = cw.Write(pathRow(rec, s))
	})
	if err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// ReadPathCSV reads a critical-path segment table (PathCSVHeader columns,
// in any order; unknown columns are ignored). name is used in errors.
func ReadPathCSV(r io.Reader, name string) ([]PathNode, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	for _, h := range PathCSVHeader {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("%s: missing column %q (want %s)", name, h, strings.Join(PathCSVHeader, ","))
		}
	}
	var out []PathNode
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		get := func(k string) string {
			if i := col[k]; i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		var n PathNode
		var perr error
		num := func(k string) int64 {
			v, err := strconv.ParseInt(get(k), 10, 64)
			if err != nil && perr == nil {
				perr = fmt.Errorf("%s:%d: column %s: %w", name, line, k, err)
			}
			return v
		}
		n.Rank, n.Thread = int(num("rank")), int(num("thread"))
		n.StartNS, n.DurNS = num("start_ns"), num("dur_ns")
		n.Kind, n.Construct = get("kind"), get("construct")
		if perr != nil {
			return nil, perr
		}
		// Thread -1 is a node of no thread: the join points (taskwait,
		// taskgroup, barrier) and message latencies the analysis writes.
		if n.DurNS < 0 || n.Rank < 0 || n.Thread < -1 {
			return nil, fmt.Errorf("%s:%d: negative rank or duration, or thread below -1 (rank %d, thread %d, dur_ns %d)", name, line, n.Rank, n.Thread, n.DurNS)
		}
		out = append(out, n)
	}
}

package report_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
)

// validReport is the JSON of a real analysis (a forkjoin trace with tasks,
// so every section compare reads is present), decoded into generic values
// a test can damage.
func validReport(t *testing.T) map[string]any {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fj")
	if _, err := gen.Generate(dir, gen.Config{Workload: "forkjoin", Ranks: 2, Threads: 2, Width: 4, Steps: 3}); err != nil {
		t.Fatal(err)
	}
	var rep *report.Report
	err := inproc.Run(1, func(c comm.Comm) error {
		r, err := driver.Run(c, driver.Options{Dir: dir})
		rep = r
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// set changes (or, with del, removes) the value at a dotted JSON path of
// m; a path element "[i]" indexes an array.
func set(t *testing.T, m map[string]any, path string, v any, del bool) {
	t.Helper()
	var cur any = m
	parts := strings.Split(path, ".")
	for i, p := range parts {
		last := i == len(parts)-1
		key, idx := p, -1
		if j := strings.IndexByte(p, '['); j >= 0 {
			key = p[:j]
			idx, _ = strconv.Atoi(strings.Trim(p[j:], "[]"))
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("%s: %s is not an object", path, key)
		}
		if idx < 0 {
			if last {
				if del {
					delete(obj, key)
				} else {
					obj[key] = v
				}
				return
			}
			cur = obj[key]
			continue
		}
		arr, ok := obj[key].([]any)
		if !ok || idx >= len(arr) {
			t.Fatalf("%s: no element %d of %s", path, idx, key)
		}
		if last {
			arr[idx] = v
			return
		}
		cur = arr[idx]
	}
}

func writeJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A report read back is input (issue 42, item 1): values a comparison
// would compute nonsense from are refused, naming the file and the JSON
// path — before, each of these gave exit 0 and a report without a word
// ("1 process, -4 cores", "elapsed -1 ns", an efficiency of 1e308).
func TestReadJSONFileRefusesHostileValues(t *testing.T) {
	base := validReport(t)
	p := writeJSON(t, base)
	if _, w, err := report.ReadJSONFile(p); err != nil || len(w) != 0 {
		t.Fatalf("valid report: %v, warnings %v", err, w)
	}
	longName := strings.Repeat("x", 5000)
	for _, c := range []struct {
		path string
		v    any
		del  bool
		want string // the JSON path named
	}{
		{"pop.threads_per_process", -4, false, "pop.threads_per_process"},
		{"pop.threads_per_process", 0, false, "pop.threads_per_process"},
		{"pop.threads_per_process", 1e308, false, "pop.threads_per_process"},
		{"pop.threads_per_process", 70000, false, "pop.threads_per_process"},
		{"pop.elapsed_ns", -1, false, "pop.elapsed_ns"},
		{"pop.elapsed_ns", 0, false, "pop.elapsed_ns"},
		{"pop.processes", -3, false, "pop.processes"},
		{"pop.processes", 1e308, false, "pop.processes"},
		{"pop.processes", 99, false, "pop.processes"},
		{"pop.processes", nil, true, "pop.processes"},
		{"pop", nil, true, "pop"},
		{"trace", nil, true, "trace.processes"},
		{"critical_path", nil, true, "critical_path"},
		{"pop.hybrid_efficiency", 1e308, false, "pop.hybrid_efficiency"},
		{"pop.omp_load_balance", -0.5, false, "pop.omp_load_balance"},
		{"pop.mpi_load_balance", 1.09, false, "pop.mpi_load_balance"},
		{"pop.useful_sum_ns", -5, false, "pop.useful_sum_ns"},
		{"pop.useful_sum_ns", int64(1) << 62, false, "pop.useful_sum_ns"},
		{"pop.useful_ns", "many", false, "pop.useful_ns"},
		{"pop.per_process[0].useful_ns", -7, false, "pop.per_process[0].useful_ns"},
		{"critical_path.length_ns", -1, false, "critical_path.length_ns"},
		{"critical_path.work_ns", -1, false, "critical_path.work_ns"},
		{"critical_path.by_kind[0].nodes", -2, false, "critical_path.by_kind[0].nodes"},
		{"tasks.count", -1, false, "tasks.count"},
		{"tasks.constructs[0].sum_ns", -1, false, "tasks.constructs[0].sum_ns"},
		{"tasks.constructs[0].executed", 1 << 40, false, "tasks.constructs[0].executed"},
		{"tasks.constructs[0].name", "\x1b[2J", false, "tasks.constructs[0].name"},
		{"tasks.constructs[0].name", longName, false, "tasks.constructs[0].name"},
		{"tasks.ready_series.bin_ns", 0, false, "tasks.ready_series.bin_ns"},
		{"breakdown.overhead_ns", -1, false, "breakdown.overhead_ns"},
		{"trace.dir", longName, false, "trace.dir"},
		{"trace.processes", 1 << 30, false, "trace.processes"},
		{"trace.last_ns", -1, false, "trace.last_ns"},
		{"schema", "ptrace.report/v2", false, "schema"},
		// Plausible values that contradict the report's own: the
		// efficiencies are functions of the components beside them, the
		// path's parts add up to it, a construct's mean is its sum over
		// its runs.
		{"pop.hybrid_efficiency", 0.5, false, "pop.hybrid_efficiency"},
		{"pop.omp_load_balance", 0.25, false, "pop.omp_load_balance"},
		{"pop.threads_per_process", 1.5, false, "pop.threads_per_process"},
		{"critical_path.run_time_ns", 0, false, "critical_path.share_of_run_time"},
		{"critical_path.work_ns", 7, false, "critical_path.parallelism"},
		{"critical_path.length_ns", 1, false, "critical_path.by_kind"},
		{"critical_path.by_kind[0].name", "", false, "critical_path.by_kind[0].name"},
		{"tasks.constructs[0].mean_ns", 1, false, "tasks.constructs[0].mean_ns"},
		{"tasks.constructs[0].count", 1 << 40, false, "tasks.count"},
	} {
		m := validReport(t)
		set(t, m, c.path, c.v, c.del)
		_, _, err := report.ReadJSONFile(writeJSON(t, m))
		var fe *report.FieldError
		if !errors.As(err, &fe) || fe.Path != c.want || !strings.Contains(err.Error(), "r.json") {
			t.Errorf("%s = %.40v: got %v, want an error naming r.json and %s", c.path, c.v, err, c.want)
		}
	}
	// Two constructs of one name would be merged silently.
	m := validReport(t)
	cons := m["tasks"].(map[string]any)["constructs"].([]any)
	m["tasks"].(map[string]any)["constructs"] = append(cons, cons[0])
	if _, _, err := report.ReadJSONFile(writeJSON(t, m)); err == nil || !strings.Contains(err.Error(), "tasks.constructs[") {
		t.Errorf("duplicate construct: %v", err)
	}
	// A partial report is compared with a warning naming the file.
	m = validReport(t)
	set(t, m, "trace.partial", true, false)
	p = writeJSON(t, m)
	if _, w, err := report.ReadJSONFile(p); err != nil || len(w) != 1 || !strings.Contains(w[0], p) || !strings.Contains(w[0], "trace.partial") {
		t.Errorf("partial report: %v, warnings %q", err, w)
	}
	// Data after the report, another document.
	b, _ := json.Marshal(base)
	for name, doc := range map[string][]byte{"trailing": append(b, []byte(" {}")...), "other": []byte(`{"schema":"x"}`), "array": []byte(`[1]`)} {
		p := filepath.Join(t.TempDir(), "r.json")
		os.WriteFile(p, doc, 0o644)
		if _, _, err := report.ReadJSONFile(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A file far larger than any report is refused from its size, without
// reading it (a 12 GB file was a fatal out-of-memory): a sparse file
// costs no disk, and the test's own heap shows nothing was read.
func TestReadJSONFileRefusesHugeFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"schema": "ptrace.report/v1", "trace": {`)
	if err := f.Truncate(12 << 30); err != nil {
		t.Skipf("no sparse 12 GB file here: %v", err)
	}
	f.Close()
	_, _, err = report.ReadJSONFile(p)
	if err == nil || !strings.Contains(err.Error(), "more than a report can hold") {
		t.Errorf("12 GB file: %v", err)
	}
}

// The account of the time off the critical path is the report's own
// arithmetic (run_time_ns − length_ns, split into before, between and
// after, between into seven classes): a report read back whose parts
// contradict it, or hold a negative time that cannot be, is refused and
// the value named; a class that sums gaps may be negative (overlapping
// nodes) and a report from before off_path has none.
func TestReadJSONFileChecksOffPath(t *testing.T) {
	base := validReport(t)
	op := func(m map[string]any) map[string]any {
		return m["critical_path"].(map[string]any)["off_path"].(map[string]any)
	}
	if op(base)["ns"].(float64) <= 0 || op(base)["between_ns"].(float64) == 0 {
		t.Fatalf("the forkjoin report's off_path %v accounts for nothing between nodes", op(base))
	}
	add := func(key string, d float64) func(map[string]any) {
		return func(m map[string]any) { o := op(m); o[key] = o[key].(float64) + d }
	}
	both := func(f, g func(map[string]any)) func(map[string]any) {
		return func(m map[string]any) { f(m); g(m) }
	}
	setTo := func(key string, v any) func(map[string]any) {
		return func(m map[string]any) { op(m)[key] = v }
	}
	for _, c := range []struct {
		name   string
		damage func(map[string]any)
		want   string // the JSON path named; empty: accepted
	}{
		{"huge before", both(setTo("before_first_ns", -int64(1)<<62), setTo("between_ns", int64(1)<<62)), "critical_path.off_path.before_first_ns"},
		{"huge after", both(setTo("after_last_ns", int64(1)<<62), setTo("between_ns", -int64(1)<<62)), "critical_path.off_path.after_last_ns"},
		{"whole beyond the run", both(setTo("ns", int64(1)<<50), setTo("after_last_ns", int64(1)<<50)), "critical_path.off_path.ns"},
		{"negative whole", setTo("ns", -1), "critical_path.off_path.ns"},
		{"negative start skew", both(add("start_skew_ns", -1), add("tasks_ns", 1)), "critical_path.off_path.start_skew_ns"},
		{"whole is not run − length", both(add("ns", 1), add("after_last_ns", 1)), "critical_path.off_path.ns"},
		{"parts do not add up", add("after_last_ns", 1), "critical_path.off_path.between_ns"},
		{"classes do not add up", add("wake_up_ns", 1), "critical_path.off_path.between_ns"},
		{"between moved without its class", both(add("between_ns", 1), add("after_last_ns", -1)), "critical_path.off_path.between_ns"},
		{"share", setTo("share", 0.25), "critical_path.off_path.share"},
		{"huge class", both(add("fork_ns", 1<<62), add("mpi_ns", -(1<<62))), "critical_path.off_path.fork_ns"},
		{"overflowing classes", both(both(setTo("wake_up_ns", int64(1)<<60), setTo("fork_ns", int64(1)<<60)), both(setTo("tasks_ns", -int64(1)<<60), setTo("mpi_ns", -int64(1)<<60))), "critical_path.off_path.fork_ns"},
		{"not a number", setTo("mpi_ns", "x"), "critical_path.off_path.mpi_ns"},
		// Negative values the analysis can write: a class of gaps of
		// overlapping nodes; a first node begun before the window, as on
		// otf2/testdata/scorep-8.4-recording-off-leave (the time before
		// it moved to the gaps after it).
		{"negative class", both(add("mpi_ns", -70000), add("wake_up_ns", 70000)), ""},
		{"negative before", both(add("before_first_ns", -30e6), both(add("between_ns", 30e6), add("mpi_ns", 30e6))), ""},
		{"negative after", both(add("after_last_ns", -5e6), both(add("between_ns", 5e6), add("wake_up_ns", 5e6))), ""},
		{"report from before off_path", func(m map[string]any) { delete(m["critical_path"].(map[string]any), "off_path") }, ""},
	} {
		m := validReport(t)
		c.damage(m)
		_, _, err := report.ReadJSONFile(writeJSON(t, m))
		var fe *report.FieldError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want it read", c.name, err)
		case c.want != "" && (!errors.As(err, &fe) || fe.Path != c.want || !strings.Contains(err.Error(), "r.json")):
			t.Errorf("%s: got %v, want an error naming r.json and %s", c.name, err, c.want)
		}
	}
}

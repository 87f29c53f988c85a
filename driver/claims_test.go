package driver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/ompt/ompfault"
	"github.com/ptrace-dev/ptrace/trace"
)

// faultyTrace writes a forkjoin trace (one process, a master and a worker)
// whose file has critical sections in its tasks when crit, and fault f
// applied when f is not nil.
func faultyTrace(t *testing.T, crit bool, f *ompfault.Fault) string {
	t.Helper()
	dir, _ := generate(t, gen.Config{Workload: "forkjoin", Ranks: 1, Threads: 2, Width: 4, Steps: 3})
	path := filepath.Join(dir, trace.FileName(0))
	p, err := trace.ReadRows(path)
	if err != nil {
		t.Fatal(err)
	}
	if crit {
		if err := ompfault.AddCriticals(p); err != nil {
			t.Fatal(err)
		}
	}
	if f != nil {
		if err := f.Apply(p); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
	}
	if err := p.WriteFile(path, 0); err != nil {
		t.Fatal(err)
	}
	// The manifest's event count is a hint the load checks nothing
	// against; keep it right all the same.
	os.Remove(filepath.Join(dir, trace.ManifestName))
	return dir
}

// Every OMPT sequence rule the model relies on is a checked claim (issue
// 42, item 2): each fault of a CRC-valid trace — a mutex acquired without
// its acquire or twice, never released, kinds and wait ids that differ, a
// location 2^40 or −5, a mutex kind 2^62, a sync kind 2^50, a bogus or
// dropped parallel id, sync and implicit-task events dropped or
// duplicated — is a counted warning naming the file, the thread and the
// event's offset, the report is marked partial, and --strict makes it an
// error that names the file and offset. Before, each gave exit 0 and no
// warning, the report changed or not.
func TestOMPTClaimsChecked(t *testing.T) {
	base := faultyTrace(t, true, nil)
	rep, err := runWith(1, driver.Options{Dir: base})
	if err != nil {
		t.Fatal(err)
	}
	if w := rep.Trace.Warnings; w != nil || rep.Trace.Partial {
		t.Fatalf("valid trace with critical sections: partial %v, warnings %+v", rep.Trace.Partial, w)
	}
	if o := rep.WaitStates; o == nil || o.OpenMP == nil || len(o.OpenMP.Mutexes) != 1 || o.OpenMP.Mutexes[0].Acquisitions != 12 || o.OpenMP.Mutexes[0].Construct != "forkjoin.c:13:1" {
		t.Fatalf("the 12 tasks' critical sections are not one row of 12 acquisitions: %+v", o)
	}
	for _, f := range ompfault.Faults {
		t.Run(f.Name, func(t *testing.T) {
			dir := faultyTrace(t, f.NeedsCriticals(), &f)
			file := filepath.Join(dir, trace.FileName(0))
			rep, err := runWith(1, driver.Options{Dir: dir})
			if err != nil {
				t.Fatalf("not analysed: %v", err)
			}
			w := rep.Trace.Warnings
			if w == nil || w.Count == 0 {
				t.Fatal("no warning")
			}
			if !rep.Trace.Partial {
				t.Error("report not marked partial")
			}
			found := false
			for _, m := range w.First {
				if strings.Contains(m, f.Want) {
					found = true
					if !strings.Contains(m, file) || !(strings.Contains(m, "thread ") && strings.Contains(m, " at offset ") || strings.Contains(m, "end of the trace")) {
						t.Errorf("warning names no file, thread and offset: %s", m)
					}
				}
			}
			if !found {
				t.Errorf("no %q warning among %q", f.Want, w.First)
			}
			_, err = runWith(1, driver.Options{Dir: dir, Strict: true})
			if err == nil || !strings.Contains(err.Error(), "--strict") || !strings.Contains(err.Error(), file) ||
				!(strings.Contains(err.Error(), " at offset ") || strings.Contains(err.Error(), "end of the trace")) {
				t.Errorf("--strict: %v; want an error naming %s and the offset", err, file)
			}
		})
	}
}

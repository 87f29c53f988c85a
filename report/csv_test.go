package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// Every section present gives its tables, one row per entry, with the
// report's values.
func TestWriteCSV(t *testing.T) {
	r := sampleReport()
	op := &OffPath{NS: 700, Share: 0.7, Before: 30, Between: 600, After: 70, WakeUp: 250, Fork: 120, Tasks: -40, Threads: 60, Processes: 90, MPI: 20, StartSkew: 100}
	r.CriticalPath.OffPath = op
	dir := t.TempDir()
	paths, err := WriteCSV(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{ // file → data rows
		CSVBreakdown: len(r.Breakdown.PerProcess), CSVPOP: len(r.POP.PerProcess), CSVPOPSummary: 19, CSVAdvice: 1,
		CSVConstructs: len(r.Tasks.Constructs), CSVPathShares: len(r.CriticalPath.ByKind) + len(r.CriticalPath.ByConstruct) + len(r.CriticalPath.ByProcess),
		CSVPathSegments: len(r.CriticalPath.Segments), CSVAnomalies: len(r.Anomalies.Tasks), CSVAnomalyModels: len(r.Anomalies.Models),
		CSVClockSync: len(r.ClockSync.PerProcess), CSVPathOff: 1,
	}
	if len(paths) != len(want) {
		t.Errorf("wrote %d files, want %d", len(paths), len(want))
	}
	for name, rows := range want {
		recs := readCSV(t, filepath.Join(dir, name))
		if len(recs)-1 != rows {
			t.Errorf("%s: %d rows, want %d", name, len(recs)-1, rows)
		}
	}
	b := readCSV(t, filepath.Join(dir, CSVBreakdown))
	if b[0][4] != "work_ns" || b[2][4] != strconv.FormatInt(r.Breakdown.PerProcess[1].WorkNS, 10) {
		t.Errorf("breakdown table: %v", b)
	}
	// The off-path table's columns are off_path's JSON keys, its row the
	// values.
	js, err := json.Marshal(op)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.Number
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&keys); err != nil {
		t.Fatal(err)
	}
	o := readCSV(t, filepath.Join(dir, CSVPathOff))
	got := map[string]json.Number{}
	for i, k := range o[0] {
		got[k] = json.Number(o[1][i])
	}
	if len(o) != 2 || !reflect.DeepEqual(got, keys) {
		t.Errorf("off-path table %v, off_path %s", o, js)
	}
	// Nothing but the trace section: no tables.
	paths, err = WriteCSV(t.TempDir(), &Report{Trace: r.Trace})
	if err != nil || len(paths) != 0 {
		t.Errorf("trace-only report wrote %v (%v)", paths, err)
	}
}

// The critical-path table reads back as written, and bad input is an error
// naming the line.
func TestPathCSVRoundTrip(t *testing.T) {
	segs := sampleReport().CriticalPath.Segments
	segs[0].Construct = `odd, "quoted" name`
	var b bytes.Buffer
	if err := WritePathCSV(&b, segs); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPathCSV(&b, "path.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, segs) {
		t.Errorf("round trip:\n%v\n%v", got, segs)
	}
	// Column order is free.
	got, err = ReadPathCSV(strings.NewReader("kind,construct,dur_ns,start_ns,thread,rank\ntask,a.c:1,5,10,2,3\n"), "x")
	if err != nil || len(got) != 1 || got[0] != (PathNode{Rank: 3, Thread: 2, StartNS: 10, DurNS: 5, Kind: "task", Construct: "a.c:1"}) {
		t.Errorf("reordered columns: %v %v", got, err)
	}
	// A join node has no thread (-1).
	got, err = ReadPathCSV(strings.NewReader("rank,thread,start_ns,dur_ns,kind,construct\n1,-1,10,0,join,\n"), "x")
	if err != nil || len(got) != 1 || got[0].Thread != -1 {
		t.Errorf("join node: %v %v", got, err)
	}
	for _, bad := range []string{"rank,thread\n1,2\n", "rank,thread,start_ns,dur_ns,kind,construct\n1,2,x,4,task,a\n", "rank,thread,start_ns,dur_ns,kind,construct\n1,2,3,-4,task,a\n",
		"rank,thread,start_ns,dur_ns,kind,construct\n1,-2,3,4,task,a\n", "rank,thread,start_ns,dur_ns,kind,construct\n-1,0,3,4,task,a\n"} {
		if _, err := ReadPathCSV(strings.NewReader(bad), "bad.csv"); err == nil || !strings.Contains(err.Error(), "bad.csv") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

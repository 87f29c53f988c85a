package driver

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// callSiteTrace writes two processes of format version v: rank 0 receives
// twice from rank 1, at two call sites (a.c:10 and a.c:20), waiting 200
// and 300 ns for rank 1's sends (at b.c:30 and b.c:40). Version 3 files
// carry no call sites.
func callSiteTrace(t *testing.T, v int) string {
	return callSiteTraceAt(t, v, []trace.Location{{ID: 0}, {ID: 1, File: "a.c", Line: 10, Col: 3, Func: "main"}, {ID: 2, File: "a.c", Line: 20, Col: 3, Func: "main"},
		{ID: 3, File: "b.c", Line: 30, Col: 3, Func: "main"}, {ID: 4, File: "b.c", Line: 40, Col: 3, Func: "main"}})
}

func callSiteTraceAt(t *testing.T, v int, locs []trace.Location) string {
	t.Helper()
	const (
		fInit, fRecv, fSend, fFin = 0, 1, 2, 3
		atA, atB, atC, atD        = 1, 2, 3, 4
	)
	tables := trace.Tables{
		Strings:   []string{"MPI_Init", "MPI_Recv", "MPI_Send", "MPI_Finalize"},
		Locations: locs,
		Comms:     []trace.Communicator{{Index: 0, ID: 0, Name: "MPI_COMM_WORLD", Members: []int{0, 1}}},
	}
	call := func(enter, exit, fn, loc int64, inner ...trace.Event) []trace.Event {
		return append(append([]trace.Event{ev(enter, trace.MPIEnter, fn, loc)}, inner...), ev(exit, trace.MPIExit, fn))
	}
	rows := [2][]trace.Event{}
	for r := range 2 {
		evs := []trace.Event{ev(0, trace.ThreadBegin, 1)}
		evs = append(evs, call(0, 10, fInit, -1)...)
		if r == 0 {
			evs = append(evs, call(100, 400, fRecv, atA, ev(400, trace.MPIRecv, 1, 7, 0, 8, 0))...)
			evs = append(evs, call(500, 900, fRecv, atB, ev(900, trace.MPIRecv, 1, 7, 0, 8, 0))...)
		} else {
			evs = append(evs, call(300, 310, fSend, atC, ev(300, trace.MPISend, 0, 7, 0, 8, 0))...)
			evs = append(evs, call(800, 810, fSend, atD, ev(800, trace.MPISend, 0, 7, 0, 8, 0))...)
		}
		evs = append(evs, call(1000, 1010, fFin, -1)...)
		rows[r] = append(evs, ev(1010, trace.ThreadEnd))
	}
	dir := t.TempDir()
	for r := range 2 {
		w, err := trace.Create(filepath.Join(dir, trace.FileName(r)), trace.Header{Version: v, Rank: r, NRanks: 2, ClockUnit: "ns"})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tables.Strings {
			w.String(s)
		}
		for _, l := range tables.Locations {
			w.AddLocation(l)
		}
		w.AddComm(tables.Comms[0])
		w.SetThread(trace.Thread{Index: 0, Type: trace.ThreadInitial})
		for i := range rows[r] {
			if err := w.Emit(0, &rows[r][i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// MPI wait states, their causes and delay costs are keyed by call site
// (format version 4): two receives of one function at two lines are two
// rows, and the delays name the sends they ran before. A version 3 trace
// has no call sites: one row per function, as before.
func TestWaitStatesByCallSite(t *testing.T) {
	type site struct {
		fn, site string
		ls       int64
	}
	type delay struct {
		code, site string
		ns         int64
	}
	for _, c := range []struct {
		version int
		sites   []site
		causes  []site
		delays  []delay
	}{
		{4, []site{{"MPI_Recv", "a.c:20:3", 300}, {"MPI_Recv", "a.c:10:3", 200}, {"MPI_Send", "b.c:30:3", 0}, {"MPI_Send", "b.c:40:3", 0}},
			[]site{{"MPI_Recv", "a.c:20:3", 300}, {"MPI_Recv", "a.c:10:3", 200}},
			[]delay{{"serial code", "MPI_Send at b.c:40:3", 300}, {"serial code", "MPI_Send at b.c:30:3", 200}}},
		{3, []site{{"MPI_Recv", "", 500}, {"MPI_Send", "", 0}},
			[]site{{"MPI_Recv", "", 500}},
			[]delay{{"serial code", "MPI_Send", 500}}},
	} {
		dir := callSiteTrace(t, c.version)
		for k := 1; k <= 2; k++ {
			rep, _, err := analyze(t, Options{Dir: dir}, k)
			if err != nil {
				t.Fatal(err)
			}
			if w := rep.Trace.Warnings; w != nil && w.Count > 0 {
				t.Errorf("version %d k=%d: warnings %v", c.version, k, w.First)
			}
			ws := rep.WaitStates
			if ws == nil {
				t.Fatalf("version %d k=%d: no wait states", c.version, k)
			}
			var sites, causes []site
			for _, s := range ws.CallSites {
				sites = append(sites, site{s.Func, s.Site, s.LateSenderNS})
			}
			for _, x := range ws.Causes {
				if x.Rank != 1 || x.Pattern != "late_sender" {
					t.Errorf("version %d k=%d: cause %+v, want rank 1's late sends", c.version, k, x)
				}
				causes = append(causes, site{x.Func, x.Site, x.NS})
			}
			var delays []delay
			for _, d := range ws.Delays {
				if d.Rank != 1 {
					t.Errorf("version %d k=%d: delay %+v, want rank 1's", c.version, k, d)
				}
				delays = append(delays, delay{d.Code, d.Site, d.NS})
			}
			if !slices.Equal(sites, c.sites) || !slices.Equal(causes, c.causes) || !slices.Equal(delays, c.delays) {
				t.Errorf("version %d k=%d:\n call sites %+v\n causes %+v\n delays %+v\nwant\n %+v\n %+v\n %+v", c.version, k, sites, causes, delays, c.sites, c.causes, c.delays)
			}
			if c.version == 4 {
				var text bytes.Buffer
				report.WriteText(&text, rep, report.TextOptions{})
				for _, want := range []string{"MPI_Recv at a.c:20:3: late sender", "rank 1's serial code before MPI_Send at b.c:40:3 costs"} {
					if !strings.Contains(text.String(), want) {
						t.Errorf("text report lacks %q:\n%s", want, text.String())
					}
				}
			}
		}
	}
}

// Without a line table (a program compiled without -g) the call sites are
// function+offset, apart by address, and the report says that -g gives
// lines.
func TestCallSitesWithoutLines(t *testing.T) {
	at := func(id int, fn string, off uint64) trace.Location {
		return trace.Location{ID: id, Module: "/bin/app", Offset: 0x1000 + off, Func: fn, FuncOffset: off}
	}
	dir := callSiteTraceAt(t, 4, []trace.Location{{ID: 0}, at(1, "main", 0x2c), at(2, "main", 0x4f), at(3, "step", 0x11), at(4, "step", 0x1d)})
	rep, _, err := analyze(t, Options{Dir: dir}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var sites []string
	for _, s := range rep.WaitStates.CallSites {
		sites = append(sites, s.Func+" at "+s.Site)
	}
	if want := []string{"MPI_Recv at main+0x4f", "MPI_Recv at main+0x2c", "MPI_Send at step+0x11", "MPI_Send at step+0x1d"}; !slices.Equal(sites, want) {
		t.Errorf("call sites %v, want %v", sites, want)
	}
	if !slices.Contains(rep.Trace.Unavailable, "source_lines") {
		t.Errorf("unavailable %v, want source_lines", rep.Trace.Unavailable)
	}
	var text bytes.Buffer
	report.WriteText(&text, rep, report.TextOptions{})
	if !strings.Contains(text.String(), "compile with -g for file:line") {
		t.Errorf("the text report does not say that -g gives lines:\n%s", text.String())
	}
	// with lines, no such note
	rep, _, err = analyze(t, Options{Dir: callSiteTrace(t, 4)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(rep.Trace.Unavailable, "source_lines") {
		t.Errorf("unavailable %v with a line table", rep.Trace.Unavailable)
	}
}

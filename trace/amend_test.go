package trace

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAddLocations(t *testing.T) {
	for _, complete := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), FileName(0))
		w, err := Create(path, Header{NRanks: 1})
		if err != nil {
			t.Fatal(err)
		}
		loc := w.AddLocation(Location{Addr: 0x1234, Module: "/bin/app", Offset: 0x234})
		w.SetThread(Thread{Index: 0, Type: ThreadInitial})
		if err := w.E(0, ThreadBegin, 10, ThreadInitial); err != nil {
			t.Fatal(err)
		}
		if err := w.E(0, TaskCreate, 20, MakeID(0, 1), 0, 4, loc); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if !complete { // cut the end frame: a crashed producer's file
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			off, _, err := findEndFrame(f, path)
			if err != nil || off < 0 {
				t.Fatalf("end frame: %d, %v", off, err)
			}
			if err := f.Truncate(off); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		fixed := Location{ID: int(loc), Addr: 0x1234, Module: "/bin/app", Offset: 0x234, File: "app.c", Line: 7, Col: 3, Func: "main"}
		if err := AddLocations(path, []Location{fixed}); err != nil {
			t.Fatal(err)
		}
		p, err := LoadProcess(path, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Locations[loc]; got != fixed {
			t.Errorf("complete=%v: location %+v, want %+v", complete, got, fixed)
		}
		if complete != (p.End != nil) {
			t.Errorf("complete=%v: end frame present=%v", complete, p.End != nil)
		}
		if p.NumEvents() != 2 {
			t.Errorf("complete=%v: %d events, want 2", complete, p.NumEvents())
		}
		ps, _, err := ValidateFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if complete && len(ps) != 0 {
			t.Errorf("problems: %v", ps)
		}
	}
}

package otf2

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// An InterComm whose two groups share a rank (a malformed archive: MPI's
// are disjoint) is ignored with a warning; it once became a communicator
// naming each rank twice ([0 1 0 1] in a 2-rank world). One between
// disjoint groups ({1} and {0}) is kept, the group of the lower rank 0
// first.
func TestInterCommGroupsOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b    uint64
		members []int // nil: ignored, with the warning
	}{{1, 1, nil}, {1, 2, nil}, {3, 2, []int{0, 1}}} {
		dir := t.TempDir()
		anchor := editedArchive(t, dir, func(recs []defRec) []defRec {
			// groups {0} and {1} of MPI ranks (pre-1.2 layout, type 4),
			// then the intercommunicator 1 between groups a and b
			recs = append(recs, defRec{gdGroup, (&enc{}).c(2).c(12).u8(4).c(1).c(0)},
				defRec{gdGroup, (&enc{}).c(3).c(12).u8(4).c(1).c(1)})
			return append(recs, defRec{gdInterComm, (&enc{}).c(1).c(11).c(tc.a).c(tc.b).c(0).c(0)})
		})
		a, err := Open(anchor)
		if err != nil {
			t.Fatal(err)
		}
		for rank := range 2 {
			var buf bytes.Buffer
			st, err := a.Convert(rank, &buf)
			if err != nil {
				t.Fatal(err)
			}
			r, err := trace.NewReader(&buf, "converted")
			if err != nil {
				t.Fatal(err)
			}
			for range r.Chunks() {
			}
			var got []int
			for _, cm := range r.Tables().Comms {
				if cm.ID == 2 { // OTF2 communicator 1
					got = cm.MemberList()
				}
			}
			if !slices.Equal(got, tc.members) {
				t.Errorf("groups %d, %d, rank %d: intercommunicator members %v, want %v", tc.a, tc.b, rank, got, tc.members)
			}
			warned := slices.ContainsFunc(st.Warnings, func(w string) bool { return strings.Contains(w, "share ranks") })
			if warned != (tc.members == nil) {
				t.Errorf("groups %d, %d, rank %d: warnings %q", tc.a, tc.b, rank, st.Warnings)
			}
		}
	}
}

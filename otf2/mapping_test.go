package otf2_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// localIDs writes an archive whose events use local region ids translated
// by a MappingTable in the local definitions, as Score-P writes them.
const localIDs = `
import sys, otf2, _otf2
from otf2.enums import Paradigm, RegionRole
with otf2.writer.open(sys.argv[1], timer_resolution=1000000000) as tr:
    d = tr.definitions
    node = d.system_tree_node("host0")
    g = d.location_group("rank 0", system_tree_parent=node)
    loc = d.location("master", group=g)
    regs = [d.region("MPI_Init", paradigm=Paradigm.MPI, region_role=RegionRole.FUNCTION),
            d.region("work", paradigm=Paradigm.USER, region_role=RegionRole.FUNCTION),
            d.region("MPI_Finalize", paradigm=Paradigm.MPI, region_role=RegionRole.FUNCTION)]
    w = tr.event_writer_from_location(loc)
    # local id i is global region perm[i]
    perm = [regs[2]._ref, regs[0]._ref, regs[1]._ref]
    m = _otf2.IdMap_Create(_otf2.ID_MAP_SPARSE, 3)
    for i, gid in enumerate(perm):
        _otf2.IdMap_AddIdPair(m, i, gid)
    _otf2.DefWriter_WriteMappingTable(w._def_handle, _otf2.MAPPING_REGION, m)
    local = {r._ref: perm.index(r._ref) for r in regs}
    n = 0
    for t, enter, r in [(10, 1, 0), (20, 0, 0), (30, 1, 1), (40, 0, 1), (50, 1, 2), (60, 0, 2)]:
        f = _otf2.EvtWriter_Enter if enter else _otf2.EvtWriter_Leave
        f(w._handle, None, t, local[regs[r]._ref])
        tr._update_timestamps(t)
        n += 1
    loc._number_of_events_written = n
`

// TestMappingTables: local ids in events go through the location's
// MappingTable.
func TestMappingTables(t *testing.T) {
	needOTF2(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "w.py")
	if err := os.WriteFile(script, []byte(localIDs), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "a")
	if b, err := exec.Command(python, script, out).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	evs, tb := convertFirst(t, out)
	var names []string
	for _, e := range evs {
		switch e.Kind {
		case trace.MPIEnter, trace.MPIExit, trace.RegionEnter, trace.RegionExit:
			names = append(names, e.Kind.String()+" "+tb.String(e.Args[0]))
		}
	}
	want := "mpi_enter MPI_Init,mpi_exit MPI_Init,region_enter work,region_exit work,mpi_enter MPI_Finalize,mpi_exit MPI_Finalize"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("converted regions:\n got %s\nwant %s", got, want)
	}
}

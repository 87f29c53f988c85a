package otf2

import "github.com/ptrace-dev/ptrace/trace"

// OTF2 requires a location's Enter and Leave records to nest, and ptrace's
// region_exit leaves the innermost open region, whatever it names. Score-P
// breaks the nesting when it records the calls of threads it does not
// track on the location of the one it does: with `--io=runtime:posix` (and
// memory recording) and `--thread=none`, the POSIX I/O calls of the MPI
// library's own threads (Open MPI's PMIx progress thread reading and
// writing its socket) interleave with the master thread's (`Enter open,
// Enter read, Leave read, Enter writev, Leave open, Leave writev`). Taken
// as they come, such a Leave closed the wrong region: `main` was left
// early and every later MPI call of the process was named as outside any
// code region, its delay costs "serial code". So a code region's Leave
// closes that region: one entered after it and still open is left and
// entered again at the same time (it stays open), and a Leave of a region
// the location has not entered is skipped; each is a counted warning
// naming the file and offset.

// maxRenest bounds the open code regions entered after a region that a
// Leave of it keeps open: a Leave of a region not among the innermost
// maxRenest+1 open ones is skipped. Score-P's unnested records interleave
// a few regions; the bound keeps a hostile file's Leaves from scanning,
// and writing again, its whole stack each (quadratic time and output).
const maxRenest = 16

// innermost returns the index of region id's innermost entry among the
// innermost maxRenest+1 of n open entries (idOf(k) is entry k's region,
// innermost last), or −1.
func innermost(n int, idOf func(k int) uint32, id uint32) int {
	for k := n - 1; k >= 0 && k >= n-1-maxRenest; k-- {
		if idOf(k) == id {
			return k
		}
	}
	return -1
}

// codeFrame is an open code region of a thread: its region and name.
type codeFrame struct {
	id   uint32
	name int64
}

// codeRegion writes the Enter or Leave of code region id, whose name is
// the string name, keeping the thread's open code regions nested.
func (h *thr) codeRegion(enter bool, now int64, id uint32, name int64, r *Region) {
	c := h.c
	if enter {
		h.codes = append(h.codes, codeFrame{id, name})
		c.st.Regions++
		h.emit(trace.RegionEnter, now, name)
		return
	}
	k := innermost(len(h.codes), func(k int) uint32 { return h.codes[k].id }, id)
	evt := c.a.evtPath(c.p.locations[h.t].ID)
	if k < 0 && len(h.codes) > 0 && c.taskWorker(h.t) {
		// A task runtime's worker: APEX writes the Leave of an HPX task
		// whose name was annotated after it started with the task's first
		// name (the same GUID attribute as its Enter), so the Leave ends
		// the task it follows, named as it was entered (Stats.Renamed).
		c.st.Renamed++
		k = len(h.codes) - 1
		c.st.Regions++
		h.emit(trace.RegionExit, now, h.codes[k].name)
		h.codes = h.codes[:k]
		return
	}
	if k < 0 {
		c.unnested.add("%s: offset %d: Leave of region %q, which is not open on this location, skipped "+
			"(or open only below %d regions entered after it; the Enter and Leave records do not nest: Score-P records the calls of threads it does not track, "+
			"such as the MPI library's, on the location of one it does)", evt, h.off, r.Name, maxRenest)
		return
	}
	above := h.codes[k+1:]
	if len(above) > 0 {
		inner := "<region>"
		if ir := c.a.Defs.Region(above[len(above)-1].id); ir != nil {
			inner = ir.Name
		}
		c.unnested.add("%s: offset %d: Leave of region %q while %q, entered after it, is open: %q stays open "+
			"(the Enter and Leave records do not nest: Score-P records the calls of threads it does not track, "+
			"such as the MPI library's, on the location of one it does)", evt, h.off, r.Name, inner, inner)
		for j := len(above) - 1; j >= 0; j-- {
			h.emit(trace.RegionExit, now, above[j].name)
		}
	}
	c.st.Regions++
	h.emit(trace.RegionExit, now, name)
	for _, f := range above {
		h.emit(trace.RegionEnter, now, f.name)
	}
	h.codes = append(h.codes[:k], above...)
}

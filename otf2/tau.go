package otf2

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ptrace-dev/ptrace/trace"
)

// TAU's OTF2 writer (TracerOTF2.cpp, TAU_TRACE=1 TAU_TRACE_FORMAT=otf2)
// sets the anchor's creator to "TAU" and defines every timer as a region
// of role FUNCTION whose paradigm it guesses from the timer's name: MPI
// when the name holds "MPI" in any case. Its MPI wrappers name their
// timers "MPI_Send()", "MPI_Init()", …; it also times the PMPI_Barrier it
// inserts at the start of every collective but MPI_Barrier as "MPI
// Collective Sync", an MPI region inside the collective's; and a user or
// compiler-instrumented function whose name (or, for the latter, source
// file) holds "mpi" is an MPI region too.

// tauCreator is the anchor's creator TAU's OTF2 writer sets.
const tauCreator = "TAU"

// TAU's converter of its own trace format (tau2otf2, "tau2otf2 converter
// version …") names regions as TAU does, with trailing blanks ("MPI_Send()
// "), and gives every region the paradigm and role UNKNOWN: what is an MPI
// call is known by its name only. It also reuses the ids of its region
// groups for the communicators' groups (the later definitions are the ones
// the communicators refer to).
const tau2otf2Creator = "tau2otf2 converter"

// isTAU reports whether creator names one of TAU's writers.
func isTAU(creator string) bool {
	return creator == tauCreator || strings.HasPrefix(creator, tau2otf2Creator)
}

// tau2otf2Groups takes back the warnings on group ids defined twice: tau2otf2
// numbers its region groups and its communicators' groups from 0 alike, the
// latter defined last, and those are what its communicators refer to (the
// later definition of an id is the one kept). A note says so.
func (g *Defs) tau2otf2Groups() (note string) {
	if g.groupDups == 0 {
		return ""
	}
	kept := g.Warnings[:0]
	for _, w := range g.Warnings {
		if !strings.HasSuffix(w, " defined twice") || !strings.Contains(w, ": group ") {
			kept = append(kept, w)
		}
	}
	g.Warnings, g.warnN = kept, g.warnN-g.groupDups
	return fmt.Sprintf("%d group ids defined twice, as tau2otf2 writes them (its region groups and its communicators' groups share ids): the later definitions, the communicators', are used", g.groupDups)
}

// tau2otf2Regions gives the regions of a tau2otf2 archive the paradigm
// their names say (names trimmed): an MPI region named "MPI_X()" is MPI,
// any other one user code; tauRegions then treats them as TAU's own.
func (g *Defs) tau2otf2Regions() {
	fix := func(r *Region) {
		r.Name = strings.TrimSpace(r.Name)
		if r.Paradigm != paradigmUnknown {
			return
		}
		r.Paradigm = paradigmUser
		if n := strings.TrimSuffix(r.Name, "()"); strings.HasPrefix(n, "MPI_") && !strings.ContainsAny(n, " \t") {
			r.Paradigm = paradigmMPI
		}
	}
	g.regions.update(fix)
}

// tauRegions makes the regions of a TAU archive what they are: an MPI
// region named "MPI_X()" is the MPI call MPI_X (so MPI_Init and
// MPI_Finalize bound the analysis window and the wait states know the
// call); any other region TAU put in the MPI paradigm for its name is
// code: a function of the program, or "MPI Collective Sync", a code
// region inside the collective's call, whose time stays the call's.
func (g *Defs) tauRegions() {
	fix := func(r *Region) {
		if r.Paradigm != paradigmMPI {
			return
		}
		name := strings.TrimSuffix(r.Name, "()")
		if strings.HasPrefix(name, "MPI_") {
			r.Name = name
		} else {
			r.Paradigm = paradigmUser
		}
	}
	g.regions.update(fix)
}

// collectiveNames are the MPI collectives OTF2's collective records
// describe (MpiCollectiveBegin/End), by the name of their region.
var collectiveNames = func() map[string]bool {
	m := map[string]bool{}
	for op := trace.CollOp(1); op.Valid(); op++ {
		if op.IsWindow() {
			// RmaCollectiveBegin/End, not MpiCollective*; a window's
			// creation is several functions
			continue
		}
		m[op.String()] = true
	}
	return m
}()

// collective follows an MPI collective call of thread h: entered, or
// left, when it counts the call if it held no collective record.
func (c *conv) collective(h *thr, enter bool, name string) {
	if enter {
		h.collCall, h.collRec = true, false
		return
	}
	if h.collCall && !h.collRec {
		if c.st.Uncollected == nil {
			c.st.Uncollected = map[string]int64{}
		}
		c.st.Uncollected[name]++
	}
	h.collCall = false
}

// uncollectedWarning says that the process's collective calls without
// collective records have no wait states: without the records the
// communicator, root and sizes of the call are unknown (TAU records none),
// so wait at N×N, at barrier, early reduce and late broadcast cannot be
// told from the call's time, which stays MPI time.
func (c *conv) uncollectedWarning(process string) {
	if len(c.st.Uncollected) == 0 {
		return
	}
	names := make([]string, 0, len(c.st.Uncollected))
	var n int64
	for name, k := range c.st.Uncollected {
		names = append(names, fmt.Sprintf("%s %d", name, k))
		n += k
	}
	slices.Sort(names)
	who := "the archive"
	if c.a.Anchor.Creator != "" {
		who = strings.TrimSpace(strings.SplitN(c.a.Anchor.Creator, "\n", 2)[0])
	}
	c.st.Warnings = append(c.st.Warnings, fmt.Sprintf("%s: %d MPI collective calls (%s) hold no collective record (MpiCollectiveBegin/End, which %s does not write): "+
		"their communicator and root are unknown, so their wait states (wait at N×N, wait at barrier, early reduce, late broadcast) are not computed; their time is MPI time",
		process, n, strings.Join(names, ", "), who))
}

// ompTimersWarning says that the process's OpenMP regions come without
// OTF2's OpenMP records (ThreadFork/Join, ThreadTeamBegin/End, task
// records, OTF2 1.x's OmpFork): TAU's OMPT support records its OpenMP
// events as timers ("OpenMP_Parallel_Region …", "OpenMP_Task …"), so
// the parallel regions, teams, tasks and barriers are not known, the
// workers are threads of unknown type left out of the breakdown and POP,
// and the report's "no OpenMP" would otherwise read as a measurement.
func (c *conv) ompTimersWarning(process string) {
	if c.ompEnters == 0 || c.hasTeams() || c.legacy || c.st.Tasks > 0 {
		return
	}
	for _, f := range c.forks {
		if len(f) > 0 {
			return
		}
	}
	c.st.Warnings = append(c.st.Warnings, fmt.Sprintf("%s: %d Enter records of OpenMP regions, but no OpenMP event records (ThreadFork, ThreadTeamBegin, ThreadTaskCreate; TAU records OpenMP as timers): "+
		"its parallel regions, teams, tasks and OpenMP waits are not analysed, and its threads other than the first are left out of the breakdown and POP", process, c.ompEnters))
}

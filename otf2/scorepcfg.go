package otf2

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ptrace-dev/ptrace/trace"
)

// Score-P writes its measurement configuration, scorep.cfg, into the
// experiment directory beside traces.otf2. What it says about the MPI
// event groups recorded (SCOREP_MPI_ENABLE_GROUPS) changes what the
// archive can show, and nothing in the archive itself says so: a call of
// a group left out has no region, so its time is the calling code's work
// and it has no wait state, and without the group env MPI_Init and
// MPI_Finalize, which bound ptrace's default window, are not recorded.

// maxScorepCfg bounds the configuration read (Score-P 8.4 writes 2 KB).
const maxScorepCfg = 1 << 20

// mpiGroupsLeftOut are the MPI event groups whose absence changes the
// analysis, with what is missing then.
var mpiGroupsLeftOut = []struct{ group, what string }{
	{"p2p", "point-to-point calls (MPI_Send, MPI_Recv, MPI_Wait…)"},
	{"coll", "collectives (MPI_Barrier, MPI_Allreduce, MPI_Bcast…)"},
	{"env", "MPI_Init and MPI_Finalize"},
}

// scorepConfig adds a definition warning when the archive's scorep.cfg
// (beside its anchor; absent: nothing) restricts the MPI event groups so
// that calls the analysis needs were not recorded.
func (a *Archive) scorepConfig() {
	path := filepath.Join(filepath.Dir(a.Path), "scorep.cfg")
	f, err := trace.OpenRegular(path)
	if err != nil {
		if !os.IsNotExist(err) {
			a.Defs.warn("%s: %v", path, err)
		}
		return
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxScorepCfg))
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "SCOREP_MPI_ENABLE_GROUPS=")
		if !ok {
			continue
		}
		groups := map[string]bool{}
		for _, g := range strings.Split(v, ",") {
			groups[strings.ToLower(strings.Trim(strings.TrimSpace(g), `'"`))] = true
		}
		if groups["all"] || groups["default"] {
			return
		}
		var missing []string
		env := false
		for _, m := range mpiGroupsLeftOut {
			if !groups[m.group] {
				missing = append(missing, m.group+": "+m.what)
				env = env || m.group == "env"
			}
		}
		if len(missing) == 0 {
			return
		}
		msg := fmt.Sprintf("%s: SCOREP_MPI_ENABLE_GROUPS=%s: Score-P did not record the MPI event groups %s; "+
			"the time in those calls counts as the work of the code that made them, and they have no wait states",
			path, cfgValue(v), strings.Join(missing, "; "))
		if env {
			msg += "; without MPI_Init and MPI_Finalize the default window is the whole trace"
		}
		a.Defs.warn("%s", msg)
		return
	}
}

// maxCfgValue bounds the value a warning quotes from scorep.cfg (Score-P
// writes at most the 17 group names).
const maxCfgValue = 200

// cfgValue is a scorep.cfg value as a warning shows it: cut to maxCfgValue
// bytes, and Go-quoted when it holds what a terminal should not print (a
// file that is not Score-P's).
func cfgValue(v string) string {
	cut := len(v) > maxCfgValue
	if cut {
		v = v[:maxCfgValue]
	}
	if !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsPrint(r) }) {
		v = strconv.QuoteToGraphic(v)
	}
	if cut {
		v += "…"
	}
	return v
}

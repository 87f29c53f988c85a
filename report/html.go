package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ptrace-dev/ptrace/internal/htmlw"
)

// HTMLOptions tune the HTML report.
type HTMLOptions struct {
	// MaxRows bounds per-process tables and anomaly lists (default 256):
	// the page stays readable and small at thousands of ranks; the CSV
	// tables hold every row.
	MaxRows int
	// MaxHistograms bounds the per-construct duration plots (default 6,
	// the constructs with the largest share of task time).
	MaxHistograms int
}

// WriteHTML writes the report as one self-contained HTML page: inline CSS,
// inline SVG plots (svgplot), no script, no external resource, so it can
// be mailed or archived and opens offline.
func WriteHTML(w io.Writer, r *Report, o HTMLOptions) error {
	if o.MaxRows <= 0 {
		o.MaxRows = 256
	}
	if o.MaxHistograms <= 0 {
		o.MaxHistograms = 6
	}
	return writePage(w, buildPage(r, o))
}

type plotFig struct {
	ID  string
	SVG string
}

type effRow struct {
	Indent int
	Name   string
	Value  float64
	Style  string
}

type waitRow struct {
	Rank  int
	Cells []waitCell
}

type waitCell struct {
	Text  string
	Title string
	Style string
}

// waitHeat builds the heat map: each cell is a pattern's time on one
// process, shaded by its share of that process's MPI time.
func waitHeat(ws *WaitStates, maxRows int) (cols []string, rows []waitRow, more int) {
	cols = []string{"late sender", "late receiver", "wait at N×N", "wait at barrier", "late broadcast", "early reduce"}
	windows := ws.Windows()
	if windows {
		cols = append(cols, "wait at fence", "wait at window create", "wait at window free")
	}
	epochs := ws.Epochs()
	if epochs {
		cols = append(cols, "late post", "early wait")
	}
	locks := ws.Locks()
	if locks {
		cols = append(cols, "lock contention")
	}
	progress := ws.Progress()
	if progress {
		cols = append(cols, "wait for progress")
	}
	patterns := len(cols) // the wait-state columns, then transfer/other, caused and delay
	cols = append(cols, "transfer/other", "caused", "root-cause delay")
	procs := append([]WaitProcess(nil), ws.PerProcess...)
	sort.SliceStable(procs, func(i, j int) bool {
		return procs[i].WaitTimes.Waiting() > procs[j].WaitTimes.Waiting()
	})
	if len(procs) > maxRows {
		more = len(procs) - maxRows
		procs = procs[:maxRows]
	}
	for _, p := range procs {
		row := waitRow{Rank: p.Rank}
		vals := []int64{p.LateSenderNS, p.LateReceiverNS, p.WaitNxNNS, p.WaitBarrierNS, p.LateBroadcastNS, p.EarlyReduceNS}
		if windows {
			vals = append(vals, p.WaitAtFenceNS, p.WaitAtWinCreateNS, p.WaitAtWinFreeNS)
		}
		if epochs {
			vals = append(vals, p.LatePostNS, p.EarlyWaitNS)
		}
		if locks {
			vals = append(vals, p.LockContentionNS)
		}
		if progress {
			vals = append(vals, p.WaitForProgressNS)
		}
		vals = append(vals, p.OtherNS, p.CausedNS, p.DelayNS)
		for i, v := range vals {
			c := waitCell{Text: Dur(v)}
			if p.MPINS > 0 && i <= patterns {
				f := math.Min(1, float64(v)/float64(p.MPINS))
				c.Title = Pct(f) + " of its MPI time"
				if v > 0 && i < patterns {
					c.Style = fmt.Sprintf("background-color: hsl(0, 75%%, %.0f%%)", 96-36*f)
				}
			}
			row.Cells = append(row.Cells, c)
		}
		rows = append(rows, row)
	}
	return cols, rows, more
}

// ompPage is the OpenMP wait states as the page shows them.
type ompPage struct {
	Title       string
	WaitingNS   int64
	Places      []NamedNS
	Reasons     []NamedNS
	Constructs  []OMPWaitConstruct
	More        int
	Mutexes     []OMPMutex
	MutexWaitNS int64
}

type page struct {
	OMPWaits   *ompPage
	R          *Report
	Origin     int64
	Warnings   []string
	Breakdown  *plotFig
	POPRows    []effRow
	POPProcs   []POPProcess
	POPMore    int
	Ready      *plotFig
	Path       *plotFig
	Histograms []plotFig
	Anomalies  []Anomaly
	AnomMore   int64
	// WaitHeat is the wait states' patterns × processes heat map (rows
	// are processes, most waiting first, at most MaxRows).
	WaitCols []string
	WaitHeat []waitRow
	WaitMore int
	Class    string
	Interp   string // the run's interpretation when it says more than Class
	// NoThread: no thread's time is accounted (see the text report), so
	// the breakdown, POP and critical path sections are left out.
	NoThread bool
	// POPOpenMP: the per-process POP table has the OpenMP columns, 1 by
	// construction and zeros for a pure MPI program (the efficiency table
	// above leaves them out too).
	POPOpenMP bool
}

func buildPage(r *Report, o HTMLOptions) *page {
	pg := &page{R: r, Origin: r.Trace.FirstNS}
	if b := r.Breakdown; b != nil && b.ThreadTimeNS == 0 {
		// Zeros and efficiencies of nothing would read as a perfect run.
		q := *r
		q.Breakdown, q.POP, q.CriticalPath = nil, nil, nil
		r, pg.R, pg.NoThread = &q, &q, true
	}
	if r.Trace.Warnings != nil {
		pg.Warnings = r.Trace.Warnings.First
	}
	if b := r.Breakdown; b != nil {
		pg.Class = TallentReading[b.Class]
		if !strings.Contains(pg.Class, b.Interpretation) {
			pg.Interp = b.Interpretation
		}
		if len(b.PerProcess) > 0 {
			pg.Breakdown = &plotFig{ID: "plot-breakdown", SVG: svgOf(breakdownPlot(b), plotWide, plotTall)}
		}
	}
	if pop := r.POP; pop != nil {
		pg.POPOpenMP = !r.Trace.NoOpenMP || r.Trace.UserThreads
		for _, row := range popRows(pop, pg.POPOpenMP) {
			pg.POPRows = append(pg.POPRows, effRow{Indent: row.Depth, Name: row.Name, Value: row.Value, Style: effStyle(row.Value)})
		}
		pg.POPProcs = pop.PerProcess
		if len(pg.POPProcs) > o.MaxRows {
			pg.POPMore = len(pg.POPProcs) - o.MaxRows
			pg.POPProcs = pg.POPProcs[:o.MaxRows]
		}
	}
	if ts := r.Tasks; ts != nil && ts.Count > 0 && ts.ReadySeries != nil && len(ts.ReadySeries.Values) > 0 {
		pg.Ready = &plotFig{ID: "plot-ready", SVG: svgOf(readyPlot(ts.ReadySeries, pg.Origin), plotWide, plotTall)}
	}
	if cp := r.CriticalPath; cp != nil && len(cp.Segments) > 0 {
		ranks := map[int]bool{}
		for _, s := range cp.Segments {
			ranks[s.Rank] = true
		}
		h := math.Min(600, 120+18*float64(len(ranks)))
		pg.Path = &plotFig{ID: "plot-critical-path", SVG: svgOf(pathPlot(cp, pg.Origin), plotWide, h)}
	}
	if ws := r.WaitStates; ws != nil && (ws.Calls > 0 || ws.MPINS > 0) {
		pg.WaitCols, pg.WaitHeat, pg.WaitMore = waitHeat(ws, o.MaxRows)
	}
	if ws := r.WaitStates; ws != nil && ws.OpenMP != nil {
		om := ws.OpenMP
		pg.OMPWaits = &ompPage{Title: waitsTitle(&r.Trace), WaitingNS: om.WaitingNS, Places: OMPPlaces(&om.OMPWaitTimes), Reasons: OMPReasons(&om.OMPWaitTimes), Constructs: om.Constructs,
			Mutexes: om.Mutexes, MutexWaitNS: om.MutexWaitNS}
		if len(pg.OMPWaits.Mutexes) > o.MaxRows {
			pg.OMPWaits.Mutexes = pg.OMPWaits.Mutexes[:o.MaxRows]
		}
		if len(om.Constructs) > o.MaxRows {
			pg.OMPWaits.Constructs, pg.OMPWaits.More = om.Constructs[:o.MaxRows], len(om.Constructs)-o.MaxRows
		}
	}
	var anomalies []Anomaly
	if a := r.Anomalies; a != nil {
		anomalies = a.Tasks
		pg.Anomalies = a.Tasks
		if len(pg.Anomalies) > o.MaxRows {
			pg.Anomalies = pg.Anomalies[:o.MaxRows]
		}
		pg.AnomMore = a.Found - int64(len(pg.Anomalies))
	}
	if ts := r.Tasks; ts != nil {
		cons := slices.Clone(ts.Constructs)
		slices.SortStableFunc(cons, func(a, b Construct) int { return cmp.Compare(b.Share, a.Share) })
		for i, c := range cons {
			if i == o.MaxHistograms {
				break
			}
			var mine []Anomaly
			for _, a := range anomalies {
				if a.Construct == c.Name {
					mine = append(mine, a)
				}
			}
			if p := histPlot(c, mine); p != nil {
				pg.Histograms = append(pg.Histograms, plotFig{ID: fmt.Sprintf("plot-hist-%d", i), SVG: svgOf(p, histWide, histTall)})
			}
		}
	}
	return pg
}

// effStyle colours an efficiency cell from red (≤ 0.5) through yellow to
// green (1), POP's reading of good (≥ 0.8) and poor (< 0.6) values.
func effStyle(v float64) string {
	f := math.Max(0, math.Min(1, (v-0.5)/0.5))
	return fmt.Sprintf("background-color: hsl(%.0f, 70%%, 78%%)", 120*f)
}

// codeHTML renders a code location shortened (ShortCode) with the whole
// name as its tooltip.
func codeHTML(s string) string {
	short := ShortCode(s)
	if short == s {
		return htmlw.Escape(s)
	}
	return `<span title="` + htmlw.Escape(s) + `">` + htmlw.Escape(short) + `</span>`
}

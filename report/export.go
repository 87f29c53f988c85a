package report

import (
	"github.com/ptrace-dev/ptrace/report/svgplot"
)

// The helpers below let other renderers (ptrace compare) draw plots and
// colour efficiencies exactly as the analysis report does.

// SVG renders p as an inline SVG element of w × h points for an HTML page.
func SVG(p *svgplot.Plot, w, h float64) string { return svgOf(p, w, h) }

// EffStyle is the POP colouring of an efficiency cell: red (≤ 0.5) through
// yellow to green (1).
func EffStyle(v float64) string { return effStyle(v) }

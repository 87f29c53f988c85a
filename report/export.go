package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"

	"github.com/ptrace-dev/ptrace/report/svgplot"
)

// The helpers below let other renderers (ptrace compare) draw plots and
// colour efficiencies exactly as the analysis report does.

// SVG renders p as an inline SVG element of w × h points for an HTML page.
func SVG(p *svgplot.Plot, w, h float64) template.HTML { return svgOf(p, w, h) }

// EffStyle is the POP colouring of an efficiency cell: red (≤ 0.5) through
// yellow to green (1).
func EffStyle(v float64) template.CSS { return effStyle(v) }

// ReadJSON reads a report written by WriteJSON (analyze --json). It
// rejects documents of another schema, so a stray JSON file is named as
// such rather than compared as an empty report.
func ReadJSON(r io.Reader) (*Report, error) {
	var rep Report
	dec := json.NewDecoder(r)
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("not a report JSON: %w", err)
	}
	if rep.Schema != SchemaVersion {
		return nil, fmt.Errorf("not a ptrace report (schema %q, want %q)", rep.Schema, SchemaVersion)
	}
	return &rep, nil
}

package gen

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
)

// ReadExpected reads an expected.json.
func ReadExpected(path string) (Expected, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var e Expected
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

// Compare checks a report (its JSON) against expected values: every value
// in e must be present in the report and equal, within the tolerance given
// for its path (absolute; paths inside arrays omit the index). Integers
// compare exactly unless a tolerance says otherwise. It returns one line
// per mismatch, empty when the report matches.
func Compare(reportJSON []byte, e Expected) ([]string, error) {
	var rep map[string]any
	dec := json.NewDecoder(strings.NewReader(string(reportJSON)))
	dec.UseNumber()
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	exp, err := normalize(e)
	if err != nil {
		return nil, err
	}
	tol := map[string]float64{}
	if t, ok := exp["tolerance"].(map[string]any); ok {
		for k, v := range t {
			if m, ok := v.(map[string]any); ok {
				if a, ok := m["abs"].(json.Number); ok {
					tol[k], _ = a.Float64()
				}
			}
		}
	}
	var diffs []string
	keys := sortedKeys(exp)
	for _, k := range keys {
		if k == "tolerance" || k == "schema" {
			continue
		}
		compareValue(k, k, exp[k], rep[k], tol, &diffs)
	}
	return diffs, nil
}

// normalize round-trips expected values through JSON so numbers are
// json.Number like the report's.
func normalize(e Expected) (map[string]any, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	return m, dec.Decode(&m)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func compareValue(path, tolPath string, want, got any, tol map[string]float64, diffs *[]string) {
	if got == nil {
		*diffs = append(*diffs, fmt.Sprintf("%s: missing in the report (want %v)", path, want))
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: want an object, report has %v", path, got))
			return
		}
		for _, k := range sortedKeys(w) {
			compareValue(path+"."+k, tolPath+"."+k, w[k], g[k], tol, diffs)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			*diffs = append(*diffs, fmt.Sprintf("%s: want %d elements, report has %v", path, len(w), lenOf(got)))
			return
		}
		for i := range w {
			compareValue(fmt.Sprintf("%s[%d]", path, i), tolPath, w[i], g[i], tol, diffs)
		}
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: want %v, report has %v", path, w, got))
			return
		}
		wf, _ := w.Float64()
		gf, _ := g.Float64()
		t, has := tol[tolPath]
		wi, errW := w.Int64()
		gi, errG := g.Int64()
		switch {
		case !has && errW == nil && errG == nil:
			if wi != gi {
				*diffs = append(*diffs, fmt.Sprintf("%s: want %d, got %d (diff %d)", path, wi, gi, gi-wi))
			}
		case !has:
			if math.Abs(wf-gf) > 1e-12*math.Max(1, math.Abs(wf)) {
				*diffs = append(*diffs, fmt.Sprintf("%s: want %v, got %v", path, wf, gf))
			}
		default:
			if math.Abs(wf-gf) > t {
				*diffs = append(*diffs, fmt.Sprintf("%s: want %v ± %g, got %v", path, wf, t, gf))
			}
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			*diffs = append(*diffs, fmt.Sprintf("%s: want %v, got %v", path, want, got))
		}
	}
}

func lenOf(v any) string {
	if a, ok := v.([]any); ok {
		return fmt.Sprintf("%d elements", len(a))
	}
	return fmt.Sprintf("%v", v)
}

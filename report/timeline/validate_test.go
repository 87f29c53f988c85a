package timeline

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// The rules of the Trace Event Format that the export must keep, checked on
// the parsed output: known phases with their required fields, B/E nesting
// per track, monotonic timestamps per track in file order, flow ends bound
// to a slice and paired s → f with equal ids (and cat), the start not after
// the finish.

type tev struct {
	Ph   string          `json:"ph"`
	Pid  *int            `json:"pid"`
	Tid  *int            `json:"tid"`
	Ts   *float64        `json:"ts"`
	Dur  *float64        `json:"dur"`
	Name *string         `json:"name"`
	Cat  string          `json:"cat"`
	ID   *json.Number    `json:"id"`
	Bp   string          `json:"bp"`
	Args json.RawMessage `json:"args"`
}

type track struct{ pid, tid int }

type flowEnd struct {
	ts  float64
	cat string
}

type checked struct {
	events   []tev
	byName   map[string]int // B and X events by name
	flows    map[string][2]*flowEnd
	problems []string
	pids     map[int]bool
	maxTS    float64
	minTS    float64
	slices   map[track][][2]float64 // completed B/E and X intervals per track
}

func (c *checked) bad(format string, args ...any) {
	if len(c.problems) < 20 {
		c.problems = append(c.problems, fmt.Sprintf(format, args...))
	}
}

// check validates data; with dangling, flows with one end only are allowed
// (exports cut by window or ranks).
func check(data []byte, dangling bool) *checked {
	c := &checked{byName: map[string]int{}, flows: map[string][2]*flowEnd{}, pids: map[int]bool{}, slices: map[track][][2]float64{},
		minTS: math.Inf(1), maxTS: math.Inf(-1)}
	var doc struct {
		TraceEvents []tev  `json:"traceEvents"`
		Unit        string `json:"displayTimeUnit"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		c.bad("not JSON: %v", err)
		return c
	}
	if doc.Unit != "" && doc.Unit != "ms" && doc.Unit != "ns" {
		c.bad("displayTimeUnit %q", doc.Unit)
	}
	c.events = doc.TraceEvents
	type state struct {
		last   float64
		stack  []float64 // begin times
		xEnd   float64   // end of the last X slice
		xStart float64
	}
	tracks := map[track]*state{}
	for i, e := range doc.TraceEvents {
		if e.Pid == nil || e.Tid == nil {
			c.bad("event %d (%s): no pid or tid", i, e.Ph)
			continue
		}
		tr := track{*e.Pid, *e.Tid}
		c.pids[tr.pid] = true
		switch e.Ph {
		case "B", "E", "X", "s", "t", "f", "i", "M":
		default:
			c.bad("event %d: unknown phase %q", i, e.Ph)
			continue
		}
		if e.Ph != "E" && e.Name == nil {
			c.bad("event %d (%s): no name", i, e.Ph)
			continue
		}
		if e.Ph == "M" {
			var a map[string]any
			if json.Unmarshal(e.Args, &a) != nil || (a["name"] == nil && a["sort_index"] == nil) {
				c.bad("metadata event %d: args %s", i, e.Args)
			}
			continue
		}
		if e.Ts == nil {
			c.bad("event %d (%s): no ts", i, e.Ph)
			continue
		}
		ts := *e.Ts
		c.minTS, c.maxTS = math.Min(c.minTS, ts), math.Max(c.maxTS, ts)
		st := tracks[tr]
		if st == nil {
			st = &state{last: math.Inf(-1), xEnd: math.Inf(-1)}
			tracks[tr] = st
		}
		if ts < st.last {
			c.bad("event %d (%s %v) on track %v: ts %.3f before the previous %.3f", i, e.Ph, strOr(e.Name), tr, ts, st.last)
		}
		st.last = ts
		switch e.Ph {
		case "B":
			st.stack = append(st.stack, ts)
			c.byName[*e.Name]++
		case "E":
			if len(st.stack) == 0 {
				c.bad("event %d: E without B on track %v", i, tr)
				continue
			}
			b := st.stack[len(st.stack)-1]
			st.stack = st.stack[:len(st.stack)-1]
			c.slices[tr] = append(c.slices[tr], [2]float64{b, ts})
		case "X":
			if e.Dur == nil || *e.Dur < 0 {
				c.bad("event %d: X without a non-negative dur", i)
				continue
			}
			if ts < st.xEnd {
				c.bad("event %d: X overlaps the previous X on track %v", i, tr)
			}
			st.xStart, st.xEnd = ts, ts+*e.Dur
			c.byName[*e.Name]++
			c.slices[tr] = append(c.slices[tr], [2]float64{ts, ts + *e.Dur})
			c.maxTS = math.Max(c.maxTS, ts+*e.Dur)
		case "s", "f", "t":
			if e.ID == nil {
				c.bad("flow event %d: no id", i)
				continue
			}
			inSlice := len(st.stack) > 0 || (ts >= st.xStart && ts <= st.xEnd)
			if !inSlice {
				c.bad("flow event %d (%s %s) on track %v at %.3f: no enclosing slice to bind to", i, e.Ph, e.Cat, tr, ts)
			}
			if e.Ph == "f" && e.Bp != "e" {
				c.bad("flow end %d: bp %q, want \"e\" (bind to the enclosing slice)", i, e.Bp)
			}
			if e.Ph == "t" {
				continue
			}
			k := e.Cat + "/" + e.ID.String()
			pair := c.flows[k]
			slot := 0
			if e.Ph == "f" {
				slot = 1
			}
			if pair[slot] != nil {
				c.bad("flow %s: two %s events", k, e.Ph)
			} else {
				pair[slot] = &flowEnd{ts: ts, cat: e.Cat}
			}
			c.flows[k] = pair
		}
	}
	for tr, st := range tracks {
		if len(st.stack) > 0 {
			c.bad("track %v: %d slices never ended", tr, len(st.stack))
		}
	}
	keys := make([]string, 0, len(c.flows))
	for k := range c.flows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := c.flows[k]
		if p[0] == nil || p[1] == nil {
			if !dangling {
				c.bad("flow %s has only one end", k)
			}
		}
	}
	return c
}

func strOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// pairs returns the complete flows of a category.
func (c *checked) pairs(cat string) [][2]*flowEnd {
	var out [][2]*flowEnd
	for _, p := range c.flows {
		if p[0] != nil && p[1] != nil && p[0].cat == cat {
			out = append(out, p)
		}
	}
	return out
}

func jsonUnmarshalString(b []byte, s *string) error { return json.Unmarshal(b, s) }

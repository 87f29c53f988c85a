package clocksync

import (
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// A pair of offset measurements implying more than 1 % drift is not used
// for a slope; it is said to be wrong only when the offsets differ by
// more than their errors (half each measurement's best round trip): within
// them, no drift shows at all, as when a short run's ping-pongs were
// delayed under load.
func TestOffsetModelImplausibleDrift(t *testing.T) {
	for _, c := range []struct {
		name             string
		fin, errI, errF  int64 // finalize offset, errors of both
		source, noteWant string
	}{
		{"drift", 500, 0, 0, SourceInitFinalize, ""},
		{"beyond the errors", 5_000_000, 1_000_000, 1_000_000, SourceInit, "implies a drift of"},
		{"within the errors", 1_500_000, 1_000_000, 1_000_000, SourceInit, ""},
		{"no errors given", 1_500_000, 0, 0, SourceInit, "implies a drift of"},
	} {
		// 100 ms between the measurements: 1.5 ms is 15 000 ppm.
		m := NewOffsetModel(3, []trace.ClockOffset{
			{When: "init", LocalNS: 1_000_000, OffsetNS: 0, ErrorNS: c.errI},
			{When: "finalize", LocalNS: 101_000_000, OffsetNS: c.fin, ErrorNS: c.errF},
		}, false)
		if m.source != c.source || (c.noteWant == "") != (m.note == "") || !strings.Contains(m.note, c.noteWant) {
			t.Errorf("%s: source %q, note %q; want %q, a note with %q", c.name, m.source, m.note, c.source, c.noteWant)
		}
		if c.source == SourceInit && m.Apply(50_000_000) != 50_000_000 {
			t.Errorf("%s: the init offset alone gives %d at 50 ms, want 50 ms", c.name, m.Apply(50_000_000))
		}
	}
}

// Two measurements that agree within their errors show no drift, whatever
// slope a line through them would have: the closer one's offset holds for
// the whole run. The pair is a pure MPI run's on one node under load (its
// init ping-pongs all delayed): interpolated, rank 1's events moved by up
// to 1.6 ms and its waits by milliseconds; constant, they stay within the
// finalize measurement's 3 µs of the shared clock.
func TestOffsetModelWithinErrors(t *testing.T) {
	init := trace.ClockOffset{When: "init", LocalNS: 72_894_589_909_492, OffsetNS: 1_588_718, ErrorNS: 1_847_723}
	fin := trace.ClockOffset{When: "finalize", LocalNS: 72_895_208_027_120, OffsetNS: -2_229, ErrorNS: 3_440}
	for _, c := range []struct {
		name    string
		offsets []trace.ClockOffset
		source  string
		off     int64 // the offset wanted everywhere
	}{
		{"finalize closer", []trace.ClockOffset{init, fin}, SourceFinalize, -2_229},
		{"init closer", []trace.ClockOffset{{When: "init", LocalNS: init.LocalNS, OffsetNS: 40, ErrorNS: 500}, {When: "finalize", LocalNS: fin.LocalNS, OffsetNS: 900, ErrorNS: 600}}, SourceInit, 40},
	} {
		m := NewOffsetModel(1, c.offsets, false)
		if m.source != c.source || m.note != "" {
			t.Errorf("%s: source %q, note %q; want %q and none", c.name, m.source, m.note, c.source)
		}
		for _, local := range []int64{init.LocalNS - 1e9, init.LocalNS, (init.LocalNS + fin.LocalNS) / 2, fin.LocalNS, fin.LocalNS + 1e9} {
			if got := m.Apply(local) - local; got != c.off {
				t.Errorf("%s: offset %d at local %d, want %d", c.name, got, local, c.off)
			}
		}
	}
	// Beyond the errors, the drift is real: interpolated.
	far := fin
	far.OffsetNS = init.OffsetNS + 2*(init.ErrorNS+fin.ErrorNS)
	if m := NewOffsetModel(1, []trace.ClockOffset{init, far}, false); m.source != SourceInitFinalize {
		t.Errorf("offsets %d apart with errors %d: source %q, want %q", far.OffsetNS-init.OffsetNS, init.ErrorNS+fin.ErrorNS, m.source, SourceInitFinalize)
	}
}

// A process reading rank 0's clock (one host's CLOCK_MONOTONIC) whose
// measurements all hold 0 within their errors has offset 0: a loaded
// node's ping-pongs measured −1.95 ms ± 1.99 ms at init and finalize alike
// (a pure MPI run of two ranks whose waits moved by 8–16 ms that way). A
// measurement beyond its error from 0, another host or another clock
// source keeps the measured model.
func TestOffsetModelSameClock(t *testing.T) {
	delayed := []trace.ClockOffset{
		{When: "init", LocalNS: 73_461_954_024_905, OffsetNS: -1_953_059, ErrorNS: 1_995_903},
		{When: "finalize", LocalNS: 73_462_578_027_546, OffsetNS: -1_968_522, ErrorNS: 1_993_740},
	}
	if m := NewOffsetModel(1, delayed, true); m.source != SourceSameClock || m.Apply(5) != 5 {
		t.Errorf("one clock, measurements holding 0: source %q, 5 ns maps to %d", m.source, m.Apply(5))
	}
	if m := NewOffsetModel(1, delayed, false); m.source == SourceSameClock || m.Apply(0) == 0 {
		t.Errorf("two clocks: source %q, offset %d; want the measured one", m.source, m.Apply(0))
	}
	apart := []trace.ClockOffset{{When: "init", LocalNS: 10, OffsetNS: 5_000_000, ErrorNS: 2_000}}
	if m := NewOffsetModel(1, apart, true); m.source != SourceInit || m.Apply(0) != 5_000_000 {
		t.Errorf("a host name two nodes share: source %q, offset %d; want init's 5 ms", m.source, m.Apply(0))
	}
	noErr := []trace.ClockOffset{{When: "init", LocalNS: 10, OffsetNS: 0, ErrorNS: 0}}
	if m := NewOffsetModel(1, noErr, true); m.source != SourceInit {
		t.Errorf("a measurement without its error: source %q, want %q", m.source, SourceInit)
	}
	h := func(host, src string) *trace.Header { return &trace.Header{Host: host, ClockSrc: src} }
	for _, c := range []struct {
		a, b *trace.Header
		same bool
	}{
		{h("n1", "CLOCK_MONOTONIC"), h("n1", "CLOCK_MONOTONIC"), true},
		{h("n1", "CLOCK_MONOTONIC"), h("n2", "CLOCK_MONOTONIC"), false},
		{h("n1", "synthetic"), h("n1", "synthetic"), false},
		{h("", "CLOCK_MONOTONIC"), h("", "CLOCK_MONOTONIC"), false},
	} {
		if got := SameClock(c.a, c.b); got != c.same || (ClockKey(c.a) >= 0 && ClockKey(c.a) == ClockKey(c.b)) != c.same {
			t.Errorf("%+v and %+v: SameClock %v, keys %d and %d; want %v", *c.a, *c.b, got, ClockKey(c.a), ClockKey(c.b), c.same)
		}
	}
}

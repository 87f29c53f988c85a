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
		})
		if m.source != c.source || (c.noteWant == "") != (m.note == "") || !strings.Contains(m.note, c.noteWant) {
			t.Errorf("%s: source %q, note %q; want %q, a note with %q", c.name, m.source, m.note, c.source, c.noteWant)
		}
		if c.source == SourceInit && m.Apply(50_000_000) != 50_000_000 {
			t.Errorf("%s: the init offset alone gives %d at 50 ms, want 50 ms", c.name, m.Apply(50_000_000))
		}
	}
}

package trace

import (
	"bytes"
	"runtime"
	"testing"
)

// A process of a few hundred bytes loaded from memory (a converted OTF2
// process, a fuzz input) was given a 1 MiB read buffer and a 4 MiB arena,
// and written through a 1 MiB buffer: 5 MiB a load, which made FuzzLoad's
// executions slow and its minimisation stall (issue 42, item 4). A reader
// that knows its length sizes them like a file of that size.
func TestSmallLoadAllocatesLittle(t *testing.T) {
	b := tinyTrace(t)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, err := LoadProcessReader(bytes.NewReader(b), "tiny", LoadOptions{}); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := (&Rows{Header: Header{NRanks: 1}}).Write(&buf, 0); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 10; per > 256<<10 {
		t.Errorf("%d KB allocated to load and write a process of %d bytes", per>>10, len(b))
	}
}

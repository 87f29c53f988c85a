package otf2

import (
	"bytes"
	"os"
	"testing"
)

// seeds adds the committed archive's files of the given kind to f's corpus
// (on top of the committed testdata/fuzz corpus).
func seeds(f *testing.F, files ...string) {
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzEvents: the event decoder never panics, loops or allocates beyond its
// chunk on arbitrary bytes; it returns records or an error.
func FuzzEvents(f *testing.F) {
	seeds(f, "testdata/halo/traces/0.evt", "testdata/halo/traces/1.evt", "testdata/halo/traces/2.evt")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, chunk := range []uint64{256, 4096} {
			r, err := NewEventReader(bytes.NewReader(data), "fuzz.evt", chunk)
			if err != nil {
				t.Fatal(err)
			}
			var e Event
			for n := 0; ; n++ {
				ok, err := r.Next(&e)
				if err != nil || !ok {
					break
				}
				if n > len(data) {
					t.Fatalf("%d events from %d bytes", n, len(data))
				}
			}
		}
	})
}

// FuzzDefinitions: the global and local definition decoders never panic or
// allocate beyond the data's size on arbitrary bytes.
func FuzzDefinitions(f *testing.F) {
	seeds(f, "testdata/halo/traces.def", "testdata/halo/traces/0.def", "testdata/halo/traces/2.def")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, chunk := range []uint64{256, 4 << 20} {
			decodeGlobalDefs(bytes.NewReader(data), "fuzz.def", chunk, 64<<20)
			decodeLocalDefs(bytes.NewReader(data), "fuzz.def", chunk)
		}
	})
}

// FuzzAnchor: the anchor-file parser on arbitrary bytes.
func FuzzAnchor(f *testing.F) {
	seeds(f, "testdata/halo/traces.otf2")
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeAnchor(data, "fuzz.otf2")
	})
}

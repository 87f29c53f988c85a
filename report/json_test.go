package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestWriteJSONAsEncoder: WriteJSON writes what json.Encoder with
// two-space indentation writes, byte for byte (reports compared across
// versions are compared so), on the full sample report with strings that
// need escaping (HTML characters, quotes, control characters, non-ASCII).
func TestWriteJSONAsEncoder(t *testing.T) {
	r := sampleReport()
	r.Trace.Dir = "/tmp/<a & b>/\"quoted\"\t\u00e9\u2028"
	var got, want bytes.Buffer
	if err := WriteJSON(&got, r); err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("WriteJSON differs from json.Encoder:\n%s\nwant:\n%s", got.Bytes(), want.Bytes())
	}
	if want.Len() < 1000 {
		t.Fatalf("the sample report is %d bytes: not the full report", want.Len())
	}
}

// largestWrite records the largest Write it was given.
type largestWrite struct {
	bytes.Buffer
	max int
}

func (w *largestWrite) Write(p []byte) (int, error) {
	w.max = max(w.max, len(p))
	return w.Buffer.Write(p)
}

// WriteJSON does not hold a report's indented text whole: with it (and
// Marshal's copy of its buffer), writing the reports took the process
// megabytes above a --memory-limit its analysis had fitted in. A report
// of 2 MB reaches its writer in blocks, the same bytes as Encoder's.
func TestWriteJSONInBlocks(t *testing.T) {
	r := sampleReport()
	for i := range 40000 {
		r.Trace.Command = append(r.Trace.Command, fmt.Sprintf("argument-%d-<%s>", i, strings.Repeat("x", 20)))
	}
	var got largestWrite
	if err := WriteJSON(&got, r); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("WriteJSON differs from json.Encoder")
	}
	if want.Len() < 2<<20 || got.max > want.Len()/8 {
		t.Errorf("a %d-byte report reached its writer in writes of up to %d bytes, want an eighth of it at most", want.Len(), got.max)
	}
}

// FuzzIndentCompact: on any valid JSON, compacted as json.Marshal would
// leave it, the indenter writes what json.Indent writes, in one block or
// in many.
func FuzzIndentCompact(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":[]}`, `[{},[],{"":{}}]`, `{"k\"{[,:":"v\\\"]}"}`,
		`[1,-2.5e10,true,false,null,"x"]`, `{"a":{"b":{"c":[1,[2,[3]]]}}}`,
		`"\u2028<&>"`, `0`, ` { "a" : [ 1 , 2 ] } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := (&indenter{}).indent(nil, compact.Bytes()); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("indent(%q) =\n%s\nwant\n%s", compact.Bytes(), got, want.Bytes())
		}
		// WriteJSON indents a block at a time: a block may end anywhere,
		// in a string or an escape too.
		for _, k := range []int{1, 2, 3, 7} {
			var s indenter
			var got []byte
			for b := compact.Bytes(); len(b) > 0; b = b[min(k, len(b)):] {
				got = s.indent(got, b[:min(k, len(b))])
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("indented in blocks of %d bytes, %q =\n%s\nwant\n%s", k, compact.Bytes(), got, want.Bytes())
			}
		}
	})
}

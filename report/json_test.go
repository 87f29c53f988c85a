package report

import (
	"bytes"
	"encoding/json"
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

// FuzzIndentCompact: on any valid JSON, compacted as json.Marshal would
// leave it, indentCompact writes what json.Indent writes.
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
		if got := indentCompact(nil, compact.Bytes()); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("indentCompact(%q) =\n%s\nwant\n%s", compact.Bytes(), got, want.Bytes())
		}
	})
}

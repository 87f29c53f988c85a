package htmlw

import (
	"bytes"
	"html/template"
	"math/rand/v2"
	"testing"
)

// E escapes as html/template escapes a string in text, a quoted attribute
// and RCDATA; Escape is html/template's HTMLEscapeString. Both are checked
// against html/template on strings of every byte the escapers touch, of
// invalid UTF-8, of the replacement character's neighbours and of what
// html/template's other escapers treat apart (U+2028, noncharacters, the
// characters of an unquoted attribute).
func TestEscapeAsTemplate(t *testing.T) {
	tm := template.Must(template.New("").Parse(`<title>{{.}}</title><p title="{{.}}">{{.}}</p>`))
	alphabet := []string{"a", "\x00", `"`, "&", "'", "+", "<", ">", "é", "\xff", "\xc3", "\uFFFD", "&amp;", " ", "\u2028", "\uFDD0", "\uFFFE", "`", "=", "\t"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var s string
		for range rng.IntN(12) {
			s += alphabet[rng.IntN(len(alphabet))]
		}
		var want, got bytes.Buffer
		if err := tm.Execute(&want, s); err != nil {
			t.Fatal(err)
		}
		p := New(&got)
		p.S("<title>")
		p.E(s)
		p.S(`</title><p title="`)
		p.E(s)
		p.S(`">`)
		p.E(s)
		p.S("</p>")
		if err := p.Flush(); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("%q: got %q, want %q", s, got.String(), want.String())
		}
		if got, want := Escape(s), template.HTMLEscapeString(s); got != want {
			t.Fatalf("Escape(%q) = %q, want %q", s, got, want)
		}
	}
}

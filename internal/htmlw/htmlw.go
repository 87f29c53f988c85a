// Package htmlw writes the HTML pages of analyze and compare as
// html/template escaped them, without html/template: executing a template
// reaches reflect's MethodByName, after which the linker keeps every
// exported method of every type the program converts to an interface
// (2.7 MB of ptrace's 17 MB binary), and on a kernel that maps the binary's
// page-cache folios whole every run holds those pages.
package htmlw

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Writer writes a page: literal markup as it is, values escaped. The first
// write error is kept and returned by Flush, as template.Execute returned it.
type Writer struct {
	w *bufio.Writer
}

// New returns a Writer over w.
func New(w io.Writer) *Writer { return &Writer{w: bufio.NewWriter(w)} }

// S writes s as it is: the page's own markup, or HTML already escaped.
func (p *Writer) S(s string) { p.w.WriteString(s) }

// E writes s escaped as html/template escapes a plain string in text, in a
// quoted attribute and in RCDATA (<title>): NUL, ", &, ', +, < and >.
func (p *Writer) E(s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var r string
		switch s[i] {
		case 0:
			r = "\uFFFD"
		case '"':
			r = "&#34;"
		case '&':
			r = "&amp;"
		case '\'':
			r = "&#39;"
		case '+':
			r = "&#43;"
		case '<':
			r = "&lt;"
		case '>':
			r = "&gt;"
		default:
			continue
		}
		p.w.WriteString(s[last:i])
		p.w.WriteString(r)
		last = i + 1
	}
	p.w.WriteString(s[last:])
}

// I writes an integer as a template prints it.
func (p *Writer) I(v int64) { p.w.WriteString(strconv.FormatInt(v, 10)) }

// F writes a float as a template prints it (fmt's %v), escaped: "1e+06"
// and "+Inf" carry a '+'.
func (p *Writer) F(v float64) { p.E(fmt.Sprint(v)) }

// Flush writes what is buffered and returns the first write error.
func (p *Writer) Flush() error { return p.w.Flush() }

// Escape is text/template's HTMLEscapeString (which html/template
// re-exports): NUL, ", ', &, < and >, but not '+'.
func Escape(s string) string {
	if !strings.ContainsAny(s, "\x00\"'&<>") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 0:
			b.WriteString("\uFFFD")
		case '"':
			b.WriteString("&#34;")
		case '\'':
			b.WriteString("&#39;")
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

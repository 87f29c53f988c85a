package report

import (
	"encoding/json"
	"io"
)

// WriteJSON writes r as indented JSON, ended by a newline (as
// json.Encoder with two-space indentation writes it). Field order follows
// the schema types, so equal reports are equal byte for byte.
//
// The report is marshalled compact, then indented by an indenter on its
// way to w: json.Indent runs its validating scanner over every byte, 5.6
// ms of the 9.7 ms WriteJSON took on a report listing 10 000 path
// segments (1.2 MB compact, 1.9 MB indented); Marshal's output is valid
// already. The indented text is not held whole: with Marshal's copy of
// its buffer and an indented copy of that, writing a 1.8 MB report took
// the process 5 MB above its analysis's peak, past a --memory-limit the
// analysis fitted in (docs/PERFORMANCE.md, forty-third round).
func WriteJSON(w io.Writer, r *Report) error {
	iw := &indentWriter{w: w}
	// An Encoder writes its buffer to iw as it is, where Marshal returns
	// a copy of it.
	return json.NewEncoder(iw).Encode(r)
}

// indentWriter indents the compact JSON written to it into w, a block at
// a time.
type indentWriter struct {
	w   io.Writer
	s   indenter
	buf []byte
}

// indentBlock is how much compact JSON indentWriter indents before it
// writes.
const indentBlock = 32 << 10

func (iw *indentWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := min(len(p)-n, indentBlock)
		iw.buf = iw.s.indent(iw.buf[:0], p[n:n+k])
		if _, err := iw.w.Write(iw.buf); err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

// indenter indents compact JSON as json.Marshal writes it (valid, no
// whitespace outside strings) as json.Indent(dst, src, "", "  ") does: a
// newline and two spaces a level before each element and each closing
// bracket, ": " after a key, and empty objects and arrays as {} and [].
// It keeps its state between the blocks of its input: the nesting depth,
// whether the last byte opened an object or array, and whether a string
// (and an escape in it) is open.
type indenter struct {
	depth            int
	open, inStr, esc bool
}

// indent appends src, the next block of the compact input, indented.
func (s *indenter) indent(dst, src []byte) []byte {
	for i := 0; i < len(src); i++ {
		if s.inStr {
			// Copy the string through its closing quote; a backslash
			// escapes the byte after it.
			j := i
			for ; j < len(src); j++ {
				if s.esc {
					s.esc = false
					continue
				}
				if src[j] == '\\' {
					s.esc = true
				} else if src[j] == '"' {
					s.inStr = false
					break
				}
			}
			j = min(j, len(src)-1)
			dst = append(dst, src[i:j+1]...)
			i = j
			continue
		}
		c := src[i]
		if s.open && c != '}' && c != ']' {
			s.open = false
			s.depth++
			dst = newline(dst, s.depth)
		}
		switch c {
		case '"':
			s.inStr = true
			dst = append(dst, c)
		case '{', '[':
			s.open = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			dst = newline(dst, s.depth)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if s.open {
				s.open = false
			} else {
				s.depth--
				dst = newline(dst, s.depth)
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// newline appends a newline and depth levels of two-space indentation.
func newline(dst []byte, depth int) []byte {
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, ' ', ' ')
	}
	return dst
}

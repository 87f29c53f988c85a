package timeline

import (
	"bufio"
	"io"
	"strconv"
	"unicode/utf8"
)

// jsonOut writes trace events one by one, by hand: encoding/json per event
// is several times slower, and events are the bulk of a big export.
type jsonOut struct {
	w      *bufio.Writer
	b      []byte // the event being built
	n      int64  // events written
	origin int64  // reference ns shown as ts 0
}

func newJSONOut(w io.Writer) *jsonOut {
	return &jsonOut{w: bufio.NewWriterSize(w, 1<<20)}
}

func (o *jsonOut) header() error {
	_, err := o.w.WriteString(`{"displayTimeUnit":"ns","otherData":{"producer":"ptrace export"},"traceEvents":[` + "\n")
	return err
}

func (o *jsonOut) footer() error {
	if _, err := o.w.WriteString("\n]}\n"); err != nil {
		return err
	}
	return o.w.Flush()
}

// begin starts an event object with its phase, pid and tid.
func (o *jsonOut) begin(ph byte, pid, tid int) {
	o.b = o.b[:0]
	if o.n > 0 {
		o.b = append(o.b, ",\n"...)
	}
	o.b = append(o.b, `{"ph":"`...)
	o.b = append(o.b, ph)
	o.b = append(o.b, `","pid":`...)
	o.b = strconv.AppendInt(o.b, int64(pid), 10)
	o.b = append(o.b, `,"tid":`...)
	o.b = strconv.AppendInt(o.b, int64(tid), 10)
}

// ts appends a timestamp: microseconds with nanosecond decimals, relative
// to the export's origin.
func (o *jsonOut) ts(key string, ns int64) {
	o.b = append(o.b, `,"`...)
	o.b = append(o.b, key...)
	o.b = append(o.b, `":`...)
	o.b = appendMicros(o.b, ns)
}

func appendMicros(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	if f := ns % 1000; f != 0 {
		b = append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
	}
	return b
}

func (o *jsonOut) str(key, v string) {
	o.b = append(o.b, `,"`...)
	o.b = append(o.b, key...)
	o.b = append(o.b, `":`...)
	o.b = appendJSONString(o.b, v)
}

// raw appends a pre-escaped JSON string value (names cached per process).
func (o *jsonOut) raw(key string, quoted []byte) {
	o.b = append(o.b, `,"`...)
	o.b = append(o.b, key...)
	o.b = append(o.b, `":`...)
	o.b = append(o.b, quoted...)
}

func (o *jsonOut) num(key string, v int64) {
	o.b = append(o.b, `,"`...)
	o.b = append(o.b, key...)
	o.b = append(o.b, `":`...)
	o.b = strconv.AppendInt(o.b, v, 10)
}

// args opens the args object; close it with endArgs. Keys inside are
// written with arg* methods.
func (o *jsonOut) args() { o.b = append(o.b, `,"args":{`...) }

func (o *jsonOut) argNum(first bool, key string, v int64) {
	if !first {
		o.b = append(o.b, ',')
	}
	o.b = append(o.b, '"')
	o.b = append(o.b, key...)
	o.b = append(o.b, `":`...)
	o.b = strconv.AppendInt(o.b, v, 10)
}

func (o *jsonOut) argStr(first bool, key, v string) {
	if !first {
		o.b = append(o.b, ',')
	}
	o.b = append(o.b, '"')
	o.b = append(o.b, key...)
	o.b = append(o.b, `":`...)
	o.b = appendJSONString(o.b, v)
}

// argHex writes an id as a hex string, the way ids print elsewhere.
func (o *jsonOut) argHex(first bool, key string, v int64) {
	if !first {
		o.b = append(o.b, ',')
	}
	o.b = append(o.b, '"')
	o.b = append(o.b, key...)
	o.b = append(o.b, `":"0x`...)
	o.b = strconv.AppendUint(o.b, uint64(v), 16)
	o.b = append(o.b, '"')
}

func (o *jsonOut) endArgs() { o.b = append(o.b, '}') }

func (o *jsonOut) end() error {
	o.b = append(o.b, '}')
	o.n++
	_, err := o.w.Write(o.b)
	return err
}

// appendJSONString appends s as a JSON string literal; invalid UTF-8
// becomes U+FFFD so the output always parses.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

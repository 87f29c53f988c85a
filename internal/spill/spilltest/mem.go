// Package spilltest holds a spill file in memory for the tests of what
// parks in one: it counts its reads and fails those it is told to, so a
// test can fail each read of a phase in turn.
package spilltest

import (
	"errors"
	"io"
)

// Mem is a spill file in memory (a packed.Spiller). Its zero value
// serves every read.
type Mem struct {
	B     []byte // what was appended
	Reads int    // the reads made so far
	// FailAt is the read, counting from 1, that fails with an I/O error
	// (0: none), and with Once that one alone, else every one from it on.
	FailAt int
	Once   bool
	// OnRead, when set, runs before each read.
	OnRead func()
}

// Append appends p and returns where it begins.
func (m *Mem) Append(p []byte) (int64, error) {
	at := int64(len(m.B))
	m.B = append(m.B, p...)
	return at, nil
}

// ReadAt reads len(p) bytes at off, unless this read is one to fail.
func (m *Mem) ReadAt(p []byte, off int64) (int, error) {
	m.Reads++
	if m.OnRead != nil {
		m.OnRead()
	}
	if m.FailAt > 0 && (m.Reads == m.FailAt || !m.Once && m.Reads > m.FailAt) {
		return 0, errors.New("I/O error")
	}
	if off+int64(len(p)) > int64(len(m.B)) {
		return 0, io.ErrUnexpectedEOF
	}
	return copy(p, m.B[off:]), nil
}

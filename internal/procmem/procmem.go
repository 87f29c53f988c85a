// Package procmem measures a process's resident memory: all of it
// (Resident, what a batch system's accounting sees), and the part the Go
// runtime neither manages nor can give back (Floor: its executable's and
// shared libraries' mapped pages, memory C code allocated: an MPI
// library's buffers and shared-memory segments). A memory limit on the
// whole process leaves the Go runtime only what is left after the floor.
package procmem

import (
	"runtime/metrics"
)

// GoResident returns the memory the Go runtime holds and has not given
// back to the operating system: what debug.SetMemoryLimit bounds.
func GoResident() int64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(s)
	var v [2]int64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = int64(s[i].Value.Uint64())
		}
	}
	return v[0] - v[1]
}

package driver

import "syscall"

// maxRSS returns the high-water mark of this process's resident set in
// bytes (getrusage: Linux reports KiB), 0 when it cannot be read. It is
// what an out-of-memory killer or a batch system's memory accounting
// sees, the heap figures being only the Go objects in it.
func maxRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss << 10
}

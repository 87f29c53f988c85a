//go:build !linux

package driver

// maxRSS returns 0: the resident set's high-water mark is read on Linux
// only (--stats then leaves it out).
func maxRSS() int64 { return 0 }

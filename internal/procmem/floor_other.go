//go:build !linux

package procmem

// Floor returns 0 where /proc/self/smaps does not exist: the limit then
// applies to the Go runtime's memory alone.
func Floor() int64 { return 0 }

// Resident returns 0: the process's resident set is not read here.
func Resident() int64 { return 0 }

// Peak returns 0: the high-water mark is not read here.
func Peak() int64 { return 0 }

// ResetPeak does nothing here.
func ResetPeak() bool { return false }

//go:build !linux

package spill

// inMemory cannot tell a memory file system from a disk outside Linux:
// the file is made where the caller asked.
func inMemory(string) bool { return false }

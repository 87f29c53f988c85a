package main

import "syscall"

// stdoutClosed reports whether standard output is the /dev/null the Go
// runtime opens read-write in place of a closed descriptor (runtime
// checkfds): a shell's "> /dev/null" opens it write-only, so a user who
// discards the output on purpose is not taken for one who closed it.
func stdoutClosed() bool {
	var st syscall.Stat_t
	if err := syscall.Fstat(1, &st); err != nil {
		return true
	}
	const devNull = 1<<8 | 3 // major 1, minor 3
	if st.Mode&syscall.S_IFMT != syscall.S_IFCHR || st.Rdev != devNull {
		return false
	}
	fl, _, errno := syscall.Syscall(syscall.SYS_FCNTL, 1, syscall.F_GETFL, 0)
	return errno == 0 && fl&syscall.O_ACCMODE == syscall.O_RDWR
}

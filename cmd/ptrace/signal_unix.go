//go:build unix

package main

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// signalName spells a signal as "SIGFPE (floating point exception)".
func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n + " (" + sig.String() + ")"
	}
	return sig.String()
}

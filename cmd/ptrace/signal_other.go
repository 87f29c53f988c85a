//go:build !unix

package main

import "syscall"

// signalName spells a signal as the platform does: where processes are
// not killed by POSIX signals there is no SIG… name to give.
func signalName(sig syscall.Signal) string { return sig.String() }

// Package e2e holds the end-to-end tests of ptrace's collector, the C
// library in ompt/collector (OMPT tool and PMPI wrappers) that traced
// programs load: the tests build it and the example programs, trace them with
// "ptrace record", validate the traces and check facts that must hold in
// them, exercise crashes and tiny buffers, and run ThreadSanitizer. The
// package has no non-test code.
package e2e

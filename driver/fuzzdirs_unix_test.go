//go:build unix

package driver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// removeStaleFuzzDirs removes the mutants' directories of processes that
// are gone: go test -fuzz kills its workers at the end, before their
// TestMain can remove their own.
func removeStaleFuzzDirs(root string) {
	dirs, _ := filepath.Glob(filepath.Join(root, "ptrace-fuzz-*-*"))
	for _, d := range dirs {
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(d), "ptrace-fuzz-%d-", &pid); err != nil || pid <= 0 {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(d)
		}
	}
}

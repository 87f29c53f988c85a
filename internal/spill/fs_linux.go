package spill

import "golang.org/x/sys/unix"

// inMemory tells whether dir's file system keeps its files in memory:
// tmpfs or ramfs. A directory that cannot be examined is taken for a
// disk's; creating the file there says what is wrong with it.
func inMemory(dir string) bool {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return false
	}
	// The magic numbers are 32 bits; Type is an int32 on 32-bit platforms.
	t := uint32(st.Type)
	return t == unix.TMPFS_MAGIC || t == unix.RAMFS_MAGIC
}

//go:build !amd64 || purego

package trace

// svbGroupsZZ is svbGroupsDecode with each value v stored as zz(v).
func svbGroupsZZ(ctrl, data []byte, out []uint64) (pos, i int) {
	return svbGroupsZZGo(ctrl, data, out)
}

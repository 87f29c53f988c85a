//go:build amd64 && !purego

package trace

import "golang.org/x/sys/cpu"

// hasAVX2 is whether svbGroupsZZ takes the vector loop (set once, at
// initialization, from the processor's features).
var hasAVX2 = cpu.X86.HasAVX2

// svbGroupsZZAVX2 is svb_amd64.s's group loop: it decodes the groups
// g < ng whose data start p is at most lim, the four values of each
// zig-zag decoded, into op, and returns p after the last and the groups
// decoded.
//
//go:noescape
func svbGroupsZZAVX2(cp, dp *byte, op *uint64, ng, lim uintptr, tab *[256]svbShuf) (p, n uintptr)

// svbGroupsZZ is svbGroupsDecode with each value v stored as zz(v).
//
// The vector loop reads as svbGroupsDecode does: group g < ng ≤
// len(ctrl) writes out[4g : 4g+4] with 4g+3 < 4ng ≤ len(out), and reads
// data[p : p+16] and data[p+off2 : p+off2+16] with off2 ≤ 16 and p ≤ lim
// = len(data)−64.
func svbGroupsZZ(ctrl, data []byte, out []uint64) (pos, i int) {
	ng := min(len(out)/4, len(ctrl))
	if ng == 0 || len(data) < svbWindow {
		return 0, 0
	}
	if !hasAVX2 {
		return svbGroupsZZGo(ctrl, data, out)
	}
	p, g := svbGroupsZZAVX2(&ctrl[0], &data[0], &out[0], uintptr(ng), uintptr(len(data)-svbWindow), &svbShufTab)
	return int(p), 4 * int(g)
}

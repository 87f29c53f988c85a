package trace

// The args stream's values are zig-zag coded differences (chunkEncoder),
// save the dependence counts and types. The chunk decoder takes them
// zig-zag decoded from the stream-vbyte decode (svbDecodeZZ): on amd64
// with AVX2 the group loop decodes and zig-zag decodes four values with a
// few vector instructions (svb_amd64.s), where the events' loop spent
// five instructions a value on the zig-zag alone (PERFORMANCE.md,
// twenty-seventh round). The counts and types, the few values that are
// not zig-zag coded, are coded back (unzz) where they are read.

// svbDecodeZZ is svbDecode with each value v stored as zz(v).
func svbDecodeZZ(ctrl, data []byte, out []uint64, n int) int {
	return svbDecodeAs(ctrl, data, out, n, true)
}

// svbGroupsZZGo is svbGroupsDecode with each value v stored as zz(v): the
// path without vector instructions.
func svbGroupsZZGo(ctrl, data []byte, out []uint64) (pos, i int) {
	pos, i = svbGroupsDecode(ctrl, data, out, &svbTab)
	for j, v := range out[:i] {
		out[j] = uint64(zz(v))
	}
	return pos, i
}

// unzz undoes zz: the value as the stream holds it, for the dependence
// counts and types, which are not zig-zag coded.
func unzz(v uint64) uint64 { return zig(int64(v)) }

// svbShuf is an entry of svbShufTab: per control byte the byte shuffles
// (PSHUFB masks) that place values 0 and 1 from the group's first 16 data
// bytes, and values 2 and 3 from the 16 bytes at off2, into 8 bytes each
// (a mask byte with its top bit set gives a zero byte); the group's data
// bytes. 64 bytes, so that an entry is the control byte shifted by 6.
type svbShuf struct {
	lo, hi [16]byte
	off2   uint64
	size   uint64
	_      [2]uint64
}

// svbShufTab is svb_amd64.s's table. Values 0 and 1 end within 16 bytes
// of the group's start (a value takes at most 8), values 2 and 3 within 16
// of off2 ≤ 16: a group reads at most 32 bytes from its start, as
// svbGroupsDecode does.
var svbShufTab = func() (t [256]svbShuf) {
	for c := range t {
		var off [4]int
		pos := 0
		for j := range 4 {
			off[j] = pos
			pos += svbLen[(c>>(2*j))&3]
		}
		for b := range 16 {
			t[c].lo[b], t[c].hi[b] = 0x80, 0x80
		}
		for j := range 4 {
			l := svbLen[(c>>(2*j))&3]
			for b := range l {
				if j < 2 {
					t[c].lo[8*j+b] = byte(off[j] - off[0] + b)
				} else {
					t[c].hi[8*(j-2)+b] = byte(off[j] - off[2] + b)
				}
			}
		}
		t[c].off2, t[c].size = uint64(off[2]), uint64(pos)
	}
	return
}()

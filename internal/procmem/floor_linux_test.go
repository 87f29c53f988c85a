package procmem

import (
	"os"
	"syscall"
	"testing"
)

// An smaps text: the executable's segments count whole, other files'
// resident pages count, and anonymous pages count beyond the Go
// runtime's.
func TestFloorOf(t *testing.T) {
	smaps := `00400000-008fa000 r-xp 00000000 08:01 1234 /opt/ptrace/bin/ptrace
Size:               5096 kB
Rss:                1000 kB
008fa000-00e1a000 r--p 004fa000 08:01 1234 /opt/ptrace/bin/ptrace
Size:               5248 kB
Rss:                 500 kB
00e6a000-02ea7000 rw-p 00000000 00:00 0 
Size:              33012 kB
Rss:                 112 kB
7f0000000000-7f0000400000 rw-p 00000000 00:00 0 
Size:               4096 kB
Rss:                4096 kB
7f1000000000-7f1000200000 r-xp 00000000 08:01 99 /usr/lib/libmpi.so.40.30.0
Size:               2048 kB
Rss:                 700 kB
7f2000000000-7f2000100000 rw-s 00000000 00:2e 7 /dev/shm/vader_segment.1 (deleted)
Size:               1024 kB
Rss:                 300 kB
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
Size:                132 kB
Rss:                  20 kB
`
	const kb = 1 << 10
	exe := "/opt/ptrace/bin/ptrace"
	files := int64(5096+5248)*kb + (700+300)*kb
	anon := int64(112+4096+20) * kb
	for _, c := range []struct {
		goRes, want int64
	}{
		{0, files + anon},
		{4000 * kb, files + anon - 4000*kb},
		{1 << 40, files}, // the runtime holds more than the anonymous pages: nothing
	} {
		if got := floorOf([]byte(smaps), exe, c.goRes); got != c.want {
			t.Errorf("Go runtime holding %d: floor %d, want %d", c.goRes, got, c.want)
		}
	}
	if got, want := floorOf([]byte(smaps), "/elsewhere", 1<<40), int64(1000+500+700+300)*kb; got != want {
		t.Errorf("executable not among the mappings: %d, want the files' resident pages %d", got, want)
	}
}

// This process's floor holds its executable, and memory mapped outside
// the Go runtime, as C code would, adds to it once touched.
func TestFloorLive(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	st, err := os.Stat(exe)
	if err != nil {
		t.Skip(err)
	}
	before, resBefore := Floor(), Resident()
	// The mapped segments of the test binary: most of its file, not its
	// symbols and debug sections.
	if before < st.Size()/4 {
		t.Errorf("floor %d below a quarter of the executable's %d bytes", before, st.Size())
	}
	const n = 32 << 20
	m, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	for i := 0; i < n; i += 4096 {
		m[i] = 1
	}
	// The runtime's count of what it holds includes pages it mapped but
	// has not touched: the C memory seen is a little less than mapped.
	if d := Resident() - resBefore; d < n*9/10 {
		t.Errorf("32 MiB mapped and touched: the resident set grew by %d", d)
	}
	if after := Floor(); after-before < n*3/4 || after-before > n+n/2 {
		t.Errorf("32 MiB mapped outside the runtime: floor %d → %d", before, after)
	}
	if GoResident() <= 0 {
		t.Errorf("the Go runtime holds %d bytes", GoResident())
	}
}

// The high-water mark follows the resident set up, and a reset brings it
// back to the resident set now.
func TestPeak(t *testing.T) {
	if !ResetPeak() {
		t.Skip("/proc/self/clear_refs cannot be written (a kernel before 4.0?)")
	}
	p0 := Peak()
	if r := Resident(); p0 <= 0 || p0 > r+r/4 {
		t.Fatalf("after a reset the peak is %d, the resident set %d", p0, r)
	}
	const n = 48 << 20
	m, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 4096 {
		m[i] = 1
	}
	syscall.Munmap(m)
	if p := Peak(); p-p0 < n*9/10 {
		t.Errorf("48 MiB touched and unmapped: peak %d → %d", p0, p)
	}
	ResetPeak()
	if p, r := Peak(), Resident(); p > r+r/4 {
		t.Errorf("reset: peak %d against a resident set of %d", p, r)
	}
}

// Whatever the smaps text, floorOf neither panics nor returns a negative
// size.
func FuzzFloorOf(f *testing.F) {
	f.Add([]byte("00400000-008fa000 r-xp 00000000 08:01 1234 /bin/x\nSize: 5096 kB\nRss: 1000 kB\n"), "/bin/x", int64(0))
	f.Add([]byte("7f00-7f01 rw-p 0 00:00 0\nRss: 99999999999999999999 kB\nSize: -5 kB\n:\n\n"), "", int64(1<<40))
	f.Fuzz(func(t *testing.T, smaps []byte, exe string, goRes int64) {
		if v := floorOf(smaps, exe, max(goRes, 0)); v < 0 {
			t.Errorf("floor %d", v)
		}
	})
}

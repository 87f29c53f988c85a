package procmem

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// Floor returns the memory this process holds outside the Go runtime and
// will hold to its end, from /proc/self/smaps: its executable's mapped
// segments whole (their pages come in as the code runs: an analysis
// touches most of its 10 MB of code and tables, a process that has just
// started 2 MB of them), the other mapped files' resident pages (shared
// libraries, shared memory), and the anonymous memory beyond what the Go
// runtime holds (a C library's). 0 when smaps cannot be read.
func Floor() int64 {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0
	}
	exe, _ := os.Executable()
	goRes := GoResident()
	return floorOf(b, exe, goRes)
}

// floorOf is Floor on the text of an smaps file, exe the executable's
// path and goRes what the Go runtime holds.
func floorOf(smaps []byte, exe string, goRes int64) int64 {
	var files, anon int64
	var isFile, isExe bool
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		if !bytes.HasSuffix(f[0], []byte(":")) {
			// A mapping's header: address range, permissions, offset,
			// device, inode, path. A file has an inode; [heap], [stack]
			// and anonymous mappings have 0.
			isFile = len(f) >= 6 && string(f[4]) != "0"
			isExe = isFile && exe != "" && string(bytes.Join(f[5:], []byte(" "))) == exe
			continue
		}
		n, ok := kbField(f)
		if !ok {
			continue
		}
		switch string(f[0]) {
		case "Size:":
			if isExe {
				files = min(files+n, maxBytes)
			}
		case "Rss:":
			if isFile && !isExe {
				files = min(files+n, maxBytes)
			} else if !isFile {
				anon = min(anon+n, maxBytes)
			}
		}
	}
	return min(files+max(0, anon-goRes), maxBytes)
}

// kbField returns the bytes of a "Name: N kB" line's fields, ok false
// when N is no size (none, negative, or past maxKB: no mapping of this
// process is that large).
func kbField(f [][]byte) (int64, bool) {
	if len(f) < 2 {
		return 0, false
	}
	kb, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil || kb < 0 || kb > maxKB {
		return 0, false
	}
	return kb << 10, true
}

// The sizes smaps may claim: a mapping of up to 2^52 bytes, sums up to
// 2^60 (far beyond any machine; beyond them a size is damaged).
const (
	maxKB    = 1 << 42
	maxBytes = 1 << 60
)

// Resident returns this process's resident set now (/proc/self/statm), 0
// when it cannot be read.
func Resident() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// Peak returns the high-water mark of this process's resident set
// (VmHWM in /proc/self/status: since the start, or since ResetPeak), 0
// when it cannot be read.
func Peak() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if f := bytes.Fields(line); len(f) >= 2 && string(f[0]) == "VmHWM:" {
			n, _ := kbField(f)
			return n
		}
	}
	return 0
}

// ResetPeak makes the high-water mark the resident set now (Linux 4.0
// and later), so that Peak measures from here: what an analysis run
// inside a longer-lived process reaches. false when it cannot.
func ResetPeak() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

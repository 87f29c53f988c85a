// Command mutate rewrites values of a valid ptrace process file in place,
// keeping it valid byte-wise (encoding and checksums): the inputs of
// scripts/robustness.sh, which checks that ptrace survives wrong values, not
// only wrong bytes.
//
//	mutate taskid FILE SEQ     first task_create gets task id (thread, SEQ)
//	mutate time FILE NS        the middle event of thread 0 gets time NS
//	mutate endcount FILE N     the end frame claims N more events on thread 0
//	mutate nranks FILE N       the header claims a world of N ranks
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"

	"github.com/ptrace-dev/ptrace/trace"
	"github.com/vmihailenco/msgpack/v5"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: mutate taskid|time|endcount|nranks FILE VALUE")
		os.Exit(2)
	}
	mode, file := os.Args[1], os.Args[2]
	v, err := strconv.ParseInt(os.Args[3], 0, 64)
	if err == nil {
		err = run(mode, file, v)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

func run(mode, file string, v int64) error {
	switch mode {
	case "endcount":
		return rewriteFrame(file, trace.FrameEnd, func(payload []byte) ([]byte, error) {
			var e trace.End
			if err := msgpack.Unmarshal(payload, &e); err != nil {
				return nil, err
			}
			if len(e.Events) == 0 {
				e.Events = []int64{0}
			}
			e.Events[0] += v
			return msgpack.Marshal(&e)
		})
	case "nranks":
		return rewriteFrame(file, trace.FrameHeader, func(payload []byte) ([]byte, error) {
			var h trace.Header
			if err := msgpack.Unmarshal(payload, &h); err != nil {
				return nil, err
			}
			h.NRanks = int(v)
			return msgpack.Marshal(&h)
		})
	}
	p, err := trace.ReadRows(file)
	if err != nil {
		return err
	}
	switch mode {
	case "taskid":
		done := false
		for t := range p.Events {
			for i := range p.Events[t] {
				if e := &p.Events[t][i]; !done && e.Kind == trace.TaskCreate {
					e.Args[0] = trace.MakeID(trace.IDThread(e.Args[0]), v)
					done = true
				}
			}
		}
		if !done {
			return fmt.Errorf("%s: no task_create event", file)
		}
	case "time":
		if len(p.Events) == 0 || len(p.Events[0]) < 3 {
			return fmt.Errorf("%s: thread 0 has fewer than 3 events", file)
		}
		p.Events[0][len(p.Events[0])/2].Time = v
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	return p.WriteFile(file, 0)
}

// rewriteFrame replaces the payload of the first frame of kind with what f
// makes of it, and repairs the frame's length and CRC-32C (docs/trace-format.md).
func rewriteFrame(file string, kind trace.FrameKind, f func([]byte) ([]byte, error)) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	for off := 0; off+12 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[off+8:]))
		end := off + 12 + n
		if end > len(b) {
			break
		}
		if trace.FrameKind(b[off+1]) == kind {
			payload, err := f(b[off+12 : end])
			if err != nil {
				return err
			}
			var out bytes.Buffer
			out.Write(b[:off])
			crc := crc32.Update(crc32.Checksum([]byte{byte(kind)}, table), table, payload)
			out.Write([]byte{0x93, byte(kind), 0xce})
			binary.Write(&out, binary.BigEndian, crc)
			out.WriteByte(0xc6)
			binary.Write(&out, binary.BigEndian, uint32(len(payload)))
			out.Write(payload)
			out.Write(b[end:])
			return os.WriteFile(file, out.Bytes(), 0o644)
		}
		off = end
	}
	return fmt.Errorf("%s: no %s frame", file, kind)
}

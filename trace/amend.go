package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/vmihailenco/msgpack/v5"
)

// AddLocations adds a locations frame holding locs to an existing process
// file: just before its end frame, or at the end of a file without one (an
// incomplete trace). Readers let a later entry with the same id replace an
// earlier one, so this is how a post-processing step (symbolization) fills
// file/line/col/func into the table a collector wrote. Only frame prefixes
// are read; the payloads are skipped.
//
// The end frame is cut and written again after the new frame: a crash in
// between leaves a file without its end frame (an incomplete trace).
func AddLocations(path string, locs []Location) error {
	if len(locs) == 0 {
		return nil
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(&locationsFrame{Locations: locs}); err != nil {
		return fmt.Errorf("%s: encode locations: %w", path, err)
	}
	if buf.Len() > MaxFrameLen {
		return fmt.Errorf("%s: locations frame of %d bytes exceeds the limit %d", path, buf.Len(), MaxFrameLen)
	}
	frame := appendFrameHeader(nil, FrameLocations, buf.Bytes())
	frame = append(frame, buf.Bytes()...)

	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	endOff, size, err := findEndFrame(f, path)
	if err != nil {
		return err
	}
	if endOff < 0 { // incomplete file: append
		if _, err := f.WriteAt(frame, size); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return f.Sync()
	}
	end := make([]byte, size-endOff)
	if _, err := f.ReadAt(end, endOff); err != nil {
		return fmt.Errorf("%s: read end frame: %w", path, err)
	}
	if _, err := f.WriteAt(append(frame, end...), endOff); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Sync()
}

// findEndFrame walks the frame prefixes of f and returns the offset of the
// end frame (−1 when the file has none) and the file size. The end frame must
// be the last frame.
func findEndFrame(f *os.File, name string) (endOff, size int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	size = st.Size()
	endOff = -1
	var h [frameHeaderLen]byte
	for off := int64(0); off < size; {
		if _, err := f.ReadAt(h[:], off); err != nil {
			if errors.Is(err, io.EOF) {
				return 0, 0, &FormatError{File: name, Offset: off, Err: ErrTruncated}
			}
			return 0, 0, err
		}
		kind, _, length, err := parseFrameHeader(h[:])
		if err != nil {
			return 0, 0, &FormatError{File: name, Offset: off, Err: err}
		}
		next := off + frameHeaderLen + int64(length)
		if next > size {
			return 0, 0, &FormatError{File: name, Offset: off, Frame: kind, Err: ErrTruncated}
		}
		if kind == FrameEnd {
			if next != size {
				return 0, 0, &FormatError{File: name, Offset: off, Frame: kind, Err: errors.New("end frame is not the last frame")}
			}
			endOff = off
		}
		off = next
	}
	return endOff, size, nil
}

package graph

import (
	"fmt"

	"github.com/ptrace-dev/ptrace/internal/packed"
)

// rowsParkMin is the least a process's rows must hold for ParkRows to
// write them: the file's calls are not worth a few rows (16 384
// processes of a halo exchange on one rank).
const rowsParkMin = 16 << 10

// ParkRows writes the rows' columns but the predecessors' times
// (ParkPredTimes has those) to f and drops them from memory until
// UnparkRows, for a while nothing reads the rows: the wait states walk
// the matched edges with the rows unread (3.4 MB of their peak on the
// 10 M-event halo). Len still answers; nothing else may be read or
// appended while they are parked. Rows of less than 16 KiB stay; rows
// parked already park whatever of them is in memory, however little
// (the predecessors UnparkPreds brought back). On an error the columns
// not yet written stay in memory, and UnparkRows brings back those that
// were.
func (r *RemoteEdges) ParkRows(f packed.Spiller) error {
	if !r.rowsParked && r.rowBytes() < rowsParkMin {
		return nil
	}
	r.rowsParked = true
	for _, s := range r.steps() {
		if err := s.Park(f); err != nil { // nothing for a column parked already
			return err
		}
	}
	return packed.ParkField(f, &r.kinds.code, &r.kindsPk)
}

// UnparkPreds reads back the predecessors' columns alone, parked by
// ParkRows: PredProcAt, PredThreadAt and PredEventAt answer, the rest
// stays parked. The wait states' delay costs name each wait's cause from
// one process's rows at a time (the rows of all were 20 MB of their
// peak on the 10 M-event pure-MPI trace); ParkRows parks them again,
// UnparkRows brings back the rest.
func (r *RemoteEdges) UnparkPreds() error {
	for _, s := range [...]parkable{&r.predProc, &r.predThread, &r.predEvent.off} {
		if err := s.Unpark(); err != nil {
			return fmt.Errorf("graph: remote edges: %w", err)
		}
	}
	return nil
}

// UnparkRows reads back the columns ParkRows wrote (nothing when none
// were).
func (r *RemoteEdges) UnparkRows() error {
	if !r.rowsParked {
		return nil
	}
	for _, s := range r.steps() {
		if err := s.Unpark(); err != nil {
			return fmt.Errorf("graph: remote edges: %w", err)
		}
	}
	if err := packed.UnparkField(&r.kinds.code, &r.kindsPk); err != nil {
		return fmt.Errorf("graph: remote edges' kinds: %w", err)
	}
	r.rowsParked = false
	return nil
}

// rowBytes returns the memory ParkRows would free.
func (r *RemoteEdges) rowBytes() int {
	n := len(r.kinds.code)
	for _, s := range r.steps() {
		n += s.Bytes()
	}
	return n
}

// parkable is a narrow.Step of any widths.
type parkable interface {
	Park(packed.Spiller) error
	Unpark() error
	Bytes() int
}

// steps returns the rows' narrow columns.
func (r *RemoteEdges) steps() [5]parkable {
	return [5]parkable{&r.thread, &r.event.off, &r.predProc, &r.predThread, &r.predEvent.off}
}

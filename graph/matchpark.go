package graph

import (
	"fmt"

	"github.com/ptrace-dev/ptrace/internal/packed"
)

// matchParkMin is the least the columns must hold for ParkColumns to
// write them.
const matchParkMin = 16 << 10

// parkedColumns is where ParkColumns wrote the nodes' kinds.
type parkedColumns struct {
	kind *packed.ParkedBytes
}

// ParkColumns writes the nodes' kinds, threads and events to f and drops
// them from memory until UnparkColumns: PropagateMaxTo reads the roles
// and the DAG alone, and the wait states walk the matched edges beside
// 1.4 bytes a node less (3.5 MB of the 10 M-event halo's peak). Nothing
// may read a node's kind, thread or event (Describe, ThreadOf, EventOf,
// Kind) while they are parked. Columns under 16 KiB stay; on an error,
// those not yet written stay, and UnparkColumns reads back the others.
func (m *Matching) ParkColumns(f packed.Spiller) error {
	if m.park != nil || len(m.Kind)+m.thread.Bytes()+m.event.off.Bytes() < matchParkMin {
		return nil
	}
	m.park = &parkedColumns{}
	if err := m.thread.Park(f); err != nil {
		return err
	}
	if err := m.event.off.Park(f); err != nil {
		return err
	}
	return packed.ParkField(f, &m.Kind, &m.park.kind)
}

// UnparkColumns reads back what ParkColumns wrote (nothing when it wrote
// nothing).
func (m *Matching) UnparkColumns() error {
	if m.park == nil {
		return nil
	}
	if err := m.thread.Unpark(); err != nil {
		return fmt.Errorf("graph: the matched nodes' threads: %w", err)
	}
	if err := m.event.off.Unpark(); err != nil {
		return fmt.Errorf("graph: the matched nodes' events: %w", err)
	}
	if err := packed.UnparkField(&m.Kind, &m.park.kind); err != nil {
		return fmt.Errorf("graph: the matched nodes' kinds: %w", err)
	}
	m.park = nil
	return nil
}

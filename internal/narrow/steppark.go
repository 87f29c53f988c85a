package narrow

import (
	"fmt"
	"unsafe"

	"github.com/ptrace-dev/ptrace/internal/packed"
)

// Park writes the values to f and drops them from memory until Unpark,
// for a while nothing reads them; those kept aside stay. Len and Width
// still answer; At, Set and Append must not be called while parked (they
// panic). An empty Step stays; on an error the values stay too.
func (s *Step[A, B, C]) Park(f packed.Spiller) error {
	return packed.ParkField(f, &s.d, &s.pk)
}

// Unpark reads back the values Park wrote (nothing for a Step not
// parked). Appends after it grow the array as after Fit.
func (s *Step[A, B, C]) Unpark() error {
	if err := packed.UnparkField(&s.d, &s.pk); err != nil {
		return fmt.Errorf("narrow: %w", err)
	}
	return nil
}

// Parked reports whether the values are in the spill file (Park).
func (s *Step[A, B, C]) Parked() bool { return s.pk != nil }

// Bytes returns the memory the values take (0 while parked), not
// counting those kept aside.
func (s *Step[A, B, C]) Bytes() int { return len(s.d) }

// Park writes the values to f and drops them from memory until Unpark;
// those kept aside stay. Len still answers; nothing else may be called
// while parked. An empty Column stays; on an error the values stay too.
func (c *Column[S]) Park(f packed.Spiller) error {
	return packed.ParkField(f, &c.v, &c.pk)
}

// Unpark reads back the values Park wrote (nothing for a Column not
// parked).
func (c *Column[S]) Unpark() error {
	if err := packed.UnparkField(&c.v, &c.pk); err != nil {
		return fmt.Errorf("narrow: %w", err)
	}
	return nil
}

// Bytes returns the memory the values take (0 while parked), not
// counting those kept aside.
func (c *Column[S]) Bytes() int {
	var z S
	return len(c.v) * int(unsafe.Sizeof(z))
}

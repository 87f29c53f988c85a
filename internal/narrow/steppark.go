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
	if s.pk != nil || len(s.d) == 0 {
		return nil
	}
	p, err := packed.ParkSlice(f, s.d)
	if err != nil {
		return err
	}
	s.d, s.pk = nil, p
	return nil
}

// Unpark reads back the values Park wrote (nothing for a Step not
// parked). Appends after it grow the array as after Fit.
func (s *Step[A, B, C]) Unpark() error {
	if s.pk == nil {
		return nil
	}
	d, err := packed.ReadSlice[byte](s.pk)
	if err != nil {
		return fmt.Errorf("narrow: %w", err)
	}
	s.d, s.pk = d, nil
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
	if c.pk != nil || len(c.v) == 0 {
		return nil
	}
	p, err := packed.ParkSlice(f, c.v)
	if err != nil {
		return err
	}
	c.v, c.pk = nil, p
	return nil
}

// Unpark reads back the values Park wrote (nothing for a Column not
// parked).
func (c *Column[S]) Unpark() error {
	if c.pk == nil {
		return nil
	}
	v, err := packed.ReadSlice[S](c.pk)
	if err != nil {
		return fmt.Errorf("narrow: %w", err)
	}
	c.v, c.pk = v, nil
	return nil
}

// Bytes returns the memory the values take (0 while parked), not
// counting those kept aside.
func (c *Column[S]) Bytes() int {
	var z S
	return len(c.v) * int(unsafe.Sizeof(z))
}

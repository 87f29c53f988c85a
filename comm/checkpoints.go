package comm

// ChecksPerLoop is how many times Checkpoints calls its Check over a
// loop, whatever the loop's length.
const ChecksPerLoop = 8

// Checkpoints calls Check, when set, ChecksPerLoop times over a rank's
// local loop of n items (After each, Finish at its end): the same number
// of times on every rank whatever its n, so that Check may be
// collective. A loop left early calls Finish, which makes the rest.
type Checkpoints struct {
	Check func() error
	done  int
}

// After is called after item i of n; it returns Check's error.
func (p *Checkpoints) After(i, n int) error {
	return p.upTo(min(ChecksPerLoop, (i+1)*ChecksPerLoop/max(n, 1)))
}

// Finish makes the checks the loop has not, and readies p for the next
// loop.
func (p *Checkpoints) Finish() error {
	if err := p.upTo(ChecksPerLoop); err != nil {
		return err
	}
	p.done = 0
	return nil
}

// upTo calls Check until it was called k times in this loop.
func (p *Checkpoints) upTo(k int) error {
	for p.Check != nil && p.done < k {
		p.done++
		if err := p.Check(); err != nil {
			return err
		}
	}
	return nil
}

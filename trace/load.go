package trace

import (
	"fmt"
	"io"
)

// LoadOptions tune LoadProcess.
type LoadOptions struct {
	// Salvage keeps the events before a truncated or corrupt tail (as a
	// crashed collector may leave) and records a warning instead of failing.
	Salvage bool
}

// LoadProcess reads a whole process file into memory. Events of each thread
// must be in time order; the first violation is an error naming the event's
// byte offset. A file without an end frame loads with a warning.
func LoadProcess(path string, opts LoadOptions) (*Process, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := NewReader(f, path)
	if err != nil {
		return nil, err
	}
	p := &Process{File: path, Header: r.Header()}
	var c Chunk
	for {
		err := r.NextChunk(&c)
		if err == io.EOF {
			break
		}
		if err != nil {
			if opts.Salvage {
				p.Warnings = append(p.Warnings, fmt.Sprintf("salvaged %d events before: %v", p.NumEvents(), err))
				break
			}
			return nil, err
		}
		if err := p.appendChunk(&c); err != nil {
			return nil, err
		}
	}
	p.Tables = *r.Tables()
	if !r.Complete() {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s: no end frame: the traced program did not finish writing its trace (crash or kill?); analysing the %d events present", path, p.NumEvents()))
	} else if e := p.Tables.End; e != nil {
		for t, n := range e.Events {
			if t < len(p.Events) && int64(len(p.Events[t])) != n && !opts.Salvage {
				return nil, &FormatError{File: path, Offset: r.LastFrameOffset(), Frame: FrameEnd,
					Err: fmt.Errorf("thread %d: end frame counts %d events, file holds %d", t, n, len(p.Events[t]))}
			}
		}
		if e.Dropped > 0 {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s: the collector dropped %d events (buffer full?)", path, e.Dropped))
		}
	}
	return p, nil
}

func (p *Process) appendChunk(c *Chunk) error {
	for len(p.Events) <= c.Thread {
		p.Events = append(p.Events, nil)
		p.Deps = append(p.Deps, nil)
	}
	evs := p.Events[c.Thread]
	last := int64(-1 << 63)
	if len(evs) > 0 {
		last = evs[len(evs)-1].Time
	}
	for i := range c.Events {
		if c.Events[i].Time < last {
			return &FormatError{File: p.File, Offset: c.Offset + int64(i),
				Err: fmt.Errorf("thread %d: event %d (%s) at %d ns goes back in time (previous event at %d ns)",
					c.Thread, len(evs)+i, c.Events[i].Kind, c.Events[i].Time, last)}
		}
		last = c.Events[i].Time
	}
	base := int64(len(p.Deps[c.Thread]))
	start := len(evs)
	evs = append(evs, c.Events...)
	if len(c.Deps) > 0 {
		for i := start; i < len(evs); i++ {
			if evs[i].Kind == TaskDeps {
				evs[i].Args[2] += base
			}
		}
		p.Deps[c.Thread] = append(p.Deps[c.Thread], c.Deps...)
	}
	p.Events[c.Thread] = evs
	return nil
}

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
	var slog *SalvageLog
	if opts.Salvage {
		slog = &SalvageLog{File: path}
	}
	var c Chunk
	for {
		err := r.NextChunk(&c)
		if err == io.EOF {
			break
		}
		if err != nil {
			if opts.Salvage {
				slog.Note("salvage: kept the %d events before a damaged part and dropped the rest of the file: %v", p.NumEvents(), err)
				break
			}
			return nil, err
		}
		if err := p.appendChunk(&c, slog); err != nil {
			return nil, err
		}
	}
	p.Tables = *r.Tables()
	if !r.Complete() {
		p.Partial = true
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s: no end frame: the traced program did not finish writing its trace (crash or kill?); analysing the %d events present", path, p.NumEvents()))
	} else if e := p.Tables.End; e != nil {
		present := make([]int64, len(p.Events))
		for t := range p.Events {
			present[t] = int64(len(p.Events[t]))
		}
		for _, m := range CountMismatches(e, present) {
			err := &FormatError{File: path, Offset: r.LastFrameOffset(), Frame: FrameEnd,
				Err: fmt.Errorf("thread %d: end frame counts %d events, file holds %d", m.Thread, m.Claimed, m.Present)}
			if slog == nil {
				return nil, err
			}
			if !slog.IsCut(m.Thread) { // a cut thread's count is off by its cut
				slog.Note("salvage: %v", err)
			}
		}
		if e.Dropped > 0 {
			p.Partial = true
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s: the collector dropped %d events (buffer full?)", path, e.Dropped))
		}
	}
	if slog != nil {
		p.Warnings = append(p.Warnings, slog.Warnings()...)
		p.Partial = p.Partial || slog.Partial()
	}
	return p, nil
}

// appendChunk adds c's events to its thread; a salvaging load (slog set)
// cuts a thread at an event going back in time instead of failing.
func (p *Process) appendChunk(c *Chunk, slog *SalvageLog) error {
	for len(p.Events) <= c.Thread {
		p.Events = append(p.Events, nil)
		p.Deps = append(p.Deps, nil)
	}
	evs := p.Events[c.Thread]
	if slog != nil && slog.IsCut(c.Thread) {
		slog.Drop(c.Thread, len(c.Events))
		return nil
	}
	last := int64(-1 << 63)
	if len(evs) > 0 {
		last = evs[len(evs)-1].Time
	}
	if cut := TimeOrderCut(c.Events, last); cut < len(c.Events) {
		err := TimeOrderError(p.File, c, cut, int64(len(evs)), last)
		if slog == nil {
			return err
		}
		slog.Cut(c.Thread, err, len(c.Events)-cut)
		c.Events = c.Events[:cut]
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

package sim

// TaskTimes reads the tasks' first starts and run times (Started, RunNS)
// in task order, a block of 64 slots at a time: the readers at the
// simulation's end (the statistics, the critical path's run-time column,
// the anomalies' table) go through every task slot a few times, and a
// frozen page's run time read one by one (its block's header and words
// found for each) cost the analysis of BOTS health 4 % more instructions.
type TaskTimes struct {
	s     *Sim
	block Task // the first slot of the block in start and run, -1 none
	start [64]int64
	run   [64]int64
	buf   []int32
}

// Times returns a reader of the tasks' first starts and run times.
func (s *Sim) Times() *TaskTimes { return &TaskTimes{s: s, block: -1, buf: make([]int32, 0, 64)} }

// At returns task t's first start (-1 never) and run time, as Started and
// RunNS do; t must not go back to an earlier block of 64 once read.
func (r *TaskTimes) At(t Task) (start, run int64) {
	if b := t &^ 63; b != r.block {
		r.load(b)
	}
	return r.start[t&63], r.run[t&63]
}

// load reads the block of slots from b.
func (r *TaskTimes) load(b Task) {
	s := r.s
	r.block = b
	n := min(64, int(int32(len(s.Tasks))-b))
	k, j := b>>colPageBits, int(b&(colPageLen-1))
	st := &s.cols.started
	switch {
	case st.dense[k] != nil:
		for i, o := range st.dense[k][j : j+n] {
			r.start[i] = -1
			if o != tcolNone {
				r.start[i] = st.base[k] + int64(o)
			}
		}
	case st.mid[k] != nil:
		m := st.mid[k]
		for i := range n {
			r.start[i] = m.at(st.base[k], int32(j+i))
		}
	case st.wide[k] != nil:
		copy(r.start[:n], st.wide[k][j:j+n])
	default:
		for i := range n {
			r.start[i] = -1
		}
	}
	rc := &s.cols.run
	switch {
	case k < int32(len(rc.dense)) && rc.dense[k] != nil:
		for i, v := range rc.dense[k][j : j+n] {
			r.run[i] = int64(uint32(v))
		}
	case k < int32(len(rc.froze)) && rc.froze[k].Len() > 0:
		r.buf = rc.froze[k].AppendBlock(r.buf[:0], j/64)
		for i, v := range r.buf[:n] {
			r.run[i] = int64(uint32(v))
		}
	default:
		clear(r.run[:n]) // none written, or dropped (DropRunTimes)
	}
	if s.longRuns != nil {
		for i := range n {
			if t := b + Task(i); s.Tasks[t].Flags&FlagLongRun != 0 {
				r.run[i] = s.longRuns[t]
			}
		}
	}
}

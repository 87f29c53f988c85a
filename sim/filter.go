package sim

import "github.com/ptrace-dev/ptrace/trace"

// KindSet is a set of event kinds: bit k holds kind k.
type KindSet uint64

// AllKinds holds every valid kind.
const AllKinds KindSet = 1<<trace.NumKinds - 1

// KindsOf returns the set of the given kinds.
func KindsOf(ks ...trace.Kind) KindSet {
	var s KindSet
	for _, k := range ks {
		s |= 1 << k
	}
	return s
}

// Has reports whether k is in the set.
func (s KindSet) Has(k trace.Kind) bool { return k < trace.NumKinds && s&(1<<k) != 0 }

// KindsWhere returns the set of the valid kinds for which f holds.
func KindsWhere(f func(trace.Kind) bool) KindSet {
	var s KindSet
	for k := range trace.NumKinds {
		if f(k) {
			s |= 1 << k
		}
	}
	return s
}

// QuietKinds is the set of kinds after which no thread's category changes
// (Quiet).
func QuietKinds() KindSet { return KindsWhere(Quiet) }

// Filtered is implemented by a Pass whose Before or After does nothing for
// events of some kinds: Run calls them only for events of the kinds in the
// sets (and for any kind outside the valid ones), which on a task trace
// skips most calls — there most events create tasks or describe their
// dependences. The final Before and Finish are always called.
type Filtered interface {
	Kinds() (before, after KindSet)
}

// dispatch lists, per event kind, the passes whose Before and After Run
// calls; entry NumKinds is for invalid kinds: every pass.
type dispatch struct {
	before, after [trace.NumKinds + 1][]Pass
	all           []Pass // the lists' storage
	// anyBefore: some pass has a Before for some kind (the analysis's
	// passes have none: Run skips the lists' empty loop, 15–18
	// instructions an event); every pass sees kind NumKinds.
	anyBefore bool
}

// newDispatch makes the lists in one allocation (room for every pass in
// every list): a process's simulation makes them once, and a trace of
// thousands of small processes makes them thousands of times, so a Spare's
// lists are refilled instead (sp may be nil).
func newDispatch(passes []Pass, sp *Spare) *dispatch {
	d := &dispatch{}
	if sp != nil && sp.disp != nil {
		d, sp.disp = sp.disp, nil
	}
	all := d.all[:0]
	sets := make([][2]KindSet, len(passes))
	for i, ps := range passes {
		sets[i] = [2]KindSet{AllKinds, AllKinds}
		if f, ok := ps.(Filtered); ok {
			sets[i][0], sets[i][1] = f.Kinds()
		}
	}
	if n := 2 * int(trace.NumKinds+1) * len(passes); cap(all) < n {
		all = make([]Pass, 0, n)
	}
	fill := func(k trace.Kind, j int) []Pass {
		start := len(all)
		for i, ps := range passes {
			if k == trace.NumKinds || sets[i][j].Has(k) {
				all = append(all, ps)
			}
		}
		return all[start:len(all):len(all)]
	}
	d.anyBefore = false
	for k := range trace.NumKinds + 1 {
		d.before[k], d.after[k] = fill(k, 0), fill(k, 1)
		d.anyBefore = d.anyBefore || k < trace.NumKinds && len(d.before[k]) > 0
	}
	d.all = all
	return d
}

// recycle gives d's lists to sp, without the passes they referred to.
func (d *dispatch) recycle(sp *Spare) {
	if sp == nil {
		return
	}
	clear(d.all)
	sp.disp = d
}

// dispatchKind returns the dispatch entry of an event's kind.
func dispatchKind(k trace.Kind) trace.Kind { return min(k, trace.NumKinds) }

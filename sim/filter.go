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

// QuietKinds is the set of kinds after which no thread's category changes
// (Quiet).
func QuietKinds() KindSet {
	var s KindSet
	for k := range trace.NumKinds {
		if quiet[k] {
			s |= 1 << k
		}
	}
	return s
}

// Filtered is implemented by a Pass whose Before or After does nothing for
// events of some kinds: Run calls them only for events of the kinds in the
// sets (and for any kind outside the valid ones), which on a task trace
// skips most calls — there most events create tasks or describe their
// dependences. The final Before and Finish are always called.
type Filtered interface {
	Kinds() (before, after KindSet)
}

// dispatch lists, per event kind, the passes whose Before and After Run
// calls.
type dispatch struct {
	before, after [256][]Pass
}

func newDispatch(passes []Pass) *dispatch {
	d := &dispatch{}
	for _, ps := range passes {
		b, a := AllKinds, AllKinds
		if f, ok := ps.(Filtered); ok {
			b, a = f.Kinds()
		}
		for k := range len(d.before) {
			// An invalid kind reaches every pass, as without filters.
			if valid := k < int(trace.NumKinds); !valid || b.Has(trace.Kind(k)) {
				d.before[k] = append(d.before[k], ps)
			}
			if valid := k < int(trace.NumKinds); !valid || a.Has(trace.Kind(k)) {
				d.after[k] = append(d.after[k], ps)
			}
		}
	}
	return d
}

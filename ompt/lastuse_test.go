package ompt

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// lastUses marks an address's last entry in the threads' order, and none
// of an address that two threads' entries name.
func TestLastUses(t *testing.T) {
	// Thread 0 names a, b, a, c; thread 1 names c, d, d (entries 4–6).
	const a, b, c, d = 0x1000, 0x2000, 0x3000, 0x4000
	lists := [][]trace.Dep{
		{{Addr: a, Type: trace.DepOut}, {Addr: b, Type: trace.DepIn}, {Addr: a, Type: trace.DepIn}, {Addr: c, Type: trace.DepOut}},
		{{Addr: c, Type: trace.DepIn}, {Addr: d, Type: trace.DepOut}, {Addr: d, Type: trace.DepIn}},
	}
	events := make([][]trace.Event, 2)
	for th, l := range lists {
		for k := range l {
			// One task_dependences event an entry, beside others.
			events[th] = append(events[th],
				trace.Event{Time: int64(2 * k), Kind: trace.TaskCreate, Args: [5]int64{trace.MakeID(th, int64(k+1))}},
				trace.Event{Time: int64(2*k + 1), Kind: trace.TaskDeps, Args: [5]int64{trace.MakeID(th, int64(k+1)), 1, int64(k)}})
		}
	}
	p, err := trace.NewProcess(trace.Header{NRanks: 1}, trace.Tables{}, events, lists)
	if err != nil {
		t.Fatal(err)
	}
	last, stay, bases := lastUses(p, nil, 7)
	if !slices.Equal(bases, []int64{0, 4}) {
		t.Errorf("threads' first entries %v, want [0 4]", bases)
	}
	if stay != 1 {
		t.Errorf("%d addresses stay, want 1 (c)", stay)
	}
	var got []int
	for x := range 7 {
		if last[x/64]&(1<<(x%64)) != 0 {
			got = append(got, x)
		}
	}
	// b at 1, a at 2, d at 6; c is both threads'.
	if want := []int{1, 2, 6}; !slices.Equal(got, want) {
		t.Errorf("last entries %v, want %v", got, want)
	}
}

// A tracker that drops an address's state at its last entry gives the
// predecessors the plain rules give, and holds no state
// once every address had its last entry; the use table grows past its
// first size on the way.
func TestTrackerDropsAtLastUse(t *testing.T) {
	types := []uint8{trace.DepIn, trace.DepIn, trace.DepOut, trace.DepInout, trace.DepMutexInoutset, trace.DepInoutset}
	for seed := range uint64(8) {
		for _, keep := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(seed, 11))
			const tasks = 20_000
			lists := make([][]trace.Dep, tasks)
			var all []trace.Dep
			addrs := 1 + rng.IntN(3000)
			for task := range lists {
				lists[task] = make([]trace.Dep, 1+rng.IntN(4))
				for k := range lists[task] {
					// Addresses that go out of use as the tasks go on,
					// most used a few times.
					a := uint64(task/4 + rng.IntN(addrs))
					lists[task][k] = trace.Dep{Addr: 0x7f00_0000_0000 + a*64, Type: types[rng.IntN(len(types))]}
				}
				if task >= 8 {
					all = append(all, lists[task]...)
				}
			}
			u := newUseTable(0)
			for x, dep := range all {
				u.use(dep.Addr, int32(x), 0)
			}
			d := newDepTracker()
			d.keep = keep
			d.last = make([]uint64, (len(all)+63)/64)
			for _, v := range u.vals {
				if v > 0 {
					d.last[(v-1)/64] |= 1 << ((v - 1) % 64)
				}
			}
			ref := newRefTracker()
			completed := make([]bool, tasks)
			done := func(t int32) bool { return completed[t] }
			var ncompleted int64
			parents := make([]int32, tasks)
			// Tasks 0–2 are parents, never completed (the children of a
			// completed parent are swept).
			at := int64(0)
			for task := int32(8); task < tasks; task++ {
				parent := int32(-1)
				if seed%2 == 1 {
					parent = rng.Int32N(3)
				}
				parents[task] = parent
				got := d.resolve(parent, task, lists[task], at, nil, done, ncompleted)
				at += int64(len(lists[task]))
				if got, want, ok := samePreds(got, ref.resolve(parent, task, lists[task]), keep, done); !ok {
					t.Fatalf("seed %d keep %v task %d: predecessors %v, want %v", seed, keep, task, got, want)
				}
				for range rng.IntN(3) {
					if c := 8 + rng.Int32N(task-7); !completed[c] {
						completed[c] = true
						ncompleted++
					}
				}
			}
			// What stays is the states of an address under the parents
			// other than its last entry's (one under the last's goes with
			// it): none with one parent; with keep, nothing else goes
			// (no parent completes); without, swept states go too.
			pairs, addrSet := map[[2]uint64]bool{}, map[uint64]bool{}
			for task := int32(8); task < tasks; task++ {
				for _, dep := range lists[task] {
					pairs[[2]uint64{uint64(parents[task]), dep.Addr}] = true
					addrSet[dep.Addr] = true
				}
			}
			want := len(pairs) - len(addrSet)
			n := 0
			for k := range d.table {
				if d.table[k].parent != emptySlot {
					n++
				}
			}
			if n != d.live || keep && n != want || n > want || seed%2 == 0 && n != 0 {
				t.Errorf("seed %d keep %v: %d states (%d slots filled) after every last entry, want %d", seed, keep, d.live, n, want)
			}
		}
	}
}

// TestUseTable: the table agrees with a map on every address's last
// entry, or −1 for one two threads name, whatever its size against the
// claim (grown several times from a claim of 1, not grown from a large
// one): runs of words in a page, addresses spread over the address space
// and at its top, probes that run round the table's end.
func TestUseTable(t *testing.T) {
	for _, claim := range []int64{1, 700, 5000, 1 << 16} {
		rng := rand.New(rand.NewPCG(uint64(claim), 3))
		u := newUseTable(claim)
		want := map[uint64]int32{}
		threadOf := map[uint64]int{}
		x := int32(0)
		for th := range 4 {
			base := x
			for range 3000 {
				var addr uint64
				switch rng.IntN(4) {
				case 0:
					addr = 0x7f0000000000 + uint64(rng.IntN(64))*8 // one page, word by word
				case 1:
					addr = rng.Uint64() &^ 7
				case 2:
					addr = ^uint64(0) - uint64(rng.IntN(1<<14))*8 // the top of the space
				default:
					addr = 0x5000000 + uint64(rng.IntN(4096))*64
				}
				u.use(addr, x, base)
				if old, ok := threadOf[addr]; ok && old != th {
					want[addr] = -1
				} else if !ok || want[addr] != -1 {
					want[addr] = x + 1
				}
				threadOf[addr] = th
				x++
			}
		}
		if u.n != len(want) {
			t.Fatalf("claim %d: %d addresses held, want %d", claim, u.n, len(want))
		}
		if 4*u.n > 3*len(u.keys) {
			t.Fatalf("claim %d: %d addresses in %d slots, more than 3/4", claim, u.n, len(u.keys))
		}
		got := map[uint64]int32{}
		for i, v := range u.vals {
			if v != 0 {
				got[u.keys[i]] = v
			}
		}
		for addr, v := range want {
			if got[addr] != v {
				t.Fatalf("claim %d: address %#x holds %d, want %d", claim, addr, got[addr], v)
			}
		}
	}
}

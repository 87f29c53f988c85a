package trace

import (
	"fmt"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"
)

// Problem is one finding of Validate, located by file and byte offset.
type Problem struct {
	File    string `json:"file"`
	Offset  int64  `json:"offset"`
	Message string `json:"message"`
	Fatal   bool   `json:"fatal"` // the rest of the file could not be checked
}

func (p Problem) String() string {
	return fmt.Sprintf("%s: offset %d: %s", p.File, p.Offset, p.Message)
}

// ValidateStats summarises a validated file.
type ValidateStats struct {
	Events  int64
	Threads int
	Chunks  int64
	First   int64
	Last    int64
}

// maxProblemsPerKind caps how many problems of one sort a file reports; the
// rest are counted in a final summary problem.
const maxProblemsPerKind = 20

type problemSink struct {
	file     string
	problems []Problem
	counts   map[string]int
}

func (s *problemSink) add(sort string, off int64, fatal bool, format string, args ...any) {
	if s.counts == nil {
		s.counts = make(map[string]int)
	}
	s.counts[sort]++
	if s.counts[sort] <= maxProblemsPerKind || fatal {
		s.problems = append(s.problems, Problem{File: s.file, Offset: off, Message: fmt.Sprintf(format, args...), Fatal: fatal})
	}
}

func (s *problemSink) finish() []Problem {
	keys := make([]string, 0, len(s.counts))
	for k := range s.counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if n := s.counts[k]; n > maxProblemsPerKind {
			s.problems = append(s.problems, Problem{File: s.file, Offset: -1, Message: fmt.Sprintf("%d more problems of the form %q not listed", n-maxProblemsPerKind, k)})
		}
	}
	return s.problems
}

// ValidateFile checks one process file in two streaming passes: structure,
// checksums, chunk order and per-thread time order first, then references from
// events to strings, locations, communicators, threads and tasks. Memory is
// bounded by one chunk plus a bitmap of created task ids.
func ValidateFile(path string) ([]Problem, ValidateStats, error) {
	sink := &problemSink{file: path}
	var st ValidateStats
	created := map[int]*roaring.Bitmap{} // creating thread -> task seqs
	createdPar := map[int]*roaring.Bitmap{}
	started := map[int]*roaring.Bitmap{} // coll_start requests by thread
	mark := func(m map[int]*roaring.Bitmap, id int64) {
		th := IDThread(id)
		b := m[th]
		if b == nil {
			b = roaring.New()
			m[th] = b
		}
		b.Add(uint32(IDSeq(id)))
	}
	var lastTime []int64
	var tables Tables
	complete := false

	// Pass 1.
	err := scanFile(path, func(r *Reader, c *Chunk) {
		st.Chunks++
		for len(lastTime) <= c.Thread {
			lastTime = append(lastTime, -1<<63)
		}
		for i := range c.Events {
			e := &c.Events[i]
			if st.Events == 0 || e.Time < st.First {
				st.First = e.Time
			}
			if st.Events == 0 || e.Time > st.Last {
				st.Last = e.Time
			}
			st.Events++
			if e.Time < lastTime[c.Thread] {
				sink.add("time order", c.Offset+int64(i), false, "thread %d: %s at %d ns goes back in time (previous event at %d ns)", c.Thread, e.Kind, e.Time, lastTime[c.Thread])
			}
			lastTime[c.Thread] = e.Time
			switch e.Kind {
			case TaskCreate:
				mark(created, e.Args[0])
			case ImplicitTaskBegin:
				mark(created, e.Args[1])
			case ParallelBegin:
				mark(createdPar, e.Args[0])
			case CollStart:
				mark(started, e.Args[4])
			}
		}
	}, func(r *Reader) {
		tables = *r.Tables()
		complete = r.Complete()
	})
	if err != nil {
		if fe, ok := err.(*FormatError); ok {
			sink.add("frame", fe.Offset, true, "%v", fe.Err)
			return sink.finish(), st, nil
		}
		return nil, st, err
	}
	st.Threads = len(lastTime)
	if !complete {
		sink.add("end", -1, false, "no end frame: the producer did not finish the file (crash or kill?)")
	} else if tables.End != nil {
		for t := range lastTime {
			if t < len(tables.End.Events) {
				continue
			}
			sink.add("end", -1, false, "end frame has no event count for thread %d", t)
		}
	}
	threadKnown := map[int]bool{}
	for _, t := range tables.Threads {
		threadKnown[t.Index] = true
	}
	for t := range lastTime {
		if !threadKnown[t] && lastTime[t] != -1<<63 {
			sink.add("thread", -1, false, "thread %d has events but no thread-table entry", t)
		}
	}
	for _, t := range tables.Threads {
		if t.Creator > 0 && !threadKnown[t.Creator-1] {
			sink.add("thread", -1, false, "thread %d: its creator, thread %d, has no thread-table entry", t.Index, t.Creator-1)
		}
	}

	// Pass 2: references.
	hasTask := func(id int64) bool {
		b := created[IDThread(id)]
		return b != nil && IDSeq(id) <= 1<<32-1 && b.Contains(uint32(IDSeq(id)))
	}
	hasPar := func(id int64) bool {
		b := createdPar[IDThread(id)]
		return b != nil && IDSeq(id) <= 1<<32-1 && b.Contains(uint32(IDSeq(id)))
	}
	hasStart := func(id int64) bool {
		b := started[IDThread(id)]
		return b != nil && IDSeq(id) <= 1<<32-1 && b.Contains(uint32(IDSeq(id)))
	}
	counts := make([]int64, len(lastTime))
	err = scanFile(path, func(r *Reader, c *Chunk) {
		counts[c.Thread] += int64(len(c.Events))
		for i := range c.Events {
			e := &c.Events[i]
			off := c.Offset + int64(i)
			s := schemas[e.Kind]
			for j, f := range s.Fields {
				v := e.Args[j]
				switch f {
				case FString:
					if v < 0 || v >= int64(len(tables.Strings)) {
						sink.add("string", off, false, "thread %d: %s: %s refers to undefined string %d (table has %d)", c.Thread, e.Kind, s.Args[j], v, len(tables.Strings))
					}
				case FLoc:
					if v < -1 || v >= int64(len(tables.Locations)) { // −1: unknown
						sink.add("location", off, false, "thread %d: %s: %s refers to undefined location %d (table has %d)", c.Thread, e.Kind, s.Args[j], v, len(tables.Locations))
					}
				case FComm:
					if _, ok := tables.CommByIndex(v); !ok {
						sink.add("comm", off, false, "thread %d: %s: %s refers to undefined communicator %d", c.Thread, e.Kind, s.Args[j], v)
					}
				case FTask:
					if isSyncKind(e.Kind) && SyncNamesObject(e.Args[0]) {
						// a condition variable's or barrier's identity, not a task
					} else if isSyncKind(e.Kind) && e.Args[0] == SyncThreadJoin {
						// a join's task argument is the thread joined, index + 1
						if v < 0 || v > 0 && !threadKnown[int(min(v-1, 1<<31))] {
							sink.add("thread", off, false, "thread %d: %s: the thread joined, %d − 1, has no thread-table entry", c.Thread, e.Kind, v)
						}
					} else if v != 0 && !hasTask(v) {
						sink.add("task", off, false, "thread %d: %s: %s refers to task %#x (thread %d, #%d) that is never created", c.Thread, e.Kind, s.Args[j], v, IDThread(v), IDSeq(v))
					}
				case FParallel:
					if v != 0 && !hasPar(v) {
						sink.add("parallel", off, false, "thread %d: %s: %s refers to parallel region %#x that never begins", c.Thread, e.Kind, s.Args[j], v)
					}
				}
			}
			if e.Kind == CollComplete && !hasStart(e.Args[4]) {
				sink.add("request", off, false, "thread %d: coll_complete: request %#x has no coll_start", c.Thread, e.Args[4])
			}
			if e.Kind == TaskDeps {
				for k, d := range e.Deps(c.Deps) {
					if (d.Type < DepIn || d.Type > DepInoutset) && !d.AllMemory() {
						sink.add("dep type", off, false, "thread %d: task_dependences: dependence %d has unknown type %d", c.Thread, k, d.Type)
					}
				}
			}
		}
	}, nil)
	if err != nil {
		return nil, st, err
	}
	if tables.End != nil {
		for t, n := range tables.End.Events {
			var got int64
			if t < len(counts) {
				got = counts[t]
			}
			if got != n {
				sink.add("end", -1, false, "thread %d: end frame counts %d events, file holds %d", t, n, got)
			}
		}
	}
	return sink.finish(), st, nil
}

// scanFile streams every chunk of a file through fn and calls done with the
// reader at the end (its tables are complete then).
func scanFile(path string, fn func(*Reader, *Chunk), done func(*Reader)) error {
	f, err := OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := NewReader(f, path)
	if err != nil {
		return err
	}
	for c, err := range r.Chunks() {
		if err != nil {
			return err
		}
		fn(r, c)
	}
	if done != nil {
		done(r)
	}
	return nil
}

// ValidateDir checks a trace directory: every rank file present, headers
// consistent with their place (rank, rank count), manifest counts right, and
// each file as ValidateFile does.
func ValidateDir(path string, progress func(done, total int)) ([]Problem, ValidateStats, error) {
	d, err := OpenDir(path)
	if err != nil {
		return nil, ValidateStats{}, err
	}
	var all []Problem
	for _, w := range d.Warnings { // rank files that are not part of the trace
		all = append(all, Problem{File: path, Offset: -1, Message: w})
	}
	var total ValidateStats
	for i := range d.Files {
		fp := d.FilePath(i)
		if h, err := readHeader(fp); err != nil {
			all = append(all, problemOf(fp, err))
			continue
		} else {
			if h.Rank != i {
				all = append(all, Problem{File: fp, Offset: 0, Message: fmt.Sprintf("header says rank %d, file is rank %d's", h.Rank, i)})
			}
			if h.NRanks != d.NRanks() {
				all = append(all, Problem{File: fp, Offset: 0, Message: fmt.Sprintf("header says %d ranks, the trace has %d", h.NRanks, d.NRanks())})
			}
			if err := SameRun(d.RunID, d.FilePath(0), h, fp); err != nil {
				all = append(all, Problem{File: fp, Offset: 0, Message: err.Error()})
			}
		}
		ps, st, err := ValidateFile(fp)
		if err != nil {
			all = append(all, problemOf(fp, err))
			continue
		}
		all = append(all, ps...)
		if d.Files[i].Events > 0 && d.Files[i].Events != st.Events {
			all = append(all, Problem{File: fp, Offset: -1, Message: fmt.Sprintf("manifest counts %d events, file holds %d", d.Files[i].Events, st.Events)})
		}
		if total.Events == 0 || (st.Events > 0 && st.First < total.First) {
			total.First = st.First
		}
		if st.Last > total.Last {
			total.Last = st.Last
		}
		total.Events += st.Events
		total.Threads += st.Threads
		total.Chunks += st.Chunks
		if progress != nil {
			progress(i+1, len(d.Files))
		}
	}
	return all, total, nil
}

func readHeader(path string) (Header, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	r, err := NewReader(f, path)
	if err != nil {
		return Header{}, err
	}
	return r.Header(), nil
}

func problemOf(path string, err error) Problem {
	if fe, ok := err.(*FormatError); ok {
		return Problem{File: fe.File, Offset: fe.Offset, Message: fe.Err.Error(), Fatal: true}
	}
	return Problem{File: path, Offset: -1, Message: err.Error(), Fatal: true}
}

func isSyncKind(k Kind) bool {
	return k == SyncBegin || k == SyncEnd || k == SyncWaitBegin || k == SyncWaitEnd
}

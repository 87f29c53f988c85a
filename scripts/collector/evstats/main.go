// Command evstats prints the size statistics of a trace directory for the
// collector measurements (scripts/collector): events, bytes on disk per event
// and the collector's in-memory record size per event (8 bytes of time and
// kind plus 8 per argument; a dependence list adds 8 for its count and 16 per
// entry).
//
//	go run ./scripts/collector/evstats DIR
package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/ptrace-dev/ptrace/trace"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: evstats DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "evstats:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	d, err := trace.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	var events, disk, mem int64
	kinds := map[trace.Kind]int64{}
	for i := range d.Files {
		p, err := trace.LoadProcess(d.FilePath(i), trace.LoadOptions{})
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		disk += d.Files[i].Bytes
		for th := 0; th < p.NumThreads(); th++ {
			for sc := p.Scan(th, nil); sc.Next(); {
				e := sc.Event()
				s, _ := trace.SchemaOf(e.Kind)
				mem += 8 * int64(1+len(s.Fields))
				if e.Kind == trace.TaskDeps {
					mem += 8 + 16*e.Args[1]
				}
				kinds[e.Kind]++
			}
		}
		events += p.NumEvents()
	}
	if events == 0 {
		return fmt.Errorf("%s: no events", dir)
	}
	fmt.Printf("events=%d disk_bytes=%d disk_bytes_per_event=%.2f memory_bytes_per_event=%.1f\n",
		events, disk, float64(disk)/float64(events), float64(mem)/float64(events))
	ks := make([]trace.Kind, 0, len(kinds))
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return kinds[ks[i]] > kinds[ks[j]] })
	for _, k := range ks {
		fmt.Printf("  %-20s %d\n", k, kinds[k])
	}
	return nil
}

package sim_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/trace"
)

func TestZZCycle(t *testing.T) {
	dir := t.TempDir()
	gen.Generate(dir, gen.Config{Workload: "imbalance", Threads: 4, Iterations: 5})
	f := fragsOf(t, filepath.Join(dir, trace.FileName(0)))
	// find a cycle by DFS
	out := make([][]int32, f.Len())
	for i := range f.Src {
		out[f.Src[i]] = append(out[f.Src[i]], f.Dst[i])
	}
	color := make([]int, f.Len())
	var stack []int32
	var dfs func(v int32) bool
	dfs = func(v int32) bool {
		color[v] = 1
		stack = append(stack, v)
		for _, w := range out[v] {
			if color[w] == 1 {
				stack = append(stack, w)
				return true
			}
			if color[w] == 0 && dfs(w) {
				return true
			}
		}
		stack = stack[:len(stack)-1]
		color[v] = 2
		return false
	}
	for i := 0; i < f.Len(); i++ {
		if color[i] == 0 && dfs(int32(i)) {
			for _, v := range stack {
				fmt.Println(v, f.Kind[v], "th", f.Thread[v], "task", f.Task[v], "start", f.Start[v], "w", f.Weight[v])
			}
			break
		}
	}
}

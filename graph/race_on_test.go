//go:build race

package graph

// raceBuild: the race detector instruments allocations, so tests that
// count the bytes allocated measure its bookkeeping too.
const raceBuild = true

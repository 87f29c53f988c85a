package compare

import "testing"

// A label inside a sentence is lowered unless its first word is a name
// with capitals of its own ("openMP parallel efficiency" was written).
func TestLowerFirst(t *testing.T) {
	for in, want := range map[string]string{
		"OpenMP parallel efficiency": "OpenMP parallel efficiency",
		"MPI communication":          "MPI communication",
		"Parallel efficiency":        "parallel efficiency",
		"Load balance":               "load balance",
		"Hybrid":                     "hybrid",
		"A":                          "A",
		"":                           "",
	} {
		if got := lowerFirst(in); got != want {
			t.Errorf("lowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}

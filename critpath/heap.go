package critpath

// heapDown moves h[i] down to its place in the binary heap h, whose least
// element by less is h[0]: rank 0's merges of the ranks' lists of path
// nodes (mergeLists) and of their stretches (stretchQueue).
func heapDown[T any](h []T, i int, less func(a, b T) bool) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if r := c + 1; r < len(h) && less(h[r], h[c]) {
			c = r
		}
		if !less(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// heapUp moves h[i] up to its place in the binary heap h (heapDown).
func heapUp[T any](h []T, i int, less func(a, b T) bool) {
	for i > 0 {
		up := (i - 1) / 2
		if !less(h[i], h[up]) {
			return
		}
		h[i], h[up] = h[up], h[i]
		i = up
	}
}

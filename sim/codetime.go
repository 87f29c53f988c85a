package sim

// CodeTime is the time a thread spent in one code: a user region (a
// string id), a parallel region or another label, as the caller names it.
type CodeTime struct{ Code, NS int64 }

// AddCodeTime adds d ns to code's entry of ts, a short list (a thread runs
// in few codes between two points the callers care about), appending one
// when code is new, and returns the list.
func AddCodeTime(ts []CodeTime, code, d int64) []CodeTime {
	for i := range ts {
		if ts[i].Code == code {
			ts[i].NS += d
			return ts
		}
	}
	return append(ts, CodeTime{code, d})
}

// MostTime returns the code of ts with the most time, −1 for none.
func MostTime(ts []CodeTime) int64 {
	best := CodeTime{-1, 0}
	for _, c := range ts {
		if c.NS > best.NS {
			best = c
		}
	}
	return best.Code
}

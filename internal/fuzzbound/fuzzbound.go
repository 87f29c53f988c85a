// Package fuzzbound bounds the minimisation of go test -fuzz for the
// fuzz targets of a package, from its TestMain. Go minimises every input
// that finds new coverage for up to a minute by default, executing the
// target thousands of times without counting those executions; on
// structured inputs of kilobytes, where nearly every early input finds new
// coverage, a worker then spends most of its time minimising and shows 0
// execs/s for minutes (issue 42: FuzzLoad stalled at 8 executions in 30 s).
package fuzzbound

import "flag"

// Default is the minimisation bound used when -fuzzminimizetime is not
// given: 100 executions, whatever an execution costs (a count, not a time,
// so a loaded machine does not stretch it), enough for a first pass over
// the small inputs the targets start from.
const Default = "100x"

// Apply parses the command line and sets -test.fuzzminimizetime to
// Default when fuzzing without one. Call it first in TestMain.
func Apply() {
	if !flag.Parsed() {
		flag.Parse()
	}
	fuzz, set := false, false
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "test.fuzz":
			fuzz = f.Value.String() != ""
		case "test.fuzzminimizetime":
			set = true
		}
	})
	if fuzz && !set {
		flag.Set("test.fuzzminimizetime", Default)
	}
}

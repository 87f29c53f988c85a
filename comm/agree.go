package comm

import (
	"errors"
	"fmt"
	"strings"
)

// Agree makes every rank learn whether any rank failed: a collective every
// rank must call at the same point, err being this rank's outcome. It returns
// nil on every rank when no rank failed. Otherwise the failing ranks get
// their own errors back and the others an *AbortError carrying the lowest
// failing rank's message, so no rank goes on alone into a collective that
// would never complete.
//
// An err that already is (or wraps) an *AbortError is returned at once
// without communicating: the communicator failed, and collectives would too.
func Agree(c Comm, err error) error {
	var ae *AbortError
	if errors.As(err, &ae) {
		return err
	}
	flag := int64(0)
	if err != nil {
		flag = 1
	}
	failed, cerr := c.AllreduceInt64(Max, []int64{flag})
	if cerr != nil {
		return cerr
	}
	if failed[0] == 0 {
		return nil
	}
	msg := ""
	if err != nil {
		msg = err.Error()
		if msg == "" {
			msg = "failed" // an empty message would look like success
		}
	}
	msgs, gerr := c.Gatherv(0, []byte(msg))
	if gerr != nil {
		return gerr
	}
	// Rank 0 tells everyone who failed first and why.
	var first []byte
	if c.Rank() == 0 {
		for rk, m := range msgs {
			if len(m) > 0 {
				first = fmt.Appendf(nil, "%d\x00%s", rk, m)
				break
			}
		}
	}
	first, berr := c.Bcast(0, first)
	if berr != nil {
		return berr
	}
	if err != nil {
		return err
	}
	rk, m, _ := strings.Cut(string(first), "\x00")
	var rank int
	fmt.Sscan(rk, &rank)
	return &AbortError{Rank: rank, Err: errors.New(m)}
}

package critpath

import (
	"errors"
	"slices"

	"github.com/ptrace-dev/ptrace/comm"
)

// selfComm is a communicator of one rank, for the graph's collective
// builder and replays run over one process's DAG alone
// (Input.analyzeApart): every collective is a copy or the identity, and
// point-to-point messages, which nothing sends to itself, are refused.
type selfComm struct{}

var errSelf = errors.New("critpath: a communicator of one rank has no peer")

func (selfComm) Rank() int { return 0 }
func (selfComm) Size() int { return 1 }

func (selfComm) Send(dst, tag int, buf []byte) error { return errSelf }
func (selfComm) Recv(src, tag int) ([]byte, error)   { return nil, errSelf }
func (selfComm) Isend(dst, tag int, buf []byte) comm.Request {
	return failed{}
}
func (selfComm) Irecv(src, tag int) comm.Request { return failed{} }

func (selfComm) Alltoallv(send [][]byte) ([][]byte, error) {
	if len(send) != 1 {
		return nil, errors.New("critpath: Alltoallv on one rank takes one buffer")
	}
	return [][]byte{send[0]}, nil
}

func (selfComm) Exchange(send []comm.Msg) ([]comm.Msg, error) {
	if err := comm.CheckExchange(1, send); err != nil {
		return nil, err
	}
	var out []comm.Msg
	for _, m := range send {
		if len(m.Buf) > 0 {
			out = append(out, comm.Msg{Peer: 0, Buf: m.Buf})
		}
	}
	return out, nil
}

func (selfComm) Gatherv(root int, buf []byte) ([][]byte, error) { return [][]byte{buf}, nil }
func (selfComm) Bcast(root int, buf []byte) ([]byte, error)     { return buf, nil }

func (selfComm) AllreduceInt64(op comm.Op, vals []int64) ([]int64, error) {
	return slices.Clone(vals), nil
}

func (selfComm) AllreduceFloat64(op comm.Op, vals []float64) ([]float64, error) {
	return slices.Clone(vals), nil
}

func (selfComm) ReduceInt64(root int, op comm.Op, vals []int64) ([]int64, error) {
	return slices.Clone(vals), nil
}

func (selfComm) ReduceFloat64(root int, op comm.Op, vals []float64) ([]float64, error) {
	return slices.Clone(vals), nil
}

func (selfComm) Barrier() error { return nil }

// Abort has no other rank to stop: the caller returns err itself.
func (selfComm) Abort(err error) {}

type failed struct{}

func (failed) Wait() ([]byte, error) { return nil, errSelf }

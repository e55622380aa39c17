package dataset

import (
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/optimizer"
)

// Collected holds a data set's values after Env.Execute.
type Collected[T any] struct {
	parts [][]T
	vals  []T
}

// Values returns the collected values: subtask 0's first, in the order each
// subtask received them. It is empty before Execute succeeds.
func (c *Collected[T]) Values() []T { return c.vals }

// Collect makes the data set's values available through the returned handle
// once Env.Execute has succeeded.
func Collect[T any](ds *DataSet[T]) *Collected[T] {
	res := &Collected[T]{}
	n := ds.env.newNode(optimizer.Sink, "Collect at "+caller(1), ds.n)
	n.opt.RowBytes = rowBytes[T]()
	connectInput[T](n, 0, nil)
	n.reset = func() {
		res.parts = make([][]T, n.opt.Parallelism)
		res.vals = nil
	}
	n.run = func(tc *task, _ any) error {
		in := flow.Input[T](tc.TaskContext, 0)
		var part []T
		for {
			b, err := in.Next(tc.Context())
			if err != nil {
				if isEOF(err) {
					break
				}
				return err
			}
			part = append(part, b...)
			n.rows.Add(int64(len(b)))
		}
		res.parts[tc.Subtask] = part
		return nil
	}
	n.done = func() {
		for _, p := range res.parts {
			res.vals = append(res.vals, p...)
		}
		res.parts = nil
	}
	return res
}

// Counted holds a data set's record count after Env.Execute.
type Counted struct {
	parts []int64
	n     int64
}

// N returns the count; zero before Execute succeeds.
func (c *Counted) N() int64 { return c.n }

// Count counts the data set's records.
func Count[T any](ds *DataSet[T]) *Counted {
	res := &Counted{}
	n := ds.env.newNode(optimizer.Sink, "Count at "+caller(1), ds.n)
	n.opt.RowBytes = rowBytes[T]()
	connectInput[T](n, 0, nil)
	n.reset = func() { res.parts, res.n = make([]int64, n.opt.Parallelism), 0 }
	n.run = func(tc *task, _ any) error {
		in := flow.Input[T](tc.TaskContext, 0)
		var k int64
		for {
			b, err := in.Next(tc.Context())
			if err != nil {
				if isEOF(err) {
					break
				}
				return err
			}
			k += int64(len(b))
			n.rows.Add(int64(len(b)))
		}
		res.parts[tc.Subtask] = k
		return nil
	}
	n.done = func() {
		for _, k := range res.parts {
			res.n += k
		}
	}
	return res
}

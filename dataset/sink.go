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
	n.op = pulls[none](&collectOp[T]{n: n, res: res})
	n.gathered = true
	return res
}

// collectOp is Collect's operator: each subtask keeps its part, joined once
// the execution succeeded.
type collectOp[T any] struct {
	stateless
	n   *node
	res *Collected[T]
}

func (o *collectOp[T]) reset() {
	o.res.parts = make([][]T, o.n.parallelism())
	o.res.vals = nil
}

func (o *collectOp[T]) run(tc *task, _ collector[none]) error {
	var part []T
	var err error
	for b := range flow.Batches[T](tc.TaskContext, 0, &err) {
		part = append(part, b...)
		o.n.rows.Add(int64(len(b)))
	}
	if err != nil {
		return err
	}
	o.res.parts[tc.Subtask] = part
	return nil
}

func (o *collectOp[T]) done() {
	for _, p := range o.res.parts {
		o.res.vals = append(o.res.vals, p...)
	}
	o.res.parts = nil
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
	n.op = pulls[none](&countOp[T]{n: n, res: res})
	n.gathered = true
	return res
}

// countOp is Count's operator: each subtask counts its part.
type countOp[T any] struct {
	stateless
	n   *node
	res *Counted
}

func (o *countOp[T]) reset() { o.res.parts, o.res.n = make([]int64, o.n.parallelism()), 0 }

func (o *countOp[T]) run(tc *task, _ collector[none]) error {
	var k int64
	var err error
	for b := range flow.Batches[T](tc.TaskContext, 0, &err) {
		k += int64(len(b))
		o.n.rows.Add(int64(len(b)))
	}
	if err != nil {
		return err
	}
	o.res.parts[tc.Subtask] = k
	return nil
}

func (o *countOp[T]) done() {
	for _, k := range o.res.parts {
		o.res.n += k
	}
}

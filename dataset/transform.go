package dataset

import (
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/optimizer"
)

// Map applies fn to every record.
func Map[T, U any](ds *DataSet[T], fn func(T) U) *DataSet[U] {
	n := ds.env.newNode(optimizer.Map, "Map at "+caller(1), ds.n)
	connectInput[T](n, 0, nil)
	n.op = pushes[T, U](&mapOp[T, U]{fn: fn})
	return newDataSet[U](ds.env, n)
}

// mapOp is Map's operator; mapTask its instance in a task.
type mapOp[T, U any] struct {
	stateless
	fn func(T) U
}

func (o *mapOp[T, U]) open(_ *task, out collector[U]) (flow.OneInput[T], error) {
	return &mapTask[T, U]{fn: o.fn, next: out}, nil
}

type mapTask[T, U any] struct {
	flow.Idle
	fn   func(T) U
	next collector[U]
	buf  []U
}

func (c *mapTask[T, U]) Process(b []T) error {
	buf := c.buf[:0]
	for i := range b {
		buf = append(buf, c.fn(b[i]))
	}
	c.buf = buf
	return c.next.Collect(buf)
}

func (c *mapTask[T, U]) EndInput() error { return c.next.End() }

// FlatMap calls fn for every record; fn emits any number of results through emit,
// which is valid only during the call.
func FlatMap[T, U any](ds *DataSet[T], fn func(v T, emit func(U))) *DataSet[U] {
	n := ds.env.newNode(optimizer.Map, "FlatMap at "+caller(1), ds.n)
	connectInput[T](n, 0, nil)
	n.op = pushes[T, U](&flatMapOp[T, U]{fn: fn, limit: ds.env.opts.BatchSize})
	return newDataSet[U](ds.env, n)
}

// flatMapOp is FlatMap's operator; flatMapTask its instance in a task.
type flatMapOp[T, U any] struct {
	stateless
	fn    func(T, func(U))
	limit int
}

func (o *flatMapOp[T, U]) open(_ *task, out collector[U]) (flow.OneInput[T], error) {
	c := &flatMapTask[T, U]{fn: o.fn, next: out, limit: o.limit}
	c.emit = func(u U) { c.buf = append(c.buf, u) } // one closure per task, not per record
	return c, nil
}

type flatMapTask[T, U any] struct {
	flow.Idle
	fn    func(T, func(U))
	emit  func(U)
	next  collector[U]
	buf   []U
	limit int
}

func (c *flatMapTask[T, U]) Process(b []T) error {
	c.buf = c.buf[:0]
	for i := range b {
		c.fn(b[i], c.emit)
		if len(c.buf) >= c.limit {
			if err := c.next.Collect(c.buf); err != nil {
				return err
			}
			c.buf = c.buf[:0]
		}
	}
	if len(c.buf) == 0 {
		return nil
	}
	return c.next.Collect(c.buf)
}

func (c *flatMapTask[T, U]) EndInput() error { return c.next.End() }

// Filter keeps the records for which pred is true.
func (ds *DataSet[T]) Filter(pred func(T) bool) *DataSet[T] {
	n := ds.env.newNode(optimizer.Map, "Filter at "+caller(1), ds.n)
	n.opt.PreservesAll = true
	connectInput[T](n, 0, nil)
	n.op = pushes[T, T](&filterOp[T]{pred: pred})
	return newDataSet[T](ds.env, n)
}

// filterOp is Filter's operator; filterTask its instance in a task.
type filterOp[T any] struct {
	stateless
	pred func(T) bool
}

func (o *filterOp[T]) open(_ *task, out collector[T]) (flow.OneInput[T], error) {
	return &filterTask[T]{pred: o.pred, next: out}, nil
}

type filterTask[T any] struct {
	flow.Idle
	pred func(T) bool
	next collector[T]
	buf  []T
}

func (c *filterTask[T]) Process(b []T) error {
	buf := c.buf[:0]
	for i := range b {
		if c.pred(b[i]) {
			buf = append(buf, b[i])
		}
	}
	c.buf = buf
	if len(buf) == len(b) {
		return c.next.Collect(b) // nothing dropped: pass the batch through untouched
	}
	if len(buf) == 0 {
		return nil
	}
	return c.next.Collect(buf)
}

func (c *filterTask[T]) EndInput() error { return c.next.End() }

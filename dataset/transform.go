package dataset

import (
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/optimizer"
)

// Map applies fn to every record.
func Map[T, U any](ds *DataSet[T], fn func(T) U) *DataSet[U] {
	n := ds.env.newNode(optimizer.Map, "Map at "+caller(1), ds.n)
	connectInput[T](n, 0, nil)
	runWrapped[T](n)
	n.wrap = func(tc *task, next any) (any, error) {
		out, err := asCollector[U](n, next)
		if err != nil {
			return nil, err
		}
		return &mapCollector[T, U]{fn: fn, next: out}, nil
	}
	return newDataSet[U](ds.env, n)
}

type mapCollector[T, U any] struct {
	flow.Plain
	fn   func(T) U
	next collector[U]
	buf  []U
}

func (c *mapCollector[T, U]) Collect(b []T) error {
	buf := c.buf[:0]
	for i := range b {
		buf = append(buf, c.fn(b[i]))
	}
	c.buf = buf
	return c.next.Collect(buf)
}

func (c *mapCollector[T, U]) End() error { return c.next.End() }

// FlatMap calls fn for every record; fn emits any number of results through emit,
// which is valid only during the call.
func FlatMap[T, U any](ds *DataSet[T], fn func(v T, emit func(U))) *DataSet[U] {
	n := ds.env.newNode(optimizer.Map, "FlatMap at "+caller(1), ds.n)
	connectInput[T](n, 0, nil)
	runWrapped[T](n)
	n.wrap = func(tc *task, next any) (any, error) {
		out, err := asCollector[U](n, next)
		if err != nil {
			return nil, err
		}
		c := &flatMapCollector[T, U]{fn: fn, next: out, limit: n.env.opts.BatchSize}
		c.emit = func(u U) { c.buf = append(c.buf, u) } // one closure per task, not per record
		return c, nil
	}
	return newDataSet[U](ds.env, n)
}

type flatMapCollector[T, U any] struct {
	flow.Plain
	fn    func(T, func(U))
	emit  func(U)
	next  collector[U]
	buf   []U
	limit int
}

func (c *flatMapCollector[T, U]) Collect(b []T) error {
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

func (c *flatMapCollector[T, U]) End() error { return c.next.End() }

// Filter keeps the records for which pred is true.
func (ds *DataSet[T]) Filter(pred func(T) bool) *DataSet[T] {
	n := ds.env.newNode(optimizer.Map, "Filter at "+caller(1), ds.n)
	n.opt.PreservesAll = true
	connectInput[T](n, 0, nil)
	runWrapped[T](n)
	n.wrap = func(tc *task, next any) (any, error) {
		out, err := asCollector[T](n, next)
		if err != nil {
			return nil, err
		}
		return &filterCollector[T]{pred: pred, next: out}, nil
	}
	return newDataSet[T](ds.env, n)
}

type filterCollector[T any] struct {
	flow.Plain
	pred func(T) bool
	next collector[T]
	buf  []T
}

func (c *filterCollector[T]) Collect(b []T) error {
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

func (c *filterCollector[T]) End() error { return c.next.End() }

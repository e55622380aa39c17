package dataset

import (
	"fmt"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/optimizer"
)

// MapErr applies fn to every record. An error from fn fails the job with
// that error, wrapped with the operator's name; nothing of the job's output
// is committed.
func MapErr[T, U any](ds *DataSet[T], fn func(T) (U, error)) *DataSet[U] {
	return flatMapErr(ds, "MapErr at "+caller(1), false, func(v T, emit func(U)) error {
		u, err := fn(v)
		if err == nil {
			emit(u)
		}
		return err
	})
}

// FlatMapErr is FlatMap whose fn may fail: an error from fn fails the job as
// MapErr's does. What fn emitted for the failing record is dropped.
func FlatMapErr[T, U any](ds *DataSet[T], fn func(v T, emit func(U)) error) *DataSet[U] {
	return flatMapErr(ds, "FlatMapErr at "+caller(1), false, fn)
}

// FilterErr keeps the records for which pred is true; an error from pred
// fails the job as MapErr's does.
func FilterErr[T any](ds *DataSet[T], pred func(T) (bool, error)) *DataSet[T] {
	return flatMapErr(ds, "FilterErr at "+caller(1), true, func(v T, emit func(T)) error {
		ok, err := pred(v)
		if ok && err == nil {
			emit(v)
		}
		return err
	})
}

func flatMapErr[T, U any](ds *DataSet[T], where string, filter bool, fn func(T, func(U)) error) *DataSet[U] {
	n := ds.env.newNode(optimizer.Map, where, ds.n)
	n.opt.PreservesAll = filter
	connectInput[T](n, 0, nil)
	n.op = pushes[T, U](&flatMapErrOp[T, U]{where: where, fn: fn, limit: ds.env.opts.BatchSize})
	return newDataSet[U](ds.env, n)
}

// flatMapErrOp is the operator of MapErr, FlatMapErr and FilterErr;
// flatMapErrTask its instance in a task.
type flatMapErrOp[T, U any] struct {
	stateless
	where string
	fn    func(T, func(U)) error
	limit int
}

func (o *flatMapErrOp[T, U]) open(_ *task, out collector[U]) (flow.OneInput[T], error) {
	c := &flatMapErrTask[T, U]{op: o, next: out}
	c.emit = func(u U) { c.buf = append(c.buf, u) } // one closure per task, not per record
	return c, nil
}

type flatMapErrTask[T, U any] struct {
	flow.Idle
	op   *flatMapErrOp[T, U]
	emit func(U)
	next collector[U]
	buf  []U
}

func (c *flatMapErrTask[T, U]) Process(b []T) error {
	c.buf = c.buf[:0]
	for i := range b {
		if err := c.op.fn(b[i], c.emit); err != nil {
			return fmt.Errorf("dataset: %s: %w", c.op.where, err)
		}
		if len(c.buf) >= c.op.limit {
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

func (c *flatMapErrTask[T, U]) EndInput() error { return c.next.End() }

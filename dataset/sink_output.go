package dataset

import (
	"fmt"
	"io"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/formats"
	"github.com/weirdata/weir/optimizer"
)

// First keeps n records of ds: the first n each subtask sees, then the first n
// of those at one subtask. Which records are first follows the data's order
// where it has one (after Sort, the n least keys).
func (ds *DataSet[T]) First(n int) *DataSet[T] {
	where := "First at " + caller(1)
	env := ds.env
	local := env.newNode(optimizer.Map, where+" (per subtask)", ds.n)
	connectInput[T](local, 0, nil)
	runWrapped[T](local)
	local.wrap = func(tc *task, next any) (any, error) {
		out, err := asCollector[T](local, next)
		if err != nil {
			return nil, err
		}
		return &firstCollector[T]{left: n, next: out}, nil
	}
	l := newDataSet[T](env, local)
	final := env.newNode(optimizer.MapPartition, where, l.n)
	final.opt.Parallelism = 1
	connectInput[T](final, 0, nil)
	runWrapped[T](final)
	final.wrap = local.wrap
	final.opt.OrderedGather = true // subtask 0's first records first: after Sort, the least keys
	return newDataSet[T](env, final)
}

type firstCollector[T any] struct {
	left int
	next collector[T]
}

func (c *firstCollector[T]) collect(b []T) error {
	if c.left <= 0 {
		return nil
	}
	if len(b) > c.left {
		b = b[:c.left]
	}
	c.left -= len(b)
	return c.next.collect(b)
}

func (c *firstCollector[T]) close() error { return c.next.close() }

// Output writes ds to sink: subtask i of n writes through sink.Create(ctx, i, n)
// and commits when its input ends; on any failure every writer aborts and
// nothing is left.
func Output[T any](ds *DataSet[T], name string, sink formats.Sink[T]) {
	where := fmt.Sprintf("Output %s at %s", name, caller(1))
	n := ds.env.newNode(optimizer.Sink, where, ds.n)
	connectInput[T](n, 0, nil)
	n.run = func(tc *task, _ any) error {
		w, err := sink.Create(tc.Context(), tc.Subtask, tc.Parallelism)
		if err != nil {
			return err
		}
		tc.onExit(w.Abort) // a no-op after Commit
		in := flow.Input[T](tc.TaskContext, 0)
		for {
			b, err := in.Next(tc.Context())
			if err != nil {
				if isEOF(err) {
					return w.Commit()
				}
				return err
			}
			if err := w.Write(b); err != nil {
				return err
			}
		}
	}
}

// Print writes every record of ds to w, one per line as fmt's %v prints it, from
// one subtask that reads ds's subtasks in order (so a sorted data set prints in
// order, and lines never interleave).
func Print[T any](ds *DataSet[T], w io.Writer) {
	n := ds.env.newNode(optimizer.Sink, "Print at "+caller(1), ds.n)
	n.opt.Parallelism = 1
	n.opt.OrderedGather = true
	connectInput[T](n, 0, nil)
	n.run = func(tc *task, _ any) error {
		in := flow.Input[T](tc.TaskContext, 0)
		for {
			b, err := in.Next(tc.Context())
			if err != nil {
				if isEOF(err) {
					return nil
				}
				return err
			}
			for i := range b {
				if _, err := fmt.Fprintf(w, "%v\n", b[i]); err != nil {
					return err
				}
			}
		}
	}
}

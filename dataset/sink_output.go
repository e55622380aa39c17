package dataset

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"

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
	local.opt.PreservesAll = true
	connectInput[T](local, 0, nil)
	local.op = pushes[T, T](firstOp[T]{n: n})
	l := newDataSet[T](env, local)
	final := env.newNode(optimizer.MapPartition, where, l.n)
	final.opt.Parallelism = 1
	final.opt.PreservesAll = true
	connectInput[T](final, 0, nil)
	final.op = local.op
	final.opt.OrderedGather = true // subtask 0's first records first: after Sort, the least keys
	return newDataSet[T](env, final)
}

// firstOp is the operator of both of First's steps: firstTask passes on the
// first n records its task sees.
type firstOp[T any] struct {
	stateless
	n int
}

func (o firstOp[T]) open(_ *task, out collector[T]) (flow.OneInput[T], error) {
	return &firstTask[T]{left: o.n, next: out}, nil
}

type firstTask[T any] struct {
	flow.Idle
	left int
	next collector[T]
}

func (c *firstTask[T]) Process(b []T) error {
	if c.left <= 0 {
		return nil
	}
	if len(b) > c.left {
		b = b[:c.left]
	}
	c.left -= len(b)
	return c.next.Collect(b)
}

func (c *firstTask[T]) EndInput() error { return c.next.End() }

// Output writes ds to sink in two phases, as Flink's output formats do:
// subtask i of n writes through sink.Create(ctx, i, n) and Closes its writer
// when its input ends (an error there fails the task); once the whole job has
// succeeded, Env.Execute Commits every writer in subtask order. If the job
// fails, every writer aborts; if a Commit fails, the writers not yet committed
// abort and the files already committed are removed (when the writer is a
// formats.Remover), so a failed job leaves nothing.
func Output[T any](ds *DataSet[T], name string, sink formats.Sink[T]) {
	where := fmt.Sprintf("Output %s at %s", name, caller(1))
	n := ds.env.newNode(optimizer.Sink, where, ds.n)
	n.opt.RowBytes = rowBytes[T]()
	connectInput[T](n, 0, nil)
	n.op = pushes[T, none](&outputOp[T]{n: n, sink: sink})
}

// outputOp is Output's operator. closed holds, per subtask, its writer once
// Close succeeded; closed[:committed] are committed.
type outputOp[T any] struct {
	stateless
	n         *node
	sink      formats.Sink[T]
	closed    []formats.Writer[T]
	committed int
}

func (o *outputOp[T]) reset() {
	o.closed, o.committed = make([]formats.Writer[T], o.n.opt.Parallelism), 0
}

// open returns the subtask's writer as the tail of its producer's chain
// (or the head of its own task).
func (o *outputOp[T]) open(tc *task, _ collector[none]) (flow.OneInput[T], error) {
	if tc.Subtask >= len(o.closed) {
		return nil, fmt.Errorf("internal error: subtask %d of %d writers", tc.Subtask, len(o.closed))
	}
	return &sinkTask[T]{op: o, rows: &o.n.rows}, nil
}

func (o *outputOp[T]) commit() error {
	for ; o.committed < len(o.closed); o.committed++ {
		w := o.closed[o.committed]
		if w == nil && o.n.env.elsewhere(o.n, o.committed) {
			continue // another process commits it
		}
		if w == nil {
			return fmt.Errorf("internal error: subtask %d has no closed writer", o.committed)
		}
		if err := w.Commit(); err != nil {
			return err
		}
	}
	return nil
}

func (o *outputOp[T]) abort() error {
	var errs []error
	for i, w := range o.closed {
		switch {
		case w == nil:
		case i >= o.committed:
			w.Abort()
		default:
			r, ok := w.(formats.Remover)
			if !ok {
				errs = append(errs, fmt.Errorf("subtask %d: the committed output cannot be removed (%T is not a formats.Remover)", i, w))
			} else if err := r.Remove(); err != nil {
				errs = append(errs, err)
			}
		}
		o.closed[i] = nil
	}
	o.committed = 0
	return errors.Join(errs...)
}

// sinkTask is Output's instance in a task: Open creates the subtask's
// writer, Process writes to it, EndInput closes it and hands it to the
// job's commit; Close aborts it unless EndInput closed it. As a collector
// (the sorts hand it their output directly) it declares what the writer
// takes: borrowed records (formats.ValueCopier) or raw ones
// (formats.RawWriter).
type sinkTask[T any] struct {
	op     *outputOp[T]
	w      formats.Writer[T]
	sub    int
	closed bool
	rows   *atomic.Int64 // the records the sink received
}

func (c *sinkTask[T]) Open(tc *flow.TaskContext) error {
	w, err := c.op.sink.Create(tc.Context(), tc.Subtask, tc.Parallelism)
	if err != nil {
		return err
	}
	c.w, c.sub = w, tc.Subtask
	return nil
}

func (c *sinkTask[T]) Process(b []T) error {
	c.rows.Add(int64(len(b)))
	return c.w.Write(b)
}

func (c *sinkTask[T]) EndInput() error {
	if err := c.w.Close(); err != nil {
		return err
	}
	c.closed = true
	c.op.closed[c.sub] = c.w
	return nil
}

func (c *sinkTask[T]) Close() error {
	if !c.closed {
		c.w.Abort()
	}
	return nil
}

// Borrows reports whether the writer is done with a batch's records, bytes
// included, when Write returns (formats.ValueCopier).
func (c *sinkTask[T]) Borrows() bool {
	_, ok := c.w.(formats.ValueCopier)
	return ok
}

// Raw returns the collector as a raw sink when its writer takes records as
// their bytes (formats.RawWriter); else nil.
func (c *sinkTask[T]) Raw() flow.RawSink {
	if rw, ok := c.w.(formats.RawWriter); ok {
		return sinkRaw{rw, c.rows}
	}
	return nil
}

// sinkRaw writes raw records to a writer and counts them.
type sinkRaw struct {
	w    formats.RawWriter
	rows *atomic.Int64
}

func (s sinkRaw) Write(b []byte) error { return s.w.WriteRaw(b) }
func (s sinkRaw) Written(n int64)      { s.rows.Add(n) }

// Print writes every record of ds to w, one per line as fmt's %v prints it, from
// one subtask that reads ds's subtasks in order (so a sorted data set prints in
// order, and lines never interleave).
func Print[T any](ds *DataSet[T], w io.Writer) {
	n := ds.env.newNode(optimizer.Sink, "Print at "+caller(1), ds.n)
	n.opt.RowBytes = rowBytes[T]()
	n.opt.Parallelism = 1
	n.opt.OrderedGather = true
	connectInput[T](n, 0, nil)
	n.op = pulls[none](&printOp[T]{n: n, w: w})
}

// printOp is Print's operator.
type printOp[T any] struct {
	stateless
	n *node
	w io.Writer
}

func (o *printOp[T]) run(tc *task, _ collector[none]) error {
	var err error
	for b := range flow.Batches[T](tc.TaskContext, 0, &err) {
		o.n.rows.Add(int64(len(b)))
		for i := range b {
			if _, err := fmt.Fprintf(o.w, "%v\n", b[i]); err != nil {
				return err
			}
		}
	}
	return err
}

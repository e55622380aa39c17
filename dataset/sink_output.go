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
	final.opt.PreservesAll = true
	connectInput[T](final, 0, nil)
	runWrapped[T](final)
	final.wrap = local.wrap
	final.opt.OrderedGather = true // subtask 0's first records first: after Sort, the least keys
	return newDataSet[T](env, final)
}

type firstCollector[T any] struct {
	flow.Plain
	left int
	next collector[T]
}

func (c *firstCollector[T]) Collect(b []T) error {
	if c.left <= 0 {
		return nil
	}
	if len(b) > c.left {
		b = b[:c.left]
	}
	c.left -= len(b)
	return c.next.Collect(b)
}

func (c *firstCollector[T]) End() error { return c.next.End() }

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
	var (
		closed    []formats.Writer[T] // per subtask: its writer once Close succeeded
		committed int                 // closed[:committed] are committed
	)
	n.reset = func() { closed, committed = make([]formats.Writer[T], n.opt.Parallelism), 0 }
	n.wrap = func(tc *task, _ any) (any, error) { // the tail of its producer's chain when forwarded
		if tc.Subtask >= len(closed) {
			return nil, fmt.Errorf("internal error: subtask %d of %d writers", tc.Subtask, len(closed))
		}
		w, err := sink.Create(tc.Context(), tc.Subtask, tc.Parallelism)
		if err != nil {
			return nil, err
		}
		c := &sinkCollector[T]{w: w, rows: &n.rows}
		tc.onExit(func() { // until Close succeeded, the task cleans up its writer
			if !c.closed {
				w.Abort()
			}
		})
		c.done = func() { closed[tc.Subtask] = w }
		return c, nil
	}
	runWrapped[T](n)
	n.commit = func() error {
		for ; committed < len(closed); committed++ {
			w := closed[committed]
			if w == nil {
				return fmt.Errorf("internal error: subtask %d has no closed writer", committed)
			}
			if err := w.Commit(); err != nil {
				return err
			}
		}
		return nil
	}
	n.abort = func() error {
		var errs []error
		for i, w := range closed {
			switch {
			case w == nil:
			case i >= committed:
				w.Abort()
			default:
				r, ok := w.(formats.Remover)
				if !ok {
					errs = append(errs, fmt.Errorf("subtask %d: the committed output cannot be removed (%T is not a formats.Remover)", i, w))
				} else if err := r.Remove(); err != nil {
					errs = append(errs, err)
				}
			}
			closed[i] = nil
		}
		committed = 0
		return errors.Join(errs...)
	}
}

// sinkCollector writes a task's batches to its writer and closes it when the
// input ends.
type sinkCollector[T any] struct {
	w      formats.Writer[T]
	closed bool
	done   func()        // hands the closed writer to the job's commit
	rows   *atomic.Int64 // the records the sink received
}

func (c *sinkCollector[T]) Collect(b []T) error {
	c.rows.Add(int64(len(b)))
	return c.w.Write(b)
}

func (c *sinkCollector[T]) End() error {
	if err := c.w.Close(); err != nil {
		return err
	}
	c.closed = true
	c.done()
	return nil
}

// Borrows reports whether the writer is done with a batch's records, bytes
// included, when Write returns (formats.ValueCopier).
func (c *sinkCollector[T]) Borrows() bool {
	_, ok := c.w.(formats.ValueCopier)
	return ok
}

// Raw returns the collector as a raw sink when its writer takes records as
// their bytes (formats.RawWriter); else nil.
func (c *sinkCollector[T]) Raw() flow.RawSink {
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
			n.rows.Add(int64(len(b)))
			for i := range b {
				if _, err := fmt.Fprintf(w, "%v\n", b[i]); err != nil {
					return err
				}
			}
		}
	}
}

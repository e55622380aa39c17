package flow

import (
	"errors"
	"io"
	"iter"
	"sync"
	"sync/atomic"
)

// Pump reads input i of a task (records of T) and hands every batch to c,
// then ends c.
func Pump[T any](tc *TaskContext, i int, c Collector[T]) error {
	var err error
	for b := range Batches[T](tc, i, &err) {
		if err := c.Collect(b); err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	return c.End()
}

// Batches yields the batches of input i of a task (records of T) until the
// input ends; a read error (the end of the task's context, say) stops it and
// is stored in *errp. A batch is valid until the loop asks for the next.
func Batches[T any](tc *TaskContext, i int, errp *error) iter.Seq[[]T] {
	return func(yield func([]T) bool) {
		in := Input[T](tc, i)
		for {
			b, err := in.Next(tc.Context())
			if err != nil {
				if !errors.Is(err, io.EOF) {
					*errp = err
				}
				return
			}
			if !yield(b) {
				return
			}
		}
	}
}

// Fanout sends every batch to each of its collectors, and ends them in
// order.
type Fanout[T any] struct {
	Plain
	Outs []Collector[T]
}

func (f *Fanout[T]) Collect(b []T) error {
	for _, c := range f.Outs {
		if err := c.Collect(b); err != nil {
			return err
		}
	}
	return nil
}

func (f *Fanout[T]) End() error {
	for _, c := range f.Outs {
		if err := c.End(); err != nil {
			return err
		}
	}
	return nil
}

// Counting adds the length of every batch it passes on to Rows (one atomic
// add per batch, no allocation). It has the capabilities of the collector it
// wraps; the records a raw sink takes are counted too.
type Counting[T any] struct {
	Collector[T]
	Rows *atomic.Int64
}

func (c *Counting[T]) Collect(b []T) error {
	c.Rows.Add(int64(len(b)))
	return c.Collector.Collect(b)
}

// Raw counts the records the wrapped collector's raw sink takes.
func (c *Counting[T]) Raw() RawSink {
	r := c.Collector.Raw()
	if r == nil {
		return nil
	}
	return countingRaw{r, c.Rows}
}

type countingRaw struct {
	RawSink
	rows *atomic.Int64
}

func (c countingRaw) Written(n int64) {
	c.rows.Add(n)
	c.RawSink.Written(n)
}

// CollectFunc is a collector of a function; its End does nothing.
type CollectFunc[T any] func([]T) error

func (f CollectFunc[T]) Collect(b []T) error { return f(b) }
func (f CollectFunc[T]) End() error          { return nil }
func (f CollectFunc[T]) Borrows() bool       { return false }
func (f CollectFunc[T]) Raw() RawSink        { return nil }

// Emitter collects emitted values into batches of Batch for Next. An error
// from Next is kept in Err and returned by Flush and End; later emits are
// dropped.
type Emitter[U any] struct {
	Next  Collector[U]
	Batch int
	Err   error
	buf   []U
}

// Emit adds u to the pending batch, handing the batch to Next once full.
func (e *Emitter[U]) Emit(u U) {
	if e.Err != nil {
		return
	}
	e.buf = append(e.buf, u)
	if len(e.buf) >= e.Batch {
		e.Err = e.Next.Collect(e.buf)
		e.buf = e.buf[:0]
	}
}

// Flush hands the pending batch to Next.
func (e *Emitter[U]) Flush() error {
	if e.Err == nil && len(e.buf) > 0 {
		e.Err = e.Next.Collect(e.buf)
		e.buf = e.buf[:0]
	}
	return e.Err
}

// End flushes, then ends Next.
func (e *Emitter[U]) End() error {
	if err := e.Flush(); err != nil {
		return err
	}
	return e.Next.End()
}

// Merge reads inputs 0..k-1 of a task (records of T) concurrently and passes
// their batches to c from the task's goroutine, then ends c: a union whose
// inputs come from branches of one producer cannot stall it.
func Merge[T any](tc *TaskContext, k int, c Collector[T]) error {
	if k == 1 {
		return Pump(tc, 0, c)
	}
	type item struct {
		batch []T
		done  chan struct{} // closed when c is done with batch
	}
	ctx := tc.Context()
	items := make(chan item)
	errs := make(chan error, k)
	var wg sync.WaitGroup
	for i := 0; i < k; i++ {
		in := Input[T](tc, i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := make(chan struct{}, 1)
			for {
				b, err := in.Next(ctx)
				if err != nil {
					if !errors.Is(err, io.EOF) {
						errs <- err
					}
					return
				}
				select {
				case items <- item{b, done}:
				case <-ctx.Done():
					return
				}
				select { // the batch belongs to the reader again after c used it
				case <-done:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(items) }()
	var first error
	for it := range items {
		if first == nil {
			first = c.Collect(it.batch)
		}
		it.done <- struct{}{}
	}
	close(errs)
	if first != nil {
		return first
	}
	for err := range errs {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.End()
}

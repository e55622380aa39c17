package dataset

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/weirdata/weir/formats"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/optimizer"
)

// FromSlice returns a data set of the values of xs, split evenly over the
// subtasks in order. The program reads xs when it runs; the optimizer's
// estimate of its size is len(xs).
func FromSlice[T any](env *Env, xs []T) *DataSet[T] {
	n := env.newNode(optimizer.Source, "FromSlice at "+caller(1))
	n.opt.EstimatedRows = int64(len(xs))
	n.op = pulls[T](&sliceSource[T]{xs: xs, batch: env.opts.BatchSize})
	return newDataSet[T](env, n)
}

// sliceSource is FromSlice's operator: subtask i emits the i-th of
// Parallelism even parts of xs, in order.
type sliceSource[T any] struct {
	stateless
	xs    []T
	batch int
}

func (o *sliceSource[T]) run(tc *task, c collector[T]) error {
	lo := len(o.xs) * tc.Subtask / tc.Parallelism
	hi := len(o.xs) * (tc.Subtask + 1) / tc.Parallelism
	for i := lo; i < hi; i += o.batch {
		if err := tc.Context().Err(); err != nil {
			return err
		}
		if err := c.Collect(o.xs[i:min(i+o.batch, hi)]); err != nil {
			return err
		}
	}
	return c.End()
}

// FromSource returns a data set read from src (a Parquet, CSV, text or Arrow
// source of the formats packages). The subtasks take the source's splits from a
// shared queue, so a slow split does not hold the others back; a source that
// can cut its input for a number of readers (formats.ParallelSplitter) is cut
// for the operator's parallelism. The optimizer's
// estimates of its rows and bytes are the source's Stats, read once here: the
// rows its declared filters are estimated to keep (Stats.Matching), else all
// its rows. A source that implements formats.ReadMemorer (Parquet) has its
// decode buffers reserved from the memory budget while it reads each split.
func FromSource[T any](env *Env, name string, src formats.Source[T]) *DataSet[T] {
	n := env.newNode(optimizer.Source, fmt.Sprintf("Read %s at %s", name, caller(1)))
	if st, err := src.Stats(context.Background()); err == nil {
		switch {
		case st.Matching > 0: // zero may be a source that does not estimate it
			n.opt.EstimatedRows = st.Matching
			n.opt.SourceRows = st.Rows
		case st.Rows >= 0:
			n.opt.EstimatedRows = st.Rows
		}
		if st.Bytes >= 0 {
			n.opt.EstimatedBytes = st.Bytes
		}
	}
	n.op = pulls[T](&formatSource[T]{name: name, src: src})
	return newDataSet[T](env, n)
}

// formatSource is FromSource's operator. The subtasks take the splits, listed
// once per execution, from a shared counter (spread over processes: by
// subtask).
type formatSource[T any] struct {
	stateless
	name   string
	src    formats.Source[T]
	once   sync.Once
	splits []formats.Split
	serr   error
	next   atomic.Int64
	kf     *keyFilter // this stage's runtime filter (KeyColumns), nil for none
}

func (o *formatSource[T]) keyColumn(col string) error {
	kf, ok := o.src.(formats.KeyFilterer[T])
	if !ok {
		return fmt.Errorf("source %s cannot filter by a key column", o.name)
	}
	return kf.KeyColumn(col)
}

func (o *formatSource[T]) setFilter(f *keyFilter) { o.kf = f }
func (o *formatSource[T]) filter() *keyFilter     { return o.kf }

func (o *formatSource[T]) reset() {
	o.once = sync.Once{}
	o.splits, o.serr = nil, nil
	o.next.Store(0)
}

func (o *formatSource[T]) run(tc *task, c collector[T]) error {
	o.once.Do(func() {
		if ps, ok := o.src.(formats.ParallelSplitter); ok {
			o.splits, o.serr = ps.SplitsFor(tc.Context(), tc.Parallelism)
		} else {
			o.splits, o.serr = o.src.Splits(tc.Context())
		}
	})
	if o.serr != nil {
		return fmt.Errorf("%s: %w", o.name, o.serr)
	}
	// A source's decode buffers are reserved for the length of each Read.
	rm, _ := o.src.(formats.ReadMemorer)
	var res *memory.Reservation
	if rm != nil {
		res = tc.Env.Memory.NewReservation(o.name + " decode buffers")
		defer res.Release()
	}
	// a runtime filter is waited for before the first split: its join has
	// built its hash table on the other input
	read := o.src.Read
	if f := o.kf; f != nil {
		set, err := f.wait(tc.Context())
		if err != nil {
			return err
		}
		if set != nil {
			kr := o.src.(formats.KeyFilterer[T])
			read = func(ctx context.Context, sp formats.Split, fn func([]T) error) error {
				return kr.ReadKeys(ctx, sp, f.column, set, &f.removed, fn)
			}
		}
	}
	// one process: the subtasks take the next split from a shared counter;
	// spread over processes, subtask i takes splits i, i+n, ...
	i := tc.Subtask - tc.Parallelism
	for {
		if tc.spread {
			i += tc.Parallelism
		} else {
			i = int(o.next.Add(1)) - 1
		}
		if i >= len(o.splits) {
			break
		}
		var held int64
		if rm != nil {
			held = rm.ReadMemory(o.splits[i])
			res.Force(held)
		}
		err := read(tc.Context(), o.splits[i], c.Collect)
		if rm != nil {
			res.Shrink(held)
		}
		if err != nil {
			return err
		}
	}
	return c.End()
}

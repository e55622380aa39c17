package dataset

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/weirdata/weir/formats"
	"github.com/weirdata/weir/optimizer"
)

// FromSlice returns a data set of the values of xs, split evenly over the
// subtasks in order. The program reads xs when it runs; the optimizer's
// estimate of its size is len(xs).
func FromSlice[T any](env *Env, xs []T) *DataSet[T] {
	n := env.newNode(optimizer.Source, "FromSlice at "+caller(1))
	n.opt.EstimatedRows = int64(len(xs))
	n.run = func(tc *task, out any) error {
		c, err := asCollector[T](n, out)
		if err != nil {
			return err
		}
		lo := len(xs) * tc.Subtask / tc.Parallelism
		hi := len(xs) * (tc.Subtask + 1) / tc.Parallelism
		bs := env.opts.BatchSize
		for i := lo; i < hi; i += bs {
			if err := tc.Context().Err(); err != nil {
				return err
			}
			if err := c.Collect(xs[i:min(i+bs, hi)]); err != nil {
				return err
			}
		}
		return c.End()
	}
	return newDataSet[T](env, n)
}

// FromSource returns a data set read from src (a Parquet, CSV, text or Arrow
// source of the formats packages). The subtasks take the source's splits from a
// shared queue, so a slow split does not hold the others back. The optimizer's
// estimates of its rows and bytes are the source's Stats, read once here: the
// rows its declared filters are estimated to keep (Stats.Matching), else all
// its rows.
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
	var (
		once   sync.Once
		splits []formats.Split
		serr   error
		next   atomic.Int64
	)
	n.reset = func() {
		once = sync.Once{}
		splits, serr = nil, nil
		next.Store(0)
	}
	n.run = func(tc *task, out any) error {
		c, err := asCollector[T](n, out)
		if err != nil {
			return err
		}
		once.Do(func() { splits, serr = src.Splits(tc.Context()) })
		if serr != nil {
			return fmt.Errorf("%s: %w", name, serr)
		}
		for {
			i := int(next.Add(1)) - 1
			if i >= len(splits) {
				break
			}
			if err := src.Read(tc.Context(), splits[i], c.Collect); err != nil {
				return err
			}
		}
		return c.End()
	}
	return newDataSet[T](env, n)
}

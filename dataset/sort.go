package dataset

import (
	"fmt"
	"iter"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/optimizer"
	"github.com/weirdata/weir/sortjoin"
)

// SortPartition sorts each partition of ds by key in the given order (Flink's
// sortPartition): the records of every subtask come out sorted, the subtasks
// stay as they were.
func SortPartition[T, K any](ds *DataSet[T], key func(T) K, o Order) *DataSet[T] {
	return sortBy(ds, key, o, false, "SortPartition at "+caller(1))
}

// Sort sorts the whole data set by key: it range-partitions the records by
// boundaries sampled from the data and sorts every partition, so subtask i
// holds keys no greater than subtask i+1's and Collect returns them in order.
func Sort[T, K any](ds *DataSet[T], key func(T) K, o Order) *DataSet[T] {
	return sortBy(ds, key, o, true, "Sort at "+caller(1))
}

func sortBy[T, K any](ds *DataSet[T], key func(T) K, o Order, total bool, where string) *DataSet[T] {
	env := ds.env
	n := env.newNode(optimizer.Sort, where, ds.n)
	n.opt.Ordered[0] = total
	k, err := newOrderedKeyer[T, K](key, o)
	if err != nil {
		env.fail(where, err)
		return newDataSet[T](env, n)
	}
	codec, err := memory.NewCodec[T]()
	if err != nil {
		env.fail(where, err)
		return newDataSet[T](env, n)
	}
	connectInput[T](n, 0, k)
	n.run = func(tc *task, out any) error {
		c, err := asCollector[T](n, out)
		if err != nil {
			return err
		}
		s := sortjoin.NewSorter(tc.Env, sortjoin.SortOptions{Name: fmt.Sprintf("%s %d", where, tc.Subtask)})
		tc.onExit(func() {
			tc.Metrics.AddSpilled(s.Stats().SpilledBytes)
			s.Close()
		})
		add := &sortFeeder[T]{k: k, codec: codec, s: s}
		if err := drive[T](tc, add); err != nil {
			return err
		}
		it, err := s.Finish(tc.Context())
		if err != nil {
			return err
		}
		defer it.Close()
		return emitDecoded(tc, it, codec, c, env.opts.BatchSize)
	}
	return newDataSet[T](env, n)
}

// sortFeeder adds records to a sorter.
type sortFeeder[T any] struct {
	k        *keyer[T]
	codec    *memory.Codec[T]
	s        *sortjoin.Sorter
	key, val []byte
}

func (f *sortFeeder[T]) collect(b []T) error {
	for i := range b {
		f.key = f.k.append(f.key[:0], &b[i])
		f.val = f.codec.Append(f.val[:0], &b[i])
		if err := f.s.Add(f.key, f.val); err != nil {
			return err
		}
	}
	return nil
}

func (f *sortFeeder[T]) close() error { return nil }

// ReduceGroup gives every group to fn, which emits any number of results. The
// group's records arrive through vals, valid only during the call, in no
// particular order; key is the group's key.
func ReduceGroup[T, K, O any](g *Grouping[T, K], fn func(key K, vals iter.Seq[T], emit func(O))) *DataSet[O] {
	env := g.ds.env
	where := "ReduceGroup at " + caller(1)
	n := env.newNode(optimizer.GroupReduce, where, g.ds.n)
	n.opt.Keyed[0] = true
	k, err := newKeyer[T, K](g.sel)
	if err != nil {
		env.fail(where, err)
		return newDataSet[O](env, n)
	}
	codec, err := memory.NewCodec[T]()
	if err != nil {
		env.fail(where, err)
		return newDataSet[O](env, n)
	}
	connectInput[T](n, 0, k)
	n.run = func(tc *task, out any) error {
		c, err := asCollector[O](n, out)
		if err != nil {
			return err
		}
		s := sortjoin.NewSorter(tc.Env, sortjoin.SortOptions{Name: fmt.Sprintf("%s %d", where, tc.Subtask)})
		tc.onExit(func() {
			tc.Metrics.AddSpilled(s.Stats().SpilledBytes)
			s.Close()
		})
		if err := drive[T](tc, &sortFeeder[T]{k: k, codec: codec, s: s}); err != nil {
			return err
		}
		it, err := s.Finish(tc.Context())
		if err != nil {
			return err
		}
		defer it.Close()
		var buf []O
		emit := func(o O) { buf = append(buf, o) }
		var decodeErr error
		err = sortjoin.GroupSorted(tc.Context(), it, func(_ []byte, vals *sortjoin.GroupValues) error {
			first, ok := vals.Next()
			if !ok {
				return nil
			}
			var v T
			if _, err := codec.Decode(first, &v); err != nil {
				return err
			}
			key := g.sel(v)
			seq := func(yield func(T) bool) {
				if !yield(v) {
					return
				}
				for {
					raw, ok := vals.Next()
					if !ok {
						return
					}
					var w T
					if _, err := codec.Decode(raw, &w); err != nil {
						decodeErr = err
						return
					}
					if !yield(w) {
						return
					}
				}
			}
			fn(key, seq, emit)
			if decodeErr != nil {
				return decodeErr
			}
			if len(buf) >= env.opts.BatchSize {
				if err := c.collect(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(buf) > 0 {
			if err := c.collect(buf); err != nil {
				return err
			}
		}
		return c.close()
	}
	return newDataSet[O](env, n)
}

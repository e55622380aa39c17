package dataset

import (
	"fmt"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/optimizer"
	"github.com/weirdata/weir/sortjoin"
)

// Grouping is a data set grouped by a key selector, waiting for a reduction.
type Grouping[T, K any] struct {
	ds    *DataSet[T]
	sel   func(T) K
	sorts []*keyer[T] // SortGroup's keys, most significant first
	keys  []string    // the key's field names (Grouping.On)
}

// GroupBy groups ds by the key key selects. K may be any type memory.ValueKey
// accepts: a bool, number, string, []byte, time.Time, array of these, or a
// struct of these (a composite key).
func GroupBy[T, K any](ds *DataSet[T], key func(T) K) *Grouping[T, K] {
	return &Grouping[T, K]{ds: ds, sel: key}
}

// Reduce combines the records of each group, two at a time, with fn until one
// is left, and emits it. fn must be associative and commutative: weir runs it
// before the shuffle too (a combiner) and in any order. fn must also keep the
// key: its result has the key of its arguments. The optimizer relies on that:
// the key fields named with On pass through a Reduce unchanged, so its output
// is partitioned as its input was shuffled.
//
// The planner runs it as a hash aggregation, or as a sorted grouping
// (optimizer.SortGroup, reduce_sorted.go) when its input arrives sorted on
// the key (after a sort-merge join or a sort on the same fields, named with
// On): the groups are then folded as they come, one at a time, and come out in
// key order.
func (g *Grouping[T, K]) Reduce(fn func(a, b T) T) *DataSet[T] {
	return reduce(g, fn, "Reduce at "+caller(1))
}

func reduce[T, K any](g *Grouping[T, K], fn func(a, b T) T, where string) *DataSet[T] {
	env := g.ds.env
	n := env.newNode(optimizer.Reduce, where, g.ds.n)
	n.opt.Keyed[0] = true
	n.opt.Combinable = true
	n.opt.KeyTypes[0] = typeName[K]()
	n.keysOf = n // fn keeps the key
	if g.keys != nil {
		n.setKeys(g.keys)
	}
	k, err := newKeyer[T, K](g.sel)
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
	n.combine[0] = func(tc *task, next any) (any, error) {
		out, err := asCollector[T](n, next)
		if err != nil {
			return nil, err
		}
		if codec.Shallow() {
			return newTypedCombiner(tc, &n.combine[0], k, codec, fn, out, env.opts.BatchSize), nil
		}
		c := &combineCollector[T]{tc: tc, k: k, codec: codec, next: out, batch: env.opts.BatchSize}
		c.agg = sortjoin.NewHashAggregator(tc.Env, sortjoin.AggOptions{
			Name:  fmt.Sprintf("%s combiner %d", where, tc.Subtask),
			Mode:  sortjoin.Partial,
			Flush: c.flush,
		}, reduceBytes(codec, fn))
		tc.onExit(func() {
			tc.Metrics.AddSpilled(c.agg.Stats().BytesSpilled)
			c.agg.Close()
		})
		return c, nil
	}
	n.run = func(tc *task, out any) error {
		c, err := asCollector[T](n, out)
		if err != nil {
			return err
		}
		if n.planned.Decision.Local == optimizer.SortGroup {
			return runSortedReduce(tc, n, where, k, codec, fn, c, env.opts.BatchSize)
		}
		newAgg := func() *sortjoin.HashAggregator {
			agg := sortjoin.NewHashAggregator(tc.Env, sortjoin.AggOptions{
				Name: fmt.Sprintf("%s %d", where, tc.Subtask),
				Mode: sortjoin.Final,
			}, reduceBytes(codec, fn))
			tc.onExit(func() {
				tc.Metrics.AddSpilled(agg.Stats().BytesSpilled)
				agg.Close()
			})
			return agg
		}
		if codec.Shallow() {
			f := newTypedFinal(tc, n, k, codec, fn, newAgg)
			if err := drive[T](tc, f); err != nil {
				return err
			}
			return f.finish(c, env.opts.BatchSize)
		}
		agg := newAgg()
		add := &combineCollector[T]{k: k, codec: codec, agg: agg}
		if err := drive[T](tc, add); err != nil {
			return err
		}
		it, err := agg.Finish(tc.Context())
		if err != nil {
			return err
		}
		defer it.Close()
		return emitDecoded(tc, it, codec, c, env.opts.BatchSize)
	}
	return newDataSet[T](env, n)
}

// reduceBytes lifts fn to serialized records, for the hash aggregator. The
// returned function belongs to one task.
func reduceBytes[T any](codec *memory.Codec[T], fn func(a, b T) T) sortjoin.CombineFunc {
	var a, b T
	return func(dst, x, y []byte) ([]byte, error) {
		if _, err := codec.Decode(x, &a); err != nil {
			return nil, err
		}
		if _, err := codec.Decode(y, &b); err != nil {
			return nil, err
		}
		r := fn(a, b)
		return codec.Append(dst[:0], &r), nil
	}
}

// combineCollector feeds records into a hash aggregator keyed by k. As a
// combiner (Partial mode) it sends the partial results the aggregator flushes
// to next, a batch at a time, and finishes the aggregator on close.
type combineCollector[T any] struct {
	tc       *task
	k        *keyer[T]
	codec    *memory.Codec[T]
	agg      *sortjoin.HashAggregator
	next     collector[T]
	key, val []byte
	buf      []T
	batch    int
}

func (c *combineCollector[T]) collect(b []T) error {
	for i := range b {
		c.key = c.k.append(c.key[:0], &b[i])
		c.val = c.codec.Append(c.val[:0], &b[i])
		if err := c.agg.Add(c.key, c.val); err != nil {
			return err
		}
	}
	return nil
}

// flush receives a partial aggregate from the aggregator (Partial mode).
func (c *combineCollector[T]) flush(_, acc []byte) error {
	var v T
	if _, err := c.codec.Decode(acc, &v); err != nil {
		return err
	}
	c.buf = append(c.buf, v)
	if len(c.buf) >= c.batch {
		err := c.next.collect(c.buf)
		c.buf = c.buf[:0]
		return err
	}
	return nil
}

func (c *combineCollector[T]) close() error {
	if c.next == nil { // the final phase's feeder: the caller finishes the aggregator
		return nil
	}
	it, err := c.agg.Finish(c.tc.Context())
	if err != nil {
		return err
	}
	it.Close()
	if len(c.buf) > 0 {
		if err := c.next.collect(c.buf); err != nil {
			return err
		}
		c.buf = c.buf[:0]
	}
	if err := c.agg.Close(); err != nil {
		return err
	}
	return c.next.close()
}

// emitDecoded decodes the values of it into batches of T and sends them to c,
// then closes c.
func emitDecoded[T any](tc *task, it sortjoin.Iterator, codec *memory.Codec[T], c collector[T], batch int) error {
	a := memory.NewArena(0) // strings and slices of the output share slabs
	return emitSorted(tc, it, c, batch, func(_, val []byte, v *T) error {
		_, err := codec.DecodeArena(val, v, a)
		return err
	})
}

// emitRaw is emitDecoded for a sorter whose keys are the records (see
// newSortKeyer).
func emitRaw[T any](tc *task, it sortjoin.Iterator, fromRaw func([]byte, *memory.Arena) T, c collector[T], batch int) error {
	if r, ok := c.(rawCollector); ok {
		if w := r.rawWriter(); w != nil {
			return emitEachRaw(tc, it, r, w, c, batch)
		}
	}
	if b, ok := c.(borrower); ok && b.borrows() {
		return emitBorrowed(tc, it, fromRaw, c, batch)
	}
	a := memory.NewArena(0)
	return emitSorted(tc, it, c, batch, func(key, _ []byte, v *T) error {
		*v = fromRaw(key, a)
		return nil
	})
}

// borrower is implemented by collectors that may be handed records whose
// bytes are reused once collect returns: they keep nothing of them.
type borrower interface{ borrows() bool }

// rawCollector is implemented by collectors that may take a record whose key
// is its own bytes (a string, say) as those bytes, one record at a time, valid
// only during the call: emitRaw then hands the merge's keys to the function
// rawWriter returns (nil: they cannot) as they come, without copying them
// into a batch first. The caller counts the records it wrote and reports them
// through rawWritten every so often and before close, so that nothing on the
// way is written per record (two subtasks' collectors may share a cache line).
type rawCollector interface {
	rawWriter() func(b []byte) error
	rawWritten(n int64)
}

// emitEachRaw is emitRaw for a rawCollector's writer w; every batch records it
// reports them to r and checks for cancellation.
func emitEachRaw[T any](tc *task, it sortjoin.Iterator, r rawCollector, w func(b []byte) error, c collector[T], batch int) error {
	ctx := tc.Context()
	n := 0 // records written and not yet reported
	for {
		key, _, ok := it.Next()
		if !ok {
			break
		}
		if err := w(key); err != nil {
			return err
		}
		if n++; n == batch {
			r.rawWritten(int64(n))
			n = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	r.rawWritten(int64(n))
	if err := it.Err(); err != nil {
		return err
	}
	return c.close()
}

// borrowedBytes is the size of the buffer emitBorrowed reuses for each batch.
const borrowedBytes = 256 << 10

// emitBorrowed is emitRaw for a borrower: the records of every batch point
// into one buffer that the next batch reuses, instead of into fresh memory.
func emitBorrowed[T any](tc *task, it sortjoin.Iterator, fromRaw func([]byte, *memory.Arena) T, c collector[T], batch int) error {
	buf := make([]T, 0, batch)
	var a memory.Arena // for records that do not fit the buffer
	data := make([]byte, 0, borrowedBytes)
	flush := func() error {
		if err := tc.Context().Err(); err != nil {
			return err
		}
		err := c.collect(buf)
		clear(buf)
		buf, data = buf[:0], data[:0]
		return err
	}
	for {
		key, _, ok := it.Next()
		if !ok {
			break
		}
		if len(data)+len(key) > cap(data) && len(buf) > 0 {
			if err := flush(); err != nil {
				return err
			}
		}
		var v T
		if len(key) > cap(data) {
			v = fromRaw(key, &a) // a record larger than the buffer
		} else {
			n := len(data)
			data = append(data, key...)
			v = fromRaw(data[n:], nil)
		}
		buf = append(buf, v)
		if len(buf) == batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if len(buf) > 0 {
		if err := c.collect(buf); err != nil {
			return err
		}
	}
	return c.close()
}

// emitSorted makes a record of every (key, value) pair of it with decode and
// sends them to c in batches, then closes c.
func emitSorted[T any](tc *task, it sortjoin.Iterator, c collector[T], batch int, decode func(key, val []byte, v *T) error) error {
	buf := make([]T, batch)
	n := 0
	for {
		key, val, ok := it.Next()
		if !ok {
			break
		}
		if err := decode(key, val, &buf[n]); err != nil {
			return err
		}
		n++
		if n == batch {
			if err := tc.Context().Err(); err != nil {
				return err
			}
			if err := c.collect(buf); err != nil {
				return err
			}
			clear(buf) // drop references for the collector's sake
			n = 0
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if n > 0 {
		if err := c.collect(buf[:n]); err != nil {
			return err
		}
	}
	return c.close()
}

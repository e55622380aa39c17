package dataset

import (
	"fmt"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/typed"
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
	k, err := typed.NewKeyer[T, K](g.sel)
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
	in := connectInput[T](n, 0, k)
	op := &reduceOp[T]{env: env, n: n, where: where, k: k, codec: codec, fn: fn}
	in.combine = op.combiner
	n.op = pulls[T](op)
	return newDataSet[T](env, n)
}

// reduceOp is Reduce's operator: a hash aggregation (typed, or serialized
// when the records are not plain Go values) or a sorted grouping; combiner
// is its combiner, run in the producer's task.
type reduceOp[T any] struct {
	stateless
	env   *Env
	n     *node
	where string
	k     *keyer[T]
	codec *memory.Codec[T]
	fn    func(a, b T) T
}

// combinerKey is what a loop's task keeps an operator's combiner under.
type combinerKey struct{ n *node }

func (o *reduceOp[T]) combiner(tc *task, out collector[T]) (collector[T], error) {
	if o.codec.Shallow() {
		return newTypedCombiner(tc, combinerKey{o.n}, o.n, o.k, o.codec, o.fn, out, o.env.opts.BatchSize), nil
	}
	return newValueCombiner(tc, combinerKey{o.n}, o.k, o.codec, o.fn, out, o.env.opts.BatchSize), nil
}

func (o *reduceOp[T]) run(tc *task, c collector[T]) error {
	n, where, k, codec, fn, batch := o.n, o.where, o.k, o.codec, o.fn, o.env.opts.BatchSize
	if n.planned.Decision.Local == optimizer.SortGroup {
		return runSortedReduce(tc, n, where, k, codec, fn, c, batch)
	}
	newAgg := func() *sortjoin.HashAggregator {
		agg := sortjoin.NewHashAggregator(tc.Env, sortjoin.AggOptions{
			Name: fmt.Sprintf("%s %d", where, tc.Subtask),
			Mode: sortjoin.Final,
		}, reduceBytes(codec, fn))
		tc.OnExit(func() {
			tc.Metrics.AddSpilled(agg.Stats().BytesSpilled)
			agg.Close()
		})
		return agg
	}
	if codec.Shallow() {
		return runTypedFinal(tc, n, k, codec, fn, newAgg, c, batch)
	}
	n.variants.ran(serializedHash)
	agg := newAgg()
	add := &combineCollector[T]{k: k, codec: codec, agg: agg}
	if err := flow.Pump[T](tc.TaskContext, 0, add); err != nil {
		return err
	}
	it, err := agg.Finish(tc.Context())
	if err != nil {
		return err
	}
	defer it.Close()
	return emitDecoded(tc, it, codec, c, batch)
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

// combineCollector feeds records into a hash aggregator keyed by k (the final
// phase of a Reduce over serialized records); the caller finishes it.
type combineCollector[T any] struct {
	flow.Plain
	k        *keyer[T]
	codec    *memory.Codec[T]
	agg      *sortjoin.HashAggregator
	key, val []byte
}

func (c *combineCollector[T]) Collect(b []T) error {
	for i := range b {
		c.key = c.k.Append(c.key[:0], &b[i])
		c.val = c.codec.Append(c.val[:0], &b[i])
		if err := c.agg.Add(c.key, c.val); err != nil {
			return err
		}
	}
	return nil
}

func (c *combineCollector[T]) End() error { return nil }

// typedCombiner is the combiner of a Reduce over records typed.Combiner
// holds as Go values (memory.Codec.Shallow), as a collector.
type typedCombiner[T any] struct {
	flow.Plain
	c    *typed.Combiner[T]
	n    *node // the Reduce, whose analyzed plan shows a combiner passing its input through
	next collector[T]
}

// newTypedCombiner returns the combiner of an operator's task; key names the
// operator's combiner, under which a loop's task keeps it (emptied) and its
// reservation from one superstep to the next, so that its memory is not
// allocated and touched afresh every superstep.
func newTypedCombiner[T any](tc *task, key any, n *node, k *keyer[T], codec *memory.Codec[T], fn func(a, b T) T, next collector[T], batch int) *typedCombiner[T] {
	c, ok := tc.Kept(key).(*typed.Combiner[T])
	if !ok {
		res := tc.Env.Memory.NewReservation("typed combiner")
		c = typed.NewCombiner(k, codec, fn, res, tc.memShare, batch)
		tc.Keep(key, c, func() { _ = res.Release() })
	}
	c.Reset(next.Collect)
	return &typedCombiner[T]{c: c, n: n, next: next}
}

func (c *typedCombiner[T]) Collect(b []T) error { return c.c.Add(b) }

// valueCombiner is the combiner of a Reduce over records with other
// references (typed.ValueCombiner), as a collector; a loop's task keeps it
// as newTypedCombiner does.
type valueCombiner[T any] struct {
	flow.Plain
	c    *typed.ValueCombiner[T]
	next collector[T]
}

func newValueCombiner[T any](tc *task, key any, k *keyer[T], codec *memory.Codec[T], fn func(a, b T) T, next collector[T], batch int) *valueCombiner[T] {
	c, ok := tc.Kept(key).(*typed.ValueCombiner[T])
	if !ok {
		res := tc.Env.Memory.NewReservation("value combiner")
		c = typed.NewValueCombiner(k, codec, fn, res, batch)
		tc.Keep(key, c, func() { _ = res.Release() })
	}
	c.Reset(next.Collect)
	return &valueCombiner[T]{c: c, next: next}
}

func (c *valueCombiner[T]) Collect(b []T) error { return c.c.Add(b) }

func (c *valueCombiner[T]) End() error {
	if err := c.c.Flush(); err != nil {
		return err
	}
	return c.next.End()
}

func (c *typedCombiner[T]) End() error {
	if c.c.Passing() && c.n != nil {
		c.n.variants.ran(combinerPassed)
	}
	if err := c.c.Flush(); err != nil {
		return err
	}
	return c.next.End()
}

// runTypedFinal runs the final phase of a Reduce over records typed.Final
// holds as Go values, and records which variant ran. A loop's task keeps the
// Final (emptied) and its reservation from one superstep to the next under
// the node, unless it handed over.
func runTypedFinal[T any](tc *task, n *node, k *keyer[T], codec *memory.Codec[T], fn func(a, b T) T,
	newAgg func() *sortjoin.HashAggregator, c collector[T], batch int) error {
	f, ok := tc.Kept(n).(*typed.Final[T])
	if !ok {
		res := tc.Env.Memory.NewReservation("typed aggregation")
		f = typed.NewFinal(k, codec, fn, res, tc.memShare)
		tc.Keep(n, f, func() { _ = res.Release() })
	}
	f.Reset(newAgg, func() { tc.Drop(n) })
	err := flow.Pump[T](tc.TaskContext, 0, flow.CollectFunc[T](f.Add))
	switch {
	case f.HandedOver():
		n.variants.ran(serializedAfterFull)
	case f.Dense():
		n.variants.ran(typedDense)
	default:
		n.variants.ran(typedHash)
	}
	if err != nil {
		return err
	}
	if err := f.Finish(tc.Context(), c.Collect, batch); err != nil {
		return err
	}
	return c.End()
}

// emitDecoded decodes the values of it into batches of T and sends them to c,
// then closes c.
func emitDecoded[T any](tc *task, it sortjoin.Iterator, codec *memory.Codec[T], c collector[T], batch int) error {
	if err := typed.EmitDecoded(tc.Context(), it, codec, c.Collect, batch); err != nil {
		return err
	}
	return c.End()
}

// emitRaw is emitDecoded for a sorter whose keys are the records (see
// newSortKeyer), choosing the emitter c's capabilities allow.
func emitRaw[T any](tc *task, it sortjoin.Iterator, fromRaw func([]byte, *memory.Arena) T, c collector[T], batch int) error {
	var err error
	if r := c.Raw(); r != nil {
		err = typed.EmitEachRaw(tc.Context(), it, r.Write, r.Written, batch)
	} else if c.Borrows() {
		err = typed.EmitBorrowed(tc.Context(), it, fromRaw, c.Collect, batch)
	} else {
		err = typed.EmitRaw(tc.Context(), it, fromRaw, c.Collect, batch)
	}
	if err != nil {
		return err
	}
	return c.End()
}

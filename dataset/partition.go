package dataset

import (
	"bytes"
	"fmt"
	"iter"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/optimizer"
)

// PartitionByHash redistributes ds so that records with equal keys are in the
// same subtask (Flink's partitionByHash).
func PartitionByHash[T, K any](ds *DataSet[T], key func(T) K) *DataSet[T] {
	return partitionBy(ds, key, optimizer.Hash, "PartitionByHash at "+caller(1))
}

// PartitionByRange redistributes ds into key ranges in key order: subtask i gets
// keys no greater than subtask i+1's. The boundaries are sampled from the data.
func PartitionByRange[T, K any](ds *DataSet[T], key func(T) K) *DataSet[T] {
	where := "PartitionByRange at " + caller(1)
	k, err := rangeKeyer[T, K](key, nil, 0)
	if err != nil {
		ds.env.fail(where, err)
		k = &keyer[T]{}
	}
	out := partitionByKeyer(ds, k, optimizer.Range, where)
	out.n.opt.KeyTypes[0] = typeName[K]()
	return out
}

// PartitionByRangeBounds is PartitionByRange with the boundaries given (Flink's
// partitionByRange with a DataDistribution): bounds are the parallelism-1
// ascending keys that end the ranges of the first parallelism-1 subtasks.
// Subtask i gets the keys k with bounds[i-1] < k <= bounds[i]; equal bounds
// leave a subtask empty. Sampling the data beforehand, as `weir sort` does,
// saves the runtime from holding back its input while it samples.
func PartitionByRangeBounds[T, K any](ds *DataSet[T], key func(T) K, bounds []K) *DataSet[T] {
	where := "PartitionByRange at " + caller(1)
	k, err := rangeKeyer(key, bounds, ds.env.opts.Parallelism)
	if err != nil {
		ds.env.fail(where, err)
		k = &keyer[T]{}
	}
	out := partitionByKeyer(ds, k, optimizer.Range, where)
	out.n.opt.KeyTypes[0] = typeName[K]()
	return out
}

// rangeKeyer returns the keyer of a range partitioning by key, with bounds
// encoded as the keys are (nil bounds: sampled by the runtime).
func rangeKeyer[T, K any](key func(T) K, bounds []K, parallelism int) (*keyer[T], error) {
	k, err := newSortKeyer(key, Ascending)
	if err != nil || bounds == nil {
		return k, err
	}
	if len(bounds) != parallelism-1 {
		return nil, fmt.Errorf("%d bounds for %d subtasks: want %d", len(bounds), parallelism, parallelism-1)
	}
	enc, err := typed.NewKeyer(func(k K) K { return k }) // the encoding of K, not raw
	if err != nil {
		return nil, err
	}
	if k.Raw != nil { // T == K
		enc = &keyer[K]{Append: func(dst []byte, v *K) []byte { return k.Append(dst, any(v).(*T)) }}
	}
	k.Bounds = make([][]byte, len(bounds))
	for i := range bounds {
		k.Bounds[i] = enc.Append(nil, &bounds[i])
		if i > 0 && bytes.Compare(k.Bounds[i-1], k.Bounds[i]) > 0 {
			return nil, fmt.Errorf("bounds[%d] is less than bounds[%d]", i, i-1)
		}
	}
	return k, nil
}

// PartitionCustom redistributes ds with fn, which returns a record's subtask in
// [0, n).
func PartitionCustom[T any](ds *DataSet[T], fn func(v T, n int) int) *DataSet[T] {
	// no key: the keyer holds only fn, and no key encoder is compiled for T
	k := &keyer[T]{Custom: func(v *T, n int) int { return fn(*v, n) }}
	return partitionByKeyer(ds, k, optimizer.Custom, "PartitionCustom at "+caller(1))
}

// Rebalance redistributes ds round robin, evening out skewed subtasks.
func (ds *DataSet[T]) Rebalance() *DataSet[T] {
	return partitionByKeyer(ds, &keyer[T]{}, optimizer.Rebalance, "Rebalance at "+caller(1))
}

func partitionBy[T, K any](ds *DataSet[T], key func(T) K, ship optimizer.Ship, where string) *DataSet[T] {
	k := &keyer[T]{}
	if key != nil {
		var err error
		if k, err = typed.NewKeyer[T, K](key); err != nil {
			ds.env.fail(where, err)
		}
	}
	out := partitionByKeyer(ds, k, ship, where)
	if key != nil {
		out.n.opt.KeyTypes[0] = typeName[K]()
	}
	return out
}

// partitionByKeyer redistributes ds by ship, with k's key, hash or function.
func partitionByKeyer[T any](ds *DataSet[T], k *keyer[T], ship optimizer.Ship, where string) *DataSet[T] {
	env := ds.env
	n := env.newNode(optimizer.Partition, where, ds.n)
	n.opt.Forced = map[int]optimizer.Ship{0: ship}
	// the records pass through unchanged (Rebalance is left unmarked: round
	// robin leaves nothing of its input's partitioning for a planner to reuse)
	n.opt.PreservesAll = ship != optimizer.Rebalance
	connectInput[T](n, 0, k)
	n.op = pulls[T](passOp[T]{})
	return newDataSet[T](env, n)
}

// passOp is a partitioning's operator: it passes on its input as it came.
type passOp[T any] struct{ stateless }

func (passOp[T]) run(tc *task, c collector[T]) error { return flow.Pump(tc.TaskContext, 0, c) }

// MapPartition calls fn once per subtask with all the records of its partition;
// fn emits any number of results. vals may be ranged over once.
func MapPartition[T, U any](ds *DataSet[T], fn func(vals iter.Seq[T], emit func(U))) *DataSet[U] {
	env := ds.env
	n := env.newNode(optimizer.MapPartition, "MapPartition at "+caller(1), ds.n)
	n.opt.Parallelism = ds.n.opt.Parallelism
	connectInput[T](n, 0, nil)
	n.op = pulls[U](&mapPartitionOp[T, U]{fn: fn, batch: env.opts.BatchSize})
	return newDataSet[U](env, n)
}

// mapPartitionOp is MapPartition's operator.
type mapPartitionOp[T, U any] struct {
	stateless
	fn    func(vals iter.Seq[T], emit func(U))
	batch int
}

func (o *mapPartitionOp[T, U]) run(tc *task, c collector[U]) error {
	e := &flow.Emitter[U]{Next: c, Batch: o.batch}
	var readErr error
	vals := func(yield func(T) bool) {
		for b := range flow.Batches[T](tc.TaskContext, 0, &readErr) {
			for i := range b {
				if !yield(b[i]) {
					return
				}
			}
		}
	}
	o.fn(vals, e.Emit)
	if readErr != nil {
		return readErr
	}
	if e.Err != nil {
		return e.Err
	}
	return e.End()
}

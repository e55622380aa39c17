package dataset

import (
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/optimizer"
)

// Fold groups the records of ds by key, folds every group into an
// accumulator in place and emits one KV per group: its key and accumulator.
// It is FoldWithBroadcast without the broadcast set, and Beam's CombineFn
// (addInput, mergeAccumulators) over Go values.
//
// fold(acc, v) adds v into acc, the accumulator of v's group, which starts
// as the zero A; merge(acc, other) adds the accumulator of another part of
// the same group into acc. Each subtask folds its part of ds as it reads it,
// a batch at a time, with no record copied in between and no key encoded:
// the key is a Go map's (or, for small non-negative integers, a dense
// array's; typed.FoldTable), and a run of one key costs a comparison. The
// parts' accumulators are shuffled by key and merged, in any order: fold
// and merge must give the same result in any order (sums, counts, minima).
// A subtask hands its groups on early when the memory budget takes no more.
//
// Where Reduce needs a record per input record (a Map to the accumulator
// type first) and a combiner that encodes each key, Fold calls the user's
// two functions on the input records themselves: TPC-H Q1's eight sums over
// four groups.
func Fold[T any, K comparable, A any](ds *DataSet[T], key func(T) K, fold func(acc *A, v T), merge func(acc *A, other A)) *DataSet[KV[K, A]] {
	env := ds.env
	where := caller(1)
	n := env.newNode(optimizer.MapPartition, "Fold (partial) at "+where, ds.n)
	n.opt.Parallelism = ds.n.opt.Parallelism
	connectInput[T](n, 0, nil)
	n.op = pulls[KV[K, A]](&foldOp[T, struct{}, K, A]{n: n, codec: typed.CodecOrNil[T](),
		accCodec: typed.CodecOrNil[A](), batch: env.opts.BatchSize, plain: &plainFold[T, K, A]{key: key, fold: fold}})
	return mergeFolds(newDataSet[KV[K, A]](env, n), merge, "Fold at "+where)
}

// plainFold is Fold's pair of functions.
type plainFold[T any, K comparable, A any] struct {
	key  func(T) K
	fold func(*A, T)
}

// runPlain is foldOp's run for Fold: input 0 folded as it arrives.
func (o *foldOp[T, B, K, A]) runPlain(tc *task, st *foldState[T, B, K, A], c collector[KV[K, A]]) error {
	t, key, fold := st.table, o.plain.key, o.plain.fold
	t.Clear()
	var readErr error
	for b := range flow.Batches[T](tc.TaskContext, 0, &readErr) {
		for i := range b {
			fold(t.Acc(key(b[i])), b[i])
			if t.Len() > st.held {
				if err := o.grow(st, tc.memShare, c); err != nil {
					return err
				}
			}
		}
	}
	if readErr != nil {
		return readErr
	}
	if err := o.emit(st, c); err != nil {
		return err
	}
	return c.End()
}

package dataset

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/optimizer"
)

// A subtask of FoldWithBroadcast reserves memory for its groups foldGrowth
// at a time, and hands them on to the merge when the budget refuses more or
// it holds foldGroups.
const (
	foldGroups = 1 << 12
	foldGrowth = 64
)

// FoldWithBroadcast groups the records of ds by the key that key picks from
// a record and the broadcast set bs (every subtask gets every record of bs,
// read before ds's records; keep it small), folds every group into an
// accumulator in place and emits one KV per group: its key and accumulator.
//
// fold(acc, v, bset) adds v into acc, the accumulator of v's group, which
// starts as the zero A; merge(acc, other) adds the accumulator of another
// part of the same group into acc (which may be the zero A too). Each
// subtask folds its part of ds; the parts' accumulators are shuffled by key
// and merged, in any order: fold and merge must give the same result in any
// order (sums, counts, minima). Both may allocate what acc keeps (a slice
// made the first time); an accumulator is never touched again once handed
// on, so they may also keep what they are given.
//
// The records of ds, the broadcast set and the accumulators meet in one loop,
// a batch at a time, with no record in between: the key and the fold are
// called on ds's record as it is, and nothing is allocated per record but
// what fold allocates. Integer keys that are small and non-negative are
// found in a dense array (typed.FoldTable); a subtask hands its groups on
// (partial results, for the merge) when the memory budget takes no more of
// them. In an iteration, when ds is loop-invariant, the
// operator keeps it itself (typed.Cache: Go values while they fit the
// budget, serialized and spilling when not) and folds it again every
// superstep from there, against that superstep's broadcast set.
//
// It is Flink's map with a broadcast set followed by a combinable
// groupBy(..).reduce(..), fused: the k-means and gradient-descent steps of
// Flink's examples.
func FoldWithBroadcast[T, B any, K comparable, A any](ds *DataSet[T], bs *DataSet[B], key func(v T, bset []B) K,
	fold func(acc *A, v T, bset []B), merge func(acc *A, other A)) *DataSet[KV[K, A]] {
	env := ds.env
	where := caller(1)
	n := env.newNode(optimizer.MapPartition, "FoldWithBroadcast (fold) at "+where, ds.n, bs.n)
	n.opt.Parallelism = ds.n.opt.Parallelism
	n.opt.Forced = map[int]optimizer.Ship{1: optimizer.Broadcast}
	connectInput[T](n, 0, nil)
	connectInput[B](n, 1, nil)
	n.op = pulls[KV[K, A]](&foldOp[T, B, K, A]{n: n, key: key, fold: fold, codec: typed.CodecOrNil[T](),
		accCodec: typed.CodecOrNil[A](), batch: env.opts.BatchSize})
	return mergeFolds(newDataSet[KV[K, A]](env, n), merge, "FoldWithBroadcast at "+where)
}

// mergeFolds merges the subtasks' folded parts by key (Fold,
// FoldWithBroadcast): a Reduce without a combiner, the folds having
// combined already.
func mergeFolds[K comparable, A any](parts *DataSet[KV[K, A]], merge func(acc *A, other A), name string) *DataSet[KV[K, A]] {
	out := reduce(GroupBy(parts, func(p KV[K, A]) K { return p.Key }), func(a, b KV[K, A]) KV[K, A] {
		var acc A // a and b may share memory with their inputs: merge into a fresh one
		merge(&acc, a.Value)
		merge(&acc, b.Value)
		return KV[K, A]{Key: a.Key, Value: acc}
	}, name)
	out.n.opt.Combinable = false
	return out
}

// foldOp is the fold of FoldWithBroadcast: it reads the broadcast set
// (input 1), then folds input 0, or in an iteration the cache it keeps of
// input 0 when that input is loop-invariant (loopMember.cached).
type foldOp[T, B any, K comparable, A any] struct {
	stateless
	n     *node
	key   func(T, []B) K
	fold  func(*A, T, []B)
	codec *memory.Codec[T]
	// accCodec measures what an accumulator references (its slices and
	// strings), for the table's reservation; nil or flat: nothing
	accCodec *memory.Codec[A]
	batch    int
	// plain holds Fold's functions, which take no broadcast set (key and
	// fold are nil then)
	plain *plainFold[T, K, A]
}

// canCache: the records of input 0 can be kept as Go values (spilling
// through their codec), so a loop-invariant input 0 is kept by the operator
// instead of replayed into it.
func (o *foldOp[T, B, K, A]) canCache(i int) bool { return i == 0 && o.codec != nil && o.plain == nil }

// foldState is what a subtask of foldOp keeps from one superstep to the next.
type foldState[T, B any, K comparable, A any] struct {
	table    *typed.FoldTable[K, A]
	res      *memory.Reservation // the table's memory: room for held groups
	held     int
	perGroup int64 // the memory a group takes: fixed, then grown to the referenced bytes of the newest accumulator measured
	scratch  []byte
	set      []B
	out      []KV[K, A]
	cache    *typed.Cache[T] // input 0, when cached
}

// foldKey is what a task keeps its foldState under.
type foldKey struct{ n *node }

func (o *foldOp[T, B, K, A]) run(tc *task, c collector[KV[K, A]]) error {
	ctx := tc.Context()
	st, ok := tc.Kept(foldKey{o.n}).(*foldState[T, B, K, A])
	if !ok {
		var zero KV[K, A]
		st = &foldState[T, B, K, A]{table: typed.NewFoldTable[K, A](), res: tc.Env.Memory.NewReservation("fold table"),
			perGroup: int64(unsafe.Sizeof(zero))*2 + 16} // a key and accumulator, their output copy, their index
		tc.Keep(foldKey{o.n}, st, func() {
			if st.cache != nil {
				st.cache.Release()
			}
			_ = st.res.Release()
		})
	}
	if o.plain != nil {
		return o.runPlain(tc, st, c)
	}
	st.set = st.set[:0]
	bin := flow.Input[B](tc.TaskContext, 1)
	for {
		b, err := bin.Next(ctx)
		if err != nil {
			if isEOF(err) {
				break
			}
			return err
		}
		st.set = append(st.set, b...)
	}
	set, t, key, fold := st.set, st.table, o.key, o.fold
	t.Clear()
	foldBatch := func(b []T) error {
		for i := range b {
			fold(t.Acc(key(b[i], set)), b[i], set)
			if t.Len() > st.held {
				if err := o.grow(st, tc.memShare, c); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if o.n.loops().cached && tc.loop != nil {
		if tc.step == 1 {
			st.cache = typed.NewCache[T](tc.Env, fmt.Sprintf("%s %d: loop-invariant input", o.n.name(), tc.Subtask), o.codec)
			if err := st.cache.Fill(ctx, flow.Input[T](tc.TaskContext, 0)); err != nil {
				return err
			}
			tc.Metrics.AddSpilled(st.cache.SpilledBytes())
		}
		if st.cache == nil {
			return fmt.Errorf("internal error: %s: no cache of its loop-invariant input", o.n.name())
		}
		// key and fold take records by value: the cache's own values are read
		// in place, not copied
		if err := st.cache.Scan(ctx, o.batch, foldBatch); err != nil {
			return err
		}
	} else {
		var readErr error
		for b := range flow.Batches[T](tc.TaskContext, 0, &readErr) {
			if err := foldBatch(b); err != nil {
				return err
			}
		}
		if readErr != nil {
			return readErr
		}
	}
	if err := o.emit(st, c); err != nil {
		return err
	}
	st.set = st.set[:0]
	clear(st.set[:cap(st.set)]) // drop the broadcast records until the next superstep
	return c.End()
}

// grow reserves room for more groups, or hands the groups held on when the
// budget or the operator's share (0: none) refuses it or the table is full;
// a table of one group forces its room. A group's room is its key and
// accumulator, their output copy and index entry, and what the newest
// accumulator references (its encoded size, measured once per growth).
func (o *foldOp[T, B, K, A]) grow(st *foldState[T, B, K, A], share int64, c collector[KV[K, A]]) error {
	if accs := st.table.Accs(); o.accCodec != nil && !o.accCodec.Flat() && len(accs) > 0 {
		st.scratch = o.accCodec.Append(st.scratch[:0], &accs[len(accs)-1])
		var zero KV[K, A]
		st.perGroup = max(st.perGroup, int64(unsafe.Sizeof(zero))*2+16+int64(len(st.scratch)))
	}
	if st.held < foldGroups {
		err := memory.ErrBudgetExceeded
		if share <= 0 || st.res.Bytes()+foldGrowth*st.perGroup <= share {
			err = st.res.Grow(foldGrowth * st.perGroup)
		}
		if err == nil {
			st.held += foldGrowth
			return nil
		}
		if !errors.Is(err, memory.ErrBudgetExceeded) {
			return err
		}
		if st.table.Len() == 1 {
			st.res.Force(foldGrowth * st.perGroup)
			st.held += foldGrowth
			return nil
		}
	}
	return o.emit(st, c)
}

// emit hands the groups of the table on, a batch at a time, and empties it.
func (o *foldOp[T, B, K, A]) emit(st *foldState[T, B, K, A], c collector[KV[K, A]]) error {
	keys, accs := st.table.Keys(), st.table.Accs()
	for i := 0; i < len(keys); {
		st.out = st.out[:0]
		for ; i < len(keys) && len(st.out) < max(o.batch, 1); i++ {
			st.out = append(st.out, KV[K, A]{Key: keys[i], Value: accs[i]})
		}
		if err := c.Collect(st.out); err != nil {
			return err
		}
	}
	clear(st.out[:cap(st.out)])
	st.table.Clear()
	return nil
}

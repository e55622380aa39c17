package dataset

import (
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/sortjoin"
)

// typedFinalChunk is how much memory a typed final aggregation reserves at a
// time.
const typedFinalChunk = 1 << 20

// typedFinal is the final phase of a Reduce over records whose only
// references are strings (memory.Codec.Shallow): the groups are Go values in
// a groupTable, reduced with the user's function as records arrive, and sent
// downstream at the end, nothing serialized or decoded. It reserves its
// memory from the task's manager as the table grows. When the groups outgrow
// the operator's share, or the budget runs out, it hands over: the groups it
// holds (partial results, which the function is free to combine further) and
// every record after them go, serialized, into a Final-mode
// sortjoin.HashAggregator, which spills. Its reservation is released before
// the hand-over, so for that moment the task may hold up to one share more
// than its budget. A loop's task keeps the table and its reservation from one
// superstep to the next, unless it handed over.
type typedFinal[T any] struct {
	tc     *task
	key    any // what the task keeps it under
	t      *groupTable[T]
	res    *memory.Reservation
	limit  int64 // the share; 0: only the budget limits it
	newAgg func() *sortjoin.HashAggregator
	k      *keyer[T]
	codec  *memory.Codec[T]
	spill  *combineCollector[T] // after the hand-over
}

// newTypedFinal returns the final aggregation of an operator's task; key
// names the operator, under which a loop's task keeps the table (emptied) and
// its reservation from one superstep to the next.
func newTypedFinal[T any](tc *task, key any, k *keyer[T], codec *memory.Codec[T], fn func(a, b T) T,
	newAgg func() *sortjoin.HashAggregator) *typedFinal[T] {
	f := &typedFinal[T]{tc: tc, key: key, limit: tc.memShare, newAgg: newAgg, k: k, codec: codec}
	if kept, ok := tc.kept(key).(keptFinal[T]); ok {
		f.t, f.res = kept.t, kept.res
		f.t.reset()
		return f
	}
	f.t = newGroupTable(k, codec, fn, 1024, denseFloor(tc.memShare, denseEntryBytes[T]()))
	f.res = tc.Env.Memory.NewReservation("typed aggregation")
	res := f.res
	tc.keep(key, keptFinal[T]{f.t, res}, func() { _ = res.Release() })
	return f
}

// keptFinal is what a loop's task keeps of a typed final aggregation from one
// superstep to the next.
type keptFinal[T any] struct {
	t   *groupTable[T]
	res *memory.Reservation
}

func (f *typedFinal[T]) collect(b []T) error {
	if f.spill != nil {
		return f.spill.collect(b)
	}
	for len(b) > 0 {
		n := f.t.addBatch(b) // stops after a record that widened the table
		if n == 0 {
			f.t.add(&b[0])
			n = 1
		}
		b = b[n:]
		if used := f.t.bytes(); used > f.res.Bytes() {
			if (f.limit > 0 && used > f.limit) || f.res.Grow(max(typedFinalChunk, used-f.res.Bytes())) != nil {
				return f.handOver(b)
			}
		}
	}
	return nil
}

// handOver moves the groups held and rest into a spilling hash aggregator.
func (f *typedFinal[T]) handOver(rest []T) error {
	held := f.t.all()
	f.t = nil
	_ = f.res.Release()
	f.tc.drop(f.key)
	f.spill = &combineCollector[T]{k: f.k, codec: f.codec, agg: f.newAgg()}
	if err := f.spill.collect(held); err != nil {
		return err
	}
	return f.spill.collect(rest)
}

func (f *typedFinal[T]) close() error { return nil } // finish sends the result

// denseFloor is how many dense entries of entry bytes each a group table may
// take whatever its number of groups: an eighth of the share (32 MiB without
// a share), from 4096 to 1M entries.
func denseFloor(share, entry int64) int {
	budget := share / 8
	if share <= 0 {
		budget = 32 << 20
	}
	return int(min(max(budget/entry, 4096), 1<<20))
}

// finish sends the groups downstream and closes it.
func (f *typedFinal[T]) finish(next collector[T], batch int) error {
	if f.spill == nil {
		if err := f.t.emit(next, batch); err != nil {
			return err
		}
		return next.close()
	}
	it, err := f.spill.agg.Finish(f.tc.Context())
	if err != nil {
		return err
	}
	defer it.Close()
	return emitDecoded(f.tc, it, f.codec, next, batch)
}

package typed

import (
	"context"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/sortjoin"
)

// finalChunk is how much memory a Final reserves at a time.
const finalChunk = 1 << 20

// Final is the final phase of a Reduce over records whose only references are
// strings (memory.Codec.Shallow). The groups are Go values in a group table,
// reduced with the user's function as records arrive and sent downstream at
// the end: nothing is serialized or decoded.
//
// It reserves its memory as the table grows. When the groups outgrow the
// limit, or the budget runs out, it hands over: the groups it holds (partial
// results, which the function is free to combine further) and every record
// after them go, serialized, into a Final-mode sortjoin.HashAggregator, which
// spills. Its reservation is released before the hand-over, so for that
// moment the operator may hold up to one share more than its budget.
//
//	holding ──(outgrows its memory)──▶ handed over (aggregator)
//	   │                                   │
//	   └──────────── Finish ◀──────────────┘
//
// A Final that did not hand over may be Reset and used again (a loop's task
// keeps it from one superstep to the next).
type Final[T any] struct {
	t          *groupTable[T] // nil once handed over
	res        *memory.Reservation
	limit      int64 // the share; 0: only the budget limits it
	k          *Keyer[T]
	codec      *memory.Codec[T]
	fn         func(a, b T) T
	newAgg     func() *sortjoin.HashAggregator
	handedOver func()
	agg        *sortjoin.HashAggregator // after the hand-over
	key, val   []byte
}

// NewFinal returns an empty final aggregation of records keyed by k, reduced
// with fn, reserving its memory on res up to limit (0: no limit but the
// budget's). Reset must be called before it is used.
func NewFinal[T any](k *Keyer[T], codec *memory.Codec[T], fn func(a, b T) T, res *memory.Reservation, limit int64) *Final[T] {
	t := newGroupTable(k, codec, fn, 1024, DenseFloor(limit, denseEntryBytes[T]()))
	return &Final[T]{t: t, res: res, limit: limit, k: k, codec: codec, fn: fn}
}

// Reset empties the table, keeping its memory and mode. newAgg makes the
// aggregator a hand-over feeds; handedOver, when not nil, is called when it
// hands over, after its reservation is released.
func (f *Final[T]) Reset(newAgg func() *sortjoin.HashAggregator, handedOver func()) {
	f.t.reset()
	f.newAgg, f.handedOver = newAgg, handedOver
}

// HandedOver reports whether the groups went to the serialized aggregator.
func (f *Final[T]) HandedOver() bool { return f.agg != nil }

// Dense reports whether the table is in dense mode (false once handed over).
func (f *Final[T]) Dense() bool { return f.t != nil && f.t.isDense }

// Add reduces a batch into the groups.
func (f *Final[T]) Add(b []T) error {
	if f.agg != nil {
		return f.feed(b)
	}
	for len(b) > 0 {
		n := f.t.addBatch(b) // stops after a record that widened the table
		if n == 0 {
			f.t.add(&b[0])
			n = 1
		}
		b = b[n:]
		if used := f.t.bytes(); used > f.res.Bytes() {
			if (f.limit > 0 && used > f.limit) || f.res.Grow(max(finalChunk, used-f.res.Bytes())) != nil {
				return f.handOver(b)
			}
		}
	}
	return nil
}

// handOver moves the groups held and rest into a spilling hash aggregator.
func (f *Final[T]) handOver(rest []T) error {
	held := f.t.all()
	f.t = nil
	_ = f.res.Release()
	f.agg = f.newAgg()
	if f.handedOver != nil {
		f.handedOver()
	}
	if err := f.feed(held); err != nil {
		return err
	}
	return f.feed(rest)
}

// feed adds records, serialized, to the aggregator.
func (f *Final[T]) feed(b []T) error {
	for i := range b {
		f.key = f.k.Append(f.key[:0], &b[i])
		f.val = f.codec.Append(f.val[:0], &b[i])
		if err := f.agg.Add(f.key, f.val); err != nil {
			return err
		}
	}
	return nil
}

// Finish sends the groups to sink, batch records at a time.
func (f *Final[T]) Finish(ctx context.Context, sink func([]T) error, batch int) error {
	if f.agg == nil {
		return f.t.emit(sink, batch)
	}
	it, err := f.agg.Finish(ctx)
	if err != nil {
		return err
	}
	defer it.Close()
	return EmitDecoded(ctx, it, f.codec, sink, batch)
}

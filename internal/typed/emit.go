package typed

import (
	"context"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/sortjoin"
)

// The emitters turn the (key, value) pairs a sortjoin kernel returns back
// into Go values and send them to a sink a batch at a time, checking ctx once
// a batch. None of them closes anything: the caller ends its output.

// EmitDecoded decodes the values of it into batches of T and sends them to
// sink.
func EmitDecoded[T any](ctx context.Context, it sortjoin.Iterator, codec *memory.Codec[T], sink func([]T) error, batch int) error {
	a := memory.NewArena(0) // strings and slices of the output share slabs
	return EmitSorted(ctx, it, sink, batch, func(_, val []byte, v *T) error {
		_, err := codec.DecodeArena(val, v, a)
		return err
	})
}

// EmitRaw is EmitDecoded for a sorter whose keys are the records (a raw
// Keyer): fromRaw makes each record from its key, copied into fresh memory.
func EmitRaw[T any](ctx context.Context, it sortjoin.Iterator, fromRaw func([]byte, *memory.Arena) T, sink func([]T) error, batch int) error {
	a := memory.NewArena(0)
	return EmitSorted(ctx, it, sink, batch, func(key, _ []byte, v *T) error {
		*v = fromRaw(key, a)
		return nil
	})
}

// EmitEachRaw hands the keys of it, which are the records' own bytes, to w
// one at a time, each valid only during the call. Every batch records, and
// at the end, it reports how many it wrote to written and checks ctx.
func EmitEachRaw(ctx context.Context, it sortjoin.Iterator, w func(b []byte) error, written func(n int64), batch int) error {
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
			written(int64(n))
			n = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	written(int64(n))
	return it.Err()
}

// borrowedBytes is the size of the buffer EmitBorrowed reuses for each batch.
const borrowedBytes = 256 << 10

// EmitBorrowed is EmitRaw for a sink that keeps nothing of the records it
// is handed: the records of every batch point into one buffer that the next
// batch reuses, instead of into fresh memory.
func EmitBorrowed[T any](ctx context.Context, it sortjoin.Iterator, fromRaw func([]byte, *memory.Arena) T, sink func([]T) error, batch int) error {
	buf := make([]T, 0, batch)
	var a memory.Arena // for records that do not fit the buffer
	data := make([]byte, 0, borrowedBytes)
	flush := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := sink(buf)
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
		return sink(buf)
	}
	return nil
}

// EmitSorted makes a record of every (key, value) pair of it with decode and
// sends them to sink in batches.
func EmitSorted[T any](ctx context.Context, it sortjoin.Iterator, sink func([]T) error, batch int, decode func(key, val []byte, v *T) error) error {
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
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := sink(buf); err != nil {
				return err
			}
			clear(buf) // drop references for the sink's sake
			n = 0
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if n > 0 {
		return sink(buf[:n])
	}
	return nil
}

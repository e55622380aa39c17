package typed

import (
	"bytes"
	"context"
	"fmt"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/sortjoin"
)

// foldCheckEvery is how many records a Folder folds between two looks at the
// context (one large group emits nothing for long).
const foldCheckEvery = 4096

// Folder folds records that arrive grouped by key, in ascending key
// order, into one record per group and sends those downstream a batch at a
// time. It holds one group: its key and the fold so far.
type Folder[T any] struct {
	fn    func(a, b T) T
	own   *memory.Codec[T] // strings to copy out of the input (shallow, not flat); nil: none
	arena *memory.Arena    // the emitted records' strings
	next  func([]T) error
	acc   T      // the current group's fold
	key   []byte // its encoded key
	kbuf  []byte // AddBatch's key
	open  bool   // a group is held
	buf   []T    // the pending output batch
	n     int    // records in buf
}

// NewFolder returns a folder that reduces with fn and sends batch records at
// a time to next. A codec that is Shallow but not Flat makes it copy the
// strings of the records it emits out of its input.
func NewFolder[T any](codec *memory.Codec[T], fn func(a, b T) T, next func([]T) error, batch int) *Folder[T] {
	f := &Folder[T]{fn: fn, next: next, buf: make([]T, max(batch, 1))}
	if codec.Shallow() && !codec.Flat() {
		f.own, f.arena = codec, memory.NewArena(0)
	}
	return f
}

// add folds *v, whose encoded key is key, into the current group, or emits the
// group and starts the next one with *v.
func (f *Folder[T]) add(ctx context.Context, key []byte, v *T) error {
	if f.open {
		switch c := bytes.Compare(key, f.key); {
		case c == 0:
			f.acc = f.fn(f.acc, *v)
			return nil
		case c < 0:
			return fmt.Errorf("typed: sorted grouping: %w: key %x after %x", sortjoin.ErrUnsortedInput, key, f.key)
		}
		if err := f.emit(ctx); err != nil {
			return err
		}
	}
	f.acc = *v
	f.key = append(f.key[:0], key...)
	f.open = true
	return nil
}

// emit moves the current group's record into the output batch, its strings
// copied into the folder's arena (so that it keeps no input memory alive),
// and sends the batch when it is full.
func (f *Folder[T]) emit(ctx context.Context) error {
	f.buf[f.n] = f.acc
	if f.own != nil {
		f.own.Own(&f.buf[f.n], nil, f.arena)
	}
	var zero T
	f.acc, f.open = zero, false
	f.n++
	if f.n < len(f.buf) {
		return nil
	}
	return f.flush(ctx)
}

func (f *Folder[T]) flush(ctx context.Context) error {
	if f.n == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err := f.next(f.buf[:f.n])
	clear(f.buf[:f.n]) // drop references for the collector's sake
	f.n = 0
	return err
}

// Finish emits the last group and what is pending.
func (f *Folder[T]) Finish(ctx context.Context) error {
	if f.open {
		if err := f.emit(ctx); err != nil {
			return err
		}
	}
	return f.flush(ctx)
}

// FoldSorted folds the (key, serialized record) pairs of it, sorted by key.
// Records are decoded into one scratch value, their strings carved from an
// arena: the walk allocates nothing per record.
func (f *Folder[T]) FoldSorted(ctx context.Context, it sortjoin.Iterator, codec *memory.Codec[T]) error {
	var v T
	var scratch *memory.Arena // the strings of records being folded; nil for flat records
	if !codec.Flat() {
		scratch = memory.NewArena(0)
	}
	for i := 1; ; i++ {
		key, val, ok := it.Next()
		if !ok {
			break
		}
		if _, err := codec.DecodeArena(val, &v, scratch); err != nil {
			return fmt.Errorf("typed: sorted grouping: %w", err)
		}
		if err := f.add(ctx, key, &v); err != nil {
			return err
		}
		if i%foldCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return it.Err()
}

// AddBatch folds a batch of records that arrive in key order, their keys
// encoded with key.
func (f *Folder[T]) AddBatch(ctx context.Context, key func(dst []byte, v *T) []byte, b []T) error {
	for i := range b {
		f.kbuf = key(f.kbuf[:0], &b[i])
		if err := f.add(ctx, f.kbuf, &b[i]); err != nil {
			return err
		}
	}
	return nil
}

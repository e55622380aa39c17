package dataset

import (
	"bytes"
	"context"
	"fmt"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/optimizer"
	"github.com/weirdata/weir/sortjoin"
)

// sortedCheckEvery is how many records a sorted grouping folds between two
// looks at the task's context (one large group emits nothing for long).
const sortedCheckEvery = 4096

// runSortedReduce runs a Reduce whose local strategy is SortGroup: it walks
// the groups of its input in key order, folding the consecutive records of
// one key with fn, and emits one record per group, in key order. With
// InputLocal SORT (the planner's choice when the input is not known to be
// sorted) it first sorts the subtask's input by key with the external sorter
// GroupReduce uses (its share of the memory budget, spilling runs to disk,
// removed when the task's body returns); with NONE (the input arrives sorted on
// the key, forwarded from a sort-merge join, a sort or another sorted
// grouping) it streams the input as it comes, holding one group at a time.
// A streamed input found out of order fails with sortjoin.ErrUnsortedInput
// rather than emit a key twice.
func runSortedReduce[T any](tc *task, n *node, where string, k *keyer[T], codec *memory.Codec[T],
	fn func(a, b T) T, out collector[T], batch int) error {
	f := newGroupFolder(codec, fn, out, batch)
	if il := n.planned.Decision.InputLocal; len(il) == 0 || il[0] == optimizer.LocalNone {
		return drive[T](tc, &streamFolder[T]{f: f, ctx: tc.Context(), key: k.appender()})
	}
	it, err := sortInput(tc, where, k, codec)
	if err != nil {
		return err
	}
	if err := f.foldSorted(tc.Context(), it, codec); err != nil {
		return err
	}
	return f.finish(tc.Context())
}

// groupFolder folds records that arrive grouped by key, in ascending key
// order, into one record per group and sends those downstream a batch at a
// time. It holds one group: its key and the fold so far.
type groupFolder[T any] struct {
	fn    func(a, b T) T
	own   *memory.Codec[T] // strings to copy out of the input (shallow, not flat); nil: none
	arena *memory.Arena    // the emitted records' strings
	next  collector[T]
	acc   T      // the current group's fold
	key   []byte // its encoded key
	open  bool   // a group is held
	buf   []T    // the pending output batch
	n     int    // records in buf
}

func newGroupFolder[T any](codec *memory.Codec[T], fn func(a, b T) T, next collector[T], batch int) *groupFolder[T] {
	f := &groupFolder[T]{fn: fn, next: next, buf: make([]T, max(batch, 1))}
	if codec.Shallow() && !codec.Flat() {
		f.own, f.arena = codec, memory.NewArena(0)
	}
	return f
}

// add folds *v, whose encoded key is key, into the current group, or emits the
// group and starts the next one with *v.
func (f *groupFolder[T]) add(ctx context.Context, key []byte, v *T) error {
	if f.open {
		switch c := bytes.Compare(key, f.key); {
		case c == 0:
			f.acc = f.fn(f.acc, *v)
			return nil
		case c < 0:
			return fmt.Errorf("dataset: sorted grouping: %w: key %x after %x", sortjoin.ErrUnsortedInput, key, f.key)
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
func (f *groupFolder[T]) emit(ctx context.Context) error {
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

func (f *groupFolder[T]) flush(ctx context.Context) error {
	if f.n == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err := f.next.collect(f.buf[:f.n])
	clear(f.buf[:f.n]) // drop references for the collector's sake
	f.n = 0
	return err
}

// finish emits the last group and what is pending, then closes next.
func (f *groupFolder[T]) finish(ctx context.Context) error {
	if f.open {
		if err := f.emit(ctx); err != nil {
			return err
		}
	}
	if err := f.flush(ctx); err != nil {
		return err
	}
	return f.next.close()
}

// foldSorted folds the (key, serialized record) pairs of it, sorted by key.
// Records are decoded into one scratch value, their strings carved from an
// arena: the walk allocates nothing per record.
func (f *groupFolder[T]) foldSorted(ctx context.Context, it sortjoin.Iterator, codec *memory.Codec[T]) error {
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
			return fmt.Errorf("dataset: sorted grouping: %w", err)
		}
		if err := f.add(ctx, key, &v); err != nil {
			return err
		}
		if i%sortedCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return it.Err()
}

// streamFolder is the collector of a sorted grouping whose input arrives
// sorted on the key: it folds each batch as it comes. Its close emits the
// last group and closes the output.
type streamFolder[T any] struct {
	f    *groupFolder[T]
	ctx  context.Context
	key  func(dst []byte, v *T) []byte
	kbuf []byte
}

func (s *streamFolder[T]) collect(b []T) error {
	for i := range b {
		s.kbuf = s.key(s.kbuf[:0], &b[i])
		if err := s.f.add(s.ctx, s.kbuf, &b[i]); err != nil {
			return err
		}
	}
	return nil
}

func (s *streamFolder[T]) close() error { return s.f.finish(s.ctx) }

package typed

import (
	"bytes"
	"context"
	"iter"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/sortjoin"
)

// The sorted groupings walk the (key, serialized record) pairs of a sorter
// and hand each group to the user's function as a sequence of decoded
// records. A sequence is valid only during the call; what the function does
// not consume is skipped.

// SortFeeder adds records to a sorter under the key K encodes. A raw Keyer's
// records are their keys and are stored once.
type SortFeeder[T any] struct {
	K        *Keyer[T]
	Codec    *memory.Codec[T]
	S        *sortjoin.Sorter
	key, val []byte
}

// Collect adds a batch of records to the sorter.
func (f *SortFeeder[T]) Collect(b []T) error {
	if f.K.Raw != nil { // the record is its key
		for i := range b {
			if err := f.S.Add(f.K.Raw(&b[i]), nil); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range b {
		f.key = f.K.Append(f.key[:0], &b[i])
		f.val = f.Codec.Append(f.val[:0], &b[i])
		if err := f.S.Add(f.key, f.val); err != nil {
			return err
		}
	}
	return nil
}

// Cursor walks a sorted iterator one record ahead. It keeps its own copy of
// the current pair: the iterator's slices die at its next call.
type Cursor struct {
	It       sortjoin.Iterator
	Key, Val []byte
	OK       bool
	Err      error
}

// NewCursor returns a cursor on the first pair of it.
func NewCursor(it sortjoin.Iterator) *Cursor {
	c := &Cursor{It: it}
	c.Advance()
	return c
}

// Advance moves to the next pair. At the end OK is false and Err holds the
// iterator's error.
func (c *Cursor) Advance() {
	k, v, ok := c.It.Next()
	c.OK = ok
	if !ok {
		c.Err = c.It.Err()
		return
	}
	c.Key = append(c.Key[:0], k...)
	c.Val = append(c.Val[:0], v...)
}

// Skip advances past the pairs whose key is group.
func (c *Cursor) Skip(group []byte) {
	for c.OK && bytes.Equal(c.Key, group) {
		c.Advance()
	}
}

// groupSeq yields the decoded records of group at c, advancing c. A decoding
// error stops it and is stored in *errp.
func groupSeq[T any](c *Cursor, group []byte, codec *memory.Codec[T], errp *error) iter.Seq[T] {
	return func(yield func(T) bool) {
		for c.OK && bytes.Equal(c.Key, group) {
			var v T
			if _, err := codec.Decode(c.Val, &v); err != nil {
				*errp = err
				return
			}
			c.Advance()
			if !yield(v) {
				return
			}
		}
	}
}

// ReduceSorted calls fn once per group of it, whose pairs are sorted by a
// key that begins with the group key k encodes (SortGroup's keys may follow
// it). fn gets the group's key, made by sel from its first record, and its
// records in the sorted order. It stops at the first error of fn, of
// decoding, of it or of ctx.
func ReduceSorted[T, K any](ctx context.Context, it sortjoin.Iterator, k *Keyer[T], codec *memory.Codec[T], sel func(T) K, fn func(K, iter.Seq[T]) error) error {
	cur := NewCursor(it)
	var v T
	var group, gk []byte
	var decodeErr error
	// groupOf decodes the cursor's record into v and returns its group key.
	groupOf := func() ([]byte, error) {
		if _, err := codec.Decode(cur.Val, &v); err != nil {
			return nil, err
		}
		gk = k.Append(gk[:0], &v)
		return gk, nil
	}
	for cur.OK {
		if err := ctx.Err(); err != nil {
			return err
		}
		first, err := groupOf()
		if err != nil {
			return err
		}
		group = append(group[:0], first...)
		key := sel(v)
		inGroup := true // the cursor's record (decoded in v) is in the group
		// next moves the cursor on and finds whether its record is in the group.
		next := func() error {
			cur.Advance()
			if !cur.OK {
				return nil
			}
			g, err := groupOf()
			if err != nil {
				return err
			}
			inGroup = bytes.Equal(g, group)
			return nil
		}
		seq := func(yield func(T) bool) {
			for cur.OK && inGroup {
				w := v
				if decodeErr = next(); decodeErr != nil {
					return
				}
				if !yield(w) {
					return
				}
			}
		}
		ferr := fn(key, seq)
		if decodeErr != nil {
			return decodeErr
		}
		for cur.OK && inGroup { // skip what fn did not consume
			if err := next(); err != nil {
				return err
			}
		}
		if ferr != nil {
			return ferr
		}
	}
	return cur.Err
}

// CoGroupSorted merges two iterators sorted by the same key encoding and
// calls fn once per key present in either, with that key's records of each
// (either may be empty). The key comes from lkey or rkey of the group's
// first record. It stops at the first error of fn, of decoding, of the
// iterators or of ctx.
func CoGroupSorted[L, R, K any](ctx context.Context, lit, rit sortjoin.Iterator, lc *memory.Codec[L], rc *memory.Codec[R],
	lkey func(L) K, rkey func(R) K, fn func(K, iter.Seq[L], iter.Seq[R]) error) error {
	lcur, rcur := NewCursor(lit), NewCursor(rit)
	var decodeErr error
	var group []byte
	for lcur.OK || rcur.OK {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !rcur.OK || lcur.OK && bytes.Compare(lcur.Key, rcur.Key) <= 0 {
			group = append(group[:0], lcur.Key...)
		} else {
			group = append(group[:0], rcur.Key...)
		}
		var key K
		if lcur.OK && bytes.Equal(lcur.Key, group) {
			var v L
			if _, err := lc.Decode(lcur.Val, &v); err != nil {
				return err
			}
			key = lkey(v)
		} else {
			var v R
			if _, err := rc.Decode(rcur.Val, &v); err != nil {
				return err
			}
			key = rkey(v)
		}
		ferr := fn(key, groupSeq(lcur, group, lc, &decodeErr), groupSeq(rcur, group, rc, &decodeErr))
		if decodeErr != nil {
			return decodeErr
		}
		lcur.Skip(group)
		rcur.Skip(group)
		if ferr != nil {
			return ferr
		}
	}
	if lcur.Err != nil {
		return lcur.Err
	}
	return rcur.Err
}

// ReduceDense calls fn with every group of d, in key order, until ctx is
// cancelled or fn fails. One sequence serves all the groups.
func ReduceDense[T, K any](ctx context.Context, d *DenseGrouper[T], sel func(T) K, fn func(K, iter.Seq[T]) error) error {
	var group []T
	seq := func(yield func(T) bool) {
		for _, v := range group {
			if !yield(v) {
				return
			}
		}
	}
	return d.Each(ctx, func(g []T) error {
		group = g
		return fn(sel(group[0]), seq)
	})
}

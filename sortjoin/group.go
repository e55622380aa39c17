package sortjoin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// ErrUnsortedInput is wrapped by the errors GroupSorted and CombineSorted return for
// input that is not sorted ascending by key.
var ErrUnsortedInput = errors.New("sortjoin: input not sorted by key")

// GroupValues iterates the values of one key group. It is valid only during the
// GroupFunc call that receives it, and each value only until the next call to Next.
type GroupValues struct {
	in  Iterator
	key []byte // the group's key, copied (the input's slices die at its next Next)

	first    []byte // the group's first value, read before the GroupFunc call
	hasFirst bool
	ended    bool // the group's last value has been returned or skipped

	// The record after the group, read to detect its end: the next group's first
	// record, still valid because the input has not been advanced since.
	nextKey, nextVal []byte
	hasNext          bool

	err error // out-of-order input
	n   int   // records read since the last context check
}

// Next returns the group's next value, or ok == false after its last one.
func (g *GroupValues) Next() (val []byte, ok bool) {
	if g.hasFirst {
		g.hasFirst = false
		return g.first, true
	}
	if g.ended {
		return nil, false
	}
	k, v, ok := g.in.Next()
	if !ok {
		g.ended = true
		return nil, false
	}
	g.n++
	switch c := bytes.Compare(k, g.key); {
	case c == 0:
		return v, true
	case c > 0:
		g.ended = true
		g.nextKey, g.nextVal, g.hasNext = k, v, true
	default:
		g.ended = true
		g.err = fmt.Errorf("%w: key %x after %x", ErrUnsortedInput, k, g.key)
	}
	return nil, false
}

// GroupFunc receives one key group: the key (valid during the call) and its values.
type GroupFunc func(key []byte, vals *GroupValues) error

// GroupSorted calls fn once per distinct key of in (sorted ascending by key), in key
// order; values the function does not consume are skipped. It consumes but does not
// close in. Input out of order is an error naming both keys; an error from fn stops
// the grouping and is returned unchanged. ctx is checked once per batch of records.
// GroupSorted allocates nothing per record: it keeps one copy of the current key.
func GroupSorted(ctx context.Context, in Iterator, fn GroupFunc) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sortjoin: group: %w", err)
	}
	g := &GroupValues{in: in}
	k, v, ok := in.Next()
	if !ok {
		return inputErr("group", in)
	}
	for {
		g.key = append(g.key[:0], k...)
		g.first, g.hasFirst, g.ended, g.hasNext = v, true, false, false
		if err := fn(g.key[:len(g.key):len(g.key)], g); err != nil {
			return err
		}
		g.hasFirst = false
		for !g.ended {
			g.Next()
		}
		if g.err != nil {
			return fmt.Errorf("sortjoin: group: %w", g.err)
		}
		if g.n >= aggCtxEvery {
			g.n = 0
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("sortjoin: group: %w", err)
			}
		}
		if !g.hasNext {
			return inputErr("group", in)
		}
		k, v = g.nextKey, g.nextVal
	}
}

// CombineSorted is the sort-based counterpart of the hash aggregator: it reduces
// each key group of in (sorted ascending by key) with combine, in value order, and
// calls emit once per key, in key order, with the key and its accumulator (valid
// during the call). It consumes but does not close in. Input out of order is an
// error; an error from combine or emit stops it (emit's is returned unchanged).
// ctx is checked once per batch of records. It allocates nothing per record once
// its buffers have grown to the largest key and accumulator.
func CombineSorted(ctx context.Context, in Iterator, combine CombineFunc, emit func(key, acc []byte) error) error {
	if combine == nil || emit == nil {
		return errors.New("sortjoin: combine sorted: nil combine or emit function")
	}
	var c combiner
	c.reset(ctx, in, combine)
	for {
		k, acc, ok := c.next()
		if !ok {
			return c.err
		}
		if err := emit(k, acc); err != nil {
			return err
		}
	}
}

// combiner reduces runs of equal keys of a sorted Iterator, pulling one group per
// next call. It owns copies of the current key and accumulator; the record that ends
// a group is kept as the input's own slices, which stay valid until the next call
// advances the input.
type combiner struct {
	ctx     context.Context
	in      Iterator
	combine CombineFunc

	key, acc, dst []byte

	nextKey, nextVal []byte
	hasNext, eof     bool

	n   int
	err error
}

func (c *combiner) reset(ctx context.Context, in Iterator, combine CombineFunc) {
	c.ctx, c.in, c.combine = ctx, in, combine
	c.nextKey, c.nextVal, c.hasNext, c.eof = nil, nil, false, false
	c.n, c.err = 0, nil
}

// footprint returns the bytes held by the combiner's buffers.
func (c *combiner) footprint() int64 { return int64(cap(c.key) + cap(c.acc) + cap(c.dst)) }

// next returns the next key and its accumulator, valid until the next call; ok is
// false at the end of the input or on an error (c.err).
func (c *combiner) next() (key, acc []byte, ok bool) {
	if c.err != nil {
		return nil, nil, false
	}
	if !c.hasNext {
		if c.eof {
			return nil, nil, false
		}
		k, v, ok := c.in.Next()
		if !ok {
			c.eof = true
			c.err = inputErr("combine", c.in)
			return nil, nil, false
		}
		c.nextKey, c.nextVal = k, v
	}
	c.key = append(c.key[:0], c.nextKey...)
	c.acc = append(c.acc[:0], c.nextVal...)
	c.hasNext = false
	for {
		k, v, ok := c.in.Next()
		if !ok {
			c.eof = true
			if c.err = inputErr("combine", c.in); c.err != nil {
				return nil, nil, false
			}
			return c.key, c.acc, true
		}
		if c.n++; c.n >= aggCtxEvery {
			c.n = 0
			if err := c.ctx.Err(); err != nil {
				c.err = fmt.Errorf("sortjoin: combine: %w", err)
				return nil, nil, false
			}
		}
		switch cmp := bytes.Compare(k, c.key); {
		case cmp > 0:
			c.nextKey, c.nextVal, c.hasNext = k, v, true
			return c.key, c.acc, true
		case cmp < 0:
			c.err = fmt.Errorf("sortjoin: combine: %w: key %x after %x", ErrUnsortedInput, k, c.key)
			return nil, nil, false
		}
		out, err := c.combine(c.dst[:0], c.acc[:len(c.acc):len(c.acc)], v)
		if err != nil {
			c.err = fmt.Errorf("sortjoin: combine: %w", err)
			return nil, nil, false
		}
		switch {
		case sameMemory(out, c.acc):
			c.acc = out // modified in place
		case sameMemory(out, v):
			c.acc = append(c.acc[:0], out...) // the input's memory: copy it
		default:
			c.dst, c.acc = c.acc[:0], out // written into dst (or a new buffer): swap
		}
	}
}

// inputErr wraps the error that ended iterator in, if any.
func inputErr(op string, in Iterator) error {
	if err := in.Err(); err != nil {
		return fmt.Errorf("sortjoin: %s: input: %w", op, err)
	}
	return nil
}

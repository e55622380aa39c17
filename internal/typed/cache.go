package typed

import (
	"context"
	"errors"
	"io"
	"unsafe"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
)

// A Cache's chunks hold cacheFirstChunk records, then twice as many as the
// last, up to cacheChunk.
const (
	cacheFirstChunk = 64
	cacheChunk      = 4096
)

// Cache holds one partition of a loop-invariant input of an iteration, filled
// once and replayed every superstep. While the input fits the budget it is
// kept as Go values, in chunks reserved on the memory manager, and a replay
// hands them out with no decoding (a scan: not even a copy); when a
// reservation is refused, the values already held move to a Spool
// (serialized, spilling) with everything after them, and replays decode as a
// Spool's do.
//
//	typed ──Grow refused──► serialized (Spool) ──Reset──► typed
//
// Records are copied in: flat ones by value, the others through their codec
// (encoded, then decoded into the cache's arena), so the cache owns every
// byte its values reference. A replay hands out copies of the values; their
// strings and slices are the cache's own memory, shared by every superstep:
// receivers must not modify what they point to.
//
// Its memory is the chunks of values and, for records that
// are not flat, their encoded sizes for what they reference.
//
// A Cache belongs to one goroutine while it is filled; several may replay it
// at once.
type Cache[T any] struct {
	codec   *memory.Codec[T]
	res     *memory.Reservation
	arena   *memory.Arena
	chunks  [][]T
	n       int64
	spool   *Spool[T] // set once the values did not fit
	scratch []byte
}

// NewCache returns an empty cache named name, taking its memory and spill
// files from env.
func NewCache[T any](env resource.Env, name string, codec *memory.Codec[T]) *Cache[T] {
	return &Cache[T]{
		codec: codec,
		res:   env.Memory.NewReservation(name + " (values)"),
		spool: NewSpool(env, name, codec),
	}
}

// Len returns the records added since the last reset.
func (c *Cache[T]) Len() int64 { return c.n + c.spool.Len() }

// Typed reports whether the cache holds its records as Go values (it has not
// moved them to its spool).
func (c *Cache[T]) Typed() bool { return c.spool.Len() == 0 }

// SpilledBytes returns the record bytes the cache wrote to spill files since
// NewCache, resets included.
func (c *Cache[T]) SpilledBytes() int64 { return c.spool.SpilledBytes() }

// Bytes returns the memory the cache holds as Go values.
func (c *Cache[T]) Bytes() int64 { return c.res.Bytes() }

// Fill adds every batch of in until it ends.
func (c *Cache[T]) Fill(ctx context.Context, in Batches[T]) error {
	for {
		b, err := in.Next(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := c.Add(b); err != nil {
			return err
		}
	}
}

// Add appends a batch.
func (c *Cache[T]) Add(b []T) error {
	if !c.Typed() {
		return c.spool.Add(b)
	}
	var zero T
	flat := c.codec.Flat()
	for len(b) > 0 {
		if len(c.chunks) == 0 || len(c.chunks[len(c.chunks)-1]) == cap(c.chunks[len(c.chunks)-1]) {
			size := cacheFirstChunk
			if len(c.chunks) > 0 {
				size = min(cacheChunk, 2*cap(c.chunks[len(c.chunks)-1]))
			}
			if err := c.res.Grow(int64(size) * int64(unsafe.Sizeof(zero))); err != nil {
				return c.toSpool(b, err)
			}
			c.chunks = append(c.chunks, make([]T, 0, size))
		}
		last := &c.chunks[len(c.chunks)-1]
		k := min(len(b), cap(*last)-len(*last))
		if flat {
			*last = append(*last, b[:k]...)
		} else {
			refs, err := c.copyIn(last, b[:k])
			if err != nil {
				return err
			}
			if err := c.res.Grow(refs); err != nil {
				c.chunks[len(c.chunks)-1] = (*last)[:len(*last)-k]
				return c.toSpool(b, err)
			}
		}
		c.n += int64(k)
		b = b[k:]
	}
	return nil
}

// copyIn appends copies of b to *dst whose strings and slices are decoded
// into the cache's arena, and returns the bytes they reference.
func (c *Cache[T]) copyIn(dst *[]T, b []T) (int64, error) {
	if c.arena == nil {
		c.arena = memory.NewArena(0)
	}
	var refs int64
	for i := range b {
		c.scratch = c.codec.Append(c.scratch[:0], &b[i])
		var zero T
		*dst = append(*dst, zero)
		if _, err := c.codec.DecodeArena(c.scratch, &(*dst)[len(*dst)-1], c.arena); err != nil {
			return 0, err
		}
		refs += int64(len(c.scratch))
	}
	return refs, nil
}

// toSpool moves every value to the spool, frees their memory, and adds rest
// (the records the cache could not take) after them. refused is the error
// that said the values do not fit.
func (c *Cache[T]) toSpool(rest []T, refused error) error {
	if !errors.Is(refused, memory.ErrBudgetExceeded) {
		return refused
	}
	for _, ch := range c.chunks {
		if err := c.spool.Add(ch); err != nil {
			return err
		}
	}
	c.freeValues()
	return c.spool.Add(rest)
}

// freeValues drops the values and returns their memory.
func (c *Cache[T]) freeValues() {
	clear(c.chunks)
	c.chunks, c.arena, c.n = c.chunks[:0], nil, 0
	c.res.Shrink(c.res.Bytes())
}

// Replay passes every record, in the order they came, to fn in batches of up
// to batch records: copies of the values (see Cache), or, once the cache
// moved to its spool, decoded records.
func (c *Cache[T]) Replay(ctx context.Context, batch int, fn func([]T) error) error {
	if !c.Typed() {
		return c.spool.Replay(ctx, batch, fn)
	}
	buf := make([]T, batch)
	for _, ch := range c.chunks {
		for len(ch) > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := copy(buf, ch)
			if err := fn(buf[:k]); err != nil {
				return err
			}
			ch = ch[k:]
		}
	}
	return nil
}

// Scan passes every record, in the order they came, to fn in batches of up
// to batch records, as Replay does, but hands out the cache's own values
// while it holds them: no copy is made, and fn must read the batches only
// (neither the records nor what they point to may change). Once the cache
// moved to its spool, it replays decoded records. Scanning values allocates
// nothing.
func (c *Cache[T]) Scan(ctx context.Context, batch int, fn func([]T) error) error {
	if !c.Typed() {
		return c.spool.Replay(ctx, batch, fn)
	}
	batch = max(batch, 1)
	for _, ch := range c.chunks {
		for len(ch) > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := min(batch, len(ch))
			if err := fn(ch[:k:k]); err != nil {
				return err
			}
			ch = ch[k:]
		}
	}
	return nil
}

// Reset empties the cache for reuse: memory freed, spill files removed; it
// holds Go values again.
func (c *Cache[T]) Reset() {
	c.freeValues()
	c.spool.Reset()
}

// Release frees everything; the cache must not be used afterwards.
func (c *Cache[T]) Release() {
	c.Reset()
	_ = c.res.Release()
	c.spool.Release()
}

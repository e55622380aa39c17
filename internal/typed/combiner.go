package typed

import (
	"unsafe"

	"github.com/weirdata/weir/memory"
)

// CombinerEntries is how many groups a Combiner holds before it sends them
// all downstream.
const CombinerEntries = 1 << 16

// combinerOwned is how many bytes of strings a Combiner copies into its own
// arena before it sends its groups downstream.
const combinerOwned = 8 << 20

// Combiner is the combiner of a Reduce over a record type whose only
// references are strings and byte slices (memory.Codec.Shallow; flat types
// included). It needs no serialization: it keeps its groups in a group table.
//
// Keys of 8 bytes start in the table's dense mode. Its range may take
// DenseFloor entries. With records small enough to live in the entries
// (directBytes), it combines every record of a million dense keys (a graph's
// vertices, say) into one. Otherwise it holds up to CombinerEntries groups.
// A key beyond the range sends every group downstream. The table then stays
// dense if the groups filled a quarter of it (keys that move along), and
// turns to hashing if not. In hash mode it holds up to CombinerEntries groups.
//
// When the table or its arena is full, it sends every group downstream and
// starts over, as a combiner may: its output is partial results. Flush sends
// what it holds. Its memory is fixed: NewCombiner forces it on the
// reservation it is given.
type Combiner[T any] struct {
	t     *groupTable[T]
	sink  func([]T) error
	batch int
}

// NewCombiner returns an empty combiner of records keyed by k, reduced with
// fn, sending batch records at a time. It forces its memory on res, sized by
// limit (the operator's share, 0 for none); the caller releases res.
func NewCombiner[T any](k *Keyer[T], codec *memory.Codec[T], fn func(a, b T) T, res *memory.Reservation, limit int64, batch int) *Combiner[T] {
	hashBytes := int64(CombinerEntries) * groupBytes[T]() // the slots included
	entries := max(DenseFloor(limit, denseEntryBytes[T]()), int(hashBytes/denseEntryBytes[T]()))
	c := &Combiner[T]{t: newGroupTable(k, codec, fn, CombinerEntries, entries), batch: batch}
	c.t.noHash = true
	denseBytes := int64(entries+128) * denseEntryBytes[T]() // +128: whole words of the bitmap
	if !c.t.direct {
		var zero T
		denseBytes += CombinerEntries * int64(unsafe.Sizeof(zero))
	}
	size := max(hashBytes, denseBytes)
	if !codec.Flat() {
		size += combinerOwned
	}
	res.Force(size)
	return c
}

// Reset empties the combiner, keeping its table's memory and mode, and makes
// it send to sink.
func (c *Combiner[T]) Reset(sink func([]T) error) {
	c.t.reset()
	c.sink = sink
}

// Dense reports whether the combiner's table is in dense mode.
func (c *Combiner[T]) Dense() bool { return c.t.isDense }

// Add combines a batch.
func (c *Combiner[T]) Add(b []T) error {
	for len(b) > 0 {
		if n := c.t.addBatch(b); n > 0 { // in dense mode over flat records
			b = b[n:]
			continue
		}
		// b[0] goes one at a time: the table hashes, holds records behind
		// indexes or owning memory, or its key lies beyond the dense range
		if c.t.owned > combinerOwned || (!(c.t.isDense && c.t.direct) && c.t.groups() >= CombinerEntries) {
			if err := c.Flush(); err != nil {
				return err
			}
		}
		if !c.t.add(&b[0]) {
			if err := c.wide(&b[0]); err != nil {
				return err
			}
		}
		b = b[1:]
	}
	return nil
}

// wide adds *v, whose key the dense table cannot hold: it sends the groups
// downstream first, and turns the table to hashing unless they filled at
// least a quarter of its range.
func (c *Combiner[T]) wide(v *T) error {
	dense := 4*uint64(c.t.ndense) >= c.t.denseLen()
	if err := c.Flush(); err != nil {
		return err
	}
	if !dense || !c.t.add(v) { // an empty table holds any key but the largest
		c.t.toHash(CombinerEntries)
		c.t.add(v)
	}
	return nil
}

// Flush sends every group downstream and empties the table.
func (c *Combiner[T]) Flush() error {
	err := c.t.emit(c.sink, c.batch)
	c.t.reset()
	return err
}

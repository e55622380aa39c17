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
//
// A hashing combiner that does not reduce passes its input through. After
// PassProbe records into a hash table, if they made more than four groups in
// five, it sends its groups downstream and every later batch as it comes,
// until Reset (as Trino's adaptive partial aggregation). Keys that repeat so
// rarely within a table's window would cost a hash insert each and save the
// final phase nothing. A dense table is not judged: its range may hold every
// key of the input.
type Combiner[T any] struct {
	t     *groupTable[T]
	sink  func([]T) error
	batch int
	in    int  // records added to the hash table since it was last emptied
	state byte // unjudged, combining or passing
}

// PassProbe is how many records a hashing Combiner takes before it judges
// whether it reduces them.
const PassProbe = 1 << 15

// The states of a Combiner's judgement.
const (
	unjudged  = iota
	combining // it reduced its first PassProbe records
	passing   // it did not: it passes its input through
)

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
	c.in, c.state = 0, unjudged
}

// Passing reports whether the combiner passes its input through.
func (c *Combiner[T]) Passing() bool { return c.state == passing }

// Dense reports whether the combiner's table is in dense mode.
func (c *Combiner[T]) Dense() bool { return c.t.isDense }

// Add combines a batch.
func (c *Combiner[T]) Add(b []T) error {
	if c.state == passing {
		return c.sink(b)
	}
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
		if c.state != unjudged || c.t.isDense {
			continue
		}
		if c.in++; c.in >= PassProbe {
			if 5*c.t.groups() <= 4*c.in {
				c.state = combining
				continue
			}
			c.state = passing
			if err := c.Flush(); err != nil {
				return err
			}
			if len(b) > 0 {
				return c.sink(b)
			}
		}
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
	c.in = 0
	return err
}

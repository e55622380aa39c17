package dataset

import (
	"unsafe"

	"github.com/weirdata/weir/memory"
)

// typedCombinerEntries is how many groups a typed combiner holds before it
// sends them all downstream.
const typedCombinerEntries = 1 << 16

// typedCombinerOwned is how many bytes of strings a typed combiner copies into
// its own arena before it sends its groups downstream.
const typedCombinerOwned = 8 << 20

// typedCombiner is the combiner of a Reduce over a record type whose only
// references are strings and byte slices (memory.Codec.Shallow; flat types
// included), which needs no serialization: it keeps its groups in a
// groupTable. Keys of 8 bytes start in the table's dense mode, which may take
// denseFloor entries (an eighth of the share, or 32 MiB without one, up to 1M
// entries); with records small enough to be held in the entries
// (directBytes) it combines every record of a million dense keys, a graph's
// vertices say, into one, else it holds up to typedCombinerEntries groups. A
// key beyond that range sends every group downstream; the table stays dense if the groups filled a quarter of it (keys
// that move along), and turns to hashing otherwise. In hash mode it holds up
// to typedCombinerEntries groups. When the table or its arena is full it
// sends every group downstream and starts over, as a combiner may (its output
// is partial results); at the end it sends what it holds. Its memory is fixed
// and taken from the task's memory manager (for the whole loop, in a loop's
// task). Records of other types go through
// the serialized sortjoin.HashAggregator (combineCollector).
type typedCombiner[T any] struct {
	t     *groupTable[T]
	next  collector[T]
	batch int
}

// newTypedCombiner returns the combiner of an operator's task; key names the
// operator's combiner, under which a loop's task keeps the table (empty) and
// its reservation from one superstep to the next, so that its memory is not
// allocated and touched afresh every superstep.
func newTypedCombiner[T any](tc *task, key any, k *keyer[T], codec *memory.Codec[T], fn func(a, b T) T, next collector[T], batch int) *typedCombiner[T] {
	if t, ok := tc.kept(key).(*groupTable[T]); ok {
		t.reset()
		return &typedCombiner[T]{t: t, next: next, batch: batch}
	}
	hashBytes := int64(typedCombinerEntries) * groupBytes[T]() // the slots included
	entries := max(denseFloor(tc.memShare, denseEntryBytes[T]()), int(hashBytes/denseEntryBytes[T]()))
	c := &typedCombiner[T]{t: newGroupTable(k, codec, fn, typedCombinerEntries, entries), next: next, batch: batch}
	c.t.noHash = true
	denseBytes := int64(entries+128) * denseEntryBytes[T]() // +128: whole words of the bitmap
	if !c.t.direct {
		var zero T
		denseBytes += typedCombinerEntries * int64(unsafe.Sizeof(zero))
	}
	size := max(hashBytes, denseBytes)
	if !codec.Flat() {
		size += typedCombinerOwned
	}
	res := tc.Env.Memory.NewReservation("typed combiner")
	res.Force(size)
	tc.keep(key, c.t, func() { _ = res.Release() })
	return c
}

func (c *typedCombiner[T]) collect(b []T) error {
	for len(b) > 0 {
		if n := c.t.addBatch(b); n > 0 { // in dense mode over flat records
			b = b[n:]
			continue
		}
		// b[0] goes one at a time: the table hashes, holds records behind
		// indexes or owning memory, or its key lies beyond the dense range
		if c.t.owned > typedCombinerOwned || (!(c.t.isDense && c.t.direct) && c.t.groups() >= typedCombinerEntries) {
			if err := c.flush(); err != nil {
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
func (c *typedCombiner[T]) wide(v *T) error {
	dense := 4*uint64(c.t.ndense) >= c.t.denseLen()
	if err := c.flush(); err != nil {
		return err
	}
	if !dense || !c.t.add(v) { // an empty table holds any key but the largest
		c.t.toHash(typedCombinerEntries)
		c.t.add(v)
	}
	return nil
}

// flush sends every group downstream and empties the table.
func (c *typedCombiner[T]) flush() error {
	err := c.t.emit(c.next, c.batch)
	c.t.reset()
	return err
}

func (c *typedCombiner[T]) close() error {
	if err := c.flush(); err != nil {
		return err
	}
	return c.next.close()
}

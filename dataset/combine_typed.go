package dataset

import "github.com/weirdata/weir/memory"

// typedCombinerEntries is how many groups a typed combiner holds before it
// sends them all downstream.
const typedCombinerEntries = 1 << 16

// typedCombinerOwned is how many bytes of strings a typed combiner copies into
// its own arena before it sends its groups downstream.
const typedCombinerOwned = 8 << 20

// typedCombiner is the combiner of a Reduce over a record type whose only
// references are strings and byte slices (memory.Codec.Shallow; flat types
// included), which needs no serialization: it keeps up to
// typedCombinerEntries groups in a groupTable. When the table or its arena is
// full it sends every group downstream and starts over, as a combiner may
// (its output is partial results); at the end it sends what it holds. Its
// memory is fixed and taken from the task's memory manager. Records of other
// types go through the serialized sortjoin.HashAggregator (combineCollector).
type typedCombiner[T any] struct {
	t     *groupTable[T]
	next  collector[T]
	batch int
}

func newTypedCombiner[T any](tc *task, k *keyer[T], codec *memory.Codec[T], fn func(a, b T) T, next collector[T], batch int) *typedCombiner[T] {
	// a dense array of 4 entries a group takes what the slots would
	c := &typedCombiner[T]{t: newGroupTable(k, codec, fn, typedCombinerEntries, 4*typedCombinerEntries), next: next, batch: batch}
	size := int64(typedCombinerEntries) * groupBytes[T]() // the slots included
	if !codec.Flat() {
		size += typedCombinerOwned
	}
	res := tc.Env.Memory.NewReservation("typed combiner")
	res.Force(size)
	tc.onExit(func() { _ = res.Release() })
	return c
}

func (c *typedCombiner[T]) collect(b []T) error {
	for i := range b {
		if len(c.t.vals) >= typedCombinerEntries || c.t.owned > typedCombinerOwned {
			if err := c.flush(); err != nil {
				return err
			}
		}
		c.t.add(&b[i])
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

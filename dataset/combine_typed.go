package dataset

import (
	"bytes"
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
// included), which needs no serialization: it keeps up to
// typedCombinerEntries groups as Go values in an open-addressing table (keys
// in one byte arena) and reduces each record into its group with the user's
// function directly. A group's strings are copied into the combiner's arena
// when they are new (memory.Codec.Own), so a group never keeps an input batch
// alive. When the table or the arena is full it sends every group downstream
// and starts over, as a combiner may (its output is partial results); at the
// end it sends what it holds. Its memory is fixed and taken from the task's
// memory manager. Records of other types go through the serialized
// sortjoin.HashAggregator (combineCollector).
type typedCombiner[T any] struct {
	k     func(dst []byte, v *T) []byte // the keyer's appender
	fn    func(a, b T) T
	next  collector[T]
	slots []int32 // index+1 into vals, 0 empty
	hash  []uint64
	keys  []byte
	koff  []int32 // keys[koff[i]:koff[i+1]] is group i's key
	vals  []T
	key   []byte
	mask  uint64
	batch int

	last  int32            // the group of the last record, -1 for none
	codec *memory.Codec[T] // nil for flat types: nothing to own
	arena *memory.Arena
	owned int // bytes copied into arena
}

func newTypedCombiner[T any](tc *task, k *keyer[T], codec *memory.Codec[T], fn func(a, b T) T, next collector[T], batch int) *typedCombiner[T] {
	c := &typedCombiner[T]{k: k.appender(), fn: fn, next: next, batch: batch,
		slots: make([]int32, 2*typedCombinerEntries),
		hash:  make([]uint64, 0, typedCombinerEntries),
		koff:  make([]int32, 1, typedCombinerEntries+1),
		vals:  make([]T, 0, typedCombinerEntries),
		mask:  2*typedCombinerEntries - 1,
		last:  -1,
	}
	var zero T
	size := int64(typedCombinerEntries) * (2*4 + 8 + 4 + int64(unsafe.Sizeof(zero)) + 16)
	if !codec.Flat() {
		c.codec, c.arena = codec, memory.NewArena(0)
		size += typedCombinerOwned
	}
	res := tc.Env.Memory.NewReservation("typed combiner")
	res.Force(size)
	tc.onExit(func() { _ = res.Release() })
	return c
}

func (c *typedCombiner[T]) collect(b []T) error {
	for i := range b {
		if c.owned > typedCombinerOwned {
			if err := c.flush(); err != nil {
				return err
			}
		}
		c.key = c.k(c.key[:0], &b[i])
		// clustered input: the group of the record before, without a lookup
		if g := c.last; g >= 0 && bytes.Equal(c.keys[c.koff[g]:c.koff[g+1]], c.key) {
			c.reduceInto(g, &b[i])
			continue
		}
		h := memory.Hash(c.key, partitionSeed^0x9e3779b97f4a7c15)
		j := h & c.mask
		for {
			s := c.slots[j]
			if s == 0 {
				if len(c.vals) == typedCombinerEntries {
					if err := c.flush(); err != nil {
						return err
					}
					j = h & c.mask
					continue
				}
				c.vals = append(c.vals, b[i])
				if c.codec != nil {
					c.owned += c.codec.Own(&c.vals[len(c.vals)-1], nil, c.arena)
				}
				c.hash = append(c.hash, h)
				c.keys = append(c.keys, c.key...)
				c.koff = append(c.koff, int32(len(c.keys)))
				c.slots[j] = int32(len(c.vals))
				c.last = int32(len(c.vals)) - 1 // the new group
				break
			}
			g := s - 1
			if c.hash[g] == h && bytes.Equal(c.keys[c.koff[g]:c.koff[g+1]], c.key) {
				c.reduceInto(g, &b[i])
				c.last = g
				break
			}
			j = (j + 1) & c.mask
		}
	}
	return nil
}

// reduceInto reduces v into group g.
func (c *typedCombiner[T]) reduceInto(g int32, v *T) {
	r := c.fn(c.vals[g], *v)
	if c.codec != nil {
		c.owned += c.codec.Own(&r, &c.vals[g], c.arena)
	}
	c.vals[g] = r
}

// flush sends every group downstream and empties the table.
func (c *typedCombiner[T]) flush() error {
	for lo := 0; lo < len(c.vals); lo += c.batch {
		if err := c.next.collect(c.vals[lo:min(lo+c.batch, len(c.vals))]); err != nil {
			return err
		}
	}
	clear(c.slots)
	c.last = -1
	if c.codec != nil {
		clear(c.vals) // let the arena go
		c.arena, c.owned = memory.NewArena(0), 0
	}
	c.vals, c.hash, c.keys, c.koff = c.vals[:0], c.hash[:0], c.keys[:0], c.koff[:1]
	return nil
}

func (c *typedCombiner[T]) close() error {
	if err := c.flush(); err != nil {
		return err
	}
	return c.next.close()
}

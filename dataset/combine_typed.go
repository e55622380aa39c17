package dataset

import (
	"bytes"
	"unsafe"

	"github.com/weirdata/weir/memory"
)

// typedCombinerEntries is how many groups a typed combiner holds before it
// sends them all downstream.
const typedCombinerEntries = 1 << 16

// typedCombiner is the combiner of a Reduce over a flat record type (fixed
// size, no pointers: memory.Codec.Flat), which needs no serialization: it
// keeps up to typedCombinerEntries groups as Go values in an open-addressing
// table (keys in one byte arena) and reduces each record into its group with
// the user's function directly. When the table is full it sends every group
// downstream and starts over, as a combiner may (its output is partial
// results); at the end it sends what it holds. Its memory is fixed and taken
// from the task's memory manager. Records of other types go through the
// serialized sortjoin.HashAggregator (combineCollector).
type typedCombiner[T any] struct {
	k     *keyer[T]
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
}

func newTypedCombiner[T any](tc *task, k *keyer[T], fn func(a, b T) T, next collector[T], batch int) *typedCombiner[T] {
	c := &typedCombiner[T]{k: k, fn: fn, next: next, batch: batch,
		slots: make([]int32, 2*typedCombinerEntries),
		hash:  make([]uint64, 0, typedCombinerEntries),
		koff:  make([]int32, 1, typedCombinerEntries+1),
		vals:  make([]T, 0, typedCombinerEntries),
		mask:  2*typedCombinerEntries - 1,
	}
	res := tc.Env.Memory.NewReservation("typed combiner")
	var zero T
	res.Force(int64(typedCombinerEntries) * (2*4 + 8 + 4 + int64(unsafe.Sizeof(zero)) + 16))
	tc.onExit(func() { _ = res.Release() })
	return c
}

func (c *typedCombiner[T]) collect(b []T) error {
	for i := range b {
		c.key = c.k.append(c.key[:0], &b[i])
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
				c.hash = append(c.hash, h)
				c.keys = append(c.keys, c.key...)
				c.koff = append(c.koff, int32(len(c.keys)))
				c.slots[j] = int32(len(c.vals))
				break
			}
			g := s - 1
			if c.hash[g] == h && bytes.Equal(c.keys[c.koff[g]:c.koff[g+1]], c.key) {
				c.vals[g] = c.fn(c.vals[g], b[i])
				break
			}
			j = (j + 1) & c.mask
		}
	}
	return nil
}

// flush sends every group downstream and empties the table.
func (c *typedCombiner[T]) flush() error {
	for lo := 0; lo < len(c.vals); lo += c.batch {
		if err := c.next.collect(c.vals[lo:min(lo+c.batch, len(c.vals))]); err != nil {
			return err
		}
	}
	clear(c.slots)
	c.vals, c.hash, c.keys, c.koff = c.vals[:0], c.hash[:0], c.keys[:0], c.koff[:1]
	return nil
}

func (c *typedCombiner[T]) close() error {
	if err := c.flush(); err != nil {
		return err
	}
	return c.next.close()
}

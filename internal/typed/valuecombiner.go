package typed

import (
	"unsafe"

	"github.com/weirdata/weir/memory"
)

// valueCombinerOwned is how many bytes a ValueCombiner copies into its arena
// before it sends its groups downstream: few groups (the keys of an
// iteration's aggregates) flush cheaply, so it holds little.
const valueCombinerOwned = 1 << 20

// ValueCombiner is the combiner of a Reduce over a record type with
// references other than strings and byte slices (slices of numbers, say: not
// memory.Codec.Shallow), which Combiner cannot own. It keeps one Go value per
// group, found by its encoded key in a map, and combines every record into it
// with the user's function: no record is serialized to be combined.
//
// The values it keeps own what they reference: a group's first record, and
// every result of the function (which may point into its arguments), is
// copied through the codec into the combiner's arena. When it holds
// CombinerEntries groups or its arena valueCombinerOwned bytes, it sends every
// group downstream and starts over, as a combiner may: its output is partial
// results. Flush sends what it holds. Its memory is fixed: NewValueCombiner
// forces it on the reservation it is given.
type ValueCombiner[T any] struct {
	key     func(dst []byte, v *T) []byte
	codec   *memory.Codec[T]
	fn      func(a, b T) T
	index   map[string]int32
	vals    []T
	arena   *memory.Arena
	owned   int
	kbuf    []byte
	scratch []byte
	sink    func([]T) error
	batch   int
}

// NewValueCombiner returns an empty combiner of records keyed by k, reduced
// with fn, sending batch records at a time. It forces its memory on res; the
// caller releases res.
func NewValueCombiner[T any](k *Keyer[T], codec *memory.Codec[T], fn func(a, b T) T, res *memory.Reservation, batch int) *ValueCombiner[T] {
	var zero T
	res.Force(CombinerEntries*(int64(unsafe.Sizeof(zero))+48) + valueCombinerOwned) // 48: a map entry and its key
	return &ValueCombiner[T]{key: k.Appender(), codec: codec, fn: fn, index: map[string]int32{}, batch: max(batch, 1)}
}

// Reset empties the combiner and makes it send to sink.
func (c *ValueCombiner[T]) Reset(sink func([]T) error) {
	c.clear()
	c.sink = sink
}

func (c *ValueCombiner[T]) clear() {
	clear(c.index)
	clear(c.vals)
	c.vals = c.vals[:0]
	c.arena, c.owned = memory.NewArena(0), 0
}

// Add combines a batch.
func (c *ValueCombiner[T]) Add(b []T) error {
	for i := range b {
		if c.owned >= valueCombinerOwned {
			if err := c.Flush(); err != nil {
				return err
			}
		}
		c.kbuf = c.key(c.kbuf[:0], &b[i])
		if g, ok := c.index[string(c.kbuf)]; ok {
			r := c.fn(c.vals[g], b[i])
			if err := c.own(&c.vals[g], &r); err != nil {
				return err
			}
			continue
		}
		if len(c.vals) >= CombinerEntries {
			if err := c.Flush(); err != nil {
				return err
			}
		}
		var zero T
		c.vals = append(c.vals, zero)
		if err := c.own(&c.vals[len(c.vals)-1], &b[i]); err != nil {
			return err
		}
		c.index[string(c.kbuf)] = int32(len(c.vals) - 1)
	}
	return nil
}

// own sets *dst to a copy of *v whose references are the arena's.
func (c *ValueCombiner[T]) own(dst, v *T) error {
	c.scratch = c.codec.Append(c.scratch[:0], v)
	var t T
	if _, err := c.codec.DecodeArena(c.scratch, &t, c.arena); err != nil {
		return err
	}
	*dst = t
	c.owned += len(c.scratch)
	return nil
}

// Flush sends every group downstream and empties the combiner.
func (c *ValueCombiner[T]) Flush() error {
	for b := c.vals; len(b) > 0; {
		k := min(len(b), c.batch)
		if err := c.sink(b[:k]); err != nil {
			return err
		}
		b = b[k:]
	}
	c.clear()
	return nil
}

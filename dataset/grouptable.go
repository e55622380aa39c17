package dataset

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/weirdata/weir/memory"
)

// groupSeed seeds a group table's hashes (unlike the partitioner's, so that a
// partition's keys spread over the table).
const groupSeed = partitionSeed ^ 0x9e3779b97f4a7c15

// groupTable holds the groups of a Reduce as Go values, for records whose
// only references are strings and byte slices (memory.Codec.Shallow): an
// open-addressing table (linear probing; a slot holds the key's hash tag and
// index+1 of its group), the encoded keys in one byte slice, and each group's
// strings copied into the table's arena when they are new (memory.Codec.Own),
// so a group never keeps an input batch alive. A record is reduced into its
// group with the user's function directly: nothing is serialized. The table
// doubles when it is half full. It does not account its memory: its owners
// (typedCombiner, typedFinal) bound it.
type groupTable[T any] struct {
	k     func(dst []byte, v *T) []byte // the keyer's appender
	size  int                           // the keys' fixed length (koff unused), or 0
	fn    func(a, b T) T
	codec *memory.Codec[T] // nil for flat types: nothing to own
	arena *memory.Arena
	owned int // bytes copied into arena

	slots []uint64
	mask  uint64
	hash  []uint64
	keys  []byte
	koff  []int32 // keys[koff[i]:koff[i+1]] is group i's key (variable sizes)
	vals  []T
	key   []byte
	last  int32 // the group of the last record, -1 for none
}

func newGroupTable[T any](k *keyer[T], codec *memory.Codec[T], fn func(a, b T) T, groups int) *groupTable[T] {
	size := uint64(1) << bits.Len64(uint64(max(2*groups, 16))-1)
	t := &groupTable[T]{k: k.appender(), size: k.size, fn: fn,
		slots: make([]uint64, size), mask: size - 1,
		hash: make([]uint64, 0, groups), koff: make([]int32, 1, groups+1), vals: make([]T, 0, groups),
		last: -1}
	if !codec.Flat() {
		t.codec, t.arena = codec, memory.NewArena(0)
	}
	return t
}

// groupBytes is what one group costs besides its key and owned strings.
func groupBytes[T any]() int64 {
	var zero T
	return int64(unsafe.Sizeof(zero)) + 8 + 4 + 16 // value, hash, koff, two slots
}

// bytes returns the memory the table's groups take.
func (t *groupTable[T]) bytes() int64 {
	return int64(len(t.vals))*groupBytes[T]() + int64(len(t.keys)) + int64(t.owned)
}

func (t *groupTable[T]) groupKey(g int32) []byte {
	if t.size > 0 {
		o := int(g) * t.size
		return t.keys[o : o+t.size]
	}
	return t.keys[t.koff[g]:t.koff[g+1]]
}

// add reduces *v into its group, or starts a group with it.
func (t *groupTable[T]) add(v *T) {
	t.key = t.k(t.key[:0], v)
	// clustered input: the group of the record before, without a lookup
	if g := t.last; g >= 0 && t.sameKey(g) {
		t.reduceInto(g, v)
		return
	}
	h := memory.Hash(t.key, groupSeed)
	tag := h >> 32
	for s := h & t.mask; ; s = (s + 1) & t.mask {
		e := t.slots[s]
		if e == 0 {
			t.insert(s, h, v)
			return
		}
		if e>>32 == tag {
			if g := int32(e) - 1; t.sameKey(g) { // tags differ for most others
				t.reduceInto(g, v)
				t.last = g
				return
			}
		}
	}
}

// sameKey reports whether group g's key is t.key; keys of 8 bytes (an
// int64, say) are compared as words.
func (t *groupTable[T]) sameKey(g int32) bool {
	if t.size == 8 {
		return binary.LittleEndian.Uint64(t.keys[8*int(g):]) == binary.LittleEndian.Uint64(t.key)
	}
	return bytes.Equal(t.groupKey(g), t.key)
}

// insert starts a group with *v (key t.key, hash h) in the empty slot s.
func (t *groupTable[T]) insert(s, h uint64, v *T) {
	t.vals = append(t.vals, *v)
	g := int32(len(t.vals) - 1)
	if t.codec != nil {
		t.owned += t.codec.Own(&t.vals[g], nil, t.arena)
	}
	t.hash = append(t.hash, h)
	t.keys = append(t.keys, t.key...)
	if t.size == 0 {
		t.koff = append(t.koff, int32(len(t.keys)))
	}
	t.slots[s] = h>>32<<32 | uint64(g+1)
	t.last = g
	if 2*len(t.vals) > len(t.slots) {
		t.grow()
	}
}

// reduceInto reduces *v into group g.
func (t *groupTable[T]) reduceInto(g int32, v *T) {
	r := t.fn(t.vals[g], *v)
	if t.codec != nil {
		t.owned += t.codec.Own(&r, &t.vals[g], t.arena)
	}
	t.vals[g] = r
}

// grow doubles the slots and re-inserts every group.
func (t *groupTable[T]) grow() {
	t.slots = make([]uint64, 2*len(t.slots))
	t.mask = uint64(len(t.slots) - 1)
	for g, h := range t.hash {
		s := h & t.mask
		for t.slots[s] != 0 {
			s = (s + 1) & t.mask
		}
		t.slots[s] = h>>32<<32 | uint64(g+1)
	}
}

// reset empties the table, keeping its slots, and lets the groups' memory go.
func (t *groupTable[T]) reset() {
	clear(t.slots)
	clear(t.vals)
	t.vals, t.hash, t.keys, t.koff = t.vals[:0], t.hash[:0], t.keys[:0], t.koff[:1]
	t.last = -1
	if t.codec != nil {
		t.arena, t.owned = memory.NewArena(0), 0
	}
}

// emit sends the groups to next, batch records at a time.
func (t *groupTable[T]) emit(next collector[T], batch int) error {
	for lo := 0; lo < len(t.vals); lo += batch {
		if err := next.collect(t.vals[lo:min(lo+batch, len(t.vals))]); err != nil {
			return err
		}
	}
	return nil
}

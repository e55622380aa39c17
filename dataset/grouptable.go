package dataset

import (
	"bytes"
	"encoding/binary"
	"math"
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
//
// Keys of 8 bytes (int64, say) start in dense mode: read as a big-endian word
// (the encoding preserves order), a key u finds its group at dense[u-base], with
// no hash and no key comparison, like DuckDB's perfect hash aggregation. The
// range widens as keys arrive while it holds at most max(4 entries a group,
// denseFloor) entries, 4 bytes each (the slots of the hash mode take 16 bytes
// a group); a key beyond that turns the table into hash mode for good.
type groupTable[T any] struct {
	k     func(dst []byte, v *T) []byte // the keyer's appender
	size  int                           // the keys' fixed length (koff unused), or 0
	fn    func(a, b T) T
	codec *memory.Codec[T] // nil for flat types: nothing to own
	arena *memory.Arena
	owned int // bytes copied into arena

	slots []uint64 // hash mode
	mask  uint64
	hash  []uint64 // hash mode: each group's hash

	dense      []int32 // dense mode: index+1 of the group of key base+i, or 0
	base       uint64
	lo, hi     uint64 // dense mode: the smallest and largest key held (lo > hi: none)
	isDense    bool
	denseFloor int // entries dense mode may take whatever the number of groups

	keys []byte
	koff []int32 // keys[koff[i]:koff[i+1]] is group i's key (variable sizes)
	vals []T
	key  []byte
	last int32 // the group of the last record, -1 for none
}

// newGroupTable returns an empty table with room for groups groups; a table of
// 8-byte keys starts in dense mode, allowed denseFloor entries at least.
func newGroupTable[T any](k *keyer[T], codec *memory.Codec[T], fn func(a, b T) T, groups, denseFloor int) *groupTable[T] {
	t := &groupTable[T]{k: k.appender(), size: k.size, fn: fn,
		koff: make([]int32, 1, groups+1), vals: make([]T, 0, groups),
		last: -1, isDense: k.size == 8, denseFloor: denseFloor, lo: math.MaxUint64}
	if !t.isDense {
		t.makeSlots(groups)
	}
	if !codec.Flat() {
		t.codec, t.arena = codec, memory.NewArena(0)
	}
	return t
}

// makeSlots gives the table empty hash slots for groups groups.
func (t *groupTable[T]) makeSlots(groups int) {
	size := uint64(1) << bits.Len64(uint64(max(2*groups, 16))-1)
	t.slots, t.mask = make([]uint64, size), size-1
	if cap(t.hash) < groups {
		t.hash = make([]uint64, 0, groups)
	}
}

// groupBytes is what one group costs besides its key and owned strings.
func groupBytes[T any]() int64 {
	var zero T
	return int64(unsafe.Sizeof(zero)) + 8 + 4 + 16 // value, hash, koff, two slots
}

// bytes returns the memory the table's groups take (in dense mode, the dense
// array too, where it is larger than the slots counted in groupBytes).
func (t *groupTable[T]) bytes() int64 {
	n := int64(len(t.vals))*groupBytes[T]() + int64(len(t.keys)) + int64(t.owned)
	if extra := 4*int64(len(t.dense)) - 16*int64(len(t.vals)); extra > 0 {
		n += extra
	}
	return n
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
	if t.isDense && t.addDense(v) {
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

// addDense reduces *v (key t.key) into its group through the dense array, or
// starts one; it reports false, having turned the table into hash mode, when
// the key lies too far from the others.
func (t *groupTable[T]) addDense(v *T) bool {
	u := binary.BigEndian.Uint64(t.key)
	off := u - t.base
	if off >= uint64(len(t.dense)) {
		if !t.widen(u) {
			t.toHash()
			return false
		}
		off = u - t.base
	}
	if e := t.dense[off]; e != 0 {
		g := e - 1
		t.reduceInto(g, v)
		t.last = g
		return true
	}
	g := t.newGroup(v)
	t.dense[off] = g + 1
	t.lo, t.hi = min(t.lo, u), max(t.hi, u)
	return true
}

// widen makes the dense array cover key u, doubling it where it can, or
// reports false when the keys would span more than dense mode may take.
func (t *groupTable[T]) widen(u uint64) bool {
	lo, hi := min(t.lo, u), max(t.hi, u) // the keys' span, u included
	if hi == math.MaxUint64 {
		return false // no range [base, base+n) holds it
	}
	need := hi - lo + 1
	limit := uint64(max(4*(len(t.vals)+1), t.denseFloor))
	if need > limit {
		return false
	}
	n := max(need, min(max(2*uint64(len(t.dense)), 1024), limit))
	// the slack goes on the side the span grew
	var base uint64
	switch {
	case t.lo > t.hi: // the first key (of the table, or since a reset): centred
		base = lo - min(lo, (n-need)/2)
	case u < t.lo:
		base = hi + 1 - min(n, hi+1)
	default:
		base = lo
	}
	base = min(base, math.MaxUint64-n)
	d := make([]int32, n)
	if t.lo <= t.hi {
		copy(d[t.lo-base:], t.dense[t.lo-t.base:t.hi-t.base+1])
	}
	t.dense, t.base, t.lo, t.hi = d, base, lo, hi
	return true
}

// toHash turns the table into hash mode: it hashes every group's key into
// new slots and drops the dense array.
func (t *groupTable[T]) toHash() {
	t.isDense, t.dense = false, nil
	t.makeSlots(max(len(t.vals), 16))
	for g := range t.vals {
		t.hash = append(t.hash, memory.Hash(t.groupKey(int32(g)), groupSeed))
	}
	t.rehash()
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
	g := t.newGroup(v)
	t.hash = append(t.hash, h)
	t.slots[s] = h>>32<<32 | uint64(g+1)
	if 2*len(t.vals) > len(t.slots) {
		t.grow()
	}
}

// newGroup appends a group holding *v (key t.key) and returns its index.
func (t *groupTable[T]) newGroup(v *T) int32 {
	t.vals = append(t.vals, *v)
	g := int32(len(t.vals) - 1)
	if t.codec != nil {
		t.owned += t.codec.Own(&t.vals[g], nil, t.arena)
	}
	t.keys = append(t.keys, t.key...)
	if t.size == 0 {
		t.koff = append(t.koff, int32(len(t.keys)))
	}
	t.last = g
	return g
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
	t.rehash()
}

// rehash inserts every group into the empty slots.
func (t *groupTable[T]) rehash() {
	for g, h := range t.hash {
		s := h & t.mask
		for t.slots[s] != 0 {
			s = (s + 1) & t.mask
		}
		t.slots[s] = h>>32<<32 | uint64(g+1)
	}
}

// reset empties the table, keeping its slots or dense array (and its mode), and
// lets the groups' memory go.
func (t *groupTable[T]) reset() {
	clear(t.slots)
	clear(t.dense)
	t.lo, t.hi = math.MaxUint64, 0
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

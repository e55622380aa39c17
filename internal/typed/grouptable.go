package typed

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
const groupSeed = PartitionSeed ^ 0x9e3779b97f4a7c15

// groupTable holds the groups of a Reduce as Go values, for records whose
// only references are strings and byte slices (memory.Codec.Shallow): an
// open-addressing table (linear probing; a slot holds the key's hash tag and
// index+1 of its group), the encoded keys in one byte slice, and each group's
// strings copied into the table's arena when they are new (memory.Codec.Own),
// so a group never keeps an input batch alive. A record is reduced into its
// group with the user's function directly: nothing is serialized. The table
// doubles when it is half full; the groups' arrays double as they fill
// (growDouble: append's quarter steps would copy a large aggregation's
// groups four times over). It does not account its memory: its owners
// (Combiner, Final) bound it.
//
// Keys of 8 bytes (int64, say) start in dense mode, like DuckDB's perfect hash
// aggregation: read as a big-endian word (the encoding preserves order), a key
// u has its entry at u-base, so a record costs no hash and no key comparison.
// Records of at most directBytes (a key and a value: a graph's vertices) are
// held in the entries themselves (dvals, marked in a bitmap): one access to
// the groups a record. Larger ones are appended to vals and an entry holds
// index+1 of its group (dense), 4 bytes, so that sparse keys do not make the
// table allocate, and touch, a large record for every entry. The range widens as
// keys arrive while they stay dense (DenseWithin: at most max(DenseEntries a
// group, denseFloor) entries, IndexEntries a group for records behind
// indexes); a key beyond that turns the table into hash mode for good. With
// noHash the range holds at most denseFloor entries, and a key beyond it makes
// add report false, leaving the choice to the owner. Dense mode sends its
// groups in key order.
type groupTable[T any] struct {
	k     func(dst []byte, v *T) []byte // the keyer's appender
	word  func(v *T) uint64             // the keyer's word, or nil
	words func(b []T, w []uint64)       // the keyer's words, set with word
	size  int                           // the keys' fixed length (koff unused), or 0
	fn    func(a, b T) T
	codec *memory.Codec[T] // nil for flat types: nothing to own
	arena *memory.Arena
	owned int // bytes copied into arena

	slots []uint64 // hash mode
	mask  uint64
	hash  []uint64 // hash mode: each group's hash

	isDense    bool
	noHash     bool     // dense mode: add reports false rather than turn to hash mode
	direct     bool     // dense mode holds the records in dvals, else in vals through dense
	dvals      []T      // direct: the group of key base+i, if bit i of present is set
	present    []uint64 // direct: bit i: key base+i has a group
	dense      []int32  // not direct: index+1 in vals of the group of key base+i, or 0
	base       uint64   // a multiple of 64, as the dense range's length is
	lo, hi     uint64   // dense mode: the smallest and largest key held (lo > hi: none)
	ndense     int      // dense mode: the number of groups
	denseFloor int      // entries dense mode may take whatever the number of groups

	keys []byte
	koff []int32 // keys[koff[i]:koff[i+1]] is group i's key (variable sizes)
	vals []T     // hash mode, and dense mode not direct: the groups
	key  []byte
	last int32 // the group of the last record, -1 for none
	buf  []T   // dense mode: the batch emit sends
	sink byte  // what addBatch's touches read, so that they are not dropped
}

// newGroupTable returns an empty table with room for groups groups; a table of
// 8-byte keys starts in dense mode, allowed denseFloor entries at least.
func newGroupTable[T any](k *Keyer[T], codec *memory.Codec[T], fn func(a, b T) T, groups, denseFloor int) *groupTable[T] {
	t := &groupTable[T]{k: k.Appender(), word: k.Word, words: k.Words, size: k.Size, fn: fn,
		koff: make([]int32, 1), last: -1, isDense: k.Size == 8, direct: denseDirect[T](),
		denseFloor: denseFloor, lo: math.MaxUint64}
	if !t.isDense {
		t.vals = make([]T, 0, groups)
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
	t.slots, t.mask = memory.MakeHuge[uint64](int(size)), size-1
	if cap(t.hash) < groups {
		t.hash = make([]uint64, 0, groups)
	}
}

// groupBytes is what one group costs in hash mode besides its key and owned
// strings.
func groupBytes[T any]() int64 {
	var zero T
	return int64(unsafe.Sizeof(zero)) + 8 + 4 + 16 // value, hash, koff, two slots
}

// directBytes is the largest record a dense table holds in its entries.
const directBytes = 16

// denseDirect reports whether a dense table of T holds records in its entries.
func denseDirect[T any]() bool {
	var zero T
	return unsafe.Sizeof(zero) <= directBytes
}

// denseEntryBytes is what one entry of the dense mode costs, rounded up: the
// record and a bit, or an index (the groups counted apart).
func denseEntryBytes[T any]() int64 {
	var zero T
	if !denseDirect[T]() {
		return 4
	}
	return int64(unsafe.Sizeof(zero)) + 1
}

// denseLen returns the length of the dense range.
func (t *groupTable[T]) denseLen() uint64 {
	if t.direct {
		return uint64(len(t.dvals))
	}
	return uint64(len(t.dense))
}

// groups returns the number of groups held.
func (t *groupTable[T]) groups() int {
	if t.isDense {
		return t.ndense
	}
	return len(t.vals)
}

// bytes returns the memory the table's groups take, their arrays by
// capacity (growing by appending holds up to twice what the groups need).
func (t *groupTable[T]) bytes() int64 {
	var zero T
	size := int64(unsafe.Sizeof(zero))
	switch {
	case t.isDense && t.direct:
		return int64(len(t.dvals))*size + 8*int64(len(t.present)) + int64(t.owned)
	case t.isDense:
		return 4*int64(len(t.dense)) + int64(cap(t.vals))*size + int64(t.owned)
	}
	return int64(cap(t.vals))*groupBytes[T]() + int64(cap(t.keys)) + int64(t.owned)
}

func (t *groupTable[T]) groupKey(g int32) []byte {
	if t.size > 0 {
		o := int(g) * t.size
		return t.keys[o : o+t.size]
	}
	return t.keys[t.koff[g]:t.koff[g+1]]
}

// add reduces *v into its group, or starts a group with it. It reports false,
// having done neither, only in dense mode with noHash, when the key lies too
// far from the others.
func (t *groupTable[T]) add(v *T) bool {
	if t.isDense {
		if t.addDense(v) {
			return true
		}
		if t.noHash {
			return false
		}
		t.toHash(0)
	}
	t.key = t.k(t.key[:0], v)
	// clustered input: the group of the record before, without a lookup
	if g := t.last; g >= 0 && t.sameKey(g) {
		t.reduceInto(&t.vals[g], v)
		return true
	}
	h := memory.Hash(t.key, groupSeed)
	tag := h >> 32
	for s := h & t.mask; ; s = (s + 1) & t.mask {
		e := t.slots[s]
		if e == 0 {
			t.insert(s, h, v)
			return true
		}
		if e>>32 == tag {
			if g := int32(e) - 1; t.sameKey(g) { // tags differ for most others
				t.reduceInto(&t.vals[g], v)
				t.last = g
				return true
			}
		}
	}
}

// denseWord returns *v's key as a word.
func (t *groupTable[T]) denseWord(v *T) uint64 {
	if t.word != nil {
		return t.word(v)
	}
	t.key = t.k(t.key[:0], v)
	return binary.BigEndian.Uint64(t.key)
}

// addDense reduces *v into its group in the dense array, or starts one; it
// reports false, changing nothing, when the key lies too far from the others.
func (t *groupTable[T]) addDense(v *T) bool {
	u := t.denseWord(v)
	off := u - t.base
	if off >= t.denseLen() {
		if !t.widen(u) {
			return false
		}
		off = u - t.base
	}
	t.addAt(v, off)
	return true
}

// addAt reduces *v into the dense entry off, which its key indexes, or starts
// a group there.
func (t *groupTable[T]) addAt(v *T, off uint64) {
	if !t.direct {
		if e := t.dense[off]; e != 0 {
			t.reduceInto(&t.vals[e-1], v)
			return
		}
		t.vals = append(growDouble(t.vals, 1), *v)
		if t.codec != nil {
			t.owned += t.codec.Own(&t.vals[len(t.vals)-1], nil, t.arena)
		}
		t.dense[off] = int32(len(t.vals))
		t.started(off)
		return
	}
	w, bit := off>>6, uint64(1)<<(off&63)
	if t.present[w]&bit != 0 {
		t.reduceInto(&t.dvals[off], v)
		return
	}
	t.present[w] |= bit
	t.dvals[off] = *v
	if t.codec != nil {
		t.owned += t.codec.Own(&t.dvals[off], nil, t.arena)
	}
	t.started(off)
}

// started counts a group started at dense entry off.
func (t *groupTable[T]) started(off uint64) {
	t.ndense++
	u := t.base + off
	t.lo, t.hi = min(t.lo, u), max(t.hi, u)
}

// readAhead is how many records addBatch reads ahead.
const readAhead = 256

// addBatch adds b's records in order and returns how many it added: all of
// them, or fewer when a record's key lies beyond what dense mode may hold
// (that record is not added) or made the table widen (it is added, and the
// caller may check the table's bytes before it adds more). It is add for a
// batch, for tables in dense mode over flat records with a word keyer (else
// it adds none), and reads ahead: it finds the entries of readAhead records
// first and touches them in a loop with no calls in it, so that their cache
// misses overlap (a table of a million groups is far larger than the caches),
// and then reduces the records into them in a loop whose only calls are the
// reduce function's.
func (t *groupTable[T]) addBatch(b []T) int {
	if !t.isDense || !t.direct || t.codec != nil || t.words == nil {
		return 0
	}
	var offs [readAhead]uint64
	fn := t.fn
	for lo := 0; lo < len(b); lo += readAhead {
		c := b[lo:min(lo+readAhead, len(b))]
		o := offs[:len(c)]
		base := t.base
		t.words(c, o)
		for i := range o {
			o[i] -= base
		}
		d, p := t.dvals, t.present
		n := uint64(len(d))
		var s byte
		for _, off := range o {
			if off < n {
				s += *(*byte)(unsafe.Pointer(&d[off]))
			}
		}
		t.sink += s
		for i, off := range o {
			if off >= n { // beyond the dense range
				if !t.addDense(&c[i]) {
					return lo + i
				}
				return lo + i + 1 // it widened the table
			}
			// addAt's direct case, written out: the call costs more than
			// the work (BenchmarkGroupTable dense-batch)
			w, bit := off>>6, uint64(1)<<(off&63)
			if p[w]&bit != 0 {
				d[off] = fn(d[off], c[i])
				continue
			}
			p[w] |= bit
			d[off] = c[i]
			t.started(off)
		}
	}
	return len(b)
}

// heldWords returns the range of dense entries, in whole words of the bitmap,
// that holds every group: [from, to).
func (t *groupTable[T]) heldWords() (from, to uint64) {
	if t.lo > t.hi {
		return 0, 0
	}
	return (t.lo - t.base) &^ 63, ((t.hi - t.base) | 63) + 1
}

// widen makes the dense array cover key u, doubling it where it can, or
// reports false when the keys would span more than dense mode may take.
func (t *groupTable[T]) widen(u uint64) bool {
	lo, hi := min(t.lo, u), max(t.hi, u) // the keys' span, u included
	if hi == math.MaxUint64 {
		return false // base+n below would overflow (a range ending at 2^64 may hold it, once made)
	}
	groups := t.ndense + 1
	if t.noHash {
		groups = 0 // the floor alone
	}
	per := DenseEntries
	if !t.direct {
		per = IndexEntries // 4-byte indexes: see the dense rule
	}
	if !DenseWithin(hi-lo, groups, per, t.denseFloor) {
		return false
	}
	need, limit := hi-lo+1, uint64(max(per*groups, t.denseFloor))
	n := max(need, min(max(2*t.denseLen(), 1024), limit))
	empty := t.lo > t.hi // the first key, of the table or since a reset
	if has := t.denseLen(); empty && has >= n && has >= need+128 {
		// a combiner's window moving on with the keys: the arrays it has
		// (reset cleared them), rebased around u, not made again, so that
		// their memory is not fresh pages to fault in each time
		base := min(lo-min(lo, (has-need)/2), math.MaxUint64-has) &^ 63
		if base <= lo && hi-base < has {
			t.base, t.lo, t.hi = base, lo, hi
			return true
		}
	}
	// the slack goes on the side the span grew
	var base uint64
	switch {
	case empty: // centred
		base = lo - min(lo, (n-need)/2)
	case u < t.lo:
		base = hi + 1 - min(n, hi+1)
	default:
		base = lo
	}
	base = min(base, math.MaxUint64-n)
	end := base + n // >= hi+1
	base &^= 63     // whole words of the bitmap
	n = (end - base + 63) &^ 63
	from, to := t.heldWords()
	at := t.base + from - base // a multiple of 64
	if !t.direct {
		d := memory.MakeHuge[int32](int(n))
		if to > from {
			copy(d[at:], t.dense[from:to])
		}
		t.dense, t.base, t.lo, t.hi = d, base, lo, hi
		return true
	}
	d, p := memory.MakeHuge[T](int(n)), memory.MakeHuge[uint64](int(n/64))
	if to > from {
		copy(d[at:], t.dvals[from:to])
		copy(p[at/64:], t.present[from/64:to/64])
	}
	t.dvals, t.present, t.base, t.lo, t.hi = d, p, base, lo, hi
	return true
}

// denseValues appends the dense mode's groups to dst: in key order when
// direct, else in the order they started.
func (t *groupTable[T]) denseValues(dst []T) []T {
	if !t.direct {
		return append(dst, t.vals...)
	}
	_ = t.eachDirect(func(v *T) error {
		dst = append(dst, *v)
		return nil
	})
	return dst
}

// eachDirect calls f with every group of a direct dense table in key order,
// until f returns an error, which it returns.
func (t *groupTable[T]) eachDirect(f func(v *T) error) error {
	from, to := t.heldWords()
	for w := from / 64; w < to/64; w++ {
		for m := t.present[w]; m != 0; m &= m - 1 {
			if err := f(&t.dvals[w*64+uint64(bits.TrailingZeros64(m))]); err != nil {
				return err
			}
		}
	}
	return nil
}

// toHash turns the table into hash mode, with room for groups groups at
// least: it moves the groups out of the dense array, hashes their keys into
// new slots and drops the array.
func (t *groupTable[T]) toHash(groups int) {
	if t.direct {
		t.vals = t.denseValues(t.vals[:0])
	}
	t.isDense, t.dvals, t.present, t.dense, t.ndense = false, nil, nil, nil, 0
	t.lo, t.hi = math.MaxUint64, 0
	t.makeSlots(max(len(t.vals), groups, 16))
	for g := range t.vals {
		t.key = t.k(t.key[:0], &t.vals[g])
		t.keys = append(t.keys, t.key...) // 8 bytes: koff unused
		t.hash = append(t.hash, memory.Hash(t.key, groupSeed))
	}
	t.rehash()
}

// all returns every group; the slice may be the table's own.
func (t *groupTable[T]) all() []T {
	if t.isDense && t.direct {
		return t.denseValues(make([]T, 0, t.ndense))
	}
	return t.vals
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
	t.vals = append(growDouble(t.vals, 1), *v)
	g := int32(len(t.vals) - 1)
	if t.codec != nil {
		t.owned += t.codec.Own(&t.vals[g], nil, t.arena)
	}
	t.keys = append(growDouble(t.keys, len(t.key)), t.key...)
	if t.size == 0 {
		t.koff = append(growDouble(t.koff, 1), int32(len(t.keys)))
	}
	t.last = g
	t.hash = append(growDouble(t.hash, 1), h)
	t.slots[s] = h>>32<<32 | uint64(g+1)
	if 2*len(t.vals) > len(t.slots) {
		t.grow()
	}
}

// reduceInto reduces *v into the group at g.
func (t *groupTable[T]) reduceInto(g, v *T) {
	r := t.fn(*g, *v)
	if t.codec != nil {
		t.owned += t.codec.Own(&r, g, t.arena)
	}
	*g = r
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
	switch from, to := t.heldWords(); {
	case to == from:
	case t.direct:
		clear(t.present[from/64 : to/64])
		if t.codec != nil {
			clear(t.dvals[from:to])
		}
	default:
		clear(t.dense[from:to])
	}
	t.lo, t.hi, t.ndense = math.MaxUint64, 0, 0
	clear(t.vals)
	t.vals, t.hash, t.keys, t.koff = t.vals[:0], t.hash[:0], t.keys[:0], t.koff[:1]
	t.last = -1
	if t.codec != nil {
		t.arena, t.owned = memory.NewArena(0), 0
	}
}

// emit sends the groups to next, batch records at a time.
func (t *groupTable[T]) emit(next func([]T) error, batch int) error {
	if t.isDense && t.direct {
		return t.emitDense(next, batch)
	}
	for lo := 0; lo < len(t.vals); lo += batch {
		if err := next(t.vals[lo:min(lo+batch, len(t.vals))]); err != nil {
			return err
		}
	}
	return nil
}

// emitDense sends the dense mode's groups to next in key order, batch records
// at a time.
func (t *groupTable[T]) emitDense(next func([]T) error, batch int) error {
	if cap(t.buf) < batch {
		t.buf = make([]T, 0, batch)
	}
	buf := t.buf[:0]
	defer func() { clear(buf[:cap(buf)]) }() // no references kept
	err := t.eachDirect(func(v *T) error {
		buf = append(buf, *v)
		if len(buf) < batch {
			return nil
		}
		err := next(buf)
		buf = buf[:0]
		return err
	})
	if err == nil && len(buf) > 0 {
		err = next(buf)
	}
	return err
}

package typed

import (
	"reflect"
	"unsafe"
)

// foldDense bounds the keys a FoldTable indexes densely: integer keys in
// [0, foldDense).
const foldDense = 1 << 12

// FoldTable holds the accumulators of an in-place fold by key, as Go values:
// Acc finds the accumulator of a key, adding a zero one, and the caller folds
// a record into it. When K is an integer type, small non-negative keys are
// found in a dense array; other keys in a map, or while the table holds at
// most foldFew by comparing them in turn; the last key's accumulator is
// remembered, so a run of one key costs a comparison. Finding the accumulator
// of a key already held allocates nothing.
//
// A FoldTable belongs to one goroutine.
type FoldTable[K comparable, A any] struct {
	word    func(k K) (uint64, bool) // K's value as a dense index; nil unless K is an integer type
	dense   []int32                  // slot+1 by dense key, 0: none
	index   map[K]int32              // the other keys' slots
	keys    []K
	accs    []A
	last    int32 // slot of lastKey, -1: none
	lastKey K
}

// NewFoldTable returns an empty table.
func NewFoldTable[K comparable, A any]() *FoldTable[K, A] {
	return &FoldTable[K, A]{word: denseWord[K](), index: map[K]int32{}, last: -1}
}

// Len returns the groups held.
func (t *FoldTable[K, A]) Len() int { return len(t.keys) }

// Acc returns the accumulator of k, a zero A when k is new. The pointer is
// valid until the next call of Acc or Clear.
func (t *FoldTable[K, A]) Acc(k K) *A {
	if t.last >= 0 && t.lastKey == k {
		return &t.accs[t.last]
	}
	var slot int32
	if w, ok := t.dense1(k); ok {
		if w >= uint64(len(t.dense)) {
			t.dense = append(t.dense, make([]int32, int(w)+1-len(t.dense))...)
		}
		if t.dense[w] == 0 {
			t.dense[w] = t.add(k) + 1
		}
		slot = t.dense[w] - 1
	} else if s, ok := t.few(k); ok {
		slot = s
	} else {
		s, ok := t.index[k]
		if !ok {
			s = t.add(k)
			t.index[k] = s
		}
		slot = s
	}
	t.last, t.lastKey = slot, k
	return &t.accs[slot]
}

// foldFew is the most groups a FoldTable finds by comparing keys one
// after another instead of hashing them (TPC-H Q1's four).
const foldFew = 8

// few finds k among the keys when the table holds at most foldFew of them
// (and none by dense index).
func (t *FoldTable[K, A]) few(k K) (int32, bool) {
	if len(t.keys) > foldFew || len(t.keys) != len(t.index) {
		return 0, false
	}
	for i := range t.keys {
		if t.keys[i] == k {
			return int32(i), true
		}
	}
	return 0, false
}

// dense1 returns k's dense index, if it has one.
func (t *FoldTable[K, A]) dense1(k K) (uint64, bool) {
	if t.word == nil {
		return 0, false
	}
	w, ok := t.word(k)
	return w, ok && w < foldDense
}

func (t *FoldTable[K, A]) add(k K) int32 {
	var zero A
	t.keys = append(t.keys, k)
	t.accs = append(t.accs, zero)
	return int32(len(t.keys) - 1)
}

// Keys and Accs return the groups held, in the order their keys came: Accs()[i]
// is the accumulator of Keys()[i]. They are valid until the next call of Acc
// or Clear.
func (t *FoldTable[K, A]) Keys() []K { return t.keys }
func (t *FoldTable[K, A]) Accs() []A { return t.accs }

// Clear empties the table, keeping its memory; the accumulators it held are
// forgotten (zeroed), not reused: the caller may have handed them on.
func (t *FoldTable[K, A]) Clear() {
	clear(t.dense)
	clear(t.index)
	clear(t.keys)
	clear(t.accs)
	t.keys, t.accs = t.keys[:0], t.accs[:0]
	var zero K
	t.last, t.lastKey = -1, zero
}

// denseWord returns the function that reads a K of an integer kind as a
// dense index (false for negative values), or nil for other kinds.
func denseWord[K any]() func(k K) (uint64, bool) {
	switch reflect.TypeFor[K]().Kind() {
	case reflect.Int8:
		return func(k K) (uint64, bool) { v := *(*int8)(unsafe.Pointer(&k)); return uint64(v), v >= 0 }
	case reflect.Int16:
		return func(k K) (uint64, bool) { v := *(*int16)(unsafe.Pointer(&k)); return uint64(v), v >= 0 }
	case reflect.Int32:
		return func(k K) (uint64, bool) { v := *(*int32)(unsafe.Pointer(&k)); return uint64(v), v >= 0 }
	case reflect.Int64:
		return func(k K) (uint64, bool) { v := *(*int64)(unsafe.Pointer(&k)); return uint64(v), v >= 0 }
	case reflect.Int:
		return func(k K) (uint64, bool) { v := *(*int)(unsafe.Pointer(&k)); return uint64(v), v >= 0 }
	case reflect.Uint8:
		return func(k K) (uint64, bool) { return uint64(*(*uint8)(unsafe.Pointer(&k))), true }
	case reflect.Uint16:
		return func(k K) (uint64, bool) { return uint64(*(*uint16)(unsafe.Pointer(&k))), true }
	case reflect.Uint32:
		return func(k K) (uint64, bool) { return uint64(*(*uint32)(unsafe.Pointer(&k))), true }
	case reflect.Uint64:
		return func(k K) (uint64, bool) { return *(*uint64)(unsafe.Pointer(&k)), true }
	case reflect.Uint:
		return func(k K) (uint64, bool) { return uint64(*(*uint)(unsafe.Pointer(&k))), true }
	}
	return nil
}

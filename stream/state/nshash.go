package state

import (
	"hash/maphash"
	"reflect"
	"unsafe"
)

// nsHasher hashes namespaces of type N for the slot tables of the
// single-value states: an entry's code is its key's hash code mixed with
// its namespace's hash. The Void namespace (and any type of size zero)
// hashes to zero, so that there the code is the key's. Types of plain
// memory (integers, booleans, and arrays and structs of them without
// padding, as window.TimeWindow) hash their words, as equal values have
// equal bytes; other types go through maphash.Comparable.
type nsHasher[N comparable] struct {
	size  uintptr
	plain bool
	seed  maphash.Seed
}

func newNSHasher[N comparable]() nsHasher[N] {
	t := reflect.TypeFor[N]()
	return nsHasher[N]{size: t.Size(), plain: plainMemory(t), seed: maphash.MakeSeed()}
}

// plainMemory reports whether values of t are equal exactly when their
// bytes are.
func plainMemory(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	case reflect.Array:
		return plainMemory(t.Elem())
	case reflect.Struct:
		var sum uintptr
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Name == "_" || !plainMemory(f.Type) {
				return false
			}
			sum += f.Type.Size()
		}
		return sum == t.Size() // no padding
	}
	return false
}

// hash returns n's hash, zero for a type of size zero.
func (h *nsHasher[N]) hash(n *N) int32 {
	if h.size == 0 {
		return 0
	}
	var x uint64
	if h.plain {
		x = memHash(unsafe.Pointer(n), h.size)
	} else {
		x = maphash.Comparable(h.seed, *n)
	}
	return int32(x ^ x>>32)
}

// mix sets dst[i] to the slot code of key code codes[i] in namespace ns[i]
// and returns dst, grown as needed. A namespace equal to the one before it
// (the windows of a run of records mostly are) is not hashed again.
func (h *nsHasher[N]) mix(dst, codes []int32, ns []N) []int32 {
	if cap(dst) < len(ns) {
		dst = make([]int32, len(ns))
	}
	dst, codes = dst[:len(ns)], codes[:len(ns)]
	var nh int32
	for i := range ns {
		if i == 0 || ns[i] != ns[i-1] {
			nh = h.hash(&ns[i])
		}
		dst[i] = codes[i] ^ nh
	}
	return dst
}

// memHash mixes the size bytes at p, a word at a time.
func memHash(p unsafe.Pointer, size uintptr) uint64 {
	const m = 0xff51afd7ed558ccd
	h := uint64(size) * m
	i := uintptr(0)
	for ; i+8 <= size; i += 8 {
		h = (h ^ *(*uint64)(unsafe.Add(p, i))) * m
		h ^= h >> 31
	}
	for ; i < size; i++ {
		h = (h ^ uint64(*(*byte)(unsafe.Add(p, i)))) * m
		h ^= h >> 31
	}
	h = (h ^ h>>33) * 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

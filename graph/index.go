package graph

import "unsafe"

// absent is the dense id of a key that is no vertex.
const absent = ^uint32(0)

// keyIndex maps vertex keys to dense ids 0..n-1. When the keys are int64
// and fill a range lo..lo+n-1 (the usual numbered vertices), the id of a
// key is the key less lo, with no table at all (dense). Else, when they are
// int64 in a range at most four times their number, ids are given in the
// order of the vertices' arrival through a table; else through a map.
type keyIndex[K comparable] struct {
	m     map[K]uint32
	base  int64
	table []uint32 // key-base -> id+1; 0 for none
	dense bool     // the id of key k is k-base, below n
	n     int64
}

// bytes returns the memory the index holds, estimated.
func (x *keyIndex[K]) bytes() int64 {
	switch {
	case x.dense:
		return 0
	case x.table != nil:
		return int64(len(x.table)) * 4
	}
	var k K
	return int64(len(x.m)) * (int64(unsafe.Sizeof(k)) + 24)
}

// newKeyIndex indexes ids, removing repeated keys (with their values: the
// first one stays) from ids and vals, which it returns in the order of the
// dense ids.
func newKeyIndex[K comparable, VV any](ids []K, vals []VV) (*keyIndex[K], []K, []VV) {
	x := &keyIndex[K]{}
	if ks, ok := any(ids).([]int64); ok && len(ks) > 0 {
		lo, hi := ks[0], ks[0]
		for _, k := range ks {
			lo, hi = min(lo, k), max(hi, k)
		}
		if span := uint64(hi - lo); span < 4*uint64(len(ks))+1024 {
			x.base, x.table = lo, make([]uint32, span+1)
			n := 0
			for i, k := range ks {
				if x.table[k-lo] != 0 {
					continue
				}
				ks[n], vals[n] = k, vals[i]
				n++
				x.table[k-lo] = uint32(n)
			}
			ks, vals = ks[:n], vals[:n]
			if n == len(x.table) {
				// every key of the range: the ids are the keys less lo
				sorted := make([]VV, n)
				for i, k := range ks {
					sorted[k-lo] = vals[i]
				}
				for i := range ks {
					ks[i] = lo + int64(i)
				}
				x.table, x.dense, x.n = nil, true, int64(n)
				return x, any(ks).([]K), sorted
			}
			x.n = int64(n)
			return x, ids[:n], vals
		}
	}
	x.m = make(map[K]uint32, len(ids))
	n := 0
	for i, k := range ids {
		if _, dup := x.m[k]; dup {
			continue
		}
		ids[n], vals[n] = k, vals[i]
		x.m[k] = uint32(n)
		n++
	}
	x.n = int64(n)
	return x, ids[:n], vals[:n]
}

// lookup returns k's dense id, or absent.
func (x *keyIndex[K]) lookup(k K) uint32 {
	if x.dense {
		i := uint64(any(k).(int64) - x.base)
		if i >= uint64(x.n) {
			return absent
		}
		return uint32(i)
	}
	if x.table != nil {
		i := uint64(any(k).(int64) - x.base)
		if i >= uint64(len(x.table)) {
			return absent
		}
		return x.table[i] - 1
	}
	if id, ok := x.m[k]; ok {
		return id
	}
	return absent
}

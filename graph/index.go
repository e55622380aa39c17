package graph

import "unsafe"

// absent is the dense id of a key that is no vertex.
const absent = ^uint32(0)

// keyIndex maps vertex keys to dense ids 0..n-1, the order of the vertices'
// arrival: through a table when the keys are int64 in a range at most four
// times their number (the usual numbered vertices), else through a map.
type keyIndex[K comparable] struct {
	m     map[K]uint32
	base  int64
	table []uint32 // key-base -> id+1; 0 for none
}

// bytes returns the memory the index holds, estimated.
func (x *keyIndex[K]) bytes() int64 {
	if x.table != nil {
		return int64(len(x.table)) * 4
	}
	var k K
	return int64(len(x.m)) * (int64(unsafe.Sizeof(k)) + 24)
}

// newKeyIndex indexes ids, removing repeated keys (with their values: the
// first one stays) from ids and vals, which it returns.
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
			return x, ids[:n], vals[:n]
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
	return x, ids[:n], vals[:n]
}

// lookup returns k's dense id, or absent.
func (x *keyIndex[K]) lookup(k K) uint32 {
	if x.table != nil {
		i := any(k).(int64) - x.base
		if i < 0 || i >= int64(len(x.table)) {
			return absent
		}
		return x.table[i] - 1
	}
	if id, ok := x.m[k]; ok {
		return id
	}
	return absent
}

// translate writes the dense ids of keys to out (absent for a key that is no
// vertex), a whole slice at a time so that int64 keys go through the table
// without a conversion per key.
func (x *keyIndex[K]) translate(keys []K, out []uint32) {
	if x.table != nil {
		ks := any(keys).([]int64)
		base, t := x.base, x.table
		for i, k := range ks {
			j := uint64(k - base)
			if j >= uint64(len(t)) {
				out[i] = absent
				continue
			}
			out[i] = t[j] - 1
		}
		return
	}
	for i, k := range keys {
		if id, ok := x.m[k]; ok {
			out[i] = id
		} else {
			out[i] = absent
		}
	}
}

package dataset

import (
	"math/bits"

	"github.com/weirdata/weir/formats"
)

// keySet is a runtime join filter's set of integer keys (formats.KeySet): a
// bitmap over [min, min+span) when the keys are dense enough (at most two
// words of bitmap per key, or 8 KiB), else an open-addressing hash set of
// twice as many slots as keys. Both answer exactly: a key not in the set is
// never kept.
type keySet struct {
	min  int64
	span uint64   // bitmap: max − min + 1; 0 for the hash set
	bits []uint64 // bitmap
	// hash set: the slots, a used bit per slot, and the shift that takes a
	// multiplied key to a slot
	slots []int64
	used  []uint64
	shift uint
}

var _ formats.KeySet = (*keySet)(nil)

// newKeySet returns the set of keys (which may repeat).
func newKeySet(keys []int64) *keySet {
	s := &keySet{}
	if len(keys) == 0 {
		return s // keeps nothing
	}
	lo, hi := keys[0], keys[0]
	for _, k := range keys {
		lo, hi = min(lo, k), max(hi, k)
	}
	if span := uint64(hi) - uint64(lo) + 1; span != 0 && span/64+1 <= uint64(max(2*len(keys), 1024)) {
		s.min, s.span = lo, span
		s.bits = make([]uint64, span/64+1)
		for _, k := range keys {
			u := uint64(k) - uint64(lo)
			s.bits[u>>6] |= 1 << (u & 63)
		}
		return s
	}
	n := 1 << bits.Len(uint(2*len(keys)-1)) // a power of two ≥ 2 × keys
	s.slots, s.used = make([]int64, n), make([]uint64, (n+63)/64)
	s.shift = uint(64 - bits.Len(uint(n-1)))
	for _, k := range keys {
		i := s.slot(k)
		for s.used[i>>6]&(1<<(i&63)) != 0 && s.slots[i] != k {
			i = (i + 1) & uint64(n-1)
		}
		s.slots[i] = k
		s.used[i>>6] |= 1 << (i & 63)
	}
	return s
}

// slot is k's first slot in the hash set (Fibonacci hashing).
func (s *keySet) slot(k int64) uint64 { return (uint64(k) * 0x9e3779b97f4a7c15) >> s.shift }

// bytes is the memory the set holds.
func (s *keySet) bytes() int64 { return int64(8 * (len(s.bits) + len(s.slots) + len(s.used))) }

// Keep narrows sel to the rows of vals in the set.
func (s *keySet) Keep(vals []int64, sel []int32) []int32 {
	out := sel[:0]
	switch {
	case s.span > 0:
		for _, r := range sel {
			u := uint64(vals[r]) - uint64(s.min)
			if u < s.span && s.bits[u>>6]&(1<<(u&63)) != 0 {
				out = append(out, r)
			}
		}
	case len(s.slots) > 0:
		mask := uint64(len(s.slots) - 1)
		for _, r := range sel {
			k := vals[r]
			for i := s.slot(k); s.used[i>>6]&(1<<(i&63)) != 0; i = (i + 1) & mask {
				if s.slots[i] == k {
					out = append(out, r)
					break
				}
			}
		}
	}
	return out
}

package typed

import "math/bits"

// keyFilter is a Bloom filter of a join build side's keys, blocked by
// register: a key sets 4 bits of one 64-bit word, all chosen from its hash,
// so a test reads one word. It takes 16 to 32 bits a key (its words round
// up to a power of two); about 1 in 200 absent keys passes at 16, 1 in 800
// at 27 (TestKeyFilter). It sits in front of a hash table larger than the caches: a probe
// key it rules out costs one read of a table of 2 bytes a key (which fits
// the L2 cache up to half a million keys) instead of a slot read from the
// table of 8 bytes a slot, 2 slots a key, and its chain's key.
//
// It watches what it does: of the first filterTrial probes, if fewer than a
// quarter were ruled out (most probe keys are in the build side, a foreign
// key join's usual case) it turns itself off, so that such a join pays for
// filterTrial tests and no more.
type keyFilter struct {
	words         []uint64
	shift         uint // the word of hash h is h >> shift
	probes, ruled int
	off           bool
}

// Filter sizes: filterMin keys at least (below, the table fits the caches),
// filterBits a key, filterTrial probes before it decides whether to stay.
const (
	filterMin   = 1 << 14
	filterBits  = 16
	filterTrial = 1 << 13
)

// filterBytes is what the filter of n keys takes.
func filterBytes(n int) int64 {
	if n < filterMin {
		return 0
	}
	return 8 << bits.Len64(uint64(n*filterBits/64-1))
}

// newKeyFilter returns the filter of the keys whose hashes are hs (nil
// below filterMin keys).
func newKeyFilter(hs []uint64) *keyFilter {
	if len(hs) < filterMin {
		return nil
	}
	n := int(filterBytes(len(hs)) / 8) // a power of two
	f := &keyFilter{words: make([]uint64, n), shift: uint(64 - bits.TrailingZeros64(uint64(n)))}
	for _, h := range hs {
		f.words[h>>f.shift] |= filterMask(h)
	}
	return f
}

// filterMask is the 4 bits of a word a hash sets: from its low 24 bits,
// which the word's index (its high bits) does not use.
func filterMask(h uint64) uint64 {
	return 1<<(h&63) | 1<<(h>>6&63) | 1<<(h>>12&63) | 1<<(h>>18&63)
}

// mayHold reports whether the key of hash h may be in the build side.
func (f *keyFilter) mayHold(h uint64) bool {
	m := filterMask(h)
	held := f.words[h>>f.shift]&m == m
	if f.probes < filterTrial {
		f.probes++
		if !held {
			f.ruled++
		}
		if f.probes == filterTrial && 4*f.ruled < filterTrial {
			f.off = true
		}
	}
	return held
}

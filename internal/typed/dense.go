package typed

// The dense rule. Keys of 8 bytes (int64, int, uint64), read as big-endian
// words, are dense when the range they span, from the least to the greatest,
// takes at most
//
//	max(DenseEntries a group or record, DenseFloor entries)
//
// Three kernels index by the word instead of hashing or sorting when that
// holds: the group table (an array of groups), the typed join's build side
// (an array of first records) and the dense grouper (a counting sort's
// counts). Each asks Dense; each computes its floor with DenseFloor from its
// memory share and the bytes of one entry, so that a range of few keys
// always fits the floor while a wide one never takes more than an eighth of
// the share.
//
// A group table whose entries are 4-byte indexes of its groups allows
// IndexEntries a group instead (DenseWithin): 12 entries take 48 bytes, what
// its hash mode spends on a group besides the record (the hash, the key and
// four slots just after the slots double). TPC-H's order keys use 8 of every
// 32 numbers: an aggregation by order key over two subtasks holds one group
// every 8 entries, dense under this rule, not under DenseEntries.

// Entries a group or record the dense rule allows.
const (
	DenseEntries = 4
	IndexEntries = 12
)

// Dense reports whether keys whose words span span+1 entries (span is the
// greatest word minus the least, so that the count cannot overflow) are
// dense for n groups or records with the given floor: DenseWithin with
// DenseEntries.
func Dense(span uint64, n, floor int) bool {
	return DenseWithin(span, n, DenseEntries, floor)
}

// DenseWithin is the dense rule with per entries a group or record.
func DenseWithin(span uint64, n, per, floor int) bool {
	return span < uint64(max(per*n, floor))
}

// DenseFloor is how many entries of entry bytes each a dense range may take
// whatever its number of keys: an eighth of the share (32 MiB without a
// share), from 4096 to 1M entries.
func DenseFloor(share, entry int64) int {
	budget := share / 8
	if share <= 0 {
		budget = 32 << 20
	}
	return int(min(max(budget/entry, 4096), 1<<20))
}

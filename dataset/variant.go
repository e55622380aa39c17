package dataset

import (
	"strings"
	"sync/atomic"

	"github.com/weirdata/weir/internal/typed"
)

// variant is a physical variant an operator's subtask ran: which kernel did
// the work, as decided at run time (the plan says HASH_AGGREGATE; the
// variant says whether the groups stayed typed and dense). Each subtask
// records the ones it ran; EXPLAIN ANALYZE shows their union per operator
// (optimizer.Actual.Variant).
type variant uint32

// The variants, in the order EXPLAIN ANALYZE lists them.
const (
	// Reduce (final phase)
	typedDense          variant = 1 << iota // groups as Go values in a dense array of key words
	typedHash                               // groups as Go values in a hash table
	combinerPassed                          // the combiner did not reduce its first records: it passed its input through
	serializedAfterFull                     // typed groups outgrew their memory: serialized hash aggregation
	serializedHash                          // serialized hash aggregation throughout
	sortedInput                             // sorted grouping, or a Sort passing its input through, of an input that arrived sorted
	// ReduceGroup
	countingSort // grouped by a counting sort on dense key words
	sorter       // sorted by the external sorter
	// Join
	typedJoinDense          // typed hash join, build side indexed by key word
	typedJoinHash           // typed hash join, build side in hash slots
	hybridHashAfterOverflow // typed build side outgrew its memory: serialized hybrid hash join
	hybridHash              // serialized hybrid hash join throughout
	sortMerge               // sort-merge join
	cachedTypedDense        // iteration: invariant side kept typed, indexed by key word
	cachedTypedHash         // iteration: invariant side kept typed, in hash slots
	cachedIndex             // iteration: invariant side kept in a spilling sortjoin.Index
	// Sort
	selfKey // each record stored once, as its own key (Self)
)

var variantNames = []string{
	"typed-dense", "typed-hash", "combiner-passed-through", "serialized-hash-after-overflow", "serialized-hash", "sorted-input",
	"counting-sort", "sorter",
	"typed-join-dense", "typed-join-hash", "hybrid-hash-after-overflow", "hybrid-hash", "sort-merge",
	"cached-typed-join-dense", "cached-typed-join-hash", "cached-index",
	"self-key",
}

// String names the variants set in v, joined by "+".
func (v variant) String() string {
	var names []string
	for i, name := range variantNames {
		if v&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return strings.Join(names, "+")
}

// variants is the set of variants an operator's subtasks ran in one
// execution.
type variants struct{ bits atomic.Uint32 }

// ran records that a subtask ran v.
func (s *variants) ran(v variant) {
	for {
		old := s.bits.Load()
		if old&uint32(v) == uint32(v) || s.bits.CompareAndSwap(old, old|uint32(v)) {
			return
		}
	}
}

func (s *variants) load() variant { return variant(s.bits.Load()) }

// joinVariant is the variant a typed hash join's outcome names.
func joinVariant(o typed.Outcome) variant {
	switch o {
	case typed.IndexedDense:
		return typedJoinDense
	case typed.Overflowed:
		return hybridHashAfterOverflow
	}
	return typedJoinHash
}

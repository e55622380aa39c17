// Package typed holds weir's typed kernels: operators that keep records as Go
// values of their own type T instead of serialized bytes, and call the user's
// function on them directly. The dataset package translates a program's
// operators into these kernels; nothing here knows of programs, plans or the
// runtime (typed imports memory, spill and sortjoin, never dataset or flow).
//
// The kernels:
//
//   - Keyer: a key selector's order-preserving encoding, chosen once per
//     program (keyer.go).
//   - The group table of Reduce: open addressing over Go values, or a dense
//     array for 8-byte keys (grouptable.go), behind a Combiner (combiner.go)
//     and a Final aggregation (final.go); ValueCombiner, the combiner of
//     records with other references (slices of numbers), over a map
//     (valuecombiner.go).
//   - The typed hash join: Build, Probe, HashJoin (hashjoin.go).
//   - DenseGrouper: ReduceGroup by a counting sort (densegroup.go).
//   - Folder: a sorted grouping that folds one group at a time (fold.go).
//   - ReduceSorted, CoGroupSorted, ReduceDense: hand each group of sorted
//     pairs (or of a DenseGrouper) to the user's function as a sequence;
//     SortFeeder adds records to a sorter (group.go).
//   - The emitters: sortjoin's sorted or aggregated pairs back to Go values
//     (emit.go).
//   - Spool: records held between the supersteps of an iteration (spool.go).
//   - Cache: a loop-invariant input kept as Go values across supersteps,
//     moving to a Spool when it does not fit (cache.go).
//
// One rule decides when 8-byte keys are dense enough to index an array by
// their word instead of hashing or sorting them: Dense, in dense.go.
//
// The contract every kernel keeps:
//
//   - Sinks are func([]T) error. A batch handed to a sink is valid only
//     during the call; the kernel may reuse it afterwards. Kernels never
//     close their sinks: the caller ends its output.
//   - Memory comes through a *memory.Reservation and a limit (the operator's
//     share; 0: no limit but the budget's) that the caller passes in. The
//     caller owns the reservation and releases it, except where a kernel
//     says it releases it itself (a Build that overflows, a Final that hands
//     over).
//   - User functions are called per record, on Go values: nothing is
//     serialized on the fast path. So these kernels do not belong in
//     sortjoin, whose contract is no closures per record.
//   - When a kernel outgrows its memory it falls back: it hands its records,
//     serialized by their memory.Codec, to a sortjoin kernel (the hybrid hash
//     join, the hash aggregator, the sorter), which spills. The result is
//     the same; the caller learns which path ran (Outcome, Final.HandedOver,
//     DenseGrouper.Sorting) and reports it in EXPLAIN ANALYZE.
//   - Hot loops go a batch at a time, with no allocation, reflection or
//     interface call per record.
package typed

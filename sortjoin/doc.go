// Package sortjoin holds weir's binary batch kernels: external sort, sort-merge join,
// hybrid hash join, hash aggregation and sort-based grouping. They are the local
// strategies the planner chooses between; every one of them runs within a memory
// budget and spills to disk instead of failing, whatever the input size.
//
// # Model
//
// The kernels are untyped. A record is a (key, value) pair of byte slices: the key is
// in the memory package's order-preserving encoding (so bytes.Compare is the key
// order, memory.Prefix its normalized-key prefix and memory.Hash its hash), and the
// value is an opaque serialized record (a memory.Codec's output). The typed layers
// above translate Go values to and from this form once per batch, so nothing here
// uses reflection, interfaces or closures per record.
//
// Records flow through Iterator (Next returns slices valid until the next call).
// Every operator draws memory from a resource.Env's memory.Manager through its own
// memory.Reservation, and spills through its own spill.Space on the Env's spill.FS.
//
// # Contracts
//
//   - Inputs are consumed, not closed: the caller owns the iterators it passes in.
//     Iterators an operator returns own the operator's resources; closing them
//     releases memory and removes spill files.
//   - Every exit path (success, error, cancellation through the context, a failing
//     spill file) releases the reservation and removes the spill files.
//   - Operators check the context once per run, partition or batch, not per record.
//   - An operator needs a fixed minimum of memory to make progress (documented on
//     each); it takes that minimum even past the budget (memory.Reservation.Force),
//     and spills everything above it.
//   - Emitted slices are valid only during the call that receives them.
//
// # Index
//
// Index is the solution set of a delta iteration: (key, value) records unique by
// key, in hash buckets that stay resident (a RecordBuffer and an open-addressing
// table) until the budget is hit, then are spilled one at a time, largest first,
// for good. Upsert and Probe act at once on a resident bucket; on a spilled one
// they are appended to the bucket's pending log, which FinishProbes (answering the
// deferred probes), ApplyPending (applying the upserts) and All replay in call
// order on a loaded copy of the bucket, one bucket at a time. A probe answers with
// the value its key had when Probe was called, whatever the budget. Unlike the
// other kernels, an Index lives across supersteps and is released by its Close.
package sortjoin

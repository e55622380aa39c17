// Package disk is the store of weir's disk keyed state backend, Flink's
// EmbeddedRocksDBStateBackend on Pebble (github.com/cockroachdb/pebble/v2):
// a state.Store that a state.Backend made with Options.Store keeps its
// keyed states and its timers in, serialized, while the operators use the
// same state API as on the heap. The key layout is the state package's
// (see its doc); list elements are added with Pebble's concatenating merge
// operator. Timers are entries like any other: each timer service's queue
// per key group in firing order and its index, under the service's id, so
// that they are flushed, checkpointed, restored and clipped with the
// states, and only a bounded cache of each key group's first timers stays
// in memory (state.Options.TimerCache).
//
// # On disk
//
// Each store is a Pebble database in a directory "weir-state-*" of its
// own under Options.Dir, the job's temporary directory: memtables, sorted
// string tables (*.sst), the manifest and options. The write-ahead log is
// off: a checkpoint flushes the memtables first, and a failed task
// restores from its last checkpoint, never from the directory, which Close
// removes (the backend's Dispose, on success, error and cancel alike; the
// job's temporary directory goes with the job).
//
// # Memory
//
// The block cache and the memtables (two of MemTableSize: one filling, one
// flushing) are reserved on the job's memory manager (Options.Memory) when
// the store opens and released when it closes. Pebble's cgo build
// allocates them in C memory, outside the Go heap, so the store holds them
// against the runtime's soft limit too (memory.OffHeap) while it is open.
// Both sizes are halved until they take at most half the budget still
// available, so that the operators' other memory and the stores of later
// subtasks find room, down to 256 KiB of cache and 64 KiB memtables; when
// even these do not fit, Open fails naming the budget. A small budget makes
// Pebble flush to disk often, never fail. Tables carry bloom filters (10
// bits a key), so that a lookup of an absent key (a new key's state, a
// timer's deduplication) reads no data block of the tables it is not in. A
// restore that reads an incremental snapshot of other key groups opens it
// read-only beside the store for the time of the restore, with a block
// cache of the store's size reserved on the budget until it closes.
//
// # Incremental checkpoints
//
// Checkpoint flushes the memtables and takes a Pebble checkpoint (hard
// links of the sorted string tables, copies of the manifest and options).
// Each table not written to the checkpoint storage's shared files before is
// copied there under a name unique to the store ("<token>-<file>.sst"); the
// others are named again. The state package writes the manifest, options
// and the names into the subtask's private state. The store remembers the
// tables of its last checkpoint only: a table compacted away is not named
// again, and the storage deletes its shared file once no retained checkpoint
// names it. Restore rebuilds the database from a snapshot's files (their
// shared files count as written); Open opens one read-only for a rescaling
// restore, which copies the key groups it owns out of it.
package disk

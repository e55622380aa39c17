// Package state is the state of weir's stream operators, on Flink's model:
// keyed state (key groups, a heap keyed state backend, timers, TTL) and
// operator state (lists split or unioned on restore, broadcast maps), with
// snapshots that restore at another parallelism. Keyed state lives on the
// heap or, with a Store, on disk. It imports only the standard library and
// memory.
//
// # Key groups
//
// A keyed stream's keys are hashed into MaxParallelism key groups, the unit in
// which state is partitioned, snapshotted and moved when a job rescales,
// exactly as Flink does it (KeyGroupRangeAssignment): a key's group is
// murmurHash(hashCode(key)) % maxParallelism (MurmurHash, KeyGroupForHash);
// operator instance i of p owns the contiguous range RangeForOperatorIndex
// returns, and a group goes to OperatorIndexForKeyGroup; a job that sets no
// max parallelism gets DefaultMaxParallelism(p). Parallelism and max
// parallelism are within 1..32768, and the max parallelism cannot change
// across a restore. NewHashFunc gives the hash code of the key types Flink
// users know the way Java computes it (String, Long, Integer, Boolean, Double
// ...), so that a key lands in the same group in weir as in Flink; other
// comparable types hash their memory.Codec bytes. The function is chosen once
// per key type; one made for a type hashed by its Codec bytes keeps a scratch
// buffer and belongs to one goroutine.
//
// # The backend
//
// Backend[K] is the heap keyed state backend of one operator instance. It owns
// the key groups Options.Groups of Options.MaxParallelism, and every state
// access and timer registration refers to its current key, which the operator
// sets per record with SetCurrentKey (computing the key group once), with
// SetCurrentKeyInGroup when the group is known already (a timer's), or with
// SetCurrentKeyCode when the caller computed the key's hash code (KeyCode)
// and group: the keyed operators do so for a run of records and call
// Prefetch with the run's codes and groups first, so that the cache misses
// of reading the run's state entries overlap. Backend.Prefetch reads the
// single-value states of the Void namespace; a namespaced Value, Reducing or
// Aggregating has a Prefetch of its own taking a namespace per code (the
// window operator's, with each element's windows), which on amd64 issues
// prefetch instructions, so that the loads do not hold the processor up.
//
// States are obtained from descriptors with a name: ValueState (Value, Update,
// Clear), ListState (Get, Add, AddAll, Update, Clear), MapState (Get, Put,
// PutAll, Remove, Contains, All, Keys, Values, IsEmpty, Clear), ReducingState
// (with a reduce function) and AggregatingState (with an AggregateFunction:
// CreateAccumulator, Add, GetResult, Merge). GetValueState and its siblings
// give public keyed state in the Void namespace; NewValue and its siblings give
// the same states in namespaces of any comparable type N, which windows use
// with their window as the namespace (SetNamespace). List, Reducing and
// Aggregating states merge namespaces (MergeNamespaces, Flink's
// InternalMergingState: merging session windows); a namespace is cleared by
// setting it and calling Clear. KeysIn lists the keys with an entry in a
// namespace (Flink's getKeys). Asking twice for a name returns the same
// state; asking for it as another kind or with other types is an error.
//
// Each state is a table per key group, keyed by (key, namespace), as Flink's
// CopyOnWriteStateTable, so that a snapshot, a restore and a rescale move
// whole groups. The single-value states (Value, Reducing, Aggregating) keep
// their cells inline, in an open-addressing table per key group hashed by
// the key's hash code (the one SetCurrentKey computes for the key group)
// mixed with a hash of the namespace (none for Void; the words of plain
// types such as a time window; maphash for others), so that finding a cell
// reads one slot and follows no pointer; they remember the cell the last
// access found for the current key and namespace: a read and then a write
// of the same key look the table up once and write the cell in place. A
// Void-namespace value without TTL on the heap takes a quick path with
// none of the checks for a disk store, TTL or a namespace, and Value.Ref
// hands out its cell's value for a change in place when no capture shares
// it (the rolling aggregations' path). Aggregating.AddEach and
// Reducing.AddEach add a run of (key, namespace, value) entries at once, as
// SetCurrentKeyCode, SetNamespace and AddPresent would one at a time, with
// the checks made once for the run and the run's slots prefetched first (a
// window operator's run of records); they decline, having added nothing,
// where the quick path would not apply.
//
// # Errors and memory
//
// State methods return no errors. The backend keeps the first error a state
// access meets in Err (a key outside the backend's groups or no current key,
// which make the access a no-op, and the memory budget exceeded, where the
// write is kept so that state stays consistent); the operator runtime checks
// Err once per batch and fails the task with it.
//
// Clear drops every entry and timer but keeps the states registered: the
// BATCH execution of a keyed operator holds one key's state at a time and
// clears it when the key ends.
//
// The backend's bytes are estimated per entry (the sizes of the entry's key,
// namespace and value types, plus, for types holding pointers, the length of
// their memory.Codec form) and counted against a memory.Reservation on
// Options.Memory, grown and shrunk in chunks. Exceeding the budget is an error
// naming the state and the budget. A timer is counted as if it had a time of
// its own (its bucket, its slot in the index and its entry), which is what
// session windows and timers per record take. The estimate can miss (values
// with pointers the codec does not see, the tables' spare slots): when the
// runtime has a soft memory limit (debug.SetMemoryLimit, which the CLI sets
// from --memory), every MiB of growth also checks the Go heap's live bytes,
// projected from the last collection, against the part of the limit that
// memory.Managed leaves to the program, less a sixteenth; passing it is an
// ErrHeapLimit error naming the live bytes, the limit and the state's count.
// The projection is process-wide: one job per process reads it right.
// Clearing state returns its bytes; when all
// state is gone the reservation holds nothing. Dispose drops all state and
// releases the reservation; every backend is disposed exactly once.
//
// # Ownership and concurrency
//
// A Backend, its states and its timer services are used by one goroutine, the
// operator's; only a Capture's WriteTo runs on others. The heap backend stores values as given: a value holding slices,
// maps' contents or pointers must not be changed by the caller after it was
// written, and values read must not be changed in place (ListState.Get returns
// a fresh slice; its elements still share what they point to).
//
// # Timers
//
// Timers[K, N] is Flink's InternalTimerService: event-time and processing-time
// timers of (timestamp, key, namespace), registered and deleted for the
// current key, deduplicated, and kept per key group in the snapshot.
// AdvanceWatermark fires every event-time timer at or before the watermark in
// timestamp order, setting the timer's key as the current key before calling
// the Triggerable; a timer registered by a callback for a time the advance
// reaches fires in that same advance, as in Flink. AdvanceProcessingTime does
// the same for processing time, and NextProcessingTime is the deadline the
// task loop waits for. Timers of one timestamp fire in registration order,
// except that those a restore brought fire first, by key group and then in
// their order before the snapshot; both backends keep this order, so that
// a job's output is the same on either. On the heap, each key group's
// timers are indexed by timer, for the deduplication and deletion;
// RegisterNewEventTimeTimer registers a timer the caller knows is absent
// without the lookup and leaves it out of the index until a lookup, a
// deletion or a snapshot needs it, so that timers only registered and
// fired (the window operator's) are never indexed. A disk backend keeps
// its timers in the store (see The disk backend).
//
// # TTL
//
// A descriptor's TTLConfig is Flink's StateTtlConfig: entries expire TTL after
// their last write (OnCreateAndWrite) or access (OnReadAndWrite), by
// Options.Clock; an expired entry is never returned (NeverReturnExpired) or
// returned by the read that removes it (ReturnExpiredIfNotCleanedUp). TTL
// applies per value, per list element and per map entry. Expired entries are
// removed when read, and left out of snapshots (Flink's full-snapshot
// cleanup); their timestamps travel in snapshots.
//
// # Snapshots
//
// Snapshot writes the state and timers of chosen key groups to an io.Writer in
// a versioned format of checksummed frames (snapshot.go); Restore reads one
// into a backend of any key-group range, keeping its own groups and skipping
// the others, so a job restores at another parallelism by reading each old
// snapshot whose groups overlap its range. Restore may run before the operator
// registers its states, as Flink restores before the operator opens: sections
// of states not yet registered are kept (and counted) until they are, and
// written again by the next snapshot. Corrupt or truncated input is an error
// wrapping ErrCorruptSnapshot, never a panic. Snapshot is synchronous.
//
// Capture takes what a snapshot writes without writing it (Flink's
// HeapSnapshotStrategy with CopyOnWriteStateMap): in time proportional to
// the states and key groups it keeps each state's containers (a key
// group's slot table or map, a key group's timers) as they are, and its
// WriteTo writes Snapshot's bytes of that moment on any goroutine while the
// backend's goroutine goes on. Containers, and entries held by pointer (a
// key's map), carry a copy-on-write version: a write to
// one that a live capture may hold copies it first (a slot table or a
// group's map whole, once per capture; a key's map alone), so a
// capture sees no later change; list elements are only ever appended in
// place, beyond what a capture holds. Changes deferred until a snapshot (the
// timers registered without an index) are made before the capture takes its
// version, so that the capture holds nothing a write would treat as the
// backend's own. Several captures may be live;
// Release (on the backend's goroutine) ends one's copy-on-write, and
// without live captures a write checks one field. Copies are not counted
// against the memory budget. A value holding pointers is shared by a
// capture and the live state, so the ownership rule above holds for
// snapshots too. A disk backend's Capture writes its full snapshot at once
// (no Pebble snapshot is kept), and its WriteTo copies it out.
//
// # Schemas and migration
//
// Snapshot format version 2 records, per state and timer service, the
// memory.SchemaOf schemas of its key, namespace, value and map user key
// (schema.go); operator snapshots record their values' (and broadcast
// keys') schemas per state. A restore compares them with the types the
// program registers the state with, as Flink's PojoSerializer schema
// evolution does:
//
//   - a key, namespace or map user key schema that changed fails the
//     restore in Flink's words ("the new key serializer (...) must be
//     compatible with the previous key serializer (...)"; for map user keys
//     "migration for MapState currently only allows value schema
//     evolutions"), wrapping ErrMigration; so does a broadcast key;
//   - a value schema that changed compatibly (struct fields added or
//     removed, matched by name; memory.NewMigration) is migrated while the
//     restore reads it: the heap backend decodes the old values into the
//     new type, a disk backend's full-snapshot ingest encodes them again
//     into its store, and the state then runs with its own codec;
//   - any other value change fails ("for heap backends, the new state
//     serializer (...) must not be incompatible with the old state
//     serializer (...)") with the state, the field and both kinds named.
//
// Sections of states not registered yet keep their schema: snapshots write
// them again under it, and they migrate when the program registers the
// state. An incremental snapshot records the schemas of its stored states,
// but its store files cannot be migrated in place: restoring one whose
// value schema changed fails, saying to restore from a savepoint (always a
// full, canonical snapshot). Version 1 snapshots, without schemas, restore
// as the program's types. DescribeSnapshot lists the schemas.
//
// # The disk backend
//
// A backend made with Options.Store is a disk backend, Flink's
// EmbeddedRocksDBStateBackend: the same Backend[K] and states, so that
// operators and windows choose the backend and change nothing else, with
// every keyed state serialized in the store (stream/state/disk puts it in
// Pebble). Each state kind's methods take the disk path behind one branch
// on the backend's store, so the heap backend's paths are unchanged. The
// layout follows Flink's RocksDB backend, with the key group first after
// the state so that a key group is a contiguous range of keys:
//
//	key    state id (2 bytes, big-endian, per state name) | key group (2 bytes,
//	       big-endian) | key | namespace                       (memory.Codec forms)
//	Value, Reducing, Aggregating
//	value  TTL timestamp (varint) | value
//	List   one entry per key and namespace
//	value  per element: uvarint length | TTL timestamp (varint) | element
//	Map    one entry per map entry, the user key after the namespace
//	value  uvarint user key length | TTL timestamp (varint) | user value
//
// List elements are added by merging (appending) onto the entry, as Flink's
// RocksDB backend merges them, so an Add reads nothing; reads decode the
// whole list. The lengths make every entry's snapshot form computable from
// its bytes, without its types: the timers, restored states not registered
// yet and snapshots need no decoding. Values are copied in and out: unlike
// on the heap, a value read is the caller's own.
//
// The timer services of a disk backend keep their timers in the store too,
// as Flink's RocksDB timer service does (timers_store.go):
//
//	queue  state id | key group | 0 event, 1 processing | timestamp | sequence
//	value  key hash code (4 bytes) | key | namespace
//	index  state id | key group | 2 + (0 or 1) | key | namespace | timestamp
//	value  sequence
//
// with the timestamp big-endian, its sign bit flipped, and the sequence
// the registration's number (big-endian), so that a key group's queue is
// in firing order and the index deduplicates and deletes. In memory each
// queue keeps a heap of the key groups by their first timer and a cache of
// each group's first timers (Options.TimerCache over the groups, at least
// one each), loaded from the store when it empties: the memory is bounded
// by the cache and the number of key groups, whatever the number of
// timers. The next sequence number is written beside them (state id |
// 0xc0) for incremental snapshots.
//
// The store's memory (block cache, memtables) is its own reservation on
// the job's budget (see stream/state/disk); the state on disk is not
// counted, as Flink does not count RocksDB's files, and MemoryUsed is the
// timer caches' and pending sections' bytes.
//
// A full Snapshot of a disk backend writes the heap backend's format (the
// canonical format of Flink's savepoints), so that its state restores into
// a heap or a disk backend at any parallelism, and the other way round.
// SnapshotIncremental (Flink's incremental checkpoints) writes the store's
// files instead: its immutable data files go to Options.Shared, the shared
// files of the checkpoint storage (checkpoint.Dir), each written once and
// named again by later snapshots while the store holds it; the snapshot
// itself holds the rest of the store's files, the ids and kinds of the
// states and timer services, and the key-group range; the timers are in
// the store's files (a version 2 incremental snapshot holds them in the
// full format instead, and restores as well). Restore tells the two
// formats apart. An incremental snapshot whose key groups are the
// backend's restores as the store it was; at another parallelism each new
// backend opens every old store overlapping its groups read-only and
// copies the keys of its own groups (Flink's
// RocksDBIncrementalRestoreOperation clipping). An incremental snapshot
// restores into a disk backend only (IsIncremental, SharedFilesOf).
//
// # Operator state
//
// OperatorStore is Flink's OperatorStateStore of one operator instance, for
// state that belongs to the instance rather than to a key: a source's split
// positions, a sink's pending files, a function's buffer. Its states come from
// descriptors with a name, as keyed states do, and differ in how a restore
// hands them to the new subtasks (Distribution, Flink's
// OperatorStateHandle.Mode):
//
//	GetOperatorListState  SplitDistribute  a ListState; the elements of all old
//	                                       subtasks are split evenly over the new ones
//	GetUnionListState     Union            a ListState; every new subtask gets all
//	                                       old subtasks' elements
//	GetBroadcastState     Broadcast        a map alike in every subtask; each new
//	                                       subtask gets a copy of one old subtask's
//
// Asking twice for a name returns the same state; asking for it as another
// distribution or with other types is an error, and TTL is refused (Flink
// has it for keyed state only). Methods return no errors: as the keyed
// backend, the store counts its estimated bytes against a
// memory.Reservation on OperatorOptions.Memory, keeps a budget exceeded in
// Err (the write is kept) and releases everything at Dispose.
//
// OperatorStore.Snapshot writes every state in the keyed snapshots' framing
// (versioned, checksummed frames; operatorsnapshot.go), an entry per list
// element or map entry with its length, so that repartitioning needs no
// types. RepartitionOperatorState turns the snapshots of the subtasks of an
// old parallelism into one per new subtask by Flink's
// RoundRobinOperatorStateRepartitioner: at the same parallelism a subtask
// keeps its split lists; at another, each split list's elements, in old
// subtask order, are cut into runs of len/n elements, the first len%n one
// longer, the states taken in name order and each starting its longer runs
// where the one before ran out of them, so the subtasks' totals differ by at
// most one; a union list goes whole to everyone; new subtask i gets the
// broadcast state of the (i mod h)-th of the h old subtasks holding it.
// OperatorStore.Restore reads one subtask's share, before or after its
// states are registered (sections of unregistered states are kept, counted
// and written again by the next snapshot). IsOperatorSnapshot tells an
// operator state snapshot from a keyed one. Corrupt input is an error
// wrapping ErrCorruptSnapshot, never a panic.
package state

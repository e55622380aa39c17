// Package memory is weir's managed memory: a budget shared by all operators of a
// job, records serialized into fixed-size segments, keys encoded as bytes whose
// order is the key order, and the typed serializers and key extractors that turn Go
// values into those bytes. It is a leaf: it imports only the standard library.
//
// # Budget: Manager, Reservation, segments
//
// One Manager per job holds the budget (Options.Budget, Unlimited by default) and
// hands out memory in two forms, both through a Reservation that belongs to one
// operator instance:
//
//   - plain bytes (Grow, Shrink) for index arrays, hash tables and I/O buffers,
//     accounted but allocated by the operator;
//   - segments (Segment, FreeSegment) of Options.SegmentSize bytes (32 KiB by
//     default, a power of two of at least 4 KiB), allocated by the Manager and kept
//     in a pool when freed, so a job at its budget allocates no new segments.
//
// Grow and Segment return ErrBudgetExceeded instead of exceeding the budget, and
// reserve nothing then; operators react by spilling, never by failing. Force and
// ForceSegment go past the budget: an operator uses them only for the fixed minimum
// it needs to make progress at all (two merge inputs, one record larger than a
// segment), which it documents. Peak reports the most ever held.
//
// A Manager is safe for concurrent use; a Reservation is not (one operator, one
// goroutine at a time). Every Reservation is released exactly once on every exit
// path: a second Release returns ErrReleased, and Manager.Close returns an error
// naming the owners of reservations never released (tests assert it returns nil).
//
// A spilling operator sets a floor on its Reservation (SetFloor, Manager.Floor:
// a 32nd of the budget, between 256 KiB and 4 MiB): up to it Grow and Segment
// succeed past the budget, so that what it writes at a time (a sorted run, a
// partition) is never a few records while other operators hold the budget. A
// tight budget then costs passes over the data, not thousands of files (and the
// runs a spilling operator writes one after another share a spill file).
//
// Besides the operators, the runtime reserves what it holds for them: each
// exchange its batches in flight (flow), each source its decode buffers while
// it reads a split (formats.ReadMemorer: Parquet's page buffers), so the
// operators' share of the budget shrinks by those.
//
// DefaultBudget is the budget of a job that sets none (a quarter of the
// machine's or the cgroup's memory, at least 256 MiB). LimitRuntime sets the Go
// runtime's soft memory limit to the running jobs' budgets plus
// RuntimeOverhead, unless the process has a limit of its own, so that the
// garbage collector keeps the heap near the budget; OffHeap lowers it by
// reserved memory allocated outside the Go heap (the disk state backend's
// Pebble caches and memtables in C memory) while that is held, so that the
// heap and that memory together stay within it. Managed splits a process's budget (the CLI's --memory): the operators get
// it less the runtime's part, min(RuntimeOverhead, half), so that the soft
// limit, their share plus RuntimeOverhead, is the process's budget itself.
//
// MakeHuge allocates a large array (a dense group table, a join's direct index,
// a hash table's slots), advises transparent huge pages for it on Linux, which
// Go's runtime does not, and writes it once in order, so that the random reads
// that come first do not fault each page in twice.
//
// # Records: RecordBuffer
//
// A RecordBuffer appends (key, value) records into segments of one Reservation.
// A record is uvarint(len(key)) uvarint(len(value)) key value; one that fits in a
// segment never straddles two, and one larger than a segment starts a fresh segment
// and spans as many as it needs. An offset (segment index << 32 | position) names a
// record until Reset or Free. Get returns slices aliasing the segment, or a copy in
// the caller's scratch for a spanning record. An Append that needs a segment the
// budget cannot give returns ErrBudgetExceeded and leaves the buffer's records as
// they were; Reset empties the buffer but keeps its segments for the next fill,
// Free returns them. AppendKV and SplitKV frame a pair for spill files.
//
// # Keys: order-preserving encoding, prefix, hash
//
// Operators below the typed API never see Go types: every key is bytes whose
// bytewise order (Compare, which is bytes.Compare) is the key's order (keyenc.go).
// Integers order numerically (big-endian, sign bit flipped); floats numerically
// with -0.0 == 0.0 and every NaN equal to every NaN and greater than +Inf; strings
// and []byte bytewise, escaped to be prefix-free; false before true; times by
// instant (Unix seconds, then nanoseconds; the zone is not part of the key). A
// composite key is the concatenation of its parts, a Descending part inverted
// (Invert). Prefix is a key's first eight bytes as a uint64: where two prefixes
// differ their order is the keys' order, so sorts compare prefixes first and full
// keys on ties. Hash(key, seed) is a deterministic 64-bit hash of the key bytes,
// the same in every process; partitioners use its high bits, hash tables its low
// bits, and a new seed gives an independent hash for recursive partitioning.
//
// Key[T] derives such keys from Go values. NewKey resolves each part once: a Field
// by dotted path ("Ship.Date", unexported fields too) to an offset and an encoder
// (integers, floats, bools, strings, []byte, time.Time, fixed arrays of them), or
// a Func returning an ordered type. Append then loops over the parts without
// reflection and without allocating; Compare is the typed comparison the encoding
// agrees with; Hash(v, seed) == Hash(Append(nil, v), seed).
//
// # Values: Codec and Arena
//
// Codec[T] serializes a value to bytes and back. NewCodec walks T with reflect once
// (and caches the result), compiling it into a flat program of ops, each a kind and
// an unsafe field offset; Append and Decode run that program with pointer
// arithmetic and call no reflect per record. A struct of fixed-size fields only is
// copied as one block of its memory (Codec.Flat). Codec.Raw is the same codec with
// its type erased: it encodes and decodes the value at an unsafe.Pointer, for code
// that is compiled once for every record type (flow's transport).
//
// Supported: bool, all integer kinds but uintptr, floats, complex numbers, string,
// []byte, time.Time, arrays, nested structs, pointers and slices of any of these,
// named types and recursive types included, unexported fields included. Maps,
// channels, functions, interfaces, unsafe.Pointer and uintptr are rejected by
// NewCodec with the field path in the error. A round trip preserves every bit of
// every field (NaN payloads, -0.0), nil versus empty slices and []byte, and nil
// pointers; time.Time keeps its instant, its zone abbreviation and offset, and its
// location (UTC and Local by identity, others by name when this process can load
// them), but not its monotonic clock reading. Pointers are followed, so shared
// pointees are copied and cyclic values are not supported. The serialized form uses
// host byte order: it is for spill files and exchanges within one process.
//
// Decode allocates fresh strings, slices and pointees; DecodeArena carves strings,
// byte slices and pointer-free elements from an Arena, an append-only slab
// allocator that never reuses memory, so a batch of records costs O(1)
// allocations and decoded strings stay valid as long as they are referenced.
// Decode of corrupt or truncated input returns an error wrapping ErrCorrupt; it
// never panics and never allocates much more than its input.
//
// # Schemas and migration
//
// SchemaOf[T] describes T's serialized form: kinds, struct field names, array
// lengths, not type names. State snapshots store it with the values. When a
// program's struct type gained or lost fields since, NewMigration[T] reads the
// old values into T as Flink's PojoSerializer does on restore: fields match by
// name, new fields are zero, removed fields are dropped, and any other change
// (a field's kind, an array's length, a recursive type) is ErrIncompatible
// with the field's path in the message. A migration runs reflect per value; it
// is for restores, not hot loops. ParseSchema checks and prints a schema.
package memory

package sortjoin

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// CombineFunc merges value b into accumulator a of the same key and returns the new
// accumulator. It may write the result into dst[:0] (a scratch buffer the operator
// reuses) and return it, or return a itself modified in place. a has no spare
// capacity (cap(a) == len(a)), so appending to it cannot clobber the operator's
// memory. Returning a or b unchanged is fine too: the result is copied before the
// next call.
//
// Accumulators and values have the same form: the first value of a key is its first
// accumulator. The hash aggregator combines values in no particular order and
// combines accumulators with accumulators, so combine must be associative and
// commutative.
type CombineFunc func(dst, a, b []byte) ([]byte, error)

// AggMode says what a HashAggregator does when its memory is full.
type AggMode uint8

const (
	// Final spills partitions to disk and emits exactly one (key, accumulator) per
	// distinct key from Finish. It is the zero value.
	Final AggMode = iota
	// Partial is Flink's combiner: when memory is full it hands every partial
	// aggregate to AggOptions.Flush and starts afresh; it never spills. A key may be
	// flushed several times; a Final aggregation downstream completes the result.
	Partial
)

func (m AggMode) String() string {
	switch m {
	case Final:
		return "final"
	case Partial:
		return "partial"
	}
	return fmt.Sprintf("AggMode(%d)", uint8(m))
}

const (
	// DefaultAggPartitions is the number of hash partitions of a Final aggregation
	// when AggOptions.Partitions is zero.
	DefaultAggPartitions = 32
	// DefaultAggMaxRecursion is AggOptions.MaxRecursion when it is zero.
	DefaultAggMaxRecursion = 3
	// maxAggPartitions bounds AggOptions.Partitions (each spilled partition holds an
	// open spill.Writer).
	maxAggPartitions = 1024
	// aggCtxEvery is the number of records between two context checks.
	aggCtxEvery = 1024
)

// AggOptions configures a HashAggregator.
type AggOptions struct {
	// Name names the operator in reservations, spill files and errors.
	Name string
	// Mode is Final (the zero value) or Partial.
	Mode AggMode
	// Partitions is the number of hash partitions of a level (rounded up to a power
	// of two, at most 1024). Zero means DefaultAggPartitions, or fewer (at least 2)
	// when the spill writers of all partitions would take more than half the memory
	// available when the level starts. Recursion levels always adapt that way.
	// Partial mode uses one partition.
	Partitions int
	// MaxRecursion is the number of times a spilled partition is re-aggregated with a
	// new hash seed (and re-partitioned if it still does not fit) before the
	// aggregator falls back to sorting it. Zero means DefaultAggMaxRecursion (3, as
	// in Flink); a negative value sorts every spilled partition at once, as the hash
	// join's option does.
	MaxRecursion int
	// Seed seeds the hash of the first level; deeper levels derive theirs from it.
	Seed uint64
	// Flush receives the partial aggregates in Partial mode, when the table is full
	// and at Finish; key and acc are valid only during the call. Partial mode
	// requires it; Final mode ignores it.
	Flush func(key, acc []byte) error
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o AggOptions) EnsureDefaults() AggOptions {
	if o.Name == "" {
		o.Name = "hashagg"
	}
	if o.Partitions <= 0 {
		o.Partitions = DefaultAggPartitions
	}
	if o.Partitions > maxAggPartitions {
		o.Partitions = maxAggPartitions
	}
	p := 1
	for p < o.Partitions {
		p <<= 1
	}
	o.Partitions = p
	if o.Mode == Partial {
		o.Partitions = 1
	}
	switch {
	case o.MaxRecursion == 0:
		o.MaxRecursion = DefaultAggMaxRecursion
	case o.MaxRecursion < 0:
		o.MaxRecursion = 0
	}
	return o
}

// AggStats counts what a HashAggregator did.
type AggStats struct {
	Records            int64 // records passed to Add
	Groups             int64 // (key, accumulator) pairs emitted: by the iterator (Final) or through Flush (Partial)
	Flushes            int   // Partial: times the table was flushed (memory full, and at Finish)
	SpilledPartitions  int   // partitions written to disk, all levels together
	Levels             int   // deepest level read back from disk (0: nothing spilled)
	RehashedPartitions int   // spilled partitions re-aggregated in the hash table
	SortedPartitions   int   // spilled partitions finished by the sort fallback
	Compactions        int   // partitions compacted to drop old accumulator versions
	BytesSpilled       int64 // bytes written to spill files, before compression
}

// aggState is a HashAggregator's life cycle; see the diagram on HashAggregator.
type aggState uint8

const (
	aggBuilding aggState = iota // Add fills the table; nothing on disk
	aggSpilling                 // Add fills the table; some partitions live on disk
	aggEmitting                 // Finish returned the iterator, which owns the resources
	aggDone                     // everything emitted (or flushed) and released
	aggFailed                   // an error was returned; only Close remains
	aggClosed                   // released
)

// HashAggregator groups records by key and reduces each group with a CombineFunc,
// in memory where it can and on disk where it must (Flink's hash-based combiner and
// its spilling final aggregation).
//
//	building ──Add, memory full (Final): spill the largest partition──► spilling
//	   │  Add, memory full (Partial): Flush every group, start afresh      │ Add
//	   └────────────────────────── Finish ─────────────────────────────────┴─► emitting ──► done
//	emitting: the in-memory groups, then each spilled partition, depth first:
//	   ├─ re-aggregate its file in the emptied table with the next level's seed
//	   │  (what does not fit spills again, one level deeper), or
//	   └─ sort it and combine runs of equal keys, when it is past MaxRecursion,
//	      holds a single key, did not shrink at the last level, or memory is too
//	      small for a hash table
//	any error ──► failed (everything released at once); Close ──► closed
//
// Records (key, accumulator) live in one memory.RecordBuffer per hash partition
// (the high bits of memory.Hash(key, seed)), indexed by a per-partition
// open-addressing table of (hash, offset) slots kept below a load factor of 3/4.
// An accumulator that keeps its length is overwritten in place; one that changes
// length is appended anew and its slot repointed; a partition whose dead versions
// outweigh its live records is compacted when memory allows.
//
// Memory: one reservation from Env.Memory, not split in advance: the partitions'
// segments and tables grow through the budget as records come, and when the budget
// says no, Final mode spills the largest in-memory partition (its accumulators, then
// every later value of that partition, go to its spill file) and Partial mode
// flushes the whole table. In Final mode Grow succeeds past the budget up to the
// manager's floor (memory.Reservation.SetFloor), so that partitions are not spilled
// a few records at a time. Past the budget the aggregator takes only the fixed
// minimum it needs to make progress (memory.Reservation.Force): one spill.Writer per
// spilled partition of the level being built (the fan-out adapts so that they take
// at most half the memory available), one spill.Reader while re-reading a partition,
// one key's accumulator and the largest record (scratch buffers), and in Partial mode
// the one record that must be in the table. A single key's accumulator must fit in
// memory. The sort fallback's Sorter draws on Env.Memory under its own reservation,
// while this one holds nothing but scratch buffers.
//
// Call order: Add any number of times, then Finish once, then Close (always, on
// every path; Close after Finish is harmless and also releases what the iterator
// holds). A HashAggregator is not safe for concurrent use; run one per partition.
type HashAggregator struct {
	env     resource.Env
	opts    AggOptions
	combine CombineFunc
	res     *memory.Reservation
	space   *spill.Space // created by the first spill
	segSize int

	state aggState
	err   error    // sticky: returned by every later call
	tab   aggTable // the table being built (level 0, then reused by each deeper level)
	it    *aggIter
	stats AggStats

	// Scratch buffers, reused for every record.
	scratch   []byte // RecordBuffer.Get of records larger than a segment
	dst       []byte // combine output
	pending   []byte // an accumulator in flight while memory is made
	accounted int64  // bytes of scratch buffers charged to res
	writerMem int64  // spill.Options.WriterMemory, charged per open writer
	readerMem int64  // spill.Options.ReaderMemory, charged per open reader
}

// NewHashAggregator returns an aggregator drawing memory from env.Memory and
// spilling to env.FS (Final mode only). combine must not be nil, and Partial mode
// needs opts.Flush; a violation is reported by the first Add or Finish.
func NewHashAggregator(env resource.Env, opts AggOptions, combine CombineFunc) *HashAggregator {
	auto := opts.Partitions == 0
	opts = opts.EnsureDefaults()
	a := &HashAggregator{env: env, opts: opts, combine: combine}
	switch {
	case env.Memory == nil:
		a.err = fmt.Errorf("sortjoin: hashagg %s: Env.Memory is nil", opts.Name)
	case combine == nil:
		a.err = fmt.Errorf("sortjoin: hashagg %s: nil CombineFunc", opts.Name)
	case opts.Mode == Partial && opts.Flush == nil:
		a.err = fmt.Errorf("sortjoin: hashagg %s: Partial mode needs AggOptions.Flush", opts.Name)
	case opts.Mode != Partial && opts.Mode != Final:
		a.err = fmt.Errorf("sortjoin: hashagg %s: unknown mode %v", opts.Name, opts.Mode)
	}
	if a.err != nil {
		a.state = aggFailed
		return a
	}
	a.res = env.Memory.NewReservation(opts.Name)
	if opts.Mode == Final {
		a.res.SetFloor(env.Memory.Floor())
	}
	a.segSize = env.Memory.SegmentSize()
	a.writerMem = env.Spill.WriterMemory()
	a.readerMem = env.Spill.ReaderMemory()
	parts := opts.Partitions
	if auto && opts.Mode == Final {
		parts = a.fanOut()
	}
	a.tab.init(a, parts, opts.Seed, 0)
	return a
}

// fanOut returns the number of partitions a level gets: AggOptions.Partitions, or
// fewer (a power of two, at least 2) so that the spill writers of all partitions
// would take at most half the memory available now.
func (a *HashAggregator) fanOut() int {
	if a.env.Memory.Budget() == memory.Unlimited || a.writerMem <= 0 {
		return a.opts.Partitions
	}
	fit := max(a.env.Memory.Available(), a.env.Memory.Floor()) / (2 * a.writerMem)
	p := a.opts.Partitions
	for p > 2 && int64(p) > fit {
		p >>= 1
	}
	return p
}

// Stats returns the counters so far; after the iterator is exhausted they are final.
func (a *HashAggregator) Stats() AggStats { return a.stats }

// Add aggregates one record. key and val are copied (or combined) before Add
// returns. In the steady state (an existing key whose accumulator keeps its length)
// Add allocates nothing.
func (a *HashAggregator) Add(key, val []byte) error {
	if a.state > aggSpilling {
		return a.stateErr("Add")
	}
	a.stats.Records++
	if err := a.tab.add(key, val, memory.Hash(key, a.tab.seed)); err != nil {
		return a.fail(err)
	}
	return nil
}

// Finish ends the input. In Final mode it returns an iterator over one (key,
// accumulator) pair per distinct key, in no particular order; the iterator owns the
// aggregator's memory and spill files from then on, checks ctx once per batch of
// records, and must be closed. In Partial mode it flushes the remaining groups
// through Flush, releases everything and returns an empty iterator.
func (a *HashAggregator) Finish(ctx context.Context) (Iterator, error) {
	if a.state > aggSpilling {
		return nil, a.stateErr("Finish")
	}
	if err := ctx.Err(); err != nil {
		return nil, a.fail(fmt.Errorf("sortjoin: hashagg %s: finish: %w", a.opts.Name, err))
	}
	if a.opts.Mode == Partial {
		if err := a.tab.flush(); err != nil {
			return nil, a.fail(err)
		}
		err := a.release()
		a.state = aggDone
		if err != nil {
			return nil, err
		}
		return SliceIterator(nil), nil
	}
	queue, err := a.tab.finishSpills(spill.Handle{})
	if err != nil {
		return nil, a.fail(err)
	}
	a.state = aggEmitting
	a.it = &aggIter{a: a, ctx: ctx, queue: queue, tab: &a.tab}
	return a.it, nil
}

// Close releases the aggregator's memory and removes its spill files, whatever its
// state; after Finish it also invalidates the iterator. It is idempotent.
func (a *HashAggregator) Close() error {
	return a.release()
}

func (a *HashAggregator) stateErr(op string) error {
	if a.err != nil {
		return a.err
	}
	if a.state == aggClosed {
		return fmt.Errorf("sortjoin: hashagg %s: %s after Close", a.opts.Name, op)
	}
	return fmt.Errorf("sortjoin: hashagg %s: %s after Finish", a.opts.Name, op)
}

// fail records err as the sticky error and releases everything.
func (a *HashAggregator) fail(err error) error {
	if a.err == nil {
		a.err = err
	}
	_ = a.release()
	a.state = aggFailed
	return a.err
}

// release frees all memory, aborts open writers, closes open readers and sorters and
// removes every spill file. It is idempotent.
func (a *HashAggregator) release() error {
	if a.state == aggClosed || a.res == nil {
		a.state = aggClosed
		return nil
	}
	var errs []error
	if a.it != nil {
		errs = append(errs, a.it.release())
	}
	a.tab.free()
	if a.space != nil {
		if err := a.space.Close(); err != nil {
			errs = append(errs, fmt.Errorf("sortjoin: hashagg %s: remove spill files: %w", a.opts.Name, err))
		}
		a.space = nil
	}
	if err := a.res.Release(); err != nil {
		errs = append(errs, fmt.Errorf("sortjoin: hashagg %s: %w", a.opts.Name, err))
	}
	a.scratch, a.dst, a.pending = nil, nil, nil
	if a.state != aggFailed {
		a.state = aggClosed
	}
	a.res = nil
	return errors.Join(errs...)
}

// spillSpace returns the aggregator's spill space, creating it on first use.
func (a *HashAggregator) spillSpace() (*spill.Space, error) {
	if a.space != nil {
		return a.space, nil
	}
	if a.env.FS == nil {
		return nil, fmt.Errorf("sortjoin: hashagg %s: memory is full and Env.FS is nil: cannot spill", a.opts.Name)
	}
	a.space = spill.NewSpace(a.env.FS, a.opts.Name, a.env.Spill)
	return a.space, nil
}

// reserve charges n bytes of fixed minimum to the reservation: through the budget
// when it can, past it when it must.
func (a *HashAggregator) reserve(n int64) {
	if n <= 0 {
		return
	}
	if err := a.res.Grow(n); err != nil {
		a.res.Force(n)
	}
}

// accountScratch charges growth of the scratch buffers (they grow to the largest
// record or accumulator seen) to the reservation; they are part of the minimum.
func (a *HashAggregator) accountScratch() {
	n := int64(cap(a.scratch) + cap(a.dst) + cap(a.pending))
	if n > a.accounted {
		a.reserve(n - a.accounted)
		a.accounted = n
	}
}

// combineInto runs the combine function on (acc, val) and keeps its output buffer
// for reuse when that buffer belongs to neither acc nor val.
func (a *HashAggregator) combineInto(acc, val []byte) ([]byte, error) {
	out, err := a.combine(a.dst[:0], acc, val)
	if err != nil {
		return nil, fmt.Errorf("sortjoin: hashagg %s: combine: %w", a.opts.Name, err)
	}
	if cap(out) > cap(a.dst) && !sameMemory(out, acc) && !sameMemory(out, val) {
		a.dst = out[:0]
		a.accountScratch()
	}
	return out, nil
}

// sameMemory reports whether x and y share their first element or the end of their
// capacity, i.e. whether x is (a reslice of) y's memory.
func sameMemory(x, y []byte) bool {
	if cap(x) == 0 || cap(y) == 0 {
		return false
	}
	return &x[:1][0] == &y[:1][0] || &x[:cap(x)][cap(x)-1] == &y[:cap(y)][cap(y)-1]
}

func isBudgetErr(err error) bool { return errors.Is(err, memory.ErrBudgetExceeded) }

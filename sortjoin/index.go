package sortjoin

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

const (
	// DefaultIndexBuckets is IndexOptions.Buckets when it is zero.
	DefaultIndexBuckets = 32
	// maxIndexBuckets bounds IndexOptions.Buckets: every spilled bucket may keep a
	// pending-log writer open.
	maxIndexBuckets = 1024

	idxSlotSize = 16 // bytes of one slot, charged to the reservation
	idxMinSlots = 16 // slots of a bucket's first table

	// Tags of the records of a pending log.
	idxTagUpsert = 'u'
	idxTagProbe  = 'p'
)

// IndexOptions configures an Index.
type IndexOptions struct {
	// Name names the index in its reservation, spill files and errors ("index" if
	// empty).
	Name string
	// Memory is the most bytes the index reserves (records, tables, spill I/O
	// buffers) outside its fixed minimum, see Index. Zero means as much as the
	// manager grants.
	Memory int64
	// Buckets is the number of hash buckets, the unit of spilling: rounded up to a
	// power of two in [1, 1024]; zero means DefaultIndexBuckets.
	Buckets int
	// Seed seeds the key hash. It must differ from the seed of the exchange that
	// partitioned the keys (their high bits pick the bucket).
	Seed uint64
}

// EnsureDefaults fills zero fields with their defaults, rounds Buckets and returns o.
func (o IndexOptions) EnsureDefaults() IndexOptions {
	if o.Name == "" {
		o.Name = "index"
	}
	if o.Memory <= 0 {
		o.Memory = memory.Unlimited
	}
	if o.Buckets <= 0 {
		o.Buckets = DefaultIndexBuckets
	}
	b := 1
	for b < o.Buckets && b < maxIndexBuckets {
		b <<= 1
	}
	o.Buckets = b
	return o
}

// IndexStats counts what an Index did.
type IndexStats struct {
	Buckets        int   // hash buckets
	SpilledBuckets int   // buckets written to disk (they stay there)
	SpilledBytes   int64 // bytes written to spill files (bucket data, pending logs, write-backs), before compression
	PeakMemory     int64 // most bytes the index's reservation held, fixed minimum included
	PendingUpdates int64 // upserts into spilled buckets, applied later
	DeferredProbes int64 // probes of spilled buckets, answered by FinishProbes
	Loads          int64 // spilled buckets loaded into memory (FinishProbes, ApplyPending, All)
	Compactions    int64 // tables rewritten to drop replaced values
}

// ProbeFunc receives the answer to one probe: the caller's payload, and the value
// stored under the probed key with found == true, or nil and false. Both slices are
// valid only during the call and only until it calls Upsert; what it passes to
// Upsert must not alias them (copy first).
type ProbeFunc func(payload, value []byte, found bool) error

// indexPhase says which calls an Index accepts: a callback of FinishProbes may
// upsert; one of All may call nothing.
type indexPhase uint8

const (
	idxIdle      indexPhase = iota
	idxFinishing            // FinishProbes runs: Upsert is allowed
	idxBusy                 // ApplyPending or All runs: nothing else is
	idxClosed
)

// Index is a hash index of (key, value) records, unique by key, that spills instead
// of failing when it outgrows its memory: the solution set of a delta iteration
// (one Index per subtask, i.e. per hash partition of the solution set), probed by
// the workset every superstep and updated by its delta.
//
//	key ─► memory.Hash(key, Seed) ─► bucket (high bits)
//	  resident bucket: RecordBuffer + open-addressing table of (hash, offset)
//	      Upsert: insert, or replace (in place if the length is equal, else append
//	              and repoint; compact when replaced bytes exceed half the buffer)
//	      Probe:  look up, call fn now
//	  spilled bucket: data file (its records as of the last write-back)
//	                + pending log (upserts and probes, in call order)
//	      Upsert, Probe: append to the log
//	      FinishProbes: for each bucket whose log holds probes: load the data
//	              file, replay the log (apply upserts, answer probes), write back
//	      ApplyPending: the same for logs of upserts only
//
// Buckets are resident until the budget says no (a segment or a table's growth is
// refused): then the largest resident bucket is written to its data file, its memory
// freed, and it stays spilled for the Index's life; FinishProbes, ApplyPending and
// All load spilled buckets one at a time and drop the copy afterwards.
//
// Semantics do not depend on the budget: a probe answers with the value of the
// latest Upsert of its key made before the Probe call, whether it is answered at
// once (resident bucket) or by FinishProbes (spilled bucket, replaying its log in
// call order). Upserts made by FinishProbes' callback come after every deferred
// probe. ApplyPending and All need every deferred probe answered first.
//
// Memory (one reservation named opts.Name, at most opts.Memory through Grow): the
// resident buckets' segments and tables. The fixed minimum, taken past the budget if
// need be: one spill writer per spilled bucket with a pending log (open from its
// first pending record to the next load of the bucket), one loaded bucket (its
// records and table) with one spill reader and one writer, and scratch buffers as
// large as the largest record.
//
// Call order: any mix of Upsert and Probe; FinishProbes; ApplyPending (the next
// superstep starts here); All at any time without pending probes; Close always.
// Calls made after an error return that error; Close then still releases all
// memory and removes every spill file. An Index is not safe for concurrent use.
type Index struct {
	env     resource.Env
	opts    IndexOptions
	res     *memory.Reservation
	spill   joinSpill
	segSize int
	shift   uint // bucket = hash >> shift

	buckets []idxBucket
	load    idxTable // the spilled bucket loaded by FinishProbes, ApplyPending or All
	phase   indexPhase
	err     error // sticky
	n       int64 // records, pending upserts of spilled buckets not included
	peak    int64
	stats   IndexStats

	scratch   []byte // RecordBuffer.Get of records larger than a segment
	rec       []byte // one pending-log record being framed
	hold      []byte // key and value of an Upsert while memory is made
	accounted int64  // bytes of scratch buffers charged to res
}

// idxBucket is one hash bucket: resident (tab) or spilled (data file and log).
type idxBucket struct {
	tab     idxTable
	spilled bool
	records int64 // spilled: records in the data file
	data    spill.Handle
	hasData bool
	log     *spill.Writer // pending upserts and probes, in call order
	updates int64         // upserts in log
	probes  int64         // probes in log
}

// idxSlot is one entry of a table: the key's full hash (so most mismatches cost no
// key comparison and growing needs no rehash) and the record's offset plus one
// (zero marks an empty slot).
type idxSlot struct {
	hash uint64
	off  uint64
}

// idxTable holds one bucket's records in memory: a RecordBuffer of its own (so that
// spilling it frees exactly its memory) and a linear-probing table of slots, load at
// most 3/4. live counts the bytes of the records the slots point to; the rest of buf
// is replaced values.
type idxTable struct {
	buf          *memory.RecordBuffer
	slots        []idxSlot
	mask         uint64
	limit        int // count at which the table grows
	count        int // keys
	live         int64
	retryCompact int64 // buf.Bytes() below which a failed compaction is not retried
}

// NewIndex returns an empty Index drawing memory from env.Memory and spilling to
// env.FS. A nil env.Memory is reported by every call.
func NewIndex(env resource.Env, opts IndexOptions) *Index {
	opts = opts.EnsureDefaults()
	x := &Index{env: env, opts: opts}
	x.stats.Buckets = opts.Buckets
	if env.Memory == nil {
		x.err = fmt.Errorf("sortjoin: index %s: Env.Memory is nil", opts.Name)
		x.phase = idxClosed
		return x
	}
	x.res = env.Memory.NewReservation(opts.Name)
	x.spill = newJoinSpill(env, opts.Name, x.res)
	x.segSize = env.Memory.SegmentSize()
	x.shift = uint(64 - bits.TrailingZeros(uint(opts.Buckets)))
	x.buckets = make([]idxBucket, opts.Buckets)
	for i := range x.buckets {
		x.buckets[i].tab.buf = memory.NewRecordBuffer(x.res)
	}
	x.load.buf = memory.NewRecordBuffer(x.res)
	return x
}

// Len returns the number of records (distinct keys) in the index. Upserts pending
// for a spilled bucket are counted once applied (by FinishProbes, ApplyPending or
// All), so Len is exact after ApplyPending.
func (x *Index) Len() int64 { return x.n }

// Stats returns the counters so far.
func (x *Index) Stats() IndexStats {
	s := x.stats
	s.SpilledBytes = x.spill.bytesWritten()
	s.PeakMemory = x.peak
	return s
}

// bucket returns the bucket of hash h.
func (x *Index) bucket(h uint64) int { return int(h >> x.shift) }

// check returns the error a call in the current phase gets, if any.
func (x *Index) check(op string, allowed indexPhase) error {
	if x.err != nil {
		return x.err
	}
	if x.phase == idxIdle || x.phase == allowed {
		return nil
	}
	if x.phase == idxClosed {
		return fmt.Errorf("sortjoin: index %s: %s after Close", x.opts.Name, op)
	}
	return x.fail(fmt.Errorf("sortjoin: index %s: %s called from a callback of the index", x.opts.Name, op))
}

// fail makes err sticky and returns the first sticky error.
func (x *Index) fail(err error) error {
	if x.err == nil {
		x.err = err
	}
	return x.err
}

// Upsert inserts key with value, or replaces the value stored under key. key and
// value are copied. Into a resident bucket it applies at once (allocating nothing
// in the steady state); into a spilled bucket it is appended to the bucket's
// pending log and applied by the next load of the bucket (FinishProbes,
// ApplyPending or All). FinishProbes' callback may call it; All's may not.
func (x *Index) Upsert(key, value []byte) error {
	if err := x.check("Upsert", idxFinishing); err != nil {
		return err
	}
	h := memory.Hash(key, x.opts.Seed)
	bi := x.bucket(h)
	b := &x.buckets[bi]
	if b.spilled {
		return x.logAppend(bi, idxTagUpsert, key, value)
	}
	inserted, err := x.put(&b.tab, key, value, h, false)
	if err != nil {
		if !isBudgetErr(err) {
			return x.fail(fmt.Errorf("sortjoin: index %s: upsert: %w", x.opts.Name, err))
		}
		if err := x.upsertSlow(bi, key, value, h); err != nil {
			return x.fail(err)
		}
		return nil
	}
	if inserted {
		x.n++
	}
	x.notePeak()
	return nil
}

// upsertSlow makes room for a record of bucket bi that the budget refused: it
// spills the largest resident bucket and retries, until the record is stored or bi
// itself is spilled (then the record goes to its log). key and value are copied
// first, since they may alias memory a spill frees.
func (x *Index) upsertSlow(bi int, key, value []byte, h uint64) error {
	x.hold = append(append(x.hold[:0], key...), value...)
	x.accountScratch()
	key, value = x.hold[:len(key):len(key)], x.hold[len(key):]
	b := &x.buckets[bi]
	for {
		if err := x.spillLargest(bi); err != nil {
			return err
		}
		if b.spilled {
			return x.logAppend(bi, idxTagUpsert, key, value)
		}
		inserted, err := x.put(&b.tab, key, value, h, false)
		if err == nil {
			if inserted {
				x.n++
			}
			x.notePeak()
			return nil
		}
		if !isBudgetErr(err) {
			return fmt.Errorf("sortjoin: index %s: upsert: %w", x.opts.Name, err)
		}
	}
}

// Probe looks key up. If key's bucket is resident, fn runs now with (payload,
// value, found) and Probe returns its error. If the bucket is spilled, (key,
// payload) is appended to the bucket's pending log and FinishProbes runs its fn
// later, in the order of the Probe calls, with the value the key had when Probe
// was called. A resident probe allocates nothing.
func (x *Index) Probe(key, payload []byte, fn ProbeFunc) error {
	if err := x.check("Probe", idxIdle); err != nil {
		return err
	}
	h := memory.Hash(key, x.opts.Seed)
	bi := x.bucket(h)
	b := &x.buckets[bi]
	if b.spilled {
		return x.logAppend(bi, idxTagProbe, key, payload)
	}
	_, v, found := x.find(&b.tab, key, h)
	if err := fn(payload, v, found); err != nil {
		return fmt.Errorf("sortjoin: index %s: probe callback: %w", x.opts.Name, err)
	}
	return nil
}

// Close releases the index's memory, aborts open writers and removes every spill
// file. It is idempotent. Called from a callback of the index it fails (sticky)
// and releases nothing: call it again once the calling method has returned.
func (x *Index) Close() error {
	switch x.phase {
	case idxClosed:
		return nil
	case idxFinishing, idxBusy:
		return x.fail(fmt.Errorf("sortjoin: index %s: Close called from a callback of the index", x.opts.Name))
	}
	x.phase = idxClosed
	var errs []error
	for i := range x.buckets {
		b := &x.buckets[i]
		x.spill.abort(b.log)
		b.log = nil
		x.freeTable(&b.tab)
	}
	x.freeTable(&x.load)
	if err := x.spill.close(); err != nil {
		errs = append(errs, err)
	}
	if err := x.res.Release(); err != nil {
		errs = append(errs, fmt.Errorf("sortjoin: index %s: %w", x.opts.Name, err))
	}
	x.scratch, x.rec, x.hold = nil, nil, nil
	return errors.Join(errs...)
}

// notePeak records the reservation's size if it is the largest so far.
func (x *Index) notePeak() {
	if b := x.res.Bytes(); b > x.peak {
		x.peak = b
	}
}

// accountScratch charges growth of the scratch buffers to the reservation (past
// the budget if it must: they are part of the fixed minimum).
func (x *Index) accountScratch() {
	n := int64(cap(x.scratch) + cap(x.rec) + cap(x.hold))
	if d := n - x.accounted; d > 0 {
		if x.res.Grow(d) != nil {
			x.res.Force(d)
		}
		x.accounted = n
	}
}

// room reports whether the reservation may grow by n bytes within opts.Memory.
func (x *Index) room(n int64) bool { return x.res.Bytes()+n <= x.opts.Memory }

// find looks key (hash h) up in t. It returns the slot holding the key and its
// value, or the empty slot where the key belongs (meaningful only when t has
// slots). The value aliases t's memory, or x.scratch for a record larger than a
// segment.
func (x *Index) find(t *idxTable, key []byte, h uint64) (i uint64, val []byte, found bool) {
	if len(t.slots) == 0 {
		return 0, nil, false
	}
	i = h & t.mask
	for {
		s := &t.slots[i]
		if s.off == 0 {
			return i, nil, false
		}
		if s.hash == h {
			k, v, sc := t.buf.Get(s.off-1, x.scratch)
			if cap(sc) != cap(x.scratch) {
				x.scratch = sc
				x.accountScratch()
			}
			if bytes.Equal(k, key) {
				return i, v, true
			}
		}
		i = (i + 1) & t.mask
	}
}

// put stores (key, val) in t and reports whether the key is new. Without force it
// returns memory.ErrBudgetExceeded when it needs memory opts.Memory or the budget
// refuses, leaving t's contents as they were; with force it takes the memory.
func (x *Index) put(t *idxTable, key, val []byte, h uint64, force bool) (inserted bool, err error) {
	i, old, found := x.find(t, key, h)
	size := memory.RecordSize(len(key), len(val))
	if found {
		oldSize := memory.RecordSize(len(key), len(old))
		if len(old) == len(val) && oldSize <= x.segSize {
			copy(old, val) // old aliases the buffer: the record lies in one segment
			return false, nil
		}
		off, err := x.appendRecord(t.buf, key, val, force)
		if err != nil {
			return false, err
		}
		t.slots[i].off = off + 1
		t.live += int64(size - oldSize)
		x.maybeCompact(t, force)
		return false, nil
	}
	if t.count >= t.limit {
		if err := x.growTable(t, force); err != nil {
			return false, err
		}
		for i = h & t.mask; t.slots[i].off != 0; i = (i + 1) & t.mask {
		}
	}
	off, err := x.appendRecord(t.buf, key, val, force)
	if err != nil {
		return false, err
	}
	t.slots[i] = idxSlot{hash: h, off: off + 1}
	t.count++
	t.live += int64(size)
	return true, nil
}

// appendRecord appends a record to buf within opts.Memory and the budget, or past
// them with force.
func (x *Index) appendRecord(buf *memory.RecordBuffer, key, val []byte, force bool) (uint64, error) {
	if force {
		return buf.AppendForce(key, val), nil
	}
	if size := memory.RecordSize(len(key), len(val)); !buf.Fits(size) {
		need := int64((size + x.segSize - 1) / x.segSize)
		if !x.room(need * int64(x.segSize)) {
			return 0, memory.ErrBudgetExceeded
		}
	}
	return buf.Append(key, val)
}

// growTable doubles t's slots (or creates them), charging the new slots before it
// frees the old ones.
func (x *Index) growTable(t *idxTable, force bool) error {
	n := max(2*len(t.slots), idxMinSlots)
	need := int64(n) * idxSlotSize
	switch {
	case force:
		x.res.Force(need)
	case !x.room(need):
		return memory.ErrBudgetExceeded
	default:
		if err := x.res.Grow(need); err != nil {
			return err
		}
	}
	old := t.slots
	t.slots = make([]idxSlot, n)
	t.mask = uint64(n - 1)
	t.limit = n / 4 * 3
	for _, s := range old {
		if s.off == 0 {
			continue
		}
		j := s.hash & t.mask
		for t.slots[j].off != 0 {
			j = (j + 1) & t.mask
		}
		t.slots[j] = s
	}
	x.res.Shrink(int64(len(old)) * idxSlotSize)
	return nil
}

// memBytes is the memory t holds.
func (x *Index) memBytes(t *idxTable) int64 {
	return int64(t.buf.Segments())*int64(x.segSize) + int64(len(t.slots))*idxSlotSize
}

// freeTable drops t's records and slots and returns their memory.
func (x *Index) freeTable(t *idxTable) {
	if t.buf != nil {
		t.buf.Free()
	}
	if len(t.slots) > 0 {
		x.res.Shrink(int64(len(t.slots)) * idxSlotSize)
	}
	*t = idxTable{buf: t.buf}
}

// maybeCompact compacts t when its replaced values exceed half of its bytes (and
// at least a segment, so that small tables are not rewritten over and over).
func (x *Index) maybeCompact(t *idxTable, force bool) {
	total := t.buf.Bytes()
	garbage := total - t.live
	if 2*garbage <= total || garbage < int64(x.segSize) || total < t.retryCompact {
		return
	}
	x.compact(t, force)
}

// compact copies t's live records into a new buffer and frees the old one. While
// copying, each slot's hash field holds the record's new offset; the hashes are
// recomputed afterwards, or restored when the budget runs out halfway, in which
// case the old buffer stays and compaction waits until it has doubled.
func (x *Index) compact(t *idxTable, force bool) {
	nb := memory.NewRecordBuffer(x.res)
	stop := len(t.slots)
	for i := range t.slots {
		s := &t.slots[i]
		if s.off == 0 {
			continue
		}
		k, v, sc := t.buf.Get(s.off-1, x.scratch)
		x.scratch = sc
		off, err := x.appendRecord(nb, k, v, force)
		if err != nil {
			stop = i
			break
		}
		s.hash = off
	}
	x.accountScratch()
	x.notePeak()
	if stop < len(t.slots) {
		for i := range t.slots[:stop] {
			if s := &t.slots[i]; s.off != 0 {
				k, sc := t.buf.Key(s.off-1, x.scratch)
				x.scratch = sc
				s.hash = memory.Hash(k, x.opts.Seed)
			}
		}
		nb.Free()
		t.retryCompact = 2 * t.buf.Bytes()
		return
	}
	for i := range t.slots {
		if s := &t.slots[i]; s.off != 0 {
			s.off = s.hash + 1
			k, sc := nb.Key(s.off-1, x.scratch)
			x.scratch = sc
			s.hash = memory.Hash(k, x.opts.Seed)
		}
	}
	t.buf.Free()
	t.buf = nb
	t.retryCompact = 0
	x.stats.Compactions++
	x.accountScratch()
}

package sortjoin

import (
	"bytes"
	"fmt"
	"math/bits"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// aggSlot is one entry of a partition's open-addressing table: the key's full hash (so
// most mismatches cost no key comparison, and growing needs no rehash of keys) and
// the record's RecordBuffer offset plus one (zero marks an empty slot).
type aggSlot struct {
	hash uint64
	off  uint64
}

const (
	aggSlotSize = 16 // bytes of one slot, charged to the reservation
	aggMinSlots = 16 // slots of a partition's first table
)

// aggPart is one hash partition of a table: its records, its index and, once spilled,
// its spill file.
type aggPart struct {
	buf   *memory.RecordBuffer
	alt   *memory.RecordBuffer // the empty buffer compaction copies into
	slots []aggSlot
	mask  uint64
	limit int   // count at which the index grows (3/4 of len(slots))
	count int   // live groups
	live  int64 // bytes of the live records (memory.RecordSize); the rest of buf is garbage

	retryCompact int64 // buf.Bytes() below which a failed compaction is not retried

	spilled bool
	w       *spill.Writer // open while the level is being built
	// While every record of the spill file has the same key, hotKey holds it: a
	// partition of one key cannot be split by re-hashing and goes to the sort.
	hotKey  []byte
	keyed   bool // hotKey is set
	mixed   bool // the file holds two different keys
	hotHeld int64
}

// noteKey tracks whether the partition's spill file holds a single key.
func (p *aggPart) noteKey(a *HashAggregator, key []byte) {
	switch {
	case p.mixed:
	case !p.keyed:
		p.hotKey = append(p.hotKey[:0], key...)
		p.keyed = true
		if n := int64(cap(p.hotKey)); n > p.hotHeld {
			a.reserve(n - p.hotHeld)
			p.hotHeld = n
		}
	case !bytes.Equal(p.hotKey, key):
		p.mixed = true
	}
}

// clearSpill forgets the partition's spill state and returns the memory of hotKey.
func (p *aggPart) clearSpill(a *HashAggregator) {
	p.spilled, p.keyed, p.mixed = false, false, false
	if p.hotHeld > 0 {
		a.res.Shrink(p.hotHeld)
	}
	p.hotKey, p.hotHeld = nil, 0
}

// bytes returns the memory the partition holds.
func (p *aggPart) bytes(segSize int) int64 {
	return int64(p.buf.Segments())*int64(segSize) + int64(len(p.slots))*aggSlotSize
}

// find looks key up. It returns the slot holding it and its accumulator, or the
// empty slot where it belongs (only meaningful when the table has slots).
func (p *aggPart) find(a *HashAggregator, key []byte, h uint64) (i uint64, acc []byte, found bool) {
	if len(p.slots) == 0 {
		return 0, nil, false
	}
	i = h & p.mask
	for {
		s := &p.slots[i]
		if s.off == 0 {
			return i, nil, false
		}
		if s.hash == h {
			k, v, sc := p.buf.Get(s.off-1, a.scratch)
			if cap(sc) != cap(a.scratch) {
				a.scratch = sc
				a.accountScratch()
			}
			if bytes.Equal(k, key) {
				return i, v, true
			}
		}
		i = (i + 1) & p.mask
	}
}

// remove empties slot i, shifting later entries of its probe run back (linear
// probing needs no tombstones).
func (p *aggPart) remove(i uint64) {
	for {
		p.slots[i] = aggSlot{}
		j := i
		for {
			j = (j + 1) & p.mask
			s := p.slots[j]
			if s.off == 0 {
				return
			}
			home := s.hash & p.mask
			// s may move to i unless its home lies cyclically in (i, j].
			if (i < j && (home <= i || home > j)) || (i > j && home <= i && home > j) {
				p.slots[i] = s
				i = j
				break
			}
		}
	}
}

// aggTable is one level of the aggregation: the hash partitions of the records read at
// that level, with the seed their hashes use.
type aggTable struct {
	a     *HashAggregator
	parts []aggPart
	seed  uint64
	shift uint // partition = hash >> shift
	level int

	// emission cursor (next)
	ep, es int
}

func (t *aggTable) init(a *HashAggregator, partitions int, seed uint64, level int) {
	t.a = a
	t.parts = make([]aggPart, partitions)
	for i := range t.parts {
		t.parts[i].buf = memory.NewRecordBuffer(a.res)
	}
	t.shift = uint(64 - bits.TrailingZeros(uint(partitions)))
	t.seed, t.level = seed, level
}

// reset prepares an emptied table for another level.
func (t *aggTable) reset(seed uint64, level, partitions int) {
	t.free()
	if partitions != len(t.parts) {
		t.init(t.a, partitions, seed, level)
	}
	for i := range t.parts {
		t.parts[i].retryCompact = 0
	}
	t.seed, t.level = seed, level
	t.ep, t.es = 0, 0
}

// aggLevelSeed derives the hash seed of a recursion level from the operator's seed.
func aggLevelSeed(seed uint64, level int) uint64 {
	if level == 0 {
		return seed
	}
	return memory.HashUint64(uint64(level), seed)
}

// add aggregates one record whose key hashes to h under t.seed. It is the hot path:
// lookup, combine and overwrite in place allocate nothing.
func (t *aggTable) add(key, val []byte, h uint64) error {
	a := t.a
	force := false
	for {
		pi := int(h >> t.shift)
		p := &t.parts[pi]
		if p.spilled {
			p.noteKey(a, key)
			if err := p.w.AppendKV(key, val); err != nil {
				return fmt.Errorf("sortjoin: hashagg %s: write spilled partition %d (level %d) to %s: %w", a.opts.Name, pi, t.level, p.w.Name(), err)
			}
			return nil
		}
		i, acc, found := p.find(a, key, h)
		if found {
			retry, err := t.update(p, i, key, acc, val)
			if err != nil || !retry {
				return err
			}
			// The new accumulator is out of the table (a.pending): make room, then
			// insert it as a new group.
			val = a.pending
		} else if p.count >= p.limit {
			err := t.growIndex(p, force)
			if err == nil {
				continue
			}
			if !isBudgetErr(err) {
				return fmt.Errorf("sortjoin: hashagg %s: grow index: %w", a.opts.Name, err)
			}
		} else {
			var off uint64
			var err error
			if force {
				off = p.buf.AppendForce(key, val)
			} else {
				off, err = p.buf.Append(key, val)
			}
			if err == nil {
				p.slots[i] = aggSlot{hash: h, off: off + 1}
				p.count++
				p.live += int64(memory.RecordSize(len(key), len(val)))
				return nil
			}
			if !isBudgetErr(err) {
				return fmt.Errorf("sortjoin: hashagg %s: append record: %w", a.opts.Name, err)
			}
		}
		var err error
		if force, err = t.makeRoom(pi); err != nil {
			return err
		}
	}
}

// update combines val into the accumulator acc of slot i. It overwrites acc in
// place when it can, else appends the new version and repoints the slot. When that
// needs memory it cannot get, it moves the new accumulator to a.pending, removes the
// group from the table and returns retry: the caller makes room and inserts it anew.
func (t *aggTable) update(p *aggPart, i uint64, key, acc, val []byte) (retry bool, err error) {
	a := t.a
	out, err := a.combineInto(acc, val)
	if err != nil {
		return false, err
	}
	oldSize := memory.RecordSize(len(key), len(acc))
	if len(out) == len(acc) && oldSize <= a.segSize {
		copy(acc, out) // acc aliases the buffer (the record lies in one segment)
		return false, nil
	}
	newSize := memory.RecordSize(len(key), len(out))
	off, err := p.buf.Append(key, out)
	if err == nil {
		p.slots[i].off = off + 1
		p.live += int64(newSize - oldSize)
		t.maybeCompact(p)
		return false, nil
	}
	if !isBudgetErr(err) {
		return false, fmt.Errorf("sortjoin: hashagg %s: append accumulator: %w", a.opts.Name, err)
	}
	a.pending = append(a.pending[:0], out...)
	a.accountScratch()
	p.remove(i)
	p.count--
	p.live -= int64(oldSize)
	return true, nil
}

// growIndex doubles p's index (or creates it), charging the new slots before it
// frees the old ones.
func (t *aggTable) growIndex(p *aggPart, force bool) error {
	a := t.a
	n := 2 * len(p.slots)
	if n == 0 {
		n = aggMinSlots
	}
	if force {
		a.res.Force(int64(n) * aggSlotSize)
	} else if err := a.res.Grow(int64(n) * aggSlotSize); err != nil {
		return err
	}
	old := p.slots
	p.slots = make([]aggSlot, n)
	p.mask = uint64(n - 1)
	p.limit = n / 4 * 3
	for _, s := range old {
		if s.off == 0 {
			continue
		}
		j := s.hash & p.mask
		for p.slots[j].off != 0 {
			j = (j + 1) & p.mask
		}
		p.slots[j] = s
	}
	a.res.Shrink(int64(len(old)) * aggSlotSize)
	return nil
}

// freeIndex drops p's index and returns its memory.
func (t *aggTable) freeIndex(p *aggPart) {
	if len(p.slots) > 0 {
		t.a.res.Shrink(int64(len(p.slots)) * aggSlotSize)
	}
	p.slots, p.mask, p.limit = nil, 0, 0
}

// makeRoom frees memory after an allocation for partition cur failed. Partial mode
// flushes the table; when the table is already empty it returns force: the caller
// takes the one record it needs past the budget. Final mode spills the largest
// in-memory partition, or cur itself when no other holds anything.
func (t *aggTable) makeRoom(cur int) (force bool, err error) {
	a := t.a
	if a.opts.Mode == Partial {
		empty := true
		for i := range t.parts {
			if t.parts[i].count > 0 || t.parts[i].buf.Bytes() > 0 {
				empty = false
			}
		}
		if empty {
			return true, nil
		}
		return false, t.flush()
	}
	best, most := cur, int64(0)
	for i := range t.parts {
		p := &t.parts[i]
		if b := p.bytes(a.segSize); !p.spilled && b > most {
			best, most = i, b
		}
	}
	return false, t.spillPart(best)
}

// spillPart writes partition pi's groups to a new spill file, frees its memory and
// routes its later records to the file.
func (t *aggTable) spillPart(pi int) error {
	a := t.a
	p := &t.parts[pi]
	sp, err := a.spillSpace()
	if err != nil {
		return err
	}
	w, err := sp.Create()
	if err != nil {
		return fmt.Errorf("sortjoin: hashagg %s: create spill file for partition %d (level %d): %w", a.opts.Name, pi, t.level, err)
	}
	for i := range p.slots {
		s := &p.slots[i]
		if s.off == 0 {
			continue
		}
		k, v, sc := p.buf.Get(s.off-1, a.scratch)
		a.scratch = sc
		p.noteKey(a, k)
		if err := w.AppendKV(k, v); err != nil {
			w.Abort()
			return fmt.Errorf("sortjoin: hashagg %s: spill partition %d (level %d) to %s: %w", a.opts.Name, pi, t.level, w.Name(), err)
		}
	}
	a.accountScratch()
	p.buf.Free()
	p.alt = nil
	t.freeIndex(p)
	p.count, p.live, p.retryCompact = 0, 0, 0
	a.reserve(a.writerMem)
	p.w, p.spilled = w, true
	a.stats.SpilledPartitions++
	if a.state == aggBuilding {
		a.state = aggSpilling
	}
	return nil
}

// finishSpills closes the spill files of the level just built and returns them as
// pending partitions of the next level; empty files are removed at once. parent is
// the file the level was read from (zero at level 0). A file of a single key, or
// one holding as many records as its parent (re-hashing did not shrink it), cannot
// be helped by another level and goes to the sort fallback.
func (t *aggTable) finishSpills(parent spill.Handle) ([]aggSpilled, error) {
	a := t.a
	var out []aggSpilled
	for i := range t.parts {
		p := &t.parts[i]
		if p.w == nil {
			continue
		}
		name := p.w.Name()
		h, err := p.w.Finish()
		p.w = nil
		a.res.Shrink(a.writerMem)
		if err != nil {
			return out, fmt.Errorf("sortjoin: hashagg %s: finish spill file %s of partition %d (level %d): %w", a.opts.Name, name, i, t.level, err)
		}
		a.stats.BytesSpilled += h.Bytes
		if h.Records == 0 {
			if err := a.space.Remove(h); err != nil {
				return out, fmt.Errorf("sortjoin: hashagg %s: remove empty spill file %s: %w", a.opts.Name, h.Name, err)
			}
			continue
		}
		hot := !p.mixed || parent.Records > 0 && h.Records >= parent.Records
		out = append(out, aggSpilled{h: h, level: t.level + 1, sort: hot})
	}
	return out, nil
}

// flush hands every group to AggOptions.Flush and empties the table, keeping its
// segments and index for reuse (Partial mode).
func (t *aggTable) flush() error {
	a := t.a
	for pi := range t.parts {
		p := &t.parts[pi]
		if p.count > 0 {
			for i := range p.slots {
				s := &p.slots[i]
				if s.off == 0 {
					continue
				}
				k, v, sc := p.buf.Get(s.off-1, a.scratch)
				a.scratch = sc
				if err := a.opts.Flush(k, v); err != nil {
					return fmt.Errorf("sortjoin: hashagg %s: flush: %w", a.opts.Name, err)
				}
				*s = aggSlot{}
			}
			a.stats.Groups += int64(p.count)
			a.stats.Flushes++
		}
		p.buf.Reset()
		p.count, p.live, p.retryCompact = 0, 0, 0
	}
	a.accountScratch()
	return nil
}

// maybeCompact compacts p when its dead accumulator versions outweigh its live
// records by at least two segments.
func (t *aggTable) maybeCompact(p *aggPart) {
	total := p.buf.Bytes()
	garbage := total - p.live
	if garbage < p.live || garbage < 2*int64(t.a.segSize) || total < p.retryCompact {
		return
	}
	t.compact(p)
}

// compact copies p's live records into fresh segments (through the budget) and
// frees the old ones. While copying, each slot's hash field holds the record's new
// offset; the hashes are recomputed afterwards, or restored when the budget runs out
// halfway, in which case the old buffer stays and compaction waits until the
// partition has doubled.
func (t *aggTable) compact(p *aggPart) {
	a := t.a
	if p.alt == nil {
		p.alt = memory.NewRecordBuffer(a.res)
	}
	nb := p.alt
	stop := len(p.slots)
	for i := range p.slots {
		s := &p.slots[i]
		if s.off == 0 {
			continue
		}
		k, v, sc := p.buf.Get(s.off-1, a.scratch)
		a.scratch = sc
		off, err := nb.Append(k, v)
		if err != nil {
			stop = i
			break
		}
		s.hash = off
	}
	if stop < len(p.slots) {
		for i := range p.slots[:stop] {
			s := &p.slots[i]
			if s.off != 0 {
				k, sc := p.buf.Key(s.off-1, a.scratch)
				a.scratch = sc
				s.hash = memory.Hash(k, t.seed)
			}
		}
		nb.Free()
		p.retryCompact = 2 * p.buf.Bytes()
		return
	}
	for i := range p.slots {
		s := &p.slots[i]
		if s.off != 0 {
			s.off = s.hash + 1
			k, sc := nb.Key(s.off-1, a.scratch)
			a.scratch = sc
			s.hash = memory.Hash(k, t.seed)
		}
	}
	p.buf.Free()
	p.buf, p.alt = nb, p.buf
	p.retryCompact = 0
	a.stats.Compactions++
	a.accountScratch()
}

// next returns the next in-memory group of the table, freeing each partition once it
// is exhausted (the slices returned before stay valid until this call).
func (t *aggTable) next() (key, acc []byte, ok bool) {
	a := t.a
	for t.ep < len(t.parts) {
		p := &t.parts[t.ep]
		for t.es < len(p.slots) {
			s := p.slots[t.es]
			t.es++
			if s.off != 0 {
				k, v, sc := p.buf.Get(s.off-1, a.scratch)
				if cap(sc) != cap(a.scratch) {
					a.scratch = sc
					a.accountScratch()
				}
				return k, v, true
			}
		}
		p.buf.Free()
		p.alt = nil
		t.freeIndex(p)
		p.count, p.live = 0, 0
		t.ep++
		t.es = 0
	}
	return nil, nil, false
}

// free aborts open spill writers and returns all of the table's memory. It is
// idempotent.
func (t *aggTable) free() {
	if t.a == nil {
		return
	}
	for i := range t.parts {
		p := &t.parts[i]
		if p.w != nil {
			p.w.Abort()
			p.w = nil
			t.a.res.Shrink(t.a.writerMem)
		}
		p.buf.Free()
		if p.alt != nil {
			p.alt.Free()
			p.alt = nil
		}
		t.freeIndex(p)
		p.clearSpill(t.a)
		p.count, p.live = 0, 0
	}
}

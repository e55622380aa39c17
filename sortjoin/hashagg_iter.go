package sortjoin

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// aggSpilled is a spilled partition waiting to be aggregated: its file, the level
// that will read it, and whether it must be sorted rather than re-hashed.
type aggSpilled struct {
	h     spill.Handle
	level int
	sort  bool
}

// aggIter is the iterator a Final HashAggregator's Finish returns. It emits the
// in-memory groups of the table, then takes the spilled partitions one at a time,
// depth first (a partition's own overflow is taken before its siblings), so that at
// any moment one table, or one sorter, holds memory.
type aggIter struct {
	a     *HashAggregator
	ctx   context.Context
	tab   *aggTable    // table being emitted, or nil
	queue []aggSpilled // spilled partitions still to aggregate (a stack)

	reader  *spill.Reader // the spilled partition being read, or nil
	sorter  *Sorter       // the sort fallback being filled, or nil
	sorted  Iterator      // the sort fallback's output, or nil
	comb    combiner      // combines runs of equal keys of sorted
	combMem int64         // bytes of comb's buffers charged to the reservation

	n    int // calls since the last context check
	err  error
	done bool
}

// Next returns the next (key, accumulator); both are valid until the next call.
func (it *aggIter) Next() (key, acc []byte, ok bool) {
	for it.err == nil && !it.done {
		if it.n++; it.n >= aggCtxEvery {
			it.n = 0
			if err := it.ctx.Err(); err != nil {
				it.setErr(fmt.Errorf("sortjoin: hashagg %s: %w", it.a.opts.Name, err))
				break
			}
		}
		if it.tab != nil {
			if k, v, ok := it.tab.next(); ok {
				it.a.stats.Groups++
				return k, v, true
			}
			it.tab = nil
		}
		if it.sorted != nil {
			if k, v, ok := it.comb.next(); ok {
				if m := it.comb.footprint(); m > it.combMem {
					it.a.reserve(m - it.combMem)
					it.combMem = m
				}
				it.a.stats.Groups++
				return k, v, true
			}
			if it.comb.err != nil {
				it.setErr(fmt.Errorf("sortjoin: hashagg %s: sorted partition: %w", it.a.opts.Name, it.comb.err))
				break
			}
			err := it.sorted.Close()
			it.sorted = nil
			if err != nil {
				it.setErr(fmt.Errorf("sortjoin: hashagg %s: close sorted partition: %w", it.a.opts.Name, err))
				break
			}
			continue
		}
		if len(it.queue) == 0 {
			it.done = true
			if err := it.a.release(); err != nil {
				it.err = err
			}
			it.a.state = aggDone
			break
		}
		p := it.queue[len(it.queue)-1]
		it.queue = it.queue[:len(it.queue)-1]
		var err error
		if p.sort || p.level > it.a.opts.MaxRecursion || !it.canHash() {
			err = it.sortPartition(p)
		} else {
			err = it.rehash(p)
		}
		if err != nil {
			it.setErr(err)
		}
	}
	return nil, nil, false
}

// Err returns the error that ended the iteration, if any.
func (it *aggIter) Err() error { return it.err }

// Close releases the aggregator's memory and spill files. It is idempotent.
func (it *aggIter) Close() error {
	it.done = true
	return it.a.release()
}

// setErr ends the iteration with err and releases everything at once.
func (it *aggIter) setErr(err error) {
	it.err = err
	_ = it.a.fail(err)
}

// openPartition opens a spilled partition's file and charges its reader.
func (it *aggIter) openPartition(p aggSpilled) error {
	a := it.a
	r, err := a.space.Open(p.h)
	if err != nil {
		return fmt.Errorf("sortjoin: hashagg %s: open spilled partition %s: %w", a.opts.Name, p.h.Name, err)
	}
	a.reserve(a.readerMem)
	it.reader = r
	return nil
}

// closePartition closes the reader and removes the file it read.
func (it *aggIter) closePartition(p aggSpilled) error {
	a := it.a
	err := it.reader.Close()
	it.reader = nil
	a.res.Shrink(a.readerMem)
	if err != nil {
		return fmt.Errorf("sortjoin: hashagg %s: close spilled partition %s: %w", a.opts.Name, p.h.Name, err)
	}
	if err := a.space.Remove(p.h); err != nil {
		return fmt.Errorf("sortjoin: hashagg %s: remove spilled partition %s: %w", a.opts.Name, p.h.Name, err)
	}
	return nil
}

// readPartition passes every record of the open partition to add, checking the
// context once per batch.
func (it *aggIter) readPartition(p aggSpilled, add func(key, val []byte) error) error {
	a := it.a
	for n := 0; ; n++ {
		if n%aggCtxEvery == 0 {
			if err := it.ctx.Err(); err != nil {
				return fmt.Errorf("sortjoin: hashagg %s: %w", a.opts.Name, err)
			}
		}
		k, v, err := it.reader.NextKV()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("sortjoin: hashagg %s: read spilled partition %s: %w", a.opts.Name, p.h.Name, err)
		}
		if err := add(k, v); err != nil {
			return err
		}
	}
}

// rehash aggregates a spilled partition again in the (emptied) table with the seed
// of its level; what does not fit spills one level deeper. The table's in-memory
// groups are emitted next.
func (it *aggIter) rehash(p aggSpilled) error {
	a := it.a
	a.stats.RehashedPartitions++
	if p.level > a.stats.Levels {
		a.stats.Levels = p.level
	}
	t := &a.tab
	t.reset(aggLevelSeed(a.opts.Seed, p.level), p.level, a.fanOut())
	if err := it.openPartition(p); err != nil {
		return err
	}
	err := it.readPartition(p, func(k, v []byte) error {
		return t.add(k, v, memory.Hash(k, t.seed))
	})
	if err != nil {
		return err
	}
	if err := it.closePartition(p); err != nil {
		return err
	}
	children, err := t.finishSpills(p.h)
	if err != nil {
		return err
	}
	it.queue = append(it.queue, children...)
	it.tab = t
	return nil
}

// sortPartition is the aggregator's last resort for a spilled partition (past
// MaxRecursion, a single key, no shrinking at the last level, or too little memory
// for a hash table): it sorts the partition with a Sorter and combines runs of equal
// keys in one streaming pass.
// That never fails for size: the sorter spills and merges as it must, and the pass
// holds one key and its accumulator (charged to the reservation, past the budget if
// need be).
func (it *aggIter) sortPartition(p aggSpilled) error {
	a := it.a
	a.stats.SortedPartitions++
	if p.level > a.stats.Levels {
		a.stats.Levels = p.level
	}
	if err := it.openPartition(p); err != nil {
		return err
	}
	it.sorter = NewSorter(a.env, SortOptions{Name: fmt.Sprintf("%s/sort%d", a.opts.Name, p.level)})
	err := it.readPartition(p, func(k, v []byte) error {
		if err := it.sorter.Add(k, v); err != nil {
			return fmt.Errorf("sortjoin: hashagg %s: sort partition %s: %w", a.opts.Name, p.h.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := it.closePartition(p); err != nil {
		return err
	}
	s := it.sorter
	it.sorter = nil
	sorted, err := s.Finish(it.ctx)
	if err != nil {
		return fmt.Errorf("sortjoin: hashagg %s: sort partition %s: %w", a.opts.Name, p.h.Name, err)
	}
	it.sorted = sorted
	it.comb.reset(it.ctx, sorted, a.combine)
	return nil
}

// canHash reports whether memory suffices to re-aggregate a spilled partition in a
// hash table: a reader, two spill writers and two segments. With less, every record
// would only be copied into another file, so the partition is sorted instead.
func (it *aggIter) canHash() bool {
	a := it.a
	avail := max(a.env.Memory.Available(), a.env.Memory.Floor()-a.res.Bytes())
	return avail >= a.readerMem+2*a.writerMem+2*int64(a.segSize)
}

// release closes what the iterator holds besides the table: the open reader and the
// sort fallback. The aggregator releases the rest.
func (it *aggIter) release() error {
	var errs []error
	if it.reader != nil {
		errs = append(errs, it.reader.Close())
		it.reader = nil
	}
	if it.sorter != nil {
		errs = append(errs, it.sorter.Close())
		it.sorter = nil
	}
	if it.sorted != nil {
		errs = append(errs, it.sorted.Close())
		it.sorted = nil
	}
	it.tab = nil
	it.queue = nil
	it.done = true
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sortjoin: hashagg %s: release: %w", it.a.opts.Name, err)
	}
	return nil
}

package dataset

import (
	"iter"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/weirdata/weir/memory"
)

// denseGroupSlack is how many entries the counting sort's counts may take
// whatever the number of records (see denseGrouper.group).
const denseGroupSlack = 1 << 16

// denseGroupChunk is the least a denseGrouper grows its reservation by.
const denseGroupChunk = 1 << 20

// denseGroupings and denseFallbacks count the subtasks whose denseGrouper
// grouped its records, and those that handed them to a sorter (for tests).
var denseGroupings, denseFallbacks atomic.Int64

// denseGrouper is ReduceGroup's local strategy for flat records grouped by
// one 8-byte key (an int64 id, say), as the adjacency lists of a graph are
// built: it holds the subtask's records in a typed array, and when their keys
// are dense (spanning at most 4 entries a record, or denseGroupSlack) it
// groups them by a counting sort on the key, two passes over the records and
// none of the sorter's encoding, index sorting, merging and decoding. The
// hand-written CSR build of the benchmarks does the same.
//
// It reserves what it holds: the records, then the sorted copy and the
// counts. When the budget refuses, or the keys are too sparse for the
// counts, it hands the records held and the rest of its input to a sorter
// (fallback), which spills as the budget requires: the result is the same.
// Groups come in key order; a group's records in the order they arrived when
// counted, in no particular order when sorted.
type denseGrouper[T any] struct {
	tc    *task
	word  func(*T) uint64
	res   *memory.Reservation
	vals  []T
	lo    uint64 // the least and greatest key word held
	hi    uint64
	limit int64 // the task's memory share (0: none)

	sorted []T     // the records in key order, after group
	starts []int32 // sorted[starts[i]:starts[i+1]] is the group of key lo+i

	fallback *sortFeeder[T] // its sorter is set once the records went to one
	where    string
}

func newDenseGrouper[T any](tc *task, word func(*T) uint64, feeder *sortFeeder[T], where string) *denseGrouper[T] {
	d := &denseGrouper[T]{tc: tc, word: word, lo: math.MaxUint64, limit: tc.memShare, where: where,
		res: tc.Env.Memory.NewReservation(where + " dense grouping")}
	d.fallback = feeder // its sorter made when needed
	tc.onExit(func() { _ = d.res.Release() })
	return d
}

func (d *denseGrouper[T]) recordBytes() int64 {
	var zero T
	return int64(unsafe.Sizeof(zero))
}

// reserve makes the reservation hold at least bytes, or reports false.
func (d *denseGrouper[T]) reserve(bytes int64) bool {
	if bytes <= d.res.Bytes() {
		return true
	}
	if d.limit > 0 && bytes > d.limit {
		return false
	}
	return d.res.Grow(max(denseGroupChunk, bytes-d.res.Bytes())) == nil
}

func (d *denseGrouper[T]) sorting() bool { return d.fallback.s != nil }

func (d *denseGrouper[T]) collect(b []T) error {
	if d.sorting() {
		return d.fallback.collect(b)
	}
	if need := len(d.vals) + len(b); need > cap(d.vals) {
		capacity := max(need, 2*cap(d.vals)) // what growDouble makes
		if capacity > math.MaxInt32 || !d.reserve(int64(capacity)*d.recordBytes()) {
			if err := d.sort(); err != nil {
				return err
			}
			return d.fallback.collect(b)
		}
		d.vals = growDouble(d.vals, len(b))
	}
	for i := range b {
		u := d.word(&b[i])
		d.lo, d.hi = min(d.lo, u), max(d.hi, u)
	}
	d.vals = append(d.vals, b...)
	return nil
}

func (d *denseGrouper[T]) close() error { return nil }

// sort hands the records held to a sorter, which takes the rest of the input.
func (d *denseGrouper[T]) sort() error {
	held := d.vals
	d.vals = nil
	d.fallback.s = d.tc.inputSorter(d.where)
	d.res.Shrink(d.res.Bytes()) // the sorter reserves its own; held is garbage after this
	return d.fallback.collect(held)
}

// group sorts the records held by key with a counting sort, or hands them to
// a sorter when the keys are too sparse or the budget refuses the memory; it
// reports whether it grouped them.
func (d *denseGrouper[T]) group() (bool, error) {
	grouped, err := d.counting()
	if grouped {
		denseGroupings.Add(1)
	} else {
		denseFallbacks.Add(1)
	}
	return grouped, err
}

func (d *denseGrouper[T]) counting() (bool, error) {
	if d.sorting() {
		return false, nil
	}
	n := len(d.vals)
	if n == 0 {
		return true, nil
	}
	span := d.hi - d.lo // entries-1, as hi-lo+1 may overflow
	if span >= uint64(4*n+denseGroupSlack) ||
		!d.reserve(int64(n)*d.recordBytes()+int64(cap(d.vals))*d.recordBytes()+4*int64(span+2)) {
		return false, d.sort()
	}
	starts := make([]int32, span+2)
	for i := range d.vals {
		starts[d.word(&d.vals[i])-d.lo+1]++
	}
	for i := 1; i < len(starts); i++ {
		starts[i] += starts[i-1]
	}
	// place each record at its key's next free position: pos counts up from
	// the group's start, which starts[k] then holds again
	pos := starts[:len(starts)-1]
	sorted := memory.MakeHuge[T](n) // written at random
	for i := range d.vals {
		k := d.word(&d.vals[i]) - d.lo
		sorted[pos[k]] = d.vals[i]
		pos[k]++
	}
	// pos[k] is now the end of group k, the start of group k+1
	copy(starts[1:], pos)
	starts[0] = 0
	d.vals, d.sorted, d.starts = nil, sorted, starts
	return true, nil
}

// reduceDense calls fn with every group of d, in key order, through one
// sequence for all of them, until the task is cancelled or emitting fails.
func reduceDense[T, K, O any](tc *task, d *denseGrouper[T], sel func(T) K, fn func(K, iter.Seq[T], func(O)), e *bufferedEmitter[O]) error {
	var group []T
	seq := func(yield func(T) bool) {
		for _, v := range group {
			if !yield(v) {
				return
			}
		}
	}
	for k := 0; k+1 < len(d.starts); k++ {
		if group = d.sorted[d.starts[k]:d.starts[k+1]]; len(group) == 0 {
			continue
		}
		if err := tc.Context().Err(); err != nil {
			return err
		}
		if fn(sel(group[0]), seq, e.emit); e.err != nil {
			return e.err
		}
	}
	return nil
}

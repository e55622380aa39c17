package typed

import (
	"context"
	"math"
	"unsafe"

	"github.com/weirdata/weir/memory"
)

// denseGroupChunk is the least a DenseGrouper grows its reservation by.
const denseGroupChunk = 1 << 20

// DenseGrouper groups flat records by one 8-byte key (an int64 id, say), as
// the adjacency lists of a graph are built. It holds its input's records in a
// typed array. When their keys are dense (Dense, with entries of 4 bytes) it
// groups them by a counting sort on the key: two passes over the records and
// none of the sorter's encoding, index sorting, merging and decoding.
//
// It reserves what it holds: the records, then the sorted copy and the
// counts. When the budget refuses, or the keys are too sparse for the
// counts, it falls back: it asks for a sorter's sink once and hands it the
// records held and the rest of its input. The sorter spills as the budget
// requires; the result is the same. Groups come in key order; a group's
// records in the order they arrived.
//
//	holding ──Group──▶ counted (Each)
//	   │
//	   └──(budget refuses, or keys too sparse)──▶ sorting (the fallback sink)
type DenseGrouper[T any] struct {
	word     func(*T) uint64
	res      *memory.Reservation
	limit    int64 // 0: no limit but the budget's
	toSorter func() func([]T) error
	sink     func([]T) error // the sorter's, once the records went to one
	vals     []T
	lo, hi   uint64 // the least and greatest key word held

	sorted []T     // the records in key order, after Group
	starts []int32 // sorted[starts[i]:starts[i+1]] is the group of key lo+i
}

// NewDenseGrouper returns an empty grouper of records whose key words word
// returns. It reserves on res up to limit; the caller releases res.
// toSorter makes the fallback's sorter and returns the sink that feeds it.
func NewDenseGrouper[T any](word func(*T) uint64, res *memory.Reservation, limit int64, toSorter func() func([]T) error) *DenseGrouper[T] {
	return &DenseGrouper[T]{word: word, res: res, limit: limit, toSorter: toSorter, lo: math.MaxUint64}
}

func recordBytes[T any]() int64 {
	var zero T
	return int64(unsafe.Sizeof(zero))
}

// reserve makes the reservation hold at least bytes, or reports false.
func (d *DenseGrouper[T]) reserve(bytes int64) bool {
	if bytes <= d.res.Bytes() {
		return true
	}
	if d.limit > 0 && bytes > d.limit {
		return false
	}
	return d.res.Grow(max(denseGroupChunk, bytes-d.res.Bytes())) == nil
}

// Sorting reports whether the records went to the fallback's sorter.
func (d *DenseGrouper[T]) Sorting() bool { return d.sink != nil }

// Add takes a batch.
func (d *DenseGrouper[T]) Add(b []T) error {
	if d.Sorting() {
		return d.sink(b)
	}
	if need := len(d.vals) + len(b); need > cap(d.vals) {
		capacity := max(need, 2*cap(d.vals)) // what growDouble makes
		if capacity > math.MaxInt32 || !d.reserve(int64(capacity)*recordBytes[T]()) {
			if err := d.fallBack(); err != nil {
				return err
			}
			return d.sink(b)
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

// fallBack hands the records held to a sorter, which takes the rest of the
// input.
func (d *DenseGrouper[T]) fallBack() error {
	held := d.vals
	d.vals = nil
	d.sink = d.toSorter()
	d.res.Shrink(d.res.Bytes()) // the sorter reserves its own; held is garbage after this
	return d.sink(held)
}

// Group sorts the records held by key with a counting sort, or hands them to
// the sorter when the keys are too sparse or the budget refuses the memory;
// it reports whether it grouped them.
func (d *DenseGrouper[T]) Group() (bool, error) {
	if d.Sorting() {
		return false, nil
	}
	n := len(d.vals)
	if n == 0 {
		return true, nil
	}
	span := d.hi - d.lo // entries-1, as hi-lo+1 may overflow
	if !Dense(span, n, DenseFloor(d.limit, 4)) ||
		!d.reserve(int64(n)*recordBytes[T]()+int64(cap(d.vals))*recordBytes[T]()+4*int64(span+2)) {
		return false, d.fallBack()
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

// Each calls f with every group, in key order, after Group grouped them,
// until ctx is cancelled or f fails. A group is valid only during the call.
func (d *DenseGrouper[T]) Each(ctx context.Context, f func(group []T) error) error {
	for k := 0; k+1 < len(d.starts); k++ {
		group := d.sorted[d.starts[k]:d.starts[k+1]]
		if len(group) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := f(group); err != nil {
			return err
		}
	}
	return nil
}

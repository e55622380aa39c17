package sortjoin

import (
	"bytes"
	"math/bits"
	"slices"

	"github.com/weirdata/weir/memory"
)

// entry is one record of a sortBuffer's index: the key's normalized-key prefix
// (memory.Prefix) and the record's offset in the RecordBuffer.
type entry struct {
	prefix uint64
	off    uint64
}

// entrySize is the memory one index entry is accounted with.
const entrySize = 16

// minIndexEntries is the capacity of a new index, and the index a buffer forces past
// the budget when it must (256 bytes).
const minIndexEntries = 16

// insertionMax is the size under which the radix sort hands a range to an
// insertion sort.
const insertionMax = 48

// sortBuffer is the in-memory half of the external sort: records serialized into a
// memory.RecordBuffer plus an index of (prefix, offset) entries that is sorted
// instead of the records themselves, as in Flink's NormalizedKeySorter.
//
//	RecordBuffer  | seg 0: [hdr k v][hdr k v]...  | seg 1: ...  |
//	index         [(prefix, off) (prefix, off) ...]  -> sorted by prefix, ties by key
//
// Memory: one Reservation holds the segments, the index (entrySize bytes per slot
// of capacity) and the spill writer's buffers (reserved once, on the first add), all
// within limit. The buffer is full when the next record needs a segment or index
// slot that the limit or the manager's budget refuses. An empty buffer takes what
// its first record needs past the budget (Force): one writer, minIndexEntries
// slots and the segments of that record.
//
// A sortBuffer is used by one goroutine at a time; the index survives reset, so the
// steady state of add allocates nothing.
type sortBuffer struct {
	res     *memory.Reservation
	buf     *memory.RecordBuffer
	idx     []entry
	limit   int64 // most bytes res may hold, unless forced
	floor   int64 // bytes res holds past the budget if need be (a run's least size)
	writer  int64 // spill writer memory to hold; reserved by the first add
	segSize int
	started bool // writer memory reserved
	sorted  bool
	// minKey and maxKey are the shortest and longest keys added since the
	// last reset: keys of one length up to 8 bytes are their prefixes, so
	// equal prefixes need no look at the keys.
	minKey, maxKey int

	// scratch slices for keys of records larger than a segment
	scratchA, scratchB []byte
	fetchScratch       [fetchBatch][]byte
	touched            byte // what fetch read ahead, kept so the reads are not optimized away
	// cmp is b.compare as a func value, made once so that sorting ties does not
	// allocate.
	cmp func(x, y entry) int
}

// newSortBuffer returns an empty buffer drawing from a new reservation of m named
// owner, holding at most limit bytes (memory.Unlimited for no limit) of which
// writer bytes are set aside for the spill writer. Up to floor bytes it takes
// past the limit and the budget (memory.Reservation.SetFloor), so that a run
// is never tiny.
func newSortBuffer(m *memory.Manager, owner string, limit, writer, floor int64) *sortBuffer {
	res := m.NewReservation(owner)
	res.SetFloor(floor)
	b := &sortBuffer{
		res:     res,
		buf:     memory.NewRecordBuffer(res),
		limit:   max(limit, floor),
		floor:   floor,
		writer:  writer,
		segSize: m.SegmentSize(),
	}
	b.cmp = b.compare
	return b
}

// len returns the number of records.
func (b *sortBuffer) len() int { return len(b.idx) }

// spareSegments returns the segments the reservation holds beyond those in use.
func (b *sortBuffer) spareSegments() int { return b.res.Segments() - b.buf.Segments() }

// room reports whether the reservation may grow by n bytes within limit.
func (b *sortBuffer) room(n int64) bool { return b.res.Bytes()+n <= b.limit }

// grow reserves n bytes within limit and the budget.
func (b *sortBuffer) grow(n int64) bool { return b.room(n) && b.res.Grow(n) == nil }

// add appends a record and reports true, or reports false and changes nothing when
// the buffer is full. An empty buffer is never full: it forces what the record needs.
func (b *sortBuffer) add(key, val []byte) bool {
	force := len(b.idx) == 0
	if !b.started {
		if !b.grow(b.writer) {
			if !force {
				return false
			}
			b.res.Force(b.writer)
		}
		b.started = true
	}
	if len(b.idx) == cap(b.idx) && !b.growIndex(force) {
		return false
	}
	size := memory.RecordSize(len(key), len(val))
	if !b.buf.Fits(size) {
		need := 1
		if size > b.segSize {
			need = (size + b.segSize - 1) / b.segSize
		}
		if extra := need - b.spareSegments(); extra > 0 && !b.room(int64(extra)*int64(b.segSize)) && !force {
			return false
		}
	}
	off, err := b.buf.Append(key, val)
	if err != nil {
		if !force {
			return false
		}
		off = b.buf.AppendForce(key, val)
	}
	if len(b.idx) == 0 {
		b.minKey, b.maxKey = len(key), len(key)
	}
	b.minKey, b.maxKey = min(b.minKey, len(key)), max(b.maxKey, len(key))
	b.idx = append(b.idx, entry{prefix: memory.Prefix(key), off: off})
	b.sorted = false
	return true
}

// growIndex enlarges the index: doubling if the memory allows, else by an eighth,
// else (when forced) by minIndexEntries slots past the budget.
func (b *sortBuffer) growIndex(force bool) bool {
	old := cap(b.idx)
	n := max(old*2, minIndexEntries)
	if !b.grow(int64(n-old) * entrySize) {
		n = old + max(old/8, minIndexEntries)
		if !b.grow(int64(n-old) * entrySize) {
			if !force {
				return false
			}
			n = old + minIndexEntries
			b.res.Force(int64(n-old) * entrySize)
		}
	}
	idx := make([]entry, len(b.idx), n)
	copy(idx, b.idx)
	b.idx = idx
	return true
}

// reset empties the buffer, keeping its segments, index and writer memory for the
// next run; if the reservation holds more than its limit (after a forced record) or
// the manager is past its budget and the buffer holds more than its floor, the
// spare segments go back.
func (b *sortBuffer) reset() {
	b.buf.Reset()
	b.idx = b.idx[:0]
	b.sorted = false
	m := b.res.Manager()
	if b.res.Bytes() > b.limit || (m.Used() > m.Budget() && b.res.Bytes() > b.floor) {
		b.buf.FreeSpare()
	}
}

// release gives up all the buffer's memory; its segments go back to the
// manager's pool for the next operator.
func (b *sortBuffer) release() {
	if b.res == nil {
		return
	}
	b.buf.Free()
	_ = b.res.Release()
	b.res, b.buf, b.idx = nil, nil, nil
	b.scratchA, b.scratchB = nil, nil
	b.fetchScratch = [fetchBatch][]byte{}
}

// get returns the i-th record in index order; the slices are valid until the next
// call of get (they may live in scratchA).
func (b *sortBuffer) get(i int) (key, val []byte) {
	key, val, b.scratchA = b.buf.Get(b.idx[i].off, b.scratchA)
	return key, val
}

// fetchBatch is how many records fetch reads at once.
const fetchBatch = 8

// fetch returns records i, i+1, ... (at most fetchBatch, fewer at the end) in
// index order in ks and vs and their number. In index order the records lie at
// random places in memory; looking up several before using any lets their cache
// misses overlap instead of stalling on each record in turn; and it touches
// the next batch's records first, so that their misses overlap with this
// batch's work (BenchmarkWriteRun measures it). The slices are
// valid until the next fetch (those of records larger than a segment live in
// fetchScratch).
func (b *sortBuffer) fetch(i int, ks, vs *[fetchBatch][]byte) int {
	n := min(fetchBatch, len(b.idx)-i)
	var t byte
	for _, e := range b.idx[i+n : min(i+n+fetchBatch, len(b.idx))] {
		t += b.buf.Touch(e.off)
	}
	b.touched += t
	for j := 0; j < n; j++ {
		ks[j], vs[j], b.fetchScratch[j] = b.buf.Get(b.idx[i+j].off, b.fetchScratch[j])
	}
	return n
}

// prefixKeys reports whether the keys are their prefixes: all of one length,
// at most 8 bytes (int64 keys, say), so that equal prefixes are equal keys.
func (b *sortBuffer) prefixKeys() bool { return b.minKey == b.maxKey && b.maxKey <= 8 }

// compare orders two entries by prefix, then by full key.
func (b *sortBuffer) compare(x, y entry) int {
	if x.prefix != y.prefix {
		if x.prefix < y.prefix {
			return -1
		}
		return 1
	}
	if b.prefixKeys() {
		return 0
	}
	var kx, ky []byte
	kx, b.scratchA = b.buf.Key(x.off, b.scratchA)
	ky, b.scratchB = b.buf.Key(y.off, b.scratchB)
	if len(kx) >= 8 && len(ky) >= 8 {
		return bytes.Compare(kx[8:], ky[8:]) // equal prefixes are the first 8 bytes
	}
	return bytes.Compare(kx, ky)
}

// sort orders the index by key. It allocates nothing.
func (b *sortBuffer) sort() {
	if !b.sorted {
		b.radix(b.idx, 0, 0)
		b.sorted = true
	}
}

// radix sorts es with an in-place most-significant-digit radix sort (American
// flag sort) on the bytes of the entries' prefixes, which agree on their first
// depth bytes. The prefixes are the 8 key bytes from offset keyOff on (zero
// padded). Small ranges go to an insertion sort; ranges whose prefixes are all
// equal go on with the next 8 key bytes (ties).
func (b *sortBuffer) radix(es []entry, depth, keyOff int) {
	for {
		if len(es) <= insertionMax {
			b.insertion(es)
			return
		}
		// Skip the leading bytes all prefixes share in one pass.
		var diff uint64
		first := es[0].prefix
		for i := range es {
			diff |= es[i].prefix ^ first
		}
		depth = max(depth, bits.LeadingZeros64(diff)/8)
		if depth >= 8 {
			if keyOff == 0 && b.prefixKeys() {
				return // all equal
			}
			b.ties(es, keyOff+8)
			return
		}
		shift := uint(56 - 8*depth)
		var count [256]int
		for i := range es {
			count[byte(es[i].prefix>>shift)]++
		}
		// next[d] is where the next entry of digit d goes; end[d] where bucket d ends.
		var next, end [256]int
		sum := 0
		for d := range count {
			next[d] = sum
			sum += count[d]
			end[d] = sum
		}
		for d := range 256 {
			for next[d] < end[d] {
				e := es[next[d]]
				for {
					t := byte(e.prefix >> shift)
					if int(t) == d {
						break
					}
					es[next[t]], e = e, es[next[t]]
					next[t]++
				}
				es[next[d]] = e
				next[d]++
			}
		}
		start := 0
		for d := range 256 {
			if c := count[d]; c > 1 {
				b.radix(es[start:start+c], depth+1, keyOff)
			}
			start += count[d]
		}
		return
	}
}

// ties sorts es, whose keys agree on their first keyOff bytes (zero padded), by
// radix-sorting on the next 8 key bytes: one visit to each record per 8 bytes of
// shared prefix instead of a full key comparison per comparison. Keys that all end
// within those bytes differ only in trailing zeros and go to a comparison sort.
// The entries' prefixes are restored afterwards.
func (b *sortBuffer) ties(es []entry, keyOff int) {
	orig := es[0].prefix // equal for all of es
	longer := false
	for i := range es {
		var k []byte
		k, b.scratchA = b.buf.Key(es[i].off, b.scratchA)
		longer = longer || len(k) > keyOff+8
		es[i].prefix = memory.Prefix(k[min(keyOff, len(k)):])
	}
	if longer {
		b.radix(es, 0, keyOff)
	} else {
		slices.SortFunc(es, b.cmp)
	}
	for i := range es {
		es[i].prefix = orig
	}
}

// insertion sorts a small range by prefix, then key.
func (b *sortBuffer) insertion(es []entry) {
	for i := 1; i < len(es); i++ {
		e := es[i]
		j := i
		for j > 0 && (es[j-1].prefix > e.prefix || es[j-1].prefix == e.prefix && b.compare(es[j-1], e) > 0) {
			es[j] = es[j-1]
			j--
		}
		es[j] = e
	}
}

package state

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"
)

// DefaultTimerCache is the number of timers a disk backend's timer service
// keeps in memory per queue (event time, processing time) when
// Options.TimerCache is zero.
const DefaultTimerCache = 4096

// A disk backend's timer service keeps its timers in the store, as Flink's
// RocksDB timer service does, under the service's store id:
//
//	queue  id | key group | which (0 event, 1 processing) | timestamp | sequence
//	       value: key hash code (4 bytes) | key | namespace
//	index  id | key group | 2 + which | key | namespace | timestamp
//	       value: sequence
//	meta   id | 0xc0
//	       value: uvarint next sequence
//
// Timestamps are 8 bytes big-endian with the sign bit flipped, sequences 8
// bytes big-endian, keys and namespaces in memory.Codec form. A timer's
// sequence number is its registration's, so a key group's queue is ordered
// by (timestamp, registration), and the index finds a timer's queue entry
// from the timer (deduplication, deletion). Both carry the key group after
// the id, so that a rescaling restore copies them with the states; the
// meta entry lies outside every key group's range (key groups are below
// 0x8000) and is read by the restore itself.
//
//	┌────────── queue (per which) ───────────┐
//	│ heap of key groups by their head timer │   in memory: O(key groups)
//	│  group g: cache = g's first timers     │   + the cache, at most
//	│           (complete: all of them)      │     capG timers per group
//	└────────────────┬───────────────────────┘
//	                 │ load when a cache empties: scan from lo
//	          store: id|g|which|ts|seq  (all of g's timers)
//
// Each key group's cache holds a prefix of its timers in queue order (every
// timer before the cache's last is in the cache), complete when it holds
// them all, and never empty while the group has timers. A registration
// before the cache's last goes into it (dropping its last when it is
// full); a firing pops the head of the group at the top of the heap and
// reloads the cache from the store once it is empty, scanning from lo,
// the group's least possible timer, so that the deletions of fired timers
// are not scanned again.
//
// Ties of timestamp fire as on the heap: in registration order, and the
// timers a restore brought (sequence below mark) before the later ones,
// by key group and then as registered.
const (
	storedQueue = 0 // + which
	storedIndex = 2 // + which
	storedMeta  = 0xc0
)

// sent is a timer cached in memory: the timer, its sequence number, its
// key's hash code and its estimated bytes.
type sent[K, N comparable] struct {
	t    Timer[K, N]
	seq  uint64
	code int32
	sz   int32
}

// sgroup is a key group's cache: buf[h:] are the group's first timers in
// queue order.
type sgroup[K, N comparable] struct {
	buf      []sent[K, N]
	h        int
	complete bool   // buf[h:] holds every timer of the group
	loTS     int64  // no timer of the group is before (loTS, loSeq)
	loSeq    uint64 //
	hi       int32  // the group's place in the heap, -1 when not there
}

func (g *sgroup[K, N]) live() []sent[K, N] { return g.buf[g.h:] }

// squeue is one queue (event or processing time) of a timer service in the
// store.
type squeue[K, N comparable] struct {
	which  byte
	groups []sgroup[K, N]
	heap   []int32 // the groups holding timers, a min-heap by their heads
	n      int     // the timers queued, -1 when not counted since a restore
	last   Timer[K, N]
	lastOK bool // last is queued: registering it again needs no lookup
}

// storeTimers is a timer service's queues in a disk backend's store.
type storeTimers[K, N comparable] struct {
	t    *Timers[K, N]
	id   uint16
	seq  uint64 // the next registration's sequence number
	mark uint64 // timers of sequence numbers below it were restored
	capG int    // the timers cached per key group and queue
	q    [2]squeue[K, N]
	fsz  int64 // the bytes counted for the groups' caches and heaps
	ikey []byte
	qkey []byte
	val  []byte
}

// newStoreTimers makes the store's queues of timer service t, under store
// id id. restored says the store may hold the service's timers (an
// incremental restore brought them).
func newStoreTimers[K, N comparable](t *Timers[K, N], id uint16, cache int, restored bool) *storeTimers[K, N] {
	groups := t.b.groups.Len()
	if cache <= 0 {
		cache = DefaultTimerCache
	}
	s := &storeTimers[K, N]{t: t, id: id, capG: max(1, cache/groups)}
	for i := range s.q {
		q := &s.q[i]
		q.which = byte(i)
		q.groups = make([]sgroup[K, N], groups)
		for g := range q.groups {
			q.groups[g] = sgroup[K, N]{complete: true, loTS: -1 << 63, hi: -1}
		}
	}
	s.fsz = int64(2 * groups * int(unsafe.Sizeof(sgroup[K, N]{})+4))
	t.b.grow(s.fsz, t.what)
	if restored {
		s.attach()
	}
	return s
}

// attach reads what the store holds of the service: the next sequence
// number and the head of every key group, after an incremental restore.
func (s *storeTimers[K, N]) attach() {
	b := s.t.b
	s.clearCaches()
	if v, ok := b.sget(s.metaKey(), &s.val); ok {
		d := newDec(v)
		n := d.Uvarint()
		if d.Err != nil {
			b.storeErr(fmt.Errorf("%w: %s: sequence: %v", ErrCorruptSnapshot, s.t.what, d.Err))
			return
		}
		s.seq = max(s.seq, n)
	}
	s.mark = s.seq
	for qi := range s.q {
		q := &s.q[qi]
		q.n = -1
		for g := range q.groups {
			q.groups[g].complete = false
			s.load(q, g)
		}
	}
}

// clearCaches uncounts and empties every cache and heap.
func (s *storeTimers[K, N]) clearCaches() {
	for qi := range s.q {
		q := &s.q[qi]
		for g := range q.groups {
			gr := &q.groups[g]
			for _, e := range gr.live() {
				s.t.b.shrink(int64(e.sz))
			}
			clear(gr.buf)
			*gr = sgroup[K, N]{buf: gr.buf[:0], complete: true, loTS: -1 << 63, hi: -1}
		}
		q.heap, q.n, q.lastOK = q.heap[:0], 0, false
	}
}

func (s *storeTimers[K, N]) metaKey() []byte {
	return append(s.qkey[:0], byte(s.id>>8), byte(s.id), storedMeta)
}

// writeMeta stores the next sequence number, for an incremental snapshot.
func (s *storeTimers[K, N]) writeMeta() error {
	k := s.metaKey()
	return s.t.b.store.Set(k, binary.AppendUvarint(nil, s.seq))
}

// appendTimeSeq appends a queue key's timestamp and sequence.
func appendTimeSeq(dst []byte, ts int64, seq uint64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(ts)^1<<63)
	return binary.BigEndian.AppendUint64(dst, seq)
}

// queueKey sets s.qkey to the queue key of a timer at ts with sequence seq
// in group g (absolute).
func (s *storeTimers[K, N]) queueKey(which byte, g int, ts int64, seq uint64) []byte {
	s.qkey = appendTimeSeq(append(appendPrefix(s.qkey[:0], s.id, g), storedQueue+which), ts, seq)
	return s.qkey
}

// indexKey sets s.ikey to the index key of tm in group g; the key and
// namespace are s.ikey[5:len-8].
func (s *storeTimers[K, N]) indexKey(which byte, g int, tm *Timer[K, N]) []byte {
	k := append(appendPrefix(s.ikey[:0], s.id, g), storedIndex+which)
	k = s.t.key.codec.Append(k, &tm.Key)
	k = s.t.space.codec.Append(k, &tm.Namespace)
	s.ikey = binary.BigEndian.AppendUint64(k, uint64(tm.Timestamp)^1<<63)
	return s.ikey
}

// before orders two timers of a key group: by time, then registration.
func before(ts1 int64, seq1 uint64, ts2 int64, seq2 uint64) bool {
	if ts1 != ts2 {
		return ts1 < ts2
	}
	return seq1 < seq2
}

// has reports whether tm, of group index idx, is queued.
func (s *storeTimers[K, N]) has(qi int, tm *Timer[K, N], idx int) bool {
	q := &s.q[qi]
	if q.lastOK && q.last == *tm {
		return true
	}
	_, ok := s.t.b.sget(s.indexKey(q.which, s.t.b.groups.Start+idx, tm), &s.val)
	if ok {
		q.last, q.lastOK = *tm, true
	}
	return ok
}

// add queues tm, of key hash code code, in group index idx; with dedup
// unless it is queued.
func (s *storeTimers[K, N]) add(qi int, tm Timer[K, N], code int32, idx int, dedup bool) {
	q := &s.q[qi]
	if dedup && s.has(qi, &tm, idx) {
		return
	}
	b := s.t.b
	g := b.groups.Start + idx
	ik := s.indexKey(q.which, g, &tm)
	seq := s.seq
	s.seq++
	s.val = binary.BigEndian.AppendUint32(s.val[:0], uint32(code))
	s.val = append(s.val, ik[5:len(ik)-8]...)
	if err := b.store.Set(s.queueKey(q.which, g, tm.Timestamp, seq), s.val); err != nil {
		b.storeErr(err)
		return
	}
	if err := b.store.Set(ik, binary.BigEndian.AppendUint64(s.val[:0], seq)); err != nil {
		b.storeErr(err)
		return
	}
	if q.n >= 0 {
		q.n++
	}
	q.last, q.lastOK = tm, true
	gr := &q.groups[idx]
	if before(tm.Timestamp, seq, gr.loTS, gr.loSeq) {
		gr.loTS, gr.loSeq = tm.Timestamp, seq
	}
	live := gr.live()
	if !gr.complete && !before(tm.Timestamp, seq, live[len(live)-1].t.Timestamp, live[len(live)-1].seq) {
		return // after the cached prefix: loaded when the cache gets there
	}
	p, _ := slices.BinarySearchFunc(live, tm.Timestamp, func(e sent[K, N], ts int64) int {
		if e.t.Timestamp <= ts { // seq is the largest: after every timer of its time
			return -1
		}
		return 1
	})
	s.insert(q, idx, p, sent[K, N]{t: tm, seq: seq, code: code, sz: int32(s.size(&tm))})
}

// size estimates a cached timer's bytes.
func (s *storeTimers[K, N]) size(tm *Timer[K, N]) int64 {
	return entryOverhead + int64(unsafe.Sizeof(sent[K, N]{})) +
		s.t.key.extra(&tm.Key, &s.t.b.scratch) + s.t.space.extra(&tm.Namespace, &s.t.b.scratch)
}

// insert puts e at place p of group idx's cache, dropping the cache's
// last timer when it holds more than capG, and fixes the heap.
func (s *storeTimers[K, N]) insert(q *squeue[K, N], idx, p int, e sent[K, N]) {
	gr := &q.groups[idx]
	s.t.b.grow(int64(e.sz), s.t.what)
	if gr.h > 0 { // room before the head: move the timers before p down
		gr.h--
		copy(gr.buf[gr.h:gr.h+p], gr.buf[gr.h+1:gr.h+1+p])
		gr.buf[gr.h+p] = e
	} else {
		gr.buf = slices.Insert(gr.buf, p, e)
	}
	if live := gr.live(); len(live) > s.capG {
		l := len(gr.buf) - 1
		s.t.b.shrink(int64(gr.buf[l].sz))
		gr.buf[l] = sent[K, N]{}
		gr.buf = gr.buf[:l]
		gr.complete = false
	}
	if p == 0 {
		if gr.hi < 0 {
			gr.hi = int32(len(q.heap))
			q.heap = append(q.heap, int32(idx))
		}
		s.up(q, int(gr.hi))
	}
}

// remove deletes tm, of group index idx, and reports whether it was queued.
func (s *storeTimers[K, N]) remove(qi int, tm Timer[K, N], idx int) bool {
	q := &s.q[qi]
	b := s.t.b
	g := b.groups.Start + idx
	v, ok := b.sget(s.indexKey(q.which, g, &tm), &s.val)
	if !ok || len(v) != 8 {
		return false
	}
	seq := binary.BigEndian.Uint64(v)
	if err := b.store.Delete(s.ikey); err != nil {
		b.storeErr(err)
		return false
	}
	if err := b.store.Delete(s.queueKey(q.which, g, tm.Timestamp, seq)); err != nil {
		b.storeErr(err)
		return false
	}
	if q.n > 0 {
		q.n--
	}
	if q.lastOK && q.last == tm {
		q.lastOK = false
	}
	gr := &q.groups[idx]
	live := gr.live()
	p, found := slices.BinarySearchFunc(live, tm.Timestamp, func(e sent[K, N], ts int64) int {
		if before(e.t.Timestamp, e.seq, ts, seq) {
			return -1
		}
		if e.t.Timestamp == ts && e.seq == seq {
			return 0
		}
		return 1
	})
	if !found {
		return true
	}
	b.shrink(int64(live[p].sz))
	if p == 0 {
		gr.buf[gr.h] = sent[K, N]{}
		gr.h++
	} else {
		gr.buf = slices.Delete(gr.buf, gr.h+p, gr.h+p+1)
	}
	if p == 0 {
		s.headChanged(q, idx)
	}
	return true
}

// headChanged restores the invariants after group idx's head left: a
// cache emptied is loaded again, and the group moves down the heap or
// leaves it.
func (s *storeTimers[K, N]) headChanged(q *squeue[K, N], idx int) {
	gr := &q.groups[idx]
	if len(gr.live()) == 0 {
		gr.buf, gr.h = gr.buf[:0], 0
		if !gr.complete {
			s.load(q, idx)
		}
	}
	if gr.hi < 0 {
		return
	}
	if len(gr.live()) == 0 {
		s.removeAt(q, int(gr.hi))
		return
	}
	s.down(q, int(gr.hi))
}

// peek returns the queue's earliest timer.
func (s *storeTimers[K, N]) peek(qi int) (*sent[K, N], bool) {
	q := &s.q[qi]
	if len(q.heap) == 0 {
		return nil, false
	}
	gr := &q.groups[q.heap[0]]
	return &gr.buf[gr.h], true
}

// pop removes the queue's earliest timer (there is one) from the store and
// returns it with its group index.
func (s *storeTimers[K, N]) pop(qi int) (sent[K, N], int) {
	q := &s.q[qi]
	b := s.t.b
	idx := int(q.heap[0])
	gr := &q.groups[idx]
	e := gr.buf[gr.h]
	gr.buf[gr.h] = sent[K, N]{}
	gr.h++
	g := b.groups.Start + idx
	b.storeErr(b.store.Delete(s.queueKey(q.which, g, e.t.Timestamp, e.seq)))
	b.storeErr(b.store.Delete(s.indexKey(q.which, g, &e.t)))
	gr.loTS, gr.loSeq = e.t.Timestamp, e.seq
	if q.n > 0 {
		q.n--
	}
	if q.lastOK && q.last == e.t {
		q.lastOK = false
	}
	b.shrink(int64(e.sz))
	s.headChanged(q, idx)
	return e, idx
}

// load fills group idx's empty cache with its first timers in the store.
func (s *storeTimers[K, N]) load(q *squeue[K, N], idx int) {
	b := s.t.b
	gr := &q.groups[idx]
	g := b.groups.Start + idx
	start := appendTimeSeq(append(appendPrefix(nil, s.id, g), storedQueue+q.which), gr.loTS, gr.loSeq)
	end := append(appendPrefix(nil, s.id, g), storedQueue+q.which+1)
	gr.buf, gr.h, gr.complete = gr.buf[:0], 0, true
	var bad error
	err := b.store.Scan(start, end, func(k, v []byte) bool {
		if len(gr.buf) == s.capG {
			gr.complete = false
			return false
		}
		if len(k) != 5+16 || len(v) < 4 {
			bad = fmt.Errorf("%w: %s: a queue entry of %d and %d bytes", ErrCorruptSnapshot, s.t.what, len(k), len(v))
			return false
		}
		e := sent[K, N]{
			seq:  binary.BigEndian.Uint64(k[13:]),
			code: int32(binary.BigEndian.Uint32(v)),
		}
		e.t.Timestamp = int64(binary.BigEndian.Uint64(k[5:]) ^ 1<<63)
		d := newDec(v[4:])
		decodeInto(&d, s.t.key.codec, &e.t.Key)
		decodeInto(&d, s.t.space.codec, &e.t.Namespace)
		if err := d.done(s.t.what); err != nil {
			bad = err
			return false
		}
		e.sz = int32(s.size(&e.t))
		b.grow(int64(e.sz), s.t.what)
		gr.buf = append(gr.buf, e)
		return true
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		b.storeErr(err)
	}
	if len(gr.buf) > 0 && gr.hi < 0 {
		gr.hi = int32(len(q.heap))
		q.heap = append(q.heap, int32(idx))
		s.up(q, int(gr.hi))
	}
}

// count returns the timers queued, counting them in the store once after
// a restore.
func (s *storeTimers[K, N]) count(qi int) int {
	q := &s.q[qi]
	if q.n >= 0 {
		return q.n
	}
	b := s.t.b
	n := 0
	for g := b.groups.Start; g <= b.groups.End; g++ {
		start := append(appendPrefix(nil, s.id, g), storedQueue+q.which)
		b.storeErr(b.store.Scan(start, prefixEnd(start), func(_, _ []byte) bool {
			n++
			return true
		}))
	}
	q.n = n
	return n
}

// write appends group idx's timers in the snapshot format (event time,
// then processing time, each by time and registration).
func (s *storeTimers[K, N]) write(dst []byte, idx int) ([]byte, int) {
	return s.t.b.storeTimerSection(dst, s.id, s.t.b.groups.Start+idx)
}

// storeTimerSection appends the snapshot entries of the timer service of
// store id id in group g, read from the store, to dst and returns it with
// their count: the heap timers' section format, from the stored bytes.
func (b *Backend[K]) storeTimerSection(dst []byte, id uint16, g int) ([]byte, int) {
	start := append(appendPrefix(nil, id, g), storedQueue)
	end := append(appendPrefix(nil, id, g), storedQueue+2)
	n := 0
	var bad error
	err := b.store.Scan(start, end, func(k, v []byte) bool {
		if len(k) != 5+16 || len(v) < 4 {
			bad = fmt.Errorf("%w: timers %d in key group %d: a queue entry of %d and %d bytes", ErrCorruptSnapshot, id, g, len(k), len(v))
			return false
		}
		dst = append(dst, k[4]-storedQueue)
		dst = appendVarint(dst, int64(binary.BigEndian.Uint64(k[5:])^1<<63))
		dst = append(dst, v[4:]...)
		n++
		return true
	})
	if err == nil {
		err = bad
	}
	b.storeErr(err)
	return dst, n
}

// drop empties the service: its caches, and its timers in the store unless
// the backend is disposed (the store goes with it).
func (s *storeTimers[K, N]) drop() {
	s.clearCaches()
	if !s.t.b.disposed {
		s.t.b.storeDrop(s.id)
		return
	}
	s.t.b.shrink(s.fsz)
	s.fsz = 0
}

// restored marks the timers registered so far as a restore's: they fire
// before later ones of their time, by key group. The heaps are ordered
// again, as heads may have changed places.
func (s *storeTimers[K, N]) restored() {
	s.mark = s.seq
	for qi := range s.q {
		q := &s.q[qi]
		for i := len(q.heap)/2 - 1; i >= 0; i-- {
			s.down(q, i)
		}
	}
}

// headBefore reports whether group a's head fires before group b's.
func (s *storeTimers[K, N]) headBefore(q *squeue[K, N], a, b int32) bool {
	ga, gb := &q.groups[a], &q.groups[b]
	x, y := &ga.buf[ga.h], &gb.buf[gb.h]
	if x.t.Timestamp != y.t.Timestamp {
		return x.t.Timestamp < y.t.Timestamp
	}
	xr, yr := x.seq < s.mark, y.seq < s.mark
	if xr != yr {
		return xr
	}
	if xr && a != b {
		return a < b
	}
	return x.seq < y.seq
}

func (s *storeTimers[K, N]) swap(q *squeue[K, N], i, j int) {
	h := q.heap
	h[i], h[j] = h[j], h[i]
	q.groups[h[i]].hi, q.groups[h[j]].hi = int32(i), int32(j)
}

func (s *storeTimers[K, N]) up(q *squeue[K, N], i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !s.headBefore(q, q.heap[i], q.heap[p]) {
			return
		}
		s.swap(q, i, p)
		i = p
	}
}

func (s *storeTimers[K, N]) down(q *squeue[K, N], i int) {
	n := len(q.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && s.headBefore(q, q.heap[r], q.heap[l]) {
			m = r
		}
		if !s.headBefore(q, q.heap[m], q.heap[i]) {
			return
		}
		s.swap(q, i, m)
		i = m
	}
}

// removeAt takes the group at heap place i out of the heap.
func (s *storeTimers[K, N]) removeAt(q *squeue[K, N], i int) {
	q.groups[q.heap[i]].hi = -1
	last := len(q.heap) - 1
	if i != last {
		q.heap[i] = q.heap[last]
		q.groups[q.heap[i]].hi = int32(i)
	}
	q.heap = q.heap[:last]
	if i < last {
		s.down(q, i)
		s.up(q, i)
	}
}

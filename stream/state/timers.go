package state

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"unsafe"
)

// Timer is a timer of a keyed operator: a time, the key it was registered
// under and a namespace (the window, for windows; Void otherwise).
type Timer[K, N comparable] struct {
	Timestamp int64
	Key       K
	Namespace N
}

// Triggerable is called by a timer service for each timer that fires, with
// the timer's key already the backend's current key (Flink's Triggerable).
// An error stops the advance and is returned by it.
type Triggerable[K, N comparable] interface {
	OnEventTime(t Timer[K, N]) error
	OnProcessingTime(t Timer[K, N]) error
}

// Timers is Flink's InternalTimerService: the event-time and
// processing-time timers of one keyed operator, each registered for the
// backend's current key, deduplicated by (time, key, namespace) and kept per
// key group, so that they are snapshotted and rescaled with the keyed state.
// Where Flink's HeapPriorityQueueSet keeps a heap of timers, the queue here
// keeps a heap of timestamps, each with its timers in a bucket (queue).
//
// Timers fire in timestamp order; timers of one timestamp fire in the order
// they were registered (after a restore: by key group, then as registered).
// A callback may register and delete timers: one registered for a time the
// advance reaches fires in that same advance, as in Flink, whose loop peeks
// the queue again after each timer.
type Timers[K, N comparable] struct {
	b         *Backend[K]
	name      string
	what      string
	target    Triggerable[K, N]
	event     queue[K, N]
	proc      queue[K, N]
	watermark int64
	key       sizer[K]
	space     sizer[N]
	d         *storeTimers[K, N] // a disk backend's: the timers in its store
}

// NewTimers returns the backend's timer service of that name, registering it
// on first use and ingesting the timers a restore read for it. target is
// called for the timers that fire.
func NewTimers[K, N comparable](b *Backend[K], name string, target Triggerable[K, N]) (*Timers[K, N], error) {
	if r, ok := b.timers[name]; ok {
		t, ok := r.(*Timers[K, N])
		if !ok {
			return nil, fmt.Errorf("state: %s: timer service %q has another namespace type", b.name, name)
		}
		t.target = target
		return t, nil
	}
	if name == "" || target == nil {
		return nil, fmt.Errorf("state: %s: a timer service needs a name and a target", b.name)
	}
	t := &Timers[K, N]{b: b, name: name, what: fmt.Sprintf("timer service %q", name), target: target, watermark: math.MinInt64}
	var err error
	if t.key, err = newSizer[K]("key of " + t.what); err != nil {
		return nil, err
	}
	if t.space, err = newSizer[N]("namespace of " + t.what); err != nil {
		return nil, err
	}
	t.event.cow, t.proc.cow = &b.cow, &b.cow
	if b.store != nil {
		_, restored := b.tids[name]
		id, err := b.timerID(name)
		if err != nil {
			return nil, err
		}
		t.d = newStoreTimers(t, id, b.timerCache, restored)
	} else {
		t.event.init(b.groups.Len())
		t.proc.init(b.groups.Len())
	}
	return t, b.register(t, true)
}

func (t *Timers[K, N]) stateName() string { return t.name }
func (t *Timers[K, N]) kind() Kind        { return kindTimers }

// CurrentWatermark returns the last watermark advanced to (math.MinInt64 at first).
func (t *Timers[K, N]) CurrentWatermark() int64 { return t.watermark }

// The queues of a timer service, in the store's and snapshots' terms.
const (
	eventTime      = 0
	processingTime = 1
)

// RegisterEventTimeTimer registers a timer at ts for the current key in ns.
func (t *Timers[K, N]) RegisterEventTimeTimer(ns N, ts int64) { t.add(eventTime, ns, ts) }

// RegisterProcessingTimeTimer registers a processing-time timer at ts.
func (t *Timers[K, N]) RegisterProcessingTimeTimer(ns N, ts int64) { t.add(processingTime, ns, ts) }

// DeleteEventTimeTimer deletes the current key's event-time timer at ts in ns.
func (t *Timers[K, N]) DeleteEventTimeTimer(ns N, ts int64) { t.del(eventTime, ns, ts) }

// DeleteProcessingTimeTimer deletes the current key's processing-time timer.
func (t *Timers[K, N]) DeleteProcessingTimeTimer(ns N, ts int64) { t.del(processingTime, ns, ts) }

// NumEventTimeTimers returns the number of event-time timers held. A disk
// backend counts them in its store once after an incremental restore.
func (t *Timers[K, N]) NumEventTimeTimers() int {
	if t.d != nil {
		return t.d.count(eventTime)
	}
	return t.event.n
}

// NumProcessingTimeTimers returns the number of processing-time timers held.
func (t *Timers[K, N]) NumProcessingTimeTimers() int {
	if t.d != nil {
		return t.d.count(processingTime)
	}
	return t.proc.n
}

// NextProcessingTime returns the earliest processing-time timer, the deadline
// the task loop waits for, and false when there is none.
func (t *Timers[K, N]) NextProcessingTime() (int64, bool) {
	if t.d != nil {
		e, ok := t.d.peek(processingTime)
		if !ok {
			return 0, false
		}
		return e.t.Timestamp, true
	}
	if len(t.proc.heap) == 0 {
		return 0, false
	}
	return t.proc.heap[0].ts, true
}

// AdvanceWatermark sets the watermark to wm and fires every event-time timer
// at or before it, in timestamp order, setting each one's key as the current
// key first.
func (t *Timers[K, N]) AdvanceWatermark(wm int64) error {
	t.watermark = wm
	return t.fire(eventTime, wm)
}

// RestoreWatermark sets the watermark a restored operator starts at
// without firing anything: the timers at or before it fired before the
// snapshot was taken.
func (t *Timers[K, N]) RestoreWatermark(wm int64) { t.watermark = max(t.watermark, wm) }

// AdvanceProcessingTime fires every processing-time timer at or before now.
func (t *Timers[K, N]) AdvanceProcessingTime(now int64) error {
	return t.fire(processingTime, now)
}

func (t *Timers[K, N]) fire(which int, upTo int64) error {
	if t.d != nil {
		return t.fireStore(which, upTo)
	}
	q, event := &t.event, which == eventTime
	if !event {
		q = &t.proc
	}
	for len(q.heap) > 0 && q.heap[0].ts <= upTo {
		top := q.pop()
		t.b.SetCurrentKeyCode(top.t.Key, top.code, t.b.groups.Start+int(top.idx))
		t.b.shrink(int64(top.sz))
		var err error
		if event {
			err = t.target.OnEventTime(top.t)
		} else {
			err = t.target.OnProcessingTime(top.t)
		}
		if err != nil {
			return fmt.Errorf("state: %s: %s: timer at %d: %w", t.b.name, t.what, top.t.Timestamp, err)
		}
	}
	return nil
}

// fireStore is fire on the timers in the store.
func (t *Timers[K, N]) fireStore(which int, upTo int64) error {
	for {
		if e, ok := t.d.peek(which); !ok || e.t.Timestamp > upTo {
			return nil
		}
		e, idx := t.d.pop(which)
		t.b.SetCurrentKeyCode(e.t.Key, e.code, t.b.groups.Start+idx)
		var err error
		if which == eventTime {
			err = t.target.OnEventTime(e.t)
		} else {
			err = t.target.OnProcessingTime(e.t)
		}
		if err != nil {
			return fmt.Errorf("state: %s: %s: timer at %d: %w", t.b.name, t.what, e.t.Timestamp, err)
		}
	}
}

// RegisterNewEventTimeTimer is RegisterEventTimeTimer for a timer the
// caller knows is not registered: the current key has no event-time timer at
// ts in ns. It skips the lookup that deduplicates (the window operator's
// timers of a window that held no contents before).
//
// The timer is not indexed until an index is needed (a lookup, a deletion,
// a snapshot): a window operator that only registers and fires its timers
// never indexes them.
func (t *Timers[K, N]) RegisterNewEventTimeTimer(ns N, ts int64) {
	if idx := t.b.at(); idx >= 0 {
		if t.d != nil {
			t.d.add(eventTime, Timer[K, N]{ts, t.b.key, ns}, t.b.keyCode(), idx, false)
			return
		}
		t.pushAs(&t.event, Timer[K, N]{ts, t.b.key, ns}, t.b.keyCode(), idx, false)
	}
}

func (t *Timers[K, N]) add(which int, ns N, ts int64) {
	if idx := t.b.at(); idx >= 0 {
		if t.d != nil {
			t.d.add(which, Timer[K, N]{ts, t.b.key, ns}, t.b.keyCode(), idx, true)
			return
		}
		t.insert(t.queue(which), Timer[K, N]{ts, t.b.key, ns}, t.b.keyCode(), idx)
	}
}

// heapTimerBytes estimates the bytes of a queued timer beyond what its key
// and namespace reach: its entry in its bucket's slice (3/2 of an entry, as
// the slice grows by doubling), its slot in the index (16/9 of a slot: a
// slotTable is between 3/8 and 3/4 full) and, as for timers at distinct
// times (session windows, a timer per record), a bucket of its own with its
// map entry and its place in the heap.
func heapTimerBytes[K, N comparable]() int64 {
	var e qent[K, N]
	var s slot[Timer[K, N], ref[K, N]]
	var b bucket[K, N]
	return int64(unsafe.Sizeof(e))*3/2 + int64(unsafe.Sizeof(s))*16/9 +
		int64(unsafe.Sizeof(b)) + entryOverhead + 8 + 8*3/2
}

// queue returns the heap queue of which.
func (t *Timers[K, N]) queue(which int) *queue[K, N] {
	if which == eventTime {
		return &t.event
	}
	return &t.proc
}

// insert adds tm, of key hash code code, to group index idx unless it is
// there.
func (t *Timers[K, N]) insert(q *queue[K, N], tm Timer[K, N], code int32, idx int) {
	if q.has(tm, code, idx) {
		return
	}
	t.push(q, tm, code, idx)
}

// push adds tm, known not queued, and counts its bytes.
func (t *Timers[K, N]) push(q *queue[K, N], tm Timer[K, N], code int32, idx int) {
	t.pushAs(q, tm, code, idx, true)
}

// pushAs is push, indexing tm now or later.
func (t *Timers[K, N]) pushAs(q *queue[K, N], tm Timer[K, N], code int32, idx int, index bool) {
	sz := heapTimerBytes[K, N]() + 2*(t.key.extra(&tm.Key, &t.b.scratch)+t.space.extra(&tm.Namespace, &t.b.scratch))
	q.push(tm, code, idx, sz, index)
	t.b.grow(sz, t.what)
}

func (t *Timers[K, N]) del(which int, ns N, ts int64) {
	idx := t.b.at()
	if idx < 0 {
		return
	}
	if t.d != nil {
		t.d.remove(which, Timer[K, N]{ts, t.b.key, ns}, idx)
		return
	}
	if sz, ok := t.queue(which).remove(Timer[K, N]{ts, t.b.key, ns}, t.b.keyCode(), idx); ok {
		t.b.shrink(sz)
	}
}

// write encodes a group's timers, event-time then processing-time, each
// sorted by time and registration.
func (t *Timers[K, N]) write(dst []byte, idx int, _ int64) ([]byte, int) {
	if t.d != nil {
		return t.d.write(dst, idx)
	}
	t.event.indexAll()
	t.proc.indexAll()
	return t.writeFrom(dst, &t.event.pos[idx], &t.proc.pos[idx])
}

// writeFrom is write on a group's event-time and processing-time timers
// (the live ones or a capture's). The timers of one time are in one bucket
// in registration order, so their places order them as registered.
func (t *Timers[K, N]) writeFrom(dst []byte, event, proc *timerIndex[K, N]) ([]byte, int) {
	type placed struct {
		t Timer[K, N]
		i int
	}
	n := 0
	for qi, pos := range []*timerIndex[K, N]{event, proc} {
		ents := make([]placed, 0, pos.n)
		for i := range pos.slots {
			if sl := &pos.slots[i]; sl.used() {
				ents = append(ents, placed{sl.k, sl.c.v.i})
			}
		}
		slices.SortFunc(ents, func(a, b placed) int {
			if a.t.Timestamp != b.t.Timestamp {
				return cmp.Compare(a.t.Timestamp, b.t.Timestamp)
			}
			return cmp.Compare(a.i, b.i)
		})
		for i := range ents {
			dst = append(dst, byte(qi))
			dst = appendVarint(dst, ents[i].t.Timestamp)
			dst = t.key.codec.Append(dst, &ents[i].t.Key)
			dst = t.space.codec.Append(dst, &ents[i].t.Namespace)
			n++
		}
	}
	return dst, n
}

func (t *Timers[K, N]) read(src []byte, idx, n int) error {
	d := newDec(src)
	for i := 0; i < n && d.Err == nil; i++ {
		which := d.Byte()
		var tm Timer[K, N]
		tm.Timestamp = d.Varint()
		decodeInto(&d, t.key.codec, &tm.Key)
		decodeInto(&d, t.space.codec, &tm.Namespace)
		if d.Err != nil {
			break
		}
		if which > 1 {
			d.Fail("timer kind %d", which)
			break
		}
		code := t.b.hash(tm.Key)
		if KeyGroupForHash(code, t.b.maxP) != t.b.groups.Start+idx {
			d.Fail("timer key of another key group than %d", t.b.groups.Start+idx)
			break
		}
		if t.d != nil {
			t.d.add(int(which), tm, code, idx, true)
			continue
		}
		t.insert(t.queue(int(which)), tm, code, idx)
	}
	if t.d != nil {
		t.d.restored()
	}
	return d.done(t.what)
}

func (t *Timers[K, N]) drop() {
	if t.d != nil {
		t.d.drop()
		return
	}
	for _, q := range []*queue[K, N]{&t.event, &t.proc} {
		for _, b := range q.heap {
			for i := b.head; i < len(b.ents); i++ {
				if b.ents[i].idx >= 0 {
					t.b.shrink(int64(b.ents[i].sz))
				}
			}
		}
		q.init(len(q.pos))
	}
}

// qent is a queued timer with its key group index (-1 once deleted), its
// key's hash code and its estimated bytes.
type qent[K, N comparable] struct {
	t    Timer[K, N]
	sz   int32
	idx  int32
	code int32
	// unindexed: a live timer not in its group's index yet
	unindexed bool
}

// bucket holds the queued timers of one timestamp in registration order:
// entries never move, those before head fired, deleted ones are dead.
type bucket[K, N comparable] struct {
	ts   int64
	ents []qent[K, N]
	head int
	live int
	hi   int // position in the queue's heap
}

// ref is a timer's place: its bucket and index there.
type ref[K, N comparable] struct {
	b *bucket[K, N]
	i int
}

// maxFree bounds the emptied buckets a queue keeps for reuse.
const maxFree = 4

// queue holds timers in buckets of one timestamp, a binary min-heap of the
// buckets by timestamp and, per key group, an index from each timer to its
// place (for deduplication and deletion). A timer's place never changes
// while it is queued: a registration writes the map once, a firing or a
// deletion deletes from it once. Timers of one timestamp (the ends of the
// windows of one time) share a bucket, found without a lookup when
// registered one after another.
type queue[K, N comparable] struct {
	heap []*bucket[K, N]
	byTS map[int64]*bucket[K, N]
	pos  []timerIndex[K, N]
	n    int
	cur  *bucket[K, N] // the bucket pushed to last, while queued
	free []*bucket[K, N]
	// last is a timer known queued: registering it again (the window
	// operator's trigger and cleanup timers of one window coincide) needs
	// no map lookup
	last   Timer[K, N]
	lastOK bool
	// the backend's copy-on-write versions (cow); pos's are in its tables
	cow *cow
	// unindexed counts the live timers not in pos yet (indexAll)
	unindexed int
}

// timerIndex is a key group's index of queued timers: each timer's place,
// in a slotTable (open addressing, deletion without tombstones) by a code
// mixing the key's hash code and the time (timerCode).
type timerIndex[K, N comparable] = slotTable[Timer[K, N], ref[K, N]]

// timerCode is the index code of a timer at ts of a key of hash code kc.
func timerCode(kc int32, ts int64) int32 {
	x := uint64(ts) * 0x9e3779b97f4a7c15
	return kc ^ int32(x>>32)
}

func (q *queue[K, N]) init(groups int) {
	q.heap, q.n, q.cur, q.free, q.lastOK, q.unindexed = nil, 0, nil, nil, false, 0
	q.byTS = map[int64]*bucket[K, N]{}
	q.pos = make([]timerIndex[K, N], groups)
	for i := range q.pos {
		q.pos[i].ver = q.cow.ver
	}
}

// has reports whether tm, of a key of hash code kc, is queued in group
// index idx.
func (q *queue[K, N]) has(tm Timer[K, N], kc int32, idx int) bool {
	if q.lastOK && q.last == tm {
		return true
	}
	q.indexAll()
	if q.pos[idx].find(tm, timerCode(kc, tm.Timestamp)) != nil {
		q.last, q.lastOK = tm, true
		return true
	}
	return false
}

// bucket returns the bucket of ts, adding it to the heap.
func (q *queue[K, N]) bucket(ts int64) *bucket[K, N] {
	if b := q.cur; b != nil && b.ts == ts {
		return b
	}
	b, ok := q.byTS[ts]
	if !ok {
		if n := len(q.free); n > 0 {
			b, q.free = q.free[n-1], q.free[:n-1]
		} else {
			b = &bucket[K, N]{}
		}
		b.ts, b.hi = ts, len(q.heap)
		q.heap = append(q.heap, b)
		q.byTS[ts] = b
		q.up(b.hi)
	}
	q.cur = b
	return b
}

func (q *queue[K, N]) push(t Timer[K, N], code int32, idx int, sz int64, index bool) {
	b := q.bucket(t.Timestamp)
	b.ents = append(b.ents, qent[K, N]{t: t, sz: int32(sz), idx: int32(idx), code: code, unindexed: !index})
	b.live++
	q.n++
	if index {
		q.posW(idx).insert(t, timerCode(code, t.Timestamp)).v = ref[K, N]{b, len(b.ents) - 1}
	} else {
		q.unindexed++
	}
	q.last, q.lastOK = t, true
}

// indexAll indexes the timers pushed without an index.
func (q *queue[K, N]) indexAll() {
	if q.unindexed == 0 {
		return
	}
	for _, b := range q.heap {
		for i := b.head; i < len(b.ents); i++ {
			if e := &b.ents[i]; e.unindexed {
				e.unindexed = false
				q.posW(int(e.idx)).insert(e.t, timerCode(e.code, e.t.Timestamp)).v = ref[K, N]{b, i}
			}
		}
	}
	q.unindexed = 0
}

// remove deletes tm, of a key of hash code kc, of group index idx and
// returns its bytes, false when it is not queued.
func (q *queue[K, N]) remove(tm Timer[K, N], kc int32, idx int) (int64, bool) {
	q.indexAll()
	tc := timerCode(kc, tm.Timestamp)
	c := q.pos[idx].find(tm, tc)
	if c == nil {
		return 0, false
	}
	r := c.v
	q.posW(idx).remove(tm, tc)
	e := &r.b.ents[r.i]
	e.idx = -1 // dead
	sz := int64(e.sz)
	q.removed(r.b, tm)
	return sz, true
}

// pop removes and returns the earliest timer (the heap's top bucket is
// never empty).
func (q *queue[K, N]) pop() qent[K, N] {
	b := q.heap[0]
	for b.ents[b.head].idx < 0 {
		b.head++
	}
	e := b.ents[b.head]
	b.head++
	if e.unindexed {
		q.unindexed--
	} else {
		q.posW(int(e.idx)).remove(e.t, timerCode(e.code, e.t.Timestamp))
	}
	q.removed(b, e.t)
	return e
}

// removed counts tm out of bucket b, dropping b once it holds none.
func (q *queue[K, N]) removed(b *bucket[K, N], tm Timer[K, N]) {
	q.n--
	if q.lastOK && q.last == tm {
		q.lastOK = false
	}
	if b.live--; b.live > 0 {
		return
	}
	q.removeBucket(b.hi)
	delete(q.byTS, b.ts)
	if q.cur == b {
		q.cur = nil
	}
	clear(b.ents)
	b.ents, b.head = b.ents[:0], 0
	if len(q.free) < maxFree {
		q.free = append(q.free, b)
	}
}

func (q *queue[K, N]) removeBucket(i int) {
	last := len(q.heap) - 1
	if i != last {
		q.heap[i] = q.heap[last]
		q.heap[i].hi = i
	}
	q.heap[last] = nil
	q.heap = q.heap[:last]
	if i < last {
		q.down(i)
		q.up(i)
	}
}

func (q *queue[K, N]) swap(i, j int) {
	h := q.heap
	h[i], h[j] = h[j], h[i]
	h[i].hi, h[j].hi = i, j
}

func (q *queue[K, N]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if q.heap[i].ts >= q.heap[p].ts {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q *queue[K, N]) down(i int) {
	n := len(q.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && q.heap[r].ts < q.heap[l].ts {
			m = r
		}
		if q.heap[m].ts >= q.heap[i].ts {
			return
		}
		q.swap(i, m)
		i = m
	}
}

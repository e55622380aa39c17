package op

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// AsyncState names the operator list state in which an async operator
// keeps the elements of its queue on a checkpoint, as Flink's
// AsyncWaitOperator ("_async_wait_operator_state_"): a restore at another
// parallelism deals them out evenly.
const AsyncState = "_async_wait_operator_state_"

// ErrAsyncTimeout is what a call of an async function completes with when
// its timeout fires and the function has no Timeout of its own (Flink's
// TimeoutException "Async function call has timed out.").
var ErrAsyncTimeout = errors.New("stream: async function call has timed out")

var errNilAsync = errors.New("stream: async function call completed exceptionally with a nil error")

// AsyncElement is an element of an async operator's state: a record whose
// call was in flight or whose result was not emitted yet, or a watermark
// the operator held (Watermark; its value is Timestamp).
type AsyncElement[I any] struct {
	Value     I
	Timestamp int64
	Watermark bool
}

// AsyncFns are an AsyncFunction's functions (stream.AsyncFunction).
type AsyncFns[I, O any] struct {
	Open    func() error
	Invoke  func(ctx context.Context, v I, f Future[O])
	Timeout func(v I, f Future[O])
	Close   func() error
}

// AsyncRetry is an async operator's retry strategy (Flink's
// AsyncRetryStrategy): a call that completed with results IfResult
// accepts, or with an error IfError accepts, is made again after
// Backoff(n), n the number of calls made for the record so far, while n
// is at most MaxAttempts.
type AsyncRetry[O any] struct {
	MaxAttempts int
	Backoff     func(n int) time.Duration
	IfResult    func([]O) bool
	IfError     func(error) bool
}

// AsyncConfig is how an async operator runs.
type AsyncConfig[O any] struct {
	Ordered  bool          // results in input order, else as they complete
	Timeout  time.Duration // per record, over all its attempts; zero: none
	Capacity int           // records in flight and watermarks held, at most
	Retry    *AsyncRetry[O]
}

// Future is the handle of one call of an async function. The first
// Complete or CompleteExceptionally of a call counts, from any goroutine;
// later ones, and those of a call the operator no longer waits for (it was
// retried, or the job ended), are ignored.
type Future[O any] struct {
	s   *asyncSlot[O]
	gen uint64
}

// Complete completes the call with results.
func (f Future[O]) Complete(results []O) { f.finish(results, nil) }

// CompleteExceptionally completes the call with err.
func (f Future[O]) CompleteExceptionally(err error) {
	if err == nil {
		err = errNilAsync
	}
	f.finish(nil, err)
}

func (f Future[O]) finish(res []O, err error) {
	s := f.s
	if s == nil || !s.state.CompareAndSwap(f.gen<<1, f.gen<<1|1) {
		return
	}
	s.res, s.err = res, err
	s.stack.push(s)
}

// asyncSlot is the part of a slot of the queue that completing goroutines
// touch: the call's generation and state (gen<<1, |1 once completed), and
// its outcome, written by the goroutine that completed it before it
// pushes the slot on the done stack.
type asyncSlot[O any] struct {
	state atomic.Uint64
	res   []O
	err   error
	next  *asyncSlot[O] // on the done stack
	stack *doneStack[O]
	idx   int32
}

// doneStack is the slots completed and not yet taken by the task: a
// lock-free stack (pushes from any goroutine, the task takes all at once),
// and the Mail that wakes the task.
type doneStack[O any] struct {
	head atomic.Pointer[asyncSlot[O]]
	mail *task.Mail
}

func (d *doneStack[O]) push(s *asyncSlot[O]) {
	for {
		old := d.head.Load()
		s.next = old
		if d.head.CompareAndSwap(old, s) {
			break
		}
	}
	d.mail.Post()
}

// take returns the slots pushed so far, linked oldest first.
func (d *doneStack[O]) take() *asyncSlot[O] {
	l := d.head.Swap(nil)
	var r *asyncSlot[O]
	for l != nil {
		n := l.next
		l.next = r
		r, l = l, n
	}
	return r
}

// asyncEntry is the task's part of a slot: the record and its progress.
type asyncEntry[I any] struct {
	rec      core.Record[I]
	seq      uint64 // the record's place in the input
	gen      uint64 // of its current call
	seg      uint64 // unordered: its segment
	attempts int
	doneNext int32 // unordered: next in its segment's completed list
	inUse    bool
	final    bool // completed for good, its results not emitted yet
	timedOut bool
}

// qItem is an element of the ordered queue: a record's slot, or (slot
// -1) a watermark.
type qItem struct {
	slot int32
	wm   int64
}

// segment is the records between two watermarks of the unordered queue,
// and the watermark that closes it.
type segment struct {
	pending            int // records not emitted
	wm                 int64
	closed             bool
	doneHead, doneTail int32 // completed records waiting for the segment to come first
}

// Async is Flink's AsyncWaitOperator: it calls an async function per
// record and emits each record's results, with the record's timestamp,
// once the call completed, in input order (ordered) or as they complete
// but never across a watermark (unordered: the records between two
// watermarks form a segment, emitted before the watermark that ends it).
//
//	Push ──▶ slot (record) ──▶ Invoke(ctx, v, Future) ──▶ user's goroutines
//	              ▲                                          │ Complete
//	              │ free                                      ▼
//	emit ◀── queue order ◀── ProcessMail ◀── done stack + task.Mail
//
// Capacity bounds the records in flight and the watermarks held; when
// they fill it, the operator yields to its task (results, timers) until
// one leaves: backpressure. A watermark waits in the queue (the task
// passes it no further) until the records before it are out. Each record
// has one timeout over all its attempts, on the task's processing-time
// clock; a call that completes exceptionally, for good, fails the task.
// On a checkpoint the records of the queue and the watermarks held are
// written to operator list state AsyncState; a restore calls the function
// again for each record, after every operator of the chain opened.
type Async[I, O any] struct {
	task.Base
	fn        AsyncFns[I, O]
	cfg       AsyncConfig[O]
	out       *core.Emitter[O]
	s         *task.Setup
	name      string
	ctx       context.Context
	cancel    context.CancelFunc
	opened    bool
	timeoutMs int64
	timeout   error // the default Timeout's error

	slots     []asyncSlot[O]
	ents      []asyncEntry[I]
	free      []int32
	done      doneStack[O]
	size      int // records not emitted and watermarks held
	seq       uint64
	lastWM    int64 // the last watermark taken
	now       int64 // processing time, read once per batch and after each yield
	timeouts  timerList
	retries   timerList
	finishing bool // the input ended: no more retries

	ring  []qItem // ordered: the queue, a ring
	qHead int
	qLen  int

	segs     []segment // unordered: the segments, a ring
	segFirst int
	segN     int
	firstID  uint64 // the id of the first segment

	store    *state.OperatorStore
	list     state.ListState[AsyncElement[I]]
	restored []AsyncElement[I]
}

// NewAsync returns the async operator of fn run as cfg says, emitting
// into out.
func NewAsync[I, O any](fn AsyncFns[I, O], cfg AsyncConfig[O], out core.Output[O], batchSize int) *Async[I, O] {
	return &Async[I, O]{fn: fn, cfg: cfg, out: core.NewEmitter(out, batchSize), lastWM: watermark.Min}
}

// HoldsWatermarks says the task passes watermarks no further than the
// operator: it releases each once the records before it are out.
func (a *Async[I, O]) HoldsWatermarks() bool { return true }

// Open makes the queue, reads what the operator restored and opens the
// function.
func (a *Async[I, O]) Open(s *task.Setup) error {
	a.s, a.name = s, s.Name
	n := a.cfg.Capacity
	a.done.mail = s.Mail(a)
	a.slots = make([]asyncSlot[O], n)
	a.ents = make([]asyncEntry[I], n)
	a.free = make([]int32, n)
	for i := range a.slots {
		a.slots[i].idx, a.slots[i].stack = int32(i), &a.done
		a.free[i] = int32(n - 1 - i)
	}
	a.timeouts, a.retries = newTimerList(n), newTimerList(n)
	if a.cfg.Ordered {
		a.ring = make([]qItem, n)
	} else {
		a.segs = make([]segment, n+1)
		a.segs[0] = segment{doneHead: -1, doneTail: -1}
		a.segN = 1
	}
	if d := a.cfg.Timeout; d > 0 {
		a.timeoutMs = ceilMs(d)
		a.timeout = fmt.Errorf("%w after %v", ErrAsyncTimeout, d)
	}
	a.ctx, a.cancel = context.WithCancel(s.Context())
	if snap := s.RestoredOne(); snap != nil || s.Checkpointing() {
		// a record type without a codec fails here, not at the first checkpoint
		if err := a.openStore(snap); err != nil {
			return err
		}
		a.restored = a.list.Get()
		a.list.Clear()
	}
	a.opened = true
	if a.fn.Open != nil {
		return a.fn.Open()
	}
	return nil
}

// ceilMs returns d in whole milliseconds, rounded up.
func ceilMs(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// noCodecError says the records of an async operator under checkpoints
// cannot be encoded: no restart changes that.
type noCodecError struct{ err error }

func (e *noCodecError) Error() string       { return e.err.Error() }
func (e *noCodecError) Unwrap() error       { return e.err }
func (e *noCodecError) Unrecoverable() bool { return true }

// openStore makes the operator state, restored from snap when not nil.
func (a *Async[I, O]) openStore(snap []byte) error {
	if _, err := memory.NewCodec[AsyncElement[I]](); err != nil {
		return &noCodecError{fmt.Errorf("stream: %s: the records in flight cannot be checkpointed: %w", a.name, err)}
	}
	a.store = state.NewOperatorStore(state.OperatorOptions{Name: a.name, Memory: a.s.Memory()})
	if snap != nil {
		if err := a.store.Restore(bytes.NewReader(snap)); err != nil {
			return err
		}
	}
	l, err := state.GetOperatorListState(a.store, state.ListDescriptor[AsyncElement[I]]{Name: AsyncState})
	if err != nil {
		return fmt.Errorf("stream: %s: %w", a.name, err)
	}
	a.list = l
	return nil
}

// Start calls the function again for each record restored, and takes the
// watermarks restored, in their order (Flink's AsyncWaitOperator.open),
// once the operators after it are open.
func (a *Async[I, O]) Start() error {
	els := a.restored
	a.restored = nil
	a.now = a.s.Now()
	for i := range els {
		var err error
		if els[i].Watermark {
			err = a.addWatermark(els[i].Timestamp)
		} else {
			err = a.addRecord(els[i].Value, els[i].Timestamp)
		}
		if err != nil {
			return err
		}
	}
	return a.out.Flush()
}

// Push calls the function for each record of b, yielding while the queue
// is full.
func (a *Async[I, O]) Push(b []core.Record[I]) error {
	if a.timeoutMs > 0 {
		a.now = a.s.Now()
	}
	for i := range b {
		if err := a.addRecord(b[i].Value, b[i].Timestamp); err != nil {
			return err
		}
	}
	return nil
}

// waitRoom yields to the task until the queue has room.
func (a *Async[I, O]) waitRoom() error {
	for a.size >= a.cfg.Capacity {
		if err := a.s.Yield(); err != nil {
			return err
		}
		a.now = a.s.Now()
	}
	return nil
}

// addRecord puts a record in the queue and calls the function.
func (a *Async[I, O]) addRecord(v I, ts int64) error {
	if err := a.waitRoom(); err != nil {
		return err
	}
	i := a.free[len(a.free)-1]
	a.free = a.free[:len(a.free)-1]
	e := &a.ents[i]
	*e = asyncEntry[I]{rec: core.Record[I]{Value: v, Timestamp: ts}, seq: a.seq, gen: e.gen, attempts: 1, doneNext: -1, inUse: true}
	a.seq++
	a.size++
	if a.cfg.Ordered {
		a.ring[(a.qHead+a.qLen)%len(a.ring)] = qItem{slot: i}
		a.qLen++
	} else {
		e.seg = a.firstID + uint64(a.segN-1)
		a.lastSeg().pending++
	}
	if a.timeoutMs > 0 {
		a.timeouts.insert(i, a.now+a.timeoutMs)
	}
	a.invoke(i)
	return nil
}

// arm starts a new call of slot i and returns its generation.
func (a *Async[I, O]) arm(i int32) uint64 {
	e, s := &a.ents[i], &a.slots[i]
	e.gen++
	s.res, s.err = nil, nil
	s.state.Store(e.gen << 1)
	return e.gen
}

func (a *Async[I, O]) invoke(i int32) {
	gen := a.arm(i)
	a.fn.Invoke(a.ctx, a.ents[i].rec.Value, Future[O]{s: &a.slots[i], gen: gen})
}

// OnWatermark puts wm in the queue; it goes on once the records before it
// are out.
func (a *Async[I, O]) OnWatermark(wm int64) error {
	if err := a.addWatermark(wm); err != nil {
		return err
	}
	return a.out.Flush()
}

func (a *Async[I, O]) addWatermark(wm int64) error {
	if wm <= a.lastWM {
		return nil
	}
	a.lastWM = wm
	if err := a.waitRoom(); err != nil {
		return err
	}
	a.size++
	if a.cfg.Ordered {
		a.ring[(a.qHead+a.qLen)%len(a.ring)] = qItem{slot: -1, wm: wm}
		a.qLen++
		return a.emitHead()
	}
	last := a.lastSeg()
	last.closed, last.wm = true, wm
	a.segs[(a.segFirst+a.segN)%len(a.segs)] = segment{doneHead: -1, doneTail: -1}
	a.segN++
	return a.advance()
}

func (a *Async[I, O]) lastSeg() *segment {
	return &a.segs[(a.segFirst+a.segN-1)%len(a.segs)]
}

func (a *Async[I, O]) segOf(id uint64) *segment {
	return &a.segs[(a.segFirst+int(id-a.firstID))%len(a.segs)]
}

// ProcessMail handles the calls completed since the last time, in the
// order they completed, and emits what may go out.
func (a *Async[I, O]) ProcessMail() error {
	for s := a.done.take(); s != nil; {
		next := s.next
		s.next = nil
		if err := a.completed(s.idx); err != nil {
			return err
		}
		s = next
	}
	var err error
	if a.cfg.Ordered {
		err = a.emitHead()
	} else {
		err = a.advance()
	}
	if err != nil {
		return err
	}
	return a.out.Flush()
}

// completed handles the outcome of slot i's call: a retry, the task's
// failure, or results to emit.
func (a *Async[I, O]) completed(i int32) error {
	e, s := &a.ents[i], &a.slots[i]
	if r := a.cfg.Retry; r != nil && !e.timedOut && !a.finishing && e.attempts <= r.MaxAttempts &&
		(s.err == nil && r.IfResult != nil && r.IfResult(s.res) || s.err != nil && r.IfError != nil && r.IfError(s.err)) {
		s.res, s.err = nil, nil
		a.retries.insert(i, a.s.Now()+ceilMs(r.Backoff(e.attempts)))
		return nil
	}
	if s.err != nil {
		return fmt.Errorf("stream: %s: could not complete the element %v (timestamp %d): %w", a.name, e.rec.Value, e.rec.Timestamp, s.err)
	}
	e.final = true
	a.timeouts.remove(i)
	if a.cfg.Ordered {
		return nil
	}
	if e.seg == a.firstID {
		a.emit(i)
		a.segs[a.segFirst].pending--
		return nil
	}
	seg := a.segOf(e.seg)
	e.doneNext = -1
	if seg.doneTail < 0 {
		seg.doneHead = i
	} else {
		a.ents[seg.doneTail].doneNext = i
	}
	seg.doneTail = i
	return nil
}

// emit emits slot i's results and frees the slot.
func (a *Async[I, O]) emit(i int32) {
	e, s := &a.ents[i], &a.slots[i]
	a.out.EmitAll(s.res, e.rec.Timestamp)
	s.res = nil
	var zero core.Record[I]
	e.rec, e.inUse, e.final = zero, false, false
	a.free = append(a.free, i)
	a.size--
}

// emitHead emits the ordered queue's completed records and watermarks
// from its head.
func (a *Async[I, O]) emitHead() error {
	for a.qLen > 0 {
		it := a.ring[a.qHead]
		if it.slot >= 0 && !a.ents[it.slot].final {
			return nil
		}
		a.qHead = (a.qHead + 1) % len(a.ring)
		a.qLen--
		if it.slot >= 0 {
			a.emit(it.slot)
			continue
		}
		if err := a.release(it.wm); err != nil {
			return err
		}
	}
	return nil
}

// release passes on a watermark that left the queue, after the records
// before it.
func (a *Async[I, O]) release(wm int64) error {
	a.size--
	if err := a.out.Flush(); err != nil {
		return err
	}
	return a.s.ReleaseWatermark(wm)
}

// advance releases the watermark of each first segment whose records are
// all out, and emits the completed records of the segment after it.
func (a *Async[I, O]) advance() error {
	for {
		f := &a.segs[a.segFirst]
		if f.pending > 0 || !f.closed {
			return nil
		}
		wm := f.wm
		*f = segment{}
		a.segFirst = (a.segFirst + 1) % len(a.segs)
		a.segN--
		a.firstID++
		if err := a.release(wm); err != nil {
			return err
		}
		n := &a.segs[a.segFirst]
		for j := n.doneHead; j >= 0; {
			next := a.ents[j].doneNext
			a.emit(j)
			n.pending--
			j = next
		}
		n.doneHead, n.doneTail = -1, -1
	}
}

// OnProcessingTime fires the timeouts and then the retries that came due.
func (a *Async[I, O]) OnProcessingTime(now int64) error {
	for {
		i, at, ok := a.timeouts.first()
		if !ok || at > now {
			break
		}
		a.timeouts.remove(i)
		a.timedOut(i)
	}
	for {
		i, at, ok := a.retries.first()
		if !ok || at > now {
			break
		}
		a.retries.remove(i)
		a.retry(i)
	}
	return nil
}

// timedOut calls the function's Timeout for slot i, or completes its call
// with the timeout's error. A call completed before, whose outcome the
// task has not handled yet, stands; one waiting for a retry is not
// retried.
func (a *Async[I, O]) timedOut(i int32) {
	e, s := &a.ents[i], &a.slots[i]
	e.timedOut = true
	var f Future[O]
	switch {
	case a.retries.has(i):
		a.retries.remove(i)
		f = Future[O]{s: s, gen: a.arm(i)}
	case s.state.Load()&1 == 1:
		return
	default:
		f = Future[O]{s: s, gen: e.gen}
	}
	if a.fn.Timeout != nil {
		a.fn.Timeout(e.rec.Value, f)
		return
	}
	f.CompleteExceptionally(a.timeout)
}

func (a *Async[I, O]) retry(i int32) {
	a.ents[i].attempts++
	a.invoke(i)
}

// NextProcessingTime is the earliest timeout or retry.
func (a *Async[I, O]) NextProcessingTime() (int64, bool) {
	_, t, ok := a.timeouts.first()
	if _, r, rOk := a.retries.first(); rOk && (!ok || r < t) {
		t, ok = r, true
	}
	return t, ok
}

// EndInput makes the retries waiting at once, and the last ones, then
// waits until every record's results and every watermark are out (Flink's
// endInput).
func (a *Async[I, O]) EndInput() error {
	a.finishing = true
	for {
		i, _, ok := a.retries.first()
		if !ok {
			break
		}
		a.retries.remove(i)
		a.retry(i)
	}
	for a.size > 0 {
		if err := a.s.Yield(); err != nil {
			return err
		}
	}
	return a.out.Flush()
}

// Snapshot writes the queue's records and watermarks, in queue order, as
// operator list state AsyncState.
func (a *Async[I, O]) Snapshot(_ int64, w io.Writer) error {
	if a.store == nil {
		if err := a.openStore(nil); err != nil {
			return err
		}
	}
	a.list.Update(a.elements())
	err := a.store.Snapshot(w)
	a.list.Clear()
	if err == nil {
		err = a.store.Err()
	}
	return err
}

// elements returns the queue in order: ordered, as it stands; unordered,
// each segment's records in input order, then its watermark.
func (a *Async[I, O]) elements() []AsyncElement[I] {
	out := make([]AsyncElement[I], 0, a.size)
	rec := func(i int32) AsyncElement[I] {
		r := a.ents[i].rec
		return AsyncElement[I]{Value: r.Value, Timestamp: r.Timestamp}
	}
	if a.cfg.Ordered {
		for k := range a.qLen {
			it := a.ring[(a.qHead+k)%len(a.ring)]
			if it.slot < 0 {
				out = append(out, AsyncElement[I]{Timestamp: it.wm, Watermark: true})
			} else {
				out = append(out, rec(it.slot))
			}
		}
		return out
	}
	var used []int32
	for i := range a.ents {
		if a.ents[i].inUse {
			used = append(used, int32(i))
		}
	}
	slices.SortFunc(used, func(x, y int32) int { return compareSeq(a.ents[x].seq, a.ents[y].seq) })
	j := 0
	for k := range a.segN {
		id := a.firstID + uint64(k)
		for ; j < len(used) && a.ents[used[j]].seg == id; j++ {
			out = append(out, rec(used[j]))
		}
		if s := a.segOf(id); s.closed {
			out = append(out, AsyncElement[I]{Timestamp: s.wm, Watermark: true})
		}
	}
	return out
}

func compareSeq(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// Close ends the function's context, closes the function and disposes of
// the operator state. Calls still in flight complete into nothing.
func (a *Async[I, O]) Close() error {
	if a.cancel != nil {
		a.cancel()
	}
	var err error
	if a.opened && a.fn.Close != nil {
		a.opened = false
		err = a.fn.Close()
	}
	if a.store != nil {
		err = errors.Join(err, a.store.Dispose())
		a.store = nil
	}
	return err
}

// NumKeyedStateEntries, NumEventTimeTimers and NumProcessingTimeTimers
// are what a test harness counts: the operator has no keyed state, and
// its processing-time timers are its timeouts and retries.
func (a *Async[I, O]) NumKeyedStateEntries() int    { return 0 }
func (a *Async[I, O]) NumEventTimeTimers() int      { return 0 }
func (a *Async[I, O]) NumProcessingTimeTimers() int { return a.timeouts.n + a.retries.n }

// timerList is a set of timers, at most one per slot, sorted by time: a
// doubly linked list over the slots. Timeouts come in time order and are
// appended at its end; a timer earlier than the last walks back from it.
type timerList struct {
	at         []int64
	prev, next []int32
	in         []bool
	head, tail int32
	n          int
}

func newTimerList(n int) timerList {
	return timerList{at: make([]int64, n), prev: make([]int32, n), next: make([]int32, n), in: make([]bool, n), head: -1, tail: -1}
}

func (l *timerList) has(i int32) bool { return l.in[i] }

func (l *timerList) first() (int32, int64, bool) {
	if l.head < 0 {
		return -1, 0, false
	}
	return l.head, l.at[l.head], true
}

// insert sets slot i's timer at at, after the timers at or before at.
func (l *timerList) insert(i int32, at int64) {
	l.remove(i)
	l.at[i], l.in[i] = at, true
	p := l.tail
	for p >= 0 && l.at[p] > at {
		p = l.prev[p]
	}
	l.prev[i] = p
	if p < 0 {
		l.next[i] = l.head
		l.head = i
	} else {
		l.next[i] = l.next[p]
		l.next[p] = i
	}
	if n := l.next[i]; n >= 0 {
		l.prev[n] = i
	} else {
		l.tail = i
	}
	l.n++
}

// remove drops slot i's timer, if it has one.
func (l *timerList) remove(i int32) {
	if !l.in[i] {
		return
	}
	l.in[i] = false
	p, n := l.prev[i], l.next[i]
	if p >= 0 {
		l.next[p] = n
	} else {
		l.head = n
	}
	if n >= 0 {
		l.prev[n] = p
	} else {
		l.tail = p
	}
	l.n--
}

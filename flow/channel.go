package flow

import (
	"sync"
	"time"

	"github.com/weirdata/weir/internal/ring"
)

// inbox is a consumer subtask's end of a pipelined edge: one bounded queue per
// producer subtask (a channel) with credit-based flow control, and a FIFO of
// the channels that have data, in the order they got it (Flink's
// SingleInputGate with its inputChannelsWithData).
//
// A producer sends only against credit, a free slot in its own channel: a
// full channel blocks only its producer (deliver waits for the credit the
// consumer frees when it takes a message). A channel the consumer blocked
// (aligning a barrier) is not read: its queue fills and its producer stops.
// Nothing is buffered beyond the channels' capacity.
//
// The consumer is either a Reader (it waits on notify) or, once attached, its
// task's Gate (the inbox announces itself to the gate instead). All fields
// are guarded by mu.
type inbox struct {
	mu       sync.Mutex
	chans    []channel
	avail    ring.FIFO // channels with data that are not blocked
	blocked  ring.FIFO // blocked channels, in the order they were blocked
	closed   bool      // the consumer ended: producers drop what they send
	sleeping bool      // the Reader found nothing and waits on notify
	notify   chan struct{}
	gate     *Gate // when set, announce data to the gate as its input gi
	gi       int
	// outbox: the consumer runs in another process; a forwarder per
	// channel drains it (takeFrom), woken by the channel's notify
	outbox bool
}

// channel is the queue of one (producer, consumer) pair.
type channel struct {
	q       []message // ring of capacity ChannelBuffers
	head, n int
	// prio are priority events (unaligned checkpoint barriers): they take
	// no credit and are read before q; each counts the messages of q it
	// overtook
	prio    []message
	queued  bool          // in the inbox's avail FIFO
	blocked bool          // delivered a barrier being aligned: not read
	waiting bool          // its producer waits for credit
	credit  chan struct{} // a slot freed while the producer waited
	notify  chan struct{} // an outbox's channel got a message
}

func newInbox(nProd, capacity int) *inbox {
	in := &inbox{chans: make([]channel, nProd), avail: ring.New(nProd), blocked: ring.New(nProd), notify: make(chan struct{}, 1)}
	for p := range in.chans {
		in.chans[p] = channel{q: make([]message, capacity), credit: make(chan struct{}, 1)}
	}
	return in
}

// put appends m to channel p if it has credit and reports whether it did.
// The caller holds mu.
func (in *inbox) put(p int, m message) bool {
	ch := &in.chans[p]
	if ch.n == len(ch.q) {
		return false
	}
	ch.q[ring.Wrap(ch.head+ch.n, len(ch.q))] = m
	ch.n++
	if in.outbox {
		ch.signal()
		return true
	}
	in.queue(p)
	return true
}

// signal wakes an outbox channel's forwarder.
func (ch *channel) signal() {
	select {
	case ch.notify <- struct{}{}:
	default:
	}
}

// takeFrom returns the next message of outbox channel p, freeing a
// credit, or ok false when it has none. A priority event does not
// overtake the messages queued before it here (their frames go in order):
// it comes in its place, after them, and prio says it is one; the
// consumer's side puts it in front of its own queue (remote.go).
func (in *inbox) takeFrom(p int) (m message, prio, ok bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	ch := &in.chans[p]
	if len(ch.prio) > 0 && ch.prio[0].ev.over <= 0 {
		m = ch.prio[0]
		ch.prio = ch.prio[1:]
		return m, true, true
	}
	if ch.n == 0 {
		return m, false, false
	}
	m = ch.pop()
	for i := range ch.prio { // each counts the messages before it
		ch.prio[i].ev.over--
	}
	return m, false, true
}

// pop removes the head of the channel's queue, freeing a credit: a
// producer that waited for one hears of it. The caller holds the inbox's
// mu and the queue is not empty.
func (ch *channel) pop() message {
	m := ch.q[ch.head]
	ch.q[ch.head] = message{}
	ch.head = ring.Wrap(ch.head+1, len(ch.q))
	ch.n--
	if ch.waiting {
		ch.waiting = false
		select {
		case ch.credit <- struct{}{}:
		default:
		}
	}
	return m
}

// offer puts m into its channel unless the channel is full, which it then
// marks waiting: the consumer's next take signals the channel's credit. A
// closed inbox drops m and reports it taken.
func (in *inbox) offer(m message, x *exchange) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		x.put(m.batch)
		return true
	}
	if in.put(m.src, m) {
		return true
	}
	in.chans[m.src].waiting = true
	return false
}

// queue puts channel p in the avail FIFO unless it is there or blocked. The
// caller holds mu.
func (in *inbox) queue(p int) {
	ch := &in.chans[p]
	if !ch.queued && !ch.blocked {
		ch.queued = true
		in.avail.Push(p)
		if in.avail.Len() == 1 {
			in.wake()
		}
	}
}

// putPriority puts event m in front of channel p's queue, without credit
// (Flink's priority events): it overtakes the ch.n messages queued, which
// it counts. The consumer's gate is told at once, even when it reads no
// data because its task's outputs are full. In an outbox the count is the
// event's place in the queue (takeFrom). The caller holds mu.
func (in *inbox) putPriority(p int, m message) {
	ch := &in.chans[p]
	m.ev.over = int32(ch.n)
	ch.prio = append(ch.prio, m)
	if in.outbox {
		ch.signal()
		return
	}
	in.queue(p)
	if in.gate != nil {
		in.gate.announcePriority()
	}
}

// peek returns the batch of message k of channel p's queue, or nil.
func (in *inbox) peek(p, k int) rawBatch {
	in.mu.Lock()
	defer in.mu.Unlock()
	ch := &in.chans[p]
	if k >= ch.n {
		return rawBatch{}
	}
	return ch.q[ring.Wrap(ch.head+k, len(ch.q))].batch
}

// takePriority returns the first priority event of any channel, or ok
// false.
func (in *inbox) takePriority() (m message, ok bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for p := range in.chans {
		ch := &in.chans[p]
		if len(ch.prio) > 0 {
			m = ch.prio[0]
			ch.prio = ch.prio[1:]
			return m, true
		}
	}
	return m, false
}

// wake tells the consumer there is data. The caller holds mu.
func (in *inbox) wake() {
	if in.gate != nil {
		in.gate.announce(in.gi)
		return
	}
	if in.sleeping {
		in.sleeping = false
		select {
		case in.notify <- struct{}{}:
		default:
		}
	}
}

// take returns the next message of the first channel with data that is not
// blocked, freeing a credit of that channel, or ok false when there is none
// (a Reader then waits on notify).
func (in *inbox) take() (m message, ok bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for in.avail.Len() > 0 {
		p := in.avail.Pop()
		ch := &in.chans[p]
		if len(ch.prio) > 0 {
			m = ch.prio[0]
			ch.prio = ch.prio[1:]
			if ch.n > 0 || len(ch.prio) > 0 {
				in.avail.Push(p)
			} else {
				ch.queued = false
			}
			if in.gate != nil && in.avail.Len() > 0 {
				in.gate.announce(in.gi)
			}
			return m, true
		}
		if ch.n == 0 {
			ch.queued = false
			continue
		}
		m = ch.pop()
		if ch.n > 0 {
			in.avail.Push(p) // round robin among the channels with data
		} else {
			ch.queued = false
		}
		if in.gate != nil && in.avail.Len() > 0 {
			in.gate.announce(in.gi)
		}
		return m, true
	}
	in.sleeping = true
	return m, false
}

// block stops reading channel p until unblockAll.
func (in *inbox) block(p int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	ch := &in.chans[p]
	if ch.blocked {
		return
	}
	ch.blocked = true
	in.blocked.Push(p)
	if ch.queued {
		ch.queued = false
		in.avail.Remove(p)
	}
}

// unblockAll reads every blocked channel again; those with data queue up
// in the order they were blocked.
func (in *inbox) unblockAll() {
	in.mu.Lock()
	defer in.mu.Unlock()
	for in.blocked.Len() > 0 {
		p := in.blocked.Pop()
		ch := &in.chans[p]
		ch.blocked = false
		if (ch.n > 0 || len(ch.prio) > 0) && !ch.queued {
			ch.queued = true
			in.avail.Push(p)
		}
	}
	if in.avail.Len() > 0 {
		in.wake()
	}
}

// attach makes g the consumer: data is announced to g as its input gi.
func (in *inbox) attach(g *Gate, gi int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.gate, in.gi = g, gi
	if in.avail.Len() > 0 {
		g.announce(gi)
	}
}

// close ends the consumer: queued batches are recycled through x and
// producers drop what they send from now on.
func (in *inbox) close(x *exchange) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.closed = true
	for p := range in.chans {
		ch := &in.chans[p]
		for ; ch.n > 0; ch.n-- {
			x.put(ch.q[ch.head].batch)
			ch.q[ch.head] = message{}
			ch.head = ring.Wrap(ch.head+1, len(ch.q))
		}
	}
}

// deliverPriority puts event m in front of consumer c's channel from m.src
// (see putPriority); it drops it when the consumer ended.
func (x *exchange) deliverPriority(c int, m message) {
	in := x.inbox[c]
	in.mu.Lock()
	if !in.closed {
		in.putPriority(m.src, m)
	}
	in.mu.Unlock()
}

// hasCredit reports whether channel (src, c) has a free slot; when not, it
// returns the channel that receives once the consumer frees one.
func (x *exchange) hasCredit(c, src int) (bool, <-chan struct{}) {
	in := x.inbox[c]
	ch := &in.chans[src]
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed || ch.n < len(ch.q) {
		return true, nil
	}
	ch.waiting = true
	return false, ch.credit
}

// tryDeliver is deliver without waiting: sent false when channel (m.src, c)
// has no credit, the message then staying the caller's.
func (x *exchange) tryDeliver(c int, m message) (sent bool, err error) {
	in := x.inbox[c]
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		x.put(m.batch)
		return true, x.j.ctx.Err()
	}
	return in.put(m.src, m), nil
}

// deliver sends m to consumer c over channel (m.src, c) once it has credit,
// waiting while it is full (backpressure, counted in the metrics). When the
// consumer has ended the batch is dropped; when the job is cancelled the
// error is returned.
func (x *exchange) deliver(c int, m message, met *TaskMetrics) error {
	in := x.inbox[c]
	ch := &in.chans[m.src]
	var since time.Time
	for {
		in.mu.Lock()
		if in.closed {
			in.mu.Unlock()
			x.put(m.batch)
			return x.j.ctx.Err()
		}
		if in.put(m.src, m) {
			in.mu.Unlock()
			if !since.IsZero() {
				met.addBackpressured(since)
			}
			return nil
		}
		ch.waiting = true
		in.mu.Unlock()
		if since.IsZero() {
			since = time.Now()
			met.beginBackpressured(since)
		}
		select {
		case <-ch.credit:
		case <-x.done[c]:
		case <-x.j.ctx.Done():
			met.addBackpressured(since)
			x.put(m.batch)
			return x.j.ctx.Err()
		}
	}
}

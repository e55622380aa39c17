package shuffle

import (
	"fmt"
	"io"
	"sync"

	"github.com/weirdata/weir/internal/ring"
)

// EventKind says what an event frame means. The transport knows only
// EndOfPartition; the runtime gives every other kind its meaning
// (watermark, watermark status, barrier, end of superstep).
type EventKind uint8

// EndOfPartition is the last frame of a channel (Producer.Close).
const EndOfPartition EventKind = 0

// FrameType says how a frame travelled.
type FrameType uint8

const (
	// Data is an encoded batch, sent against credit.
	Data FrameType = iota + 1
	// Event is an in-band event, sent against credit like data.
	Event
	// Priority is a priority event (an unaligned barrier): it took no
	// credit and overtook the frames queued in its channel.
	Priority
)

// Frame is what an Inbox hands out. Bytes belong to a pooled buffer: they
// are valid until Release.
type Frame struct {
	Type     FrameType
	Kind     EventKind // of an Event or Priority frame
	Producer int       // the producer subtask: the channel it came over
	// Overtook counts the frames of its channel a Priority frame overtook:
	// those queued when it arrived, which Poll hands out after it.
	Overtook int
	Bytes    []byte
	buf      *[]byte
}

// Release returns the frame's buffer to the pool; Bytes are invalid after.
func (f *Frame) Release() {
	freeBuf(f.buf)
	f.buf, f.Bytes = nil, nil
}

// Inbox is a consumer subtask's end of an edge: one channel per producer
// subtask, each a queue of capacity frames, and a FIFO of the channels with
// data in the order they got it (flow's inbox, fed over the network).
//
// Credit: a channel grants its producer capacity credits when the producer
// opens it and one more each time Poll takes a data or event frame from it,
// so a channel never holds more than capacity frames and a producer sends
// only what its channel has room for. A blocked channel is not read: its
// queue fills and its producer runs out of credit, while the other
// channels, over the same connection or not, keep flowing.
//
// Poll, PollPriority, Block, Unblock and Close may be called from any
// goroutine; the runtime calls them from the consumer subtask's.
type Inbox struct {
	s  *Server
	id InboxID

	mu     sync.Mutex
	chans  []inChan
	avail  ring.FIFO // channels with frames that are not blocked
	ready  chan struct{}
	err    error // a broken connection of a channel that had not ended
	ended  int   // channels whose EndOfPartition Poll handed out
	closed bool
}

// inChan is the queue of one producer's channel.
type inChan struct {
	q       []Frame // ring of capacity frames
	head, n int
	prio    []Frame // priority frames, read before q
	queued  bool    // in avail
	blocked bool
	eop     bool // EndOfPartition received: no more frames
	done    bool // EndOfPartition handed out
	conn    *sconn
	idx     uint64 // the channel's index on conn
	// credits granted to the producer and frames received against them
	granted, received uint64
}

func newInbox(s *Server, id InboxID, producers, capacity int) *Inbox {
	in := &Inbox{s: s, id: id, chans: make([]inChan, producers), avail: ring.New(producers), ready: make(chan struct{}, 1)}
	for p := range in.chans {
		in.chans[p].q = make([]Frame, capacity)
	}
	return in
}

// ID returns the inbox's name.
func (in *Inbox) ID() InboxID { return in.id }

// Ready returns a channel that receives when a frame arrives on a channel
// that is not blocked, a priority frame arrives, or a connection breaks.
// The runtime polls until Poll finds nothing, then waits on Ready.
func (in *Inbox) Ready() <-chan struct{} { return in.ready }

func (in *Inbox) signal() {
	select {
	case in.ready <- struct{}{}:
	default:
	}
}

// attach connects channel p to its producer at index idx of conn and
// grants it its initial credit.
func (in *Inbox) attach(p int, c *sconn, idx uint64) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	ch := &in.chans[p]
	if ch.conn != nil {
		return fmt.Errorf("shuffle: channel %d of %s opened twice", p, in.id)
	}
	ch.conn, ch.idx = c, idx
	if in.closed {
		c.release(idx)
		return nil
	}
	ch.granted += uint64(len(ch.q))
	c.grant(idx, uint64(len(ch.q)))
	return nil
}

// put queues frame f of channel p, which must have credit left.
func (in *Inbox) put(p int, f Frame) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	ch := &in.chans[p]
	if in.closed {
		f.Release()
		return nil
	}
	if ch.eop {
		f.Release()
		return fmt.Errorf("shuffle: channel %d of %s sent a frame after its end of partition", p, in.id)
	}
	if ch.received == ch.granted || ch.n == len(ch.q) {
		f.Release()
		return fmt.Errorf("shuffle: channel %d of %s sent frame %d with %d credits granted", p, in.id, ch.received+1, ch.granted)
	}
	ch.received++
	if f.Type == Event && f.Kind == EndOfPartition {
		ch.eop = true
	}
	ch.q[ring.Wrap(ch.head+ch.n, len(ch.q))] = f
	ch.n++
	in.queue(p)
	return nil
}

// putPriority puts priority frame f in front of channel p's queue.
func (in *Inbox) putPriority(p int, f Frame) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	ch := &in.chans[p]
	if in.closed {
		f.Release()
		return nil
	}
	if ch.eop {
		f.Release()
		return fmt.Errorf("shuffle: channel %d of %s sent a priority frame after its end of partition", p, in.id)
	}
	f.Overtook = ch.n
	ch.prio = append(ch.prio, f)
	in.queue(p)
	in.signal()
	return nil
}

// queue puts channel p in avail unless it is there or blocked. The caller
// holds mu.
func (in *Inbox) queue(p int) {
	ch := &in.chans[p]
	if !ch.queued && !ch.blocked {
		ch.queued = true
		in.avail.Push(p)
		if in.avail.Len() == 1 {
			in.signal()
		}
	}
}

// fail records that channel p's connection broke; it fails the inbox
// unless the channel had ended.
func (in *Inbox) fail(p int, c *sconn, err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	ch := &in.chans[p]
	if ch.conn != c || ch.eop || in.closed || in.err != nil {
		return
	}
	in.err = err
	in.signal()
}

// Poll returns the next frame of the first channel with frames that is not
// blocked (priority frames first), or ok false when there is none. Taking a
// data or event frame grants its producer a credit. Poll returns the error
// of a broken connection once a channel that had not ended lost its
// producer, and io.EOF once every channel's EndOfPartition was handed out.
func (in *Inbox) Poll() (f Frame, ok bool, err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.err != nil {
		return f, false, in.err
	}
	for in.avail.Len() > 0 {
		p := in.avail.Pop()
		ch := &in.chans[p]
		if len(ch.prio) > 0 {
			f = ch.popPriority()
		} else if ch.n > 0 {
			f = ch.q[ch.head]
			ch.q[ch.head] = Frame{}
			ch.head = ring.Wrap(ch.head+1, len(ch.q))
			ch.n--
			if f.Type == Event && f.Kind == EndOfPartition {
				ch.done = true
				in.ended++
			} else {
				ch.granted++
				ch.conn.grant(ch.idx, 1)
			}
		} else {
			ch.queued = false
			continue
		}
		if ch.n > 0 || len(ch.prio) > 0 {
			in.avail.Push(p) // round robin among the channels with frames
		} else {
			ch.queued = false
		}
		return f, true, nil
	}
	if in.ended == len(in.chans) {
		return f, false, io.EOF
	}
	return f, false, nil
}

func (ch *inChan) popPriority() Frame {
	f := ch.prio[0]
	ch.prio[0] = Frame{}
	ch.prio = ch.prio[1:]
	if len(ch.prio) == 0 {
		ch.prio = ch.prio[:0:0]
	}
	return f
}

// PollPriority returns the first priority frame of any channel, blocked or
// not, or ok false: what a task whose outputs have no credit still reads.
func (in *Inbox) PollPriority() (f Frame, ok bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for p := range in.chans {
		if ch := &in.chans[p]; len(ch.prio) > 0 {
			return ch.popPriority(), true
		}
	}
	return f, false
}

// Block stops reading channel p (a barrier being aligned): its frames stay
// queued, and its producer stops when its credit runs out.
func (in *Inbox) Block(p int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	ch := &in.chans[p]
	if ch.blocked {
		return
	}
	ch.blocked = true
	if ch.queued {
		ch.queued = false
		in.avail.Remove(p)
	}
}

// Unblock reads channel p again.
func (in *Inbox) Unblock(p int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	ch := &in.chans[p]
	if !ch.blocked {
		return
	}
	ch.blocked = false
	if ch.n > 0 || len(ch.prio) > 0 {
		in.queue(p)
	}
}

// Close ends the consumer: queued frames are released, and each producer
// is told to drop what it sends from now on. The inbox's id may be
// registered again after.
func (in *Inbox) Close() {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return
	}
	in.closed = true
	for p := range in.chans {
		ch := &in.chans[p]
		for ; ch.n > 0; ch.n-- {
			ch.q[ch.head].Release()
			ch.q[ch.head] = Frame{}
			ch.head = ring.Wrap(ch.head+1, len(ch.q))
		}
		for len(ch.prio) > 0 {
			f := ch.popPriority()
			f.Release()
		}
		if ch.conn != nil && !ch.eop {
			ch.conn.release(ch.idx)
		}
	}
	in.mu.Unlock()
	in.s.remove(in)
}

// credits returns the credits granted to channel p and the frames received
// against them.
func (in *Inbox) credits(p int) (granted, received uint64) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.chans[p].granted, in.chans[p].received
}

package flow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// LinkVertex is the vertex of a spread job's control channels (Link): its
// subtask i runs in part i. The placement a spread job gives its
// Transport must say so.
const LinkVertex = -1

// The control channels: edges beyond any graph's, on LinkVertex.
const (
	linkUp     = 1 << 29   // a part's messages to part 0
	linkDown   = 1<<29 + 1 // part 0's messages to a part
	linkCredit = 64        // frames a control channel holds
	// LinkFragment is a control channel's largest frame: a longer message
	// goes in pieces.
	LinkFragment = 1 << 20
	linkFlush    = 10 * time.Second // how long Close waits for the outboxes
)

// errLink is a control frame that is not a message piece.
var errLink = errors.New("flow: corrupt frame on a control channel")

// Link is one part's end of the control channels of a job spread over
// parts processes: part 0 talks to every other part, and every other part
// to part 0, over the same Transport as the job's data. Messages are byte
// strings; they arrive whole and in the order they were sent, a message of
// any length (it goes in frames of at most LinkFragment bytes).
//
// Each peer gets an outbox and a goroutine that sends it, so Send never
// blocks. One goroutine hands the inbox's messages to the handler, in
// order of arrival per peer. The first failure (a connection lost, a
// handler's error) goes to the broken callback, once; a peer that ends its
// channel is no failure.
type Link struct {
	part   int
	in     Receiver
	outs   map[int]*linkOutbox
	h      LinkHandlers
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	peers  int           // producers of the inbox that have not ended
	ended  chan struct{} // closed when the inbox ended
}

// linkOutbox queues messages for one peer; its goroutine sends them.
type linkOutbox struct {
	mu     sync.Mutex
	q      [][]byte
	closed bool
	wake   chan struct{}
	snd    Sender
	to     int
}

// LinkHandlers are what a Link calls, from its inbox's goroutine.
type LinkHandlers struct {
	// Message gets each message, whole; b is the handler's. An error
	// breaks the link.
	Message func(from int, b []byte) error
	// Ended, if set, learns that a peer ended its channel to this part:
	// nothing more comes from it.
	Ended func(from int)
	// Broken gets the link's first failure: a connection lost, a frame
	// that is not a message's, a Message error.
	Broken func(err error)
}

// OpenLink registers part's inbox on t and opens its outboxes (part 0: to
// parts 1..parts-1; another part: to part 0). ctx bounds the link's
// goroutines; Close ends them.
func OpenLink(ctx context.Context, part, parts int, t Transport, h LinkHandlers) (*Link, error) {
	if part < 0 || part >= parts {
		return nil, fmt.Errorf("flow: part %d of a link of %d parts", part, parts)
	}
	l := &Link{part: part, outs: map[int]*linkOutbox{}, h: h, ended: make(chan struct{})}
	l.ctx, l.cancel = context.WithCancel(ctx)
	var err error
	peers := []int{0}
	if part == 0 {
		peers = peers[:0]
		for p := 1; p < parts; p++ {
			peers = append(peers, p)
		}
		l.in, err = t.Inbox(linkUp, 0, parts, linkCredit)
	} else {
		l.in, err = t.Inbox(linkDown, part, 1, linkCredit)
	}
	if err != nil {
		l.cancel()
		return nil, fmt.Errorf("flow: the control channel of part %d: %w", part, err)
	}
	l.peers = len(peers)
	for _, p := range peers {
		ch := Channel{Edge: linkUp, From: LinkVertex, To: LinkVertex, Producer: part, Consumer: 0}
		if part == 0 {
			ch = Channel{Edge: linkDown, From: LinkVertex, To: LinkVertex, Producer: 0, Consumer: p}
		}
		snd, err := t.Open(l.ctx, ch)
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("flow: the control channel from part %d to part %d: %w", part, ch.Consumer, err)
		}
		o := &linkOutbox{wake: make(chan struct{}, 1), snd: snd, to: ch.Consumer}
		l.outs[ch.Consumer] = o
		l.wg.Add(1)
		go l.sendLoop(o)
	}
	l.wg.Add(1)
	go l.recvLoop()
	return l, nil
}

// Send queues b for part to; it does not wait. A message to a part that
// is not a peer, or after Flush, is dropped. The link keeps b.
func (l *Link) Send(to int, b []byte) {
	o := l.outs[to]
	if o == nil {
		return
	}
	o.mu.Lock()
	if !o.closed {
		o.q = append(o.q, b)
	}
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Ended is closed once every peer ended its channel to this part, or the
// link broke or closed: no message comes after.
func (l *Link) Ended() <-chan struct{} { return l.ended }

// sendLoop sends o's messages, each in frames of at most LinkFragment
// bytes after a byte that says whether more of it follows, until o is
// closed and empty; then it ends the channel.
func (l *Link) sendLoop(o *linkOutbox) {
	defer l.wg.Done()
	for {
		o.mu.Lock()
		q, closed := o.q, o.closed
		o.q = nil
		o.mu.Unlock()
		for _, b := range q {
			for first := true; first || len(b) > 0; first = false {
				n := min(len(b), LinkFragment)
				more := byte(0)
				if n < len(b) {
					more = 1
				}
				if err := o.snd.Send(l.ctx, append([]byte{more}, b[:n]...)); err != nil {
					if l.ctx.Err() == nil {
						l.h.Broken(fmt.Errorf("flow: the control channel from part %d to part %d: %w", l.part, o.to, err))
					}
					return
				}
				b = b[n:]
			}
		}
		if closed && len(q) == 0 {
			if err := o.snd.Close(l.ctx); err != nil && l.ctx.Err() == nil {
				l.h.Broken(fmt.Errorf("flow: the control channel from part %d to part %d: %w", l.part, o.to, err))
			}
			return
		}
		if len(q) > 0 {
			continue
		}
		select {
		case <-o.wake:
		case <-l.ctx.Done():
			return
		}
	}
}

// recvLoop hands each message the inbox gets to handle, until every peer
// ended its channel or the link closed.
func (l *Link) recvLoop() {
	defer l.wg.Done()
	defer close(l.ended)
	pieces := map[int][]byte{}
	for l.peers > 0 {
		select {
		case <-l.in.Ready():
		case <-l.ctx.Done():
			return
		}
		for {
			ok, err := l.in.Poll(func(p int, kind EventKind, b []byte) error {
				if kind == EndOfPartition {
					l.peers--
					if l.h.Ended != nil {
						l.h.Ended(p)
					}
					return nil
				}
				if kind != 0 || len(b) == 0 {
					return fmt.Errorf("%w: event %v", errLink, kind)
				}
				pieces[p] = append(pieces[p], b[1:]...)
				if b[0] != 0 {
					return nil
				}
				whole := pieces[p]
				delete(pieces, p)
				return l.h.Message(p, whole)
			})
			if err != nil {
				if l.ctx.Err() == nil {
					l.h.Broken(fmt.Errorf("flow: the control channel of part %d: %w", l.part, err))
				}
				return
			}
			if !ok {
				break
			}
		}
	}
}

// Flush closes the outboxes: each sends what it holds, then ends its
// channel. Send drops what comes after.
func (l *Link) Flush() {
	for _, o := range l.outs {
		o.mu.Lock()
		o.closed = true
		o.mu.Unlock()
		select {
		case o.wake <- struct{}{}:
		default:
		}
	}
}

// Close flushes the link, waits for its goroutines (the outboxes at most
// ten seconds to drain; the inbox until its peers ended their channels
// within that time) and ends the inbox.
func (l *Link) Close() {
	l.Flush()
	stopped := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(stopped)
	}()
	t := time.NewTimer(linkFlush)
	select {
	case <-stopped:
	case <-t.C:
	}
	t.Stop()
	l.cancel()
	<-stopped
	l.in.Close()
}

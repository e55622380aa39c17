package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weirdata/weir/flow"
)

// Spread places a job's subtasks in several processes (stream.Spread):
// subtask i of every task runs in the part that holds slot i modulo the
// slots of all. Part 0 runs the checkpoint coordinator and the sources'
// split enumerators; the other parts reach them over a link of two
// control channels on the Transport.
type Spread struct {
	Part      int
	Slots     []int
	Transport func(part func(v, i int) int) (flow.Transport, error)
}

// The control channels: edges beyond any flow graph's, on a vertex of
// their own whose subtask i runs in part i.
const (
	upEdge     = 1 << 29   // a part's messages to part 0
	downEdge   = 1<<29 + 1 // part 0's messages to a part
	ctlVertex  = -1
	ctlCredit  = 64      // frames a control channel holds
	fragment   = 1 << 20 // the largest frame: a longer message goes in pieces
	flushLimit = 10 * time.Second
)

// slotPart returns the part that holds slot i modulo the total.
func (s *Spread) slotPart(i int) int { return flow.SlotPart(s.Slots, i) }

// part returns the part that runs subtask i of flow vertex v.
func (s *Spread) part(v, i int) int {
	if v == ctlVertex {
		return i
	}
	return s.slotPart(i)
}

// Here reports whether subtask i of every task runs in this part.
func (s *Spread) Here(i int) bool { return s.slotPart(i) == s.Part }

// link is one part's end of the control channels: an inbox and an outbox
// per peer (part 0: every other part; another part: part 0).
type link struct {
	part   int
	in     flow.Receiver
	outs   map[int]*outbox
	handle func(from int, m *msg) error
	broken func(err error)
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	peers  int // producers of the inbox that have not ended
}

// outbox queues messages for one peer; its goroutine sends them.
type outbox struct {
	mu     sync.Mutex
	q      [][]byte
	closed bool
	wake   chan struct{}
	snd    flow.Sender
	to     int
}

// openLink registers this part's inbox and opens its outboxes; handle
// gets each message in order of arrival, broken the first failure of the
// link (a connection lost, a message that does not decode).
func openLink(ctx context.Context, s *Spread, t flow.Transport, handle func(int, *msg) error, broken func(error)) (*link, error) {
	l := &link{part: s.Part, outs: map[int]*outbox{}, handle: handle, broken: broken}
	l.ctx, l.cancel = context.WithCancel(ctx)
	var err error
	peers := []int{0}
	if s.Part == 0 {
		peers = peers[:0]
		for p := 1; p < len(s.Slots); p++ {
			peers = append(peers, p)
		}
		l.in, err = t.Inbox(upEdge, 0, len(s.Slots), ctlCredit)
	} else {
		l.in, err = t.Inbox(downEdge, s.Part, 1, ctlCredit)
	}
	if err != nil {
		l.cancel()
		return nil, fmt.Errorf("stream: the control channel of part %d: %w", s.Part, err)
	}
	l.peers = len(peers)
	for _, p := range peers {
		ch := flow.Channel{Edge: upEdge, From: ctlVertex, To: ctlVertex, Producer: s.Part, Consumer: 0}
		if s.Part == 0 {
			ch = flow.Channel{Edge: downEdge, From: ctlVertex, To: ctlVertex, Producer: 0, Consumer: p}
		}
		snd, err := t.Open(l.ctx, ch)
		if err != nil {
			l.close()
			return nil, fmt.Errorf("stream: the control channel from part %d to part %d: %w", s.Part, ch.Consumer, err)
		}
		o := &outbox{wake: make(chan struct{}, 1), snd: snd, to: ch.Consumer}
		l.outs[ch.Consumer] = o
		l.wg.Add(1)
		go l.sendLoop(o)
	}
	l.wg.Add(1)
	go l.recvLoop()
	return l, nil
}

// send queues m for part to.
func (l *link) send(to int, m *msg) {
	o := l.outs[to]
	if o == nil {
		return
	}
	b := m.encode()
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

// sendLoop sends o's messages, each in frames of at most fragment bytes
// after a byte that says whether more of it follows, until o is closed
// and empty; then it ends the channel.
func (l *link) sendLoop(o *outbox) {
	defer l.wg.Done()
	for {
		o.mu.Lock()
		q, closed := o.q, o.closed
		o.q = nil
		o.mu.Unlock()
		for _, b := range q {
			for len(b) > 0 {
				n := min(len(b), fragment)
				more := byte(0)
				if n < len(b) {
					more = 1
				}
				if err := o.snd.Send(l.ctx, append([]byte{more}, b[:n]...)); err != nil {
					if l.ctx.Err() == nil {
						l.broken(fmt.Errorf("stream: the control channel from part %d to part %d: %w", l.part, o.to, err))
					}
					return
				}
				b = b[n:]
			}
		}
		if closed && len(q) == 0 {
			if err := o.snd.Close(l.ctx); err != nil && l.ctx.Err() == nil {
				l.broken(fmt.Errorf("stream: the control channel from part %d to part %d: %w", l.part, o.to, err))
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
func (l *link) recvLoop() {
	defer l.wg.Done()
	parts := map[int][]byte{}
	for l.peers > 0 {
		select {
		case <-l.in.Ready():
		case <-l.ctx.Done():
			return
		}
		for {
			ok, err := l.in.Poll(func(p int, kind flow.EventKind, b []byte) error {
				if kind == flow.EndOfPartition {
					l.peers--
					return nil
				}
				if kind != 0 || len(b) == 0 {
					return fmt.Errorf("%w: event %v", errWire, kind)
				}
				parts[p] = append(parts[p], b[1:]...)
				if b[0] != 0 {
					return nil
				}
				whole := parts[p]
				delete(parts, p)
				m, err := decode(whole)
				if err != nil {
					return err
				}
				return l.handle(p, m)
			})
			if err != nil {
				if l.ctx.Err() == nil {
					l.broken(fmt.Errorf("stream: the control channel of part %d: %w", l.part, err))
				}
				return
			}
			if !ok {
				break
			}
		}
	}
}

// flush closes the outboxes: each sends what it holds, then ends its
// channel.
func (l *link) flush() {
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

// close stops the link's goroutines, after at most flushLimit for the
// outboxes to drain, and ends the inbox.
func (l *link) close() {
	l.flush()
	stopped := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(stopped)
	}()
	t := time.NewTimer(flushLimit)
	select {
	case <-stopped:
	case <-t.C:
	}
	t.Stop()
	l.cancel()
	<-stopped
	l.in.Close()
}

// errPartEnded is why a part's flow job ends when another part ended the
// job.
var errPartEnded = errors.New("stream: another part of the spread job ended it")

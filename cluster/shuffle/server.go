package shuffle

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/peer"
)

// Server is the consumer side of a process: it serves the shuffle's
// Exchange streams that producer processes open to it and routes their
// frames into the Inboxes its consumer subtasks register. Register it on
// the process's grpc.Server, made with ServerOptions.
type Server struct {
	opts Options

	mu      sync.Mutex
	inboxes map[InboxID]*Inbox
	waiting map[InboxID][]opening // channels opened before their inbox
	conns   map[*sconn]struct{}
}

// opening is a channel a producer opened before its inbox was registered.
type opening struct {
	c   *sconn
	idx uint64
	p   int
}

// NewServer returns a Server with the given options.
func NewServer(opts Options) *Server {
	opts.ensureDefaults()
	return &Server{opts: opts, inboxes: map[InboxID]*Inbox{}, waiting: map[InboxID][]opening{}, conns: map[*sconn]struct{}{}}
}

// Register registers the shuffle service on r.
func (s *Server) Register(r grpc.ServiceRegistrar) { r.RegisterService(&serviceDesc, s) }

// Inbox registers the inbox id with a channel from each of producers
// subtasks, each of capacity frames (the credit a producer starts with).
// Channels already opened by their producers are attached at once.
func (s *Server) Inbox(id InboxID, producers, capacity int) (*Inbox, error) {
	if producers < 1 || capacity < 1 {
		return nil, fmt.Errorf("shuffle: inbox %s needs producers and capacity of at least 1, got %d and %d", id, producers, capacity)
	}
	in := newInbox(s, id, producers, capacity)
	s.mu.Lock()
	if _, ok := s.inboxes[id]; ok {
		s.mu.Unlock()
		return nil, fmt.Errorf("shuffle: inbox %s registered twice", id)
	}
	s.inboxes[id] = in
	early := s.waiting[id]
	delete(s.waiting, id)
	s.mu.Unlock()
	for _, o := range early {
		err := fmt.Errorf("shuffle: channel from producer %d to inbox %s of %d producers", o.p, id, producers)
		if o.p < producers {
			err = o.c.attach(in, o.p, o.idx)
		}
		if err != nil {
			o.c.fail(err)
		}
	}
	return in, nil
}

// remove forgets a closed inbox.
func (s *Server) remove(in *Inbox) {
	s.mu.Lock()
	if s.inboxes[in.id] == in {
		delete(s.inboxes, in.id)
	}
	s.mu.Unlock()
}

// open routes channel idx of c, named id, to its inbox, now or when the
// inbox is registered.
func (s *Server) open(c *sconn, idx uint64, id ChannelID) error {
	s.mu.Lock()
	in := s.inboxes[id.inbox()]
	if in == nil {
		s.waiting[id.inbox()] = append(s.waiting[id.inbox()], opening{c: c, idx: idx, p: int(id.Producer)})
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	if int(id.Producer) >= len(in.chans) {
		return fmt.Errorf("shuffle: channel %s: inbox has %d producers", id, len(in.chans))
	}
	return c.attach(in, int(id.Producer), idx)
}

// forget drops the channels c opened whose inbox never came.
func (s *Server) forget(c *sconn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	for id, os := range s.waiting {
		k := 0
		for _, o := range os {
			if o.c != c {
				os[k] = o
				k++
			}
		}
		if k == 0 {
			delete(s.waiting, id)
		} else {
			s.waiting[id] = os[:k]
		}
	}
}

// route is where channel idx of a connection goes.
type route struct {
	in *Inbox
	p  int
}

// sconn is the consumer side of one Exchange stream: the channels of one
// producer process. Its goroutines: the handler (watchdog), the receiver
// (frames into inboxes) and the writer (credits, releases, heartbeats).
type sconn struct {
	s      *Server
	stream grpc.ServerStream
	addr   string
	name   atomic.Pointer[string] // the producer process's name, from its hello

	mu       sync.Mutex
	routes   map[uint64]route
	pend     map[uint64]uint64 // credits to grant
	released []uint64          // channels whose consumer ended
	err      error

	wake     chan struct{} // the writer has work
	quit     chan struct{} // closed when the connection ends
	lastRecv atomic.Int64  // unix nanoseconds of the last message received
}

// serve runs one Exchange stream until it ends or breaks.
func (s *Server) serve(stream grpc.ServerStream) error {
	c := &sconn{s: s, stream: stream, routes: map[uint64]route{}, pend: map[uint64]uint64{}, wake: make(chan struct{}, 1), quit: make(chan struct{})}
	if p, ok := peer.FromContext(stream.Context()); ok {
		c.addr = p.Addr.String()
	}
	c.lastRecv.Store(time.Now().UnixNano())
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()

	recvDone := make(chan error, 1)
	go func() { recvDone <- c.receive() }()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.write()
	}()

	tick := time.NewTicker(s.opts.HeartbeatInterval)
	defer tick.Stop()
	var err error
	for err == nil {
		select {
		case err = <-recvDone:
			if errors.Is(err, io.EOF) {
				err = errClosedByPeer
			}
		case <-tick.C:
			if since := time.Since(time.Unix(0, c.lastRecv.Load())); since > s.opts.HeartbeatTimeout {
				err = fmt.Errorf("no message for %v", since.Round(time.Millisecond))
			}
		case <-c.quit:
			c.mu.Lock()
			err = c.err
			c.mu.Unlock()
		case <-stream.Context().Done():
			err = fmt.Errorf("stream reset: %w", stream.Context().Err())
		}
	}
	c.fail(err)
	wg.Wait()
	s.forget(c)
	if errors.Is(err, errClosedByPeer) {
		return nil
	}
	return err
}

// errClosedByPeer is a connection its producer process closed.
var errClosedByPeer = errors.New("closed by the peer")

// peerName returns the producer process's name and address.
func (c *sconn) peerName() string {
	if n := c.name.Load(); n != nil {
		return *n + " at " + c.addr
	}
	return c.addr
}

// fail ends the connection: every channel on it that had not ended fails
// its inbox with an error naming the producer process.
func (c *sconn) fail(cause error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	err := fmt.Errorf("%w: producer %s: %w", ErrBroken, c.peerName(), cause)
	c.err = err
	close(c.quit)
	routes := make([]route, 0, len(c.routes))
	for _, r := range c.routes {
		routes = append(routes, r)
	}
	c.mu.Unlock()
	for _, r := range routes {
		r.in.fail(r.p, c, err)
	}
}

// attach routes channel idx to channel p of in and grants its credit.
func (c *sconn) attach(in *Inbox, p int, idx uint64) error {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil
	}
	c.routes[idx] = route{in: in, p: p}
	c.mu.Unlock()
	return in.attach(p, c, idx)
}

// grant queues n credits for channel idx. The caller may hold the inbox's
// lock.
func (c *sconn) grant(idx, n uint64) {
	c.mu.Lock()
	c.pend[idx] += n
	c.mu.Unlock()
	c.poke()
}

// release tells the producer of channel idx that its consumer ended.
func (c *sconn) release(idx uint64) {
	c.mu.Lock()
	c.released = append(c.released, idx)
	delete(c.pend, idx)
	c.mu.Unlock()
	c.poke()
}

func (c *sconn) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// receive reads messages until the stream ends.
func (c *sconn) receive() error {
	var m inMsg
	for {
		if err := c.stream.RecvMsg(&m); err != nil {
			return err
		}
		c.lastRecv.Store(time.Now().UnixNano())
		if err := c.dispatch(m.buf, m.b); err != nil {
			return err
		}
	}
}

// dispatch handles one message; the buffer's ownership passes to it.
func (c *sconn) dispatch(buf *[]byte, b []byte) error {
	h, err := decodeHeader(b)
	if err != nil {
		freeBuf(buf)
		return err
	}
	switch h.typ {
	case msgHeartbeat:
		freeBuf(buf)
		return nil
	case msgHello:
		freeBuf(buf)
		name := h.name // a copy: its address would move h to the heap
		c.name.Store(&name)
		return nil
	case msgOpen:
		freeBuf(buf)
		return c.s.open(c, h.idx, h.id)
	}
	c.mu.Lock()
	r, ok := c.routes[h.idx]
	c.mu.Unlock()
	if !ok {
		freeBuf(buf)
		return fmt.Errorf("shuffle: frame for channel %d that has no credit", h.idx)
	}
	f := Frame{Producer: r.p, Kind: h.kind, Bytes: b[h.body:], buf: buf}
	switch h.typ {
	case msgData:
		f.Type = Data
		return r.in.put(r.p, f)
	case msgEvent:
		f.Type = Event
		if f.Kind == EndOfPartition && len(f.Bytes) != 0 {
			f.Release()
			return fmt.Errorf("%w: end of partition with a payload", errWire)
		}
		return r.in.put(r.p, f)
	default:
		f.Type = Priority
		return r.in.putPriority(r.p, f)
	}
}

// write sends credits, releases and heartbeats until the connection ends.
func (c *sconn) write() {
	tick := time.NewTicker(c.s.opts.HeartbeatInterval)
	defer tick.Stop()
	var out outMsg
	var rel []uint64
	for {
		beat := false
		select {
		case <-c.quit:
			return
		case <-c.wake:
		case <-tick.C:
			beat = true
		}
		buf := newBuf(4 << 10)
		b := append((*buf)[:0], msgCredit)
		c.mu.Lock()
		for idx, n := range c.pend {
			b = appendGrant(b, idx, n)
		}
		clear(c.pend)
		rel = append(rel[:0], c.released...)
		c.released = c.released[:0]
		c.mu.Unlock()
		if len(b) > 1 {
			if !c.send(&out, buf, b) {
				return
			}
			beat = false
			buf = newBuf(4 << 10)
		}
		if len(rel) > 0 {
			b = append((*buf)[:0], msgRelease)
			for _, idx := range rel {
				b = binary.AppendUvarint(b, idx)
			}
			if !c.send(&out, buf, b) {
				return
			}
			beat = false
			buf = newBuf(4 << 10)
		}
		if beat {
			b = append((*buf)[:0], msgBeat)
			if !c.send(&out, buf, b) {
				return
			}
			continue
		}
		freeBuf(buf)
	}
}

// send sends message b, held in buf, and reports whether it went out.
func (c *sconn) send(out *outMsg, buf *[]byte, b []byte) bool {
	*buf = b
	out.bufs = mem.BufferSlice{mem.NewBuffer(buf, pool)}
	if err := c.stream.SendMsg(out); err != nil {
		c.fail(fmt.Errorf("send: %w", err))
		return false
	}
	return true
}

package shuffle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
)

// Client is the producer side of a process: one Exchange stream to each
// consumer process, over which its producer subtasks' channels to that
// process are multiplexed.
type Client struct {
	opts Options

	mu     sync.Mutex
	conns  map[string]*cconn
	closed bool
	wg     sync.WaitGroup
}

// NewClient returns a Client with the given options.
func NewClient(opts Options) *Client {
	opts.ensureDefaults()
	return &Client{opts: opts, conns: map[string]*cconn{}}
}

// ErrClosed is a Client or Producer used after Close.
var ErrClosed = errors.New("shuffle: closed")

// cconn is the producer side of one Exchange stream. Its goroutines: the
// receiver (credits and releases) and the heartbeat (heartbeats and the
// watchdog).
type cconn struct {
	cl     *Client
	addr   string
	cc     *grpc.ClientConn
	stream grpc.ClientStream
	cancel context.CancelFunc

	sendMu sync.Mutex // serializes SendMsg
	out    outMsg

	mu    sync.Mutex
	chans map[uint64]*Producer
	next  uint64
	err   error
	done  chan struct{} // closed when the connection ends

	recvDone chan struct{}
	lastRecv atomic.Int64
}

// Open opens channel id to the consumer process at addr and returns its
// producer end. The producer sends nothing until the consumer registers
// the channel's inbox and grants credit.
func (cl *Client) Open(ctx context.Context, addr string, id ChannelID) (*Producer, error) {
	c, err := cl.conn(ctx, addr)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	p := &Producer{c: c, id: id, idx: c.next, wake: make(chan struct{}, 1)}
	c.next++
	c.chans[p.idx] = p
	c.mu.Unlock()
	buf := newBuf(4 << 10)
	if err := c.write(buf, appendOpen((*buf)[:0], p.idx, id)); err != nil {
		return nil, err
	}
	return p, nil
}

// conn returns the connection to addr, dialling it if there is none or it
// broke.
func (cl *Client) conn(ctx context.Context, addr string) (*cconn, error) {
	cl.mu.Lock()
	if cl.closed {
		cl.mu.Unlock()
		return nil, ErrClosed
	}
	if c := cl.conns[addr]; c != nil {
		select {
		case <-c.done:
		default:
			cl.mu.Unlock()
			return c, nil
		}
	}
	c, err := cl.dial(ctx, addr)
	if err != nil {
		cl.mu.Unlock()
		return nil, err
	}
	cl.conns[addr] = c
	cl.wg.Add(2)
	go c.receive()
	go c.heartbeat()
	// the hello goes first: no Open can send before sendMu is released
	c.sendMu.Lock()
	cl.mu.Unlock()
	buf := newBuf(4 << 10)
	*buf = appendHello((*buf)[:0], cl.opts.Name)
	c.out.bufs = mem.BufferSlice{mem.NewBuffer(buf, pool)}
	err = c.stream.SendMsg(&c.out)
	c.sendMu.Unlock()
	if err != nil {
		c.fail(fmt.Errorf("send: %w", err))
		return nil, c.failure()
	}
	return c, nil
}

// dial connects to addr and opens the Exchange stream.
func (cl *Client) dial(ctx context.Context, addr string) (*cconn, error) {
	cc, err := grpc.NewClient(addr, dialOptions(cl.opts)...)
	if err != nil {
		return nil, fmt.Errorf("shuffle: dial %s: %w", addr, err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel) // the dial is bounded by ctx, the stream is not
	stream, err := cc.NewStream(sctx, &serviceDesc.Streams[0], methodExchange)
	if !stop() {
		err = errors.Join(err, ctx.Err())
	}
	if err != nil {
		cancel()
		cc.Close()
		return nil, fmt.Errorf("%w: consumer %s: %w", ErrBroken, addr, err)
	}
	c := &cconn{cl: cl, addr: addr, cc: cc, stream: stream, cancel: cancel, chans: map[uint64]*Producer{}, done: make(chan struct{}), recvDone: make(chan struct{})}
	c.lastRecv.Store(time.Now().UnixNano())
	return c, nil
}

// failure returns the error the connection failed with.
func (c *cconn) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends every connection: each stream is half-closed and waited for,
// so that what was sent arrives, then torn down. Producers still open see
// their consumer's connection end.
func (cl *Client) Close() error {
	cl.mu.Lock()
	cl.closed = true
	conns := make([]*cconn, 0, len(cl.conns))
	for _, c := range cl.conns {
		conns = append(conns, c)
	}
	clear(cl.conns)
	cl.mu.Unlock()
	for _, c := range conns {
		c.sendMu.Lock()
		c.stream.CloseSend()
		c.sendMu.Unlock()
		t := time.NewTimer(cl.opts.HeartbeatTimeout)
		select {
		case <-c.recvDone:
		case <-t.C:
		}
		t.Stop()
		c.fail(ErrClosed)
	}
	cl.wg.Wait()
	return nil
}

// fail ends the connection with cause: every producer on it returns an
// error naming the consumer process from now on.
func (c *cconn) fail(cause error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	if errors.Is(cause, ErrClosed) {
		c.err = cause
	} else {
		c.err = fmt.Errorf("%w: consumer %s: %w", ErrBroken, c.addr, cause)
	}
	close(c.done)
	c.mu.Unlock()
	c.cancel()
	c.cc.Close()
	c.cl.mu.Lock()
	if c.cl.conns[c.addr] == c {
		delete(c.cl.conns, c.addr)
	}
	c.cl.mu.Unlock()
}

// write sends message b, held in buf, whose ownership passes to gRPC.
func (c *cconn) write(buf *[]byte, b []byte) error {
	*buf = b
	c.sendMu.Lock()
	c.out.bufs = mem.BufferSlice{mem.NewBuffer(buf, pool)}
	err := c.stream.SendMsg(&c.out)
	c.sendMu.Unlock()
	if err != nil {
		if errors.Is(err, io.EOF) {
			// the stream ended; the receiver has its status
			<-c.recvDone
		}
		c.fail(fmt.Errorf("send: %w", err))
		err = c.failure()
	}
	return err
}

// receive reads credits and releases until the stream ends.
func (c *cconn) receive() {
	defer c.cl.wg.Done()
	defer close(c.recvDone)
	var m inMsg
	for {
		err := c.stream.RecvMsg(&m)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errClosedByPeer
			}
			c.fail(err)
			return
		}
		c.lastRecv.Store(time.Now().UnixNano())
		c.mu.Lock()
		err = walkControl(m.b, c.granted, c.released)
		c.mu.Unlock()
		freeBuf(m.buf)
		if err != nil {
			c.fail(err)
			return
		}
	}
}

// granted adds n credits to channel idx. The caller holds mu.
func (c *cconn) granted(idx, n uint64) {
	if p := c.chans[idx]; p != nil {
		p.credit += n
		p.grants += n
		p.signal()
	}
}

// released marks channel idx's consumer ended. The caller holds mu.
func (c *cconn) released(idx uint64) {
	if p := c.chans[idx]; p != nil {
		p.released = true
		p.signal()
	}
}

// heartbeat sends a heartbeat every interval and fails the connection when
// the consumer sent nothing for the timeout.
func (c *cconn) heartbeat() {
	defer c.cl.wg.Done()
	opts := &c.cl.opts
	tick := time.NewTicker(opts.HeartbeatInterval)
	defer tick.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-tick.C:
		}
		if since := time.Since(time.Unix(0, c.lastRecv.Load())); since > opts.HeartbeatTimeout {
			c.fail(fmt.Errorf("no message for %v", since.Round(time.Millisecond)))
			return
		}
		// a Send waiting on the stream is as good as a heartbeat
		if c.sendMu.TryLock() {
			buf := newBuf(4 << 10)
			*buf = append((*buf)[:0], msgHeartbeat)
			c.out.bufs = mem.BufferSlice{mem.NewBuffer(buf, pool)}
			err := c.stream.SendMsg(&c.out)
			c.sendMu.Unlock()
			if err != nil && !errors.Is(err, io.EOF) {
				c.fail(fmt.Errorf("send: %w", err))
				return
			}
		}
	}
}

// Producer is the producer end of one channel. Its methods are called by
// one goroutine, the producer subtask's.
type Producer struct {
	c   *cconn
	id  ChannelID
	idx uint64

	// guarded by c.mu
	credit   uint64 // frames it may send
	grants   uint64 // credits granted in all
	sent     uint64 // frames sent against credit
	waiting  bool
	released bool // the consumer ended: frames are dropped
	closed   bool
	wake     chan struct{}
}

// ID returns the channel's name.
func (p *Producer) ID() ChannelID { return p.id }

// signal wakes the producer waiting for credit. The caller holds c.mu.
func (p *Producer) signal() {
	if p.waiting {
		p.waiting = false
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// Send sends data (an encoded batch; the caller keeps b) once the channel
// has credit, waiting while it has none: backpressure stops this channel
// alone. It returns ctx's error when ctx ends first, and an error wrapping
// ErrBroken when the connection to the consumer broke. When the consumer
// ended (Inbox.Close) the frame is dropped.
func (p *Producer) Send(ctx context.Context, b []byte) error {
	return p.send(ctx, msgData, 0, b)
}

// SendEvent sends an in-band event of kind (not EndOfPartition) with its
// payload, against credit like data.
func (p *Producer) SendEvent(ctx context.Context, kind EventKind, b []byte) error {
	if kind == EndOfPartition {
		return fmt.Errorf("shuffle: channel %s: end of partition is sent by Close", p.id)
	}
	return p.send(ctx, msgEvent, kind, b)
}

// SendPriority sends a priority event (an unaligned barrier) at once,
// without credit: the consumer reads it before the frames queued in the
// channel.
func (p *Producer) SendPriority(kind EventKind, b []byte) error {
	c := p.c
	if len(b) > c.cl.opts.MaxFrameSize {
		return fmt.Errorf("shuffle: channel %s: frame of %d bytes exceeds the maximum of %d", p.id, len(b), c.cl.opts.MaxFrameSize)
	}
	c.mu.Lock()
	err, drop := p.check()
	c.mu.Unlock()
	if err != nil || drop {
		return err
	}
	return c.write(p.frame(msgPriority, kind, b))
}

// Close sends end of partition, against credit, after every frame sent
// before, and forgets the channel.
func (p *Producer) Close(ctx context.Context) error {
	err := p.send(ctx, msgEvent, EndOfPartition, nil)
	c := p.c
	c.mu.Lock()
	p.closed = true
	delete(c.chans, p.idx)
	c.mu.Unlock()
	return err
}

// Credit returns the frames the channel may send now without waiting
// (Flink's isAvailable when above zero).
func (p *Producer) Credit() int {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	return int(p.credit)
}

// check returns the error a send meets, or drop true when the consumer
// ended. The caller holds c.mu.
func (p *Producer) check() (err error, drop bool) {
	switch {
	case p.closed:
		return fmt.Errorf("%w: channel %s", ErrClosed, p.id), false
	case p.c.err != nil:
		return p.c.err, false
	}
	return nil, p.released
}

func (p *Producer) send(ctx context.Context, typ byte, kind EventKind, b []byte) error {
	c := p.c
	if len(b) > c.cl.opts.MaxFrameSize {
		return fmt.Errorf("shuffle: channel %s: frame of %d bytes exceeds the maximum of %d", p.id, len(b), c.cl.opts.MaxFrameSize)
	}
	for {
		c.mu.Lock()
		err, drop := p.check()
		if err != nil || drop {
			c.mu.Unlock()
			return err
		}
		if p.credit > 0 {
			p.credit--
			p.sent++
			c.mu.Unlock()
			break
		}
		p.waiting = true
		c.mu.Unlock()
		select {
		case <-p.wake:
		case <-c.done:
		case <-ctx.Done():
			c.mu.Lock()
			p.waiting = false
			c.mu.Unlock()
			return ctx.Err()
		}
	}
	return c.write(p.frame(typ, kind, b))
}

// frame returns a pooled buffer holding the frame's message.
func (p *Producer) frame(typ byte, kind EventKind, b []byte) (*[]byte, []byte) {
	buf := newBuf(headerMax + len(b))
	n := putHeader(*buf, typ, p.idx, kind)
	n += copy((*buf)[n:], b)
	return buf, (*buf)[:n]
}

// credits returns the credits granted to the channel in all and the frames
// it sent against them.
func (p *Producer) credits() (granted, sent uint64) {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	return p.grants, p.sent
}

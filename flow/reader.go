package flow

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Reader is a consumer subtask's end of one input edge: it merges the partitions
// of every producer subtask feeding it, in arrival order (for a blocking edge:
// producer 0's partition, then producer 1's, ...).
//
// Contract: a Reader belongs to its task's goroutine. A batch returned by Next
// or NextOrEvent is owned by the body until the next call (then it is recycled);
// a body that keeps records past that copies them. Events come in order with the
// data of the producer that sent them. EndOfPartition events are consumed by the
// Reader: Next returns io.EOF once every producer feeding it ended.
type Reader[T any] struct {
	consumer

	// superstep mode (see Supersteps)
	step      *Aligner[T]
	stepEnded bool
}

// consumer is the untyped part of a Reader: receiving messages, recycling
// batches, the gate's view of the input. It is compiled once for every
// record type.
type consumer struct {
	x       *exchange
	tc      *TaskContext
	c       int
	in      *inbox // pipelined: this consumer's channels
	sources []int  // producer subtasks feeding this consumer
	ended   []bool // per producer subtask; true from the start for those not feeding it
	live    int
	cur     rawBatch
	peeked  bool // cur is a queued batch a gate peeked at (ItemInFlight)
	ev      Event
	closed  bool

	// blocking
	pulling bool // reading a remote producer's result (recvRemote)
	waited  bool
	si      int // index in sources of the store being replayed
	it      *storeReader
}

func (e *edge[T]) reader(tc *TaskContext) input {
	r := &Reader[T]{}
	r.consumer.init(e.rt, tc)
	return r
}

func (r *consumer) init(x *exchange, tc *TaskContext) {
	*r = consumer{x: x, tc: tc, c: tc.Subtask, ended: make([]bool, x.nProd)}
	if x.e.strategy == Forward {
		r.sources = []int{tc.Subtask}
		for p := range r.ended {
			r.ended[p] = p != tc.Subtask
		}
	} else {
		r.sources = make([]int, x.nProd)
		for p := range r.sources {
			r.sources[p] = p
		}
	}
	r.live = len(r.sources)
	if x.mode == Pipelined {
		r.in = x.inbox[tc.Subtask]
	}
}

// Input returns the task's i-th input (numbered in the order of Connect calls
// with this vertex as consumer). It panics, which Execute turns into the task's
// error, when there is no such input or it does not carry T: call it once, at
// the start of the body.
func Input[T any](tc *TaskContext, i int) *Reader[T] {
	if i < 0 || i >= len(tc.inputs) {
		panic(fmt.Sprintf("flow: vertex %q has %d inputs, no input %d", tc.Vertex, len(tc.inputs), i))
	}
	r, ok := tc.inputs[i].(*Reader[T])
	if !ok {
		panic(fmt.Sprintf("flow: vertex %q input %d is a %T, not a %T", tc.Vertex, i, tc.inputs[i], r))
	}
	return r
}

// Producers returns the number of producer subtasks of the edge (event sources
// are numbered 0..Producers()-1).
func (r *consumer) Producers() int { return r.x.nProd }

// Next returns the next batch, skipping events other than EndOfPartition, or
// io.EOF when every producer ended. A body that must see events uses
// NextOrEvent or an Aligner.
func (r *Reader[T]) Next(ctx context.Context) ([]T, error) {
	for {
		b, ev, err := r.NextOrEvent(ctx)
		if ev == nil || err != nil {
			return b, err
		}
	}
}

// ErrEndOfSuperstep is what a Reader in superstep mode returns at the end of a
// superstep. It wraps io.EOF, so a body that reads its input "until EOF" reads
// one superstep.
var ErrEndOfSuperstep = fmt.Errorf("flow: end of superstep: %w", io.EOF)

// Supersteps puts the reader into superstep mode, for the bodies of an
// iteration, which run once per superstep: an EndOfSuperstep event, once every
// live producer sent it (aligned as an Aligner does), ends the superstep: Next
// and NextOrEvent return ErrEndOfSuperstep from then on, until NextSuperstep
// starts the next one. io.EOF still means every producer ended. Call it before
// the first read; only pipelined edges carry events.
func (r *Reader[T]) Supersteps() error {
	if r.x.mode != Pipelined {
		return fmt.Errorf("flow: edge %s: supersteps need a pipelined edge", r.x.e.name)
	}
	if r.step == nil {
		r.step = NewAligner(r)
	}
	return nil
}

// NextSuperstep lets a reader in superstep mode read the next superstep.
func (r *Reader[T]) NextSuperstep() { r.stepEnded = false }

// NextOrEvent returns either the next batch (ev == nil) or the next event
// (batch == nil), in the order the producers sent them, or io.EOF when every
// producer ended. *ev is valid until the next call.
func (r *Reader[T]) NextOrEvent(ctx context.Context) (batch []T, ev *Event, err error) {
	if r.step != nil {
		if r.stepEnded {
			return nil, nil, ErrEndOfSuperstep
		}
		b, ev, err := r.step.Next(ctx)
		if ev != nil && ev.Kind == EndOfSuperstep {
			r.stepEnded = true
			return nil, nil, ErrEndOfSuperstep
		}
		return b, ev, err
	}
	b, ev, err := r.nextOrEvent(ctx)
	return unwrap[T](b), ev, err
}

func (r *consumer) nextOrEvent(ctx context.Context) (rawBatch, *Event, error) {
	r.recycle()
	for {
		if r.live == 0 {
			return rawBatch{}, nil, io.EOF
		}
		m, err := r.recv(ctx)
		if err != nil {
			return rawBatch{}, nil, err
		}
		switch m.ev.Kind {
		case eventNone:
			r.cur = m.batch
			return m.batch, nil, nil
		case EndOfPartition:
			r.end(m.ev.Source)
		default:
			r.ev = m.ev
			return rawBatch{}, &r.ev, nil
		}
	}
}

func (r *consumer) recycle() {
	if r.peeked { // still queued: not ours to recycle
		r.cur, r.peeked = rawBatch{}, false
		return
	}
	if r.cur.p != nil {
		r.x.put(r.cur)
		r.cur = rawBatch{}
	}
}

func (r *consumer) end(src int) {
	if src >= 0 && src < len(r.ended) && !r.ended[src] {
		r.ended[src] = true
		r.live--
	}
}

// recv returns the next raw message, EndOfPartition events included, and counts
// the records it carries.
func (r *consumer) recv(ctx context.Context) (message, error) {
	var m message
	var err error
	if r.x.mode == Pipelined {
		m, err = r.recvPipelined(ctx)
	} else {
		m, err = r.recvBlocking(ctx)
	}
	if err == nil && m.batch.p != nil {
		met := r.tc.Metrics
		met.recordsIn.Add(int64(m.batch.n))
		met.bytesIn.Add(int64(m.batch.n) * r.x.elemSize)
	}
	return m, err
}

func (r *consumer) recvPipelined(ctx context.Context) (message, error) {
	var since time.Time
	for {
		if m, ok := r.in.take(); ok {
			if !since.IsZero() {
				r.tc.Metrics.addIdle(since)
			}
			return m, nil
		}
		if since.IsZero() {
			since = time.Now()
			r.tc.Metrics.beginIdle(since)
		}
		select {
		case <-r.in.notify:
		case <-ctx.Done():
			r.tc.Metrics.addIdle(since)
			return message{}, ctx.Err()
		case <-r.x.j.ctx.Done():
			r.tc.Metrics.addIdle(since)
			return message{}, r.x.j.ctx.Err()
		}
	}
}

// recvBlocking waits until every producer finished, then replays the stores of
// the producers feeding this consumer one after the other, ending each with an
// EndOfPartition event.
func (r *consumer) recvBlocking(ctx context.Context) (message, error) {
	x := r.x
	if !r.waited {
		t := time.Now()
		select {
		case <-x.ready:
		case <-ctx.Done():
			return message{}, ctx.Err()
		case <-x.j.ctx.Done():
			return message{}, x.j.ctx.Err()
		}
		r.tc.Metrics.addIdle(t)
		r.waited = true
	}
	if err := ctx.Err(); err != nil {
		return message{}, err
	}
	p := r.sources[r.si]
	if x.remote != nil && x.remote.rcv[r.c] != nil && !x.j.here(x.e.from, p) {
		m, err := r.recvRemote(ctx, p)
		if err == nil && m.ev.Kind == EndOfPartition {
			r.si++
		}
		return m, err
	}
	if r.it == nil {
		r.it = newStoreReader(x.stores[p][r.c])
	}
	b, err := r.it.next()
	if err != nil {
		return message{}, err
	}
	if b.p != nil {
		return message{batch: b, src: p}, nil
	}
	r.it = nil
	r.si++
	return message{ev: Event{Kind: EndOfPartition, Source: p}, src: p}, nil
}

// close ends the reader when its task ended: producers still sending to this
// consumer drop their batches from now on.
func (r *consumer) close() {
	if r.closed {
		return
	}
	r.closed = true
	r.recycle()
	if r.it != nil {
		r.it.close()
		r.it = nil
	}
	if r.in != nil {
		r.in.close(r.x)
	}
	if x := r.x; x.mode == Blocking && x.remote != nil && x.remote.rcv[r.c] != nil {
		// the producers elsewhere send their results to their ends
		n := 0
		for _, p := range r.sources[min(r.si, len(r.sources)):] {
			if !x.j.here(x.e.from, p) {
				n++
			}
		}
		if n > 0 {
			x.drainRemote(r.c, n)
		}
	}
	close(r.x.done[r.c])
}

package flow

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// message is what travels over an edge: a batch of records or one event (then
// batch is the zero rawBatch). A batch's ownership passes with the message.
type message struct {
	batch rawBatch
	ev    Event
	src   int // producer subtask
}

// exchange is one execution's state of an edge: for a pipelined edge an inbox
// per consumer subtask holding one credit-based channel per producer subtask
// (the consumer takes the channels with data in arrival order), for a blocking
// edge one store per (producer, consumer) pair; and the edge's batch free list.
// It is untyped: it moves rawBatches and reaches the records only through
// ops and codec, so it is compiled once for every record type.
//
//	producer subtask p                                              consumer subtask c
//	Writer.bufs[c] --full/flush--> inbox[c].chans[p] (ChannelBuffers) --> Reader or Gate
//	     |                   blocking: stores[p][c] --all producers done--> Reader
//	     +--> free list <------------------------------------------ recycled by the Reader
type exchange struct {
	e         *edgeBase
	ops       recordOps
	codec     codec
	j         *job
	mode      ExchangeMode
	nProd     int
	nCons     int
	batchSize int
	elemSize  int64

	inbox []*inbox
	done  []chan struct{} // closed when consumer c's task ended: producers drop its batches
	free  chan rawBatch

	// blocking
	stores  [][]*store    // [producer][consumer]
	pending atomic.Int32  // producers not yet finished
	ready   chan struct{} // closed when pending reaches zero

	// sampled Range
	sampler *rangeSampler
	locals  []*store // per producer: its whole output, buffered until the bounds are known

	space *spill.Space

	// the channels between processes, nil when none crosses; sample, a
	// sampled Range edge's sample channels, nil when all its producers
	// run here
	remote *remoteIO
	sample *remoteSample

	allocated atomic.Int64 // batches made because the free list was empty

	// The batches in flight outside blocking stores, reserved at start and,
	// for records that point to data, grown once by the first batch sent.
	inFlight int64
	res      *memory.Reservation
	sized    sync.Once
}

func (e *edge[T]) start(j *job) error {
	if e.mode == Blocking && e.codec == nil {
		return fmt.Errorf("flow: edge %s is blocking and has no codec", e.name)
	}
	c := codec{size: unsafe.Sizeof(*new(T))}
	if e.codec != nil {
		c.raw = e.codec.Raw()
	}
	x, err := startExchange(j, &e.edgeBase, ops[T]{}, c)
	if x != nil {
		e.rt = x
	}
	return err
}

// startExchange builds the runtime state of edge e for one execution.
func startExchange(j *job, e *edgeBase, o recordOps, c codec) (*exchange, error) {
	nProd, nCons := e.from.parallelism, e.to.parallelism
	x := &exchange{
		e: e, ops: o, codec: c, j: j,
		mode:      e.mode,
		nProd:     nProd,
		nCons:     nCons,
		batchSize: j.opts.BatchSize,
		elemSize:  int64(c.size),
		done:      make([]chan struct{}, nCons),
		space:     spill.NewSpace(j.env.FS, "flow-"+e.name, j.opts.Spill),
	}
	if err := e.checkRemote(j); err != nil {
		return nil, err
	}
	for c := range x.done {
		x.done[c] = make(chan struct{})
	}
	// Batches in circulation: one per (producer, consumer) being filled,
	// ChannelBuffers per channel, one held by each reader and one in flight per
	// producer (waiting for credit).
	x.inFlight = int64(nProd*nCons + nCons + nProd)
	if x.mode == Pipelined {
		x.inFlight += int64(x.channels() * j.opts.ChannelBuffers)
	}
	x.free = make(chan rawBatch, x.inFlight)
	x.res = j.env.Memory.NewReservation("flow " + e.name + " batches in flight")
	x.res.Force(x.inFlight * int64(x.batchSize) * x.elemSize)
	if x.mode == Pipelined {
		x.inbox = make([]*inbox, nCons)
		for c := range x.inbox {
			x.inbox[c] = newInbox(nProd, j.opts.ChannelBuffers)
		}
	} else {
		x.stores = make([][]*store, nProd)
		for p := range x.stores {
			x.stores[p] = make([]*store, nCons)
			for c := range x.stores[p] {
				x.stores[p][c] = x.newStore(fmt.Sprintf("flow %s %d->%d", e.name, p, c))
			}
		}
		x.pending.Store(int32(nProd))
		x.ready = make(chan struct{})
	}
	if e.sampled {
		x.sampler = newRangeSampler(nProd, nCons)
		x.locals = make([]*store, nProd)
		for p := range x.locals {
			x.locals[p] = x.newStore(fmt.Sprintf("flow %s sample %d", e.name, p))
		}
	}
	if err := x.startRemote(); err != nil {
		return x, err
	}
	var err error
	x.sample, err = startSample(x.j, e, nProd, x.sampler)
	return x, err
}

func (e *edge[T]) runRemote() {
	e.rt.runRemote()
	e.rt.sample.run()
}

// cleanup releases the reservations and spill files an execution left behind. It
// runs after every task of the job ended.
func (e *edge[T]) cleanup() error {
	if e.rt == nil {
		return nil
	}
	err := e.rt.cleanup()
	e.batches = e.rt.allocated.Load()
	e.rt = nil
	return err
}

func (x *exchange) cleanup() error {
	x.closeRemote()
	for _, row := range x.stores {
		for _, s := range row {
			s.release()
		}
	}
	for _, s := range x.locals {
		s.release()
	}
	err := x.space.Close()
	if rerr := x.res.Release(); rerr != nil && !errors.Is(rerr, memory.ErrReleased) && err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("flow: edge %s: %w", x.e.name, err)
	}
	return nil
}

// getBatch returns an empty batch with room for batchSize records, recycled when
// one is free.
func getBatch[T any](x *exchange) []T { return unwrap[T](x.get()) }

func (x *exchange) get() rawBatch {
	select {
	case b := <-x.free:
		return b
	default:
		x.allocated.Add(1)
		return x.ops.alloc(x.batchSize)
	}
}

// putBatch recycles a batch nobody uses any more.
func putBatch[T any](x *exchange, b []T) { x.put(wrap(b)) }

func (x *exchange) put(b rawBatch) {
	if b.c < x.batchSize {
		return
	}
	x.ops.zero(b) // drop references the records hold, for the garbage collector
	b.n = 0
	select {
	case x.free <- b:
	default:
	}
}

// channels returns the number of (producer, consumer) channels that carry
// data: one per consumer on a Forward edge, every pair otherwise.
func (x *exchange) channels() int {
	if x.e.strategy == Forward {
		return x.nCons
	}
	return x.nProd * x.nCons
}

// estimate returns the bytes a batch is accounted for while a blocking edge keeps
// it in memory: the records' size in Go memory plus, for records that hold
// pointers, the serialized size of the first record times the count.
func (x *exchange) estimate(b rawBatch, scratch *[]byte) int64 {
	n := int64(b.n)
	est := n * x.elemSize
	if b.n > 0 && !x.codec.flat() {
		*scratch = x.codec.first((*scratch)[:0], b)
		est += n * int64(len(*scratch))
	}
	return est
}

// account grows the edge's reservation, once, by what the records of its
// batches in flight point to (strings, slices), estimated from the first
// record of the first full batch sent as its serialized size. The slices'
// own bytes were reserved at start. It is safe for concurrent use.
func (x *exchange) account(b rawBatch) {
	if x.codec.flat() || b.n < x.batchSize {
		return
	}
	x.sized.Do(func() {
		rec := x.codec.first(nil, b)
		x.res.Force(x.inFlight * int64(x.batchSize) * int64(len(rec)))
	})
}

// newStore returns an empty store with its own reservation.
func (x *exchange) newStore(owner string) *store {
	return &store{x: x, res: x.j.env.Memory.NewReservation(owner)}
}

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
// batch is nil). A batch's ownership passes with the message.
type message[T any] struct {
	batch []T
	ev    Event
	src   int // producer subtask
}

// exchange is one execution's state of an edge: for a pipelined edge an inbox
// per consumer subtask holding one credit-based channel per producer subtask
// (the consumer takes the channels with data in arrival order), for a blocking
// edge one store per (producer, consumer) pair; and the edge's batch free list.
//
//	producer subtask p                                              consumer subtask c
//	Writer.bufs[c] --full/flush--> inbox[c].chans[p] (ChannelBuffers) --> Reader or Gate
//	     |                   blocking: stores[p][c] --all producers done--> Reader
//	     +--> free list <------------------------------------------ recycled by the Reader
type exchange[T any] struct {
	e         *edge[T]
	j         *job
	mode      ExchangeMode
	nProd     int
	nCons     int
	batchSize int
	elemSize  int64

	inbox []*inbox[T]
	done  []chan struct{} // closed when consumer c's task ended: producers drop its batches
	free  chan []T

	// blocking
	stores  [][]*store[T] // [producer][consumer]
	pending atomic.Int32  // producers not yet finished
	ready   chan struct{} // closed when pending reaches zero

	// sampled Range
	sampler *rangeSampler
	locals  []*store[T] // per producer: its whole output, buffered until the bounds are known

	space *spill.Space

	// the channels between processes, nil when none crosses; sample, a
	// sampled Range edge's sample channels, nil when all its producers
	// run here
	remote *remoteIO[T]
	sample *remoteSample

	allocated atomic.Int64 // batches made because the free list was empty

	// The batches in flight outside blocking stores, reserved at start and,
	// for records that point to data, grown once by the first batch sent.
	inFlight int64
	res      *memory.Reservation
	sized    sync.Once
}

func (e *edge[T]) start(j *job) error {
	nProd, nCons := e.from.parallelism, e.to.parallelism
	x := &exchange[T]{
		e: e, j: j,
		mode:      e.mode,
		nProd:     nProd,
		nCons:     nCons,
		batchSize: j.opts.BatchSize,
		elemSize:  int64(unsafe.Sizeof(*new(T))),
		done:      make([]chan struct{}, nCons),
		space:     spill.NewSpace(j.env.FS, "flow-"+e.name, j.opts.Spill),
	}
	if x.mode == Blocking && e.codec == nil {
		return fmt.Errorf("flow: edge %s is blocking and has no codec", e.name)
	}
	if err := e.checkRemote(j); err != nil {
		return err
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
	x.free = make(chan []T, x.inFlight)
	x.res = j.env.Memory.NewReservation("flow " + e.name + " batches in flight")
	x.res.Force(x.inFlight * int64(x.batchSize) * x.elemSize)
	if x.mode == Pipelined {
		x.inbox = make([]*inbox[T], nCons)
		for c := range x.inbox {
			x.inbox[c] = newInbox[T](nProd, j.opts.ChannelBuffers)
		}
	} else {
		x.stores = make([][]*store[T], nProd)
		for p := range x.stores {
			x.stores[p] = make([]*store[T], nCons)
			for c := range x.stores[p] {
				x.stores[p][c] = x.newStore(fmt.Sprintf("flow %s %d->%d", e.name, p, c))
			}
		}
		x.pending.Store(int32(nProd))
		x.ready = make(chan struct{})
	}
	if e.strategy == Range && e.part.Bounds == nil {
		x.sampler = newRangeSampler(nProd, nCons)
		x.locals = make([]*store[T], nProd)
		for p := range x.locals {
			x.locals[p] = x.newStore(fmt.Sprintf("flow %s sample %d", e.name, p))
		}
	}
	e.rt = x
	if err := x.startRemote(); err != nil {
		return err
	}
	var err error
	x.sample, err = startSample(x.j, &e.edgeBase, nProd, x.sampler)
	return err
}

func (e *edge[T]) runRemote() {
	e.rt.runRemote()
	e.rt.sample.run()
}

// cleanup releases the reservations and spill files an execution left behind. It
// runs after every task of the job ended.
func (e *edge[T]) cleanup() error {
	x := e.rt
	if x == nil {
		return nil
	}
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
	e.batches = x.allocated.Load()
	e.rt = nil
	if err != nil {
		return fmt.Errorf("flow: edge %s: %w", e.name, err)
	}
	return nil
}

// getBatch returns an empty batch with room for batchSize records, recycled when
// one is free.
func (x *exchange[T]) getBatch() []T {
	select {
	case b := <-x.free:
		return b
	default:
		x.allocated.Add(1)
		return make([]T, 0, x.batchSize)
	}
}

// putBatch recycles a batch nobody uses any more.
func (x *exchange[T]) putBatch(b []T) {
	if cap(b) < x.batchSize {
		return
	}
	clear(b) // drop references the records hold, for the garbage collector
	select {
	case x.free <- b[:0]:
	default:
	}
}

// channels returns the number of (producer, consumer) channels that carry
// data: one per consumer on a Forward edge, every pair otherwise.
func (x *exchange[T]) channels() int {
	if x.e.strategy == Forward {
		return x.nCons
	}
	return x.nProd * x.nCons
}

// estimate returns the bytes a batch is accounted for while a blocking edge keeps
// it in memory: the records' size in Go memory plus, for records that hold
// pointers, the serialized size of the first record times the count.
func (x *exchange[T]) estimate(b []T, scratch *[]byte) int64 {
	n := int64(len(b))
	est := n * x.elemSize
	if len(b) > 0 && !x.e.codec.Flat() {
		*scratch = x.e.codec.Append((*scratch)[:0], &b[0])
		est += n * int64(len(*scratch))
	}
	return est
}

// account grows the edge's reservation, once, by what the records of its
// batches in flight point to (strings, slices), estimated from the first
// record of the first full batch sent as its serialized size. The slices'
// own bytes were reserved at start. It is safe for concurrent use.
func (x *exchange[T]) account(b []T) {
	if x.e.codec == nil || x.e.codec.Flat() || len(b) < x.batchSize {
		return
	}
	x.sized.Do(func() {
		rec := x.e.codec.Append(nil, &b[0])
		x.res.Force(x.inFlight * int64(x.batchSize) * int64(len(rec)))
	})
}

// newStore returns an empty store with its own reservation.
func (x *exchange[T]) newStore(owner string) *store[T] {
	return &store[T]{x: x, res: x.j.env.Memory.NewReservation(owner)}
}

// codec returns the edge's codec.
func (x *exchange[T]) codec() *memory.Codec[T] { return x.e.codec }

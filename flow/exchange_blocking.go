package flow

import (
	"errors"
	"fmt"
	"io"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

type storeState uint8

const (
	storeFilling  storeState = iota // the producer adds batches (in memory, spilling when over budget)
	storeReading                    // the producer finished; one consumer replays it
	storeReleased                   // replayed or cleaned up: reservation released
)

// store materializes one producer subtask's output for one consumer subtask of a
// blocking edge (or, for a sampled Range edge, a producer's whole output until
// the bounds are known).
//
//	filling:  add(batch) --Grow ok--> mem
//	                     --Grow fails--> the producer spills all its stores:
//	                                     mem --codec--> spill file, files = append(files, handle)
//	reading:  files (in order) --decode--> batches, then mem batches as they are
//	released: files removed, reservation released
//
// Memory: the store's own reservation holds the estimated bytes of the batches
// in mem (see exchange.estimate) and, while a spill file is being written or
// read, spill.Options.WriterMemory or ReaderMemory, taken with Force because it
// is the minimum needed to make progress. A batch that does not fit even after
// its producer spilled everything is forced into memory and spilled at once.
//
// Concurrency: the producer goroutine owns the store while filling, the consumer
// goroutine after the producer finished (the exchange's ready channel orders
// the two), the job's cleanup after all tasks ended.
type store[T any] struct {
	x        *exchange[T]
	res      *memory.Reservation
	state    storeState
	mem      [][]T
	memBytes int64
	files    []spill.Handle
	spilled  int64 // record bytes written to spill files
}

// add appends a batch, taking ownership of it. spillAll is called when the
// reservation cannot grow: it spills every store of the producer.
func (s *store[T]) add(b []T, w *Writer[T]) error {
	est := s.x.estimate(b, &w.scratch)
	if err := s.res.Grow(est); err != nil {
		if !errors.Is(err, memory.ErrBudgetExceeded) {
			return err
		}
		if err := w.spillAll(); err != nil {
			return err
		}
		if err := s.res.Grow(est); err != nil {
			s.res.Force(est)
			s.hold(b, est, w)
			return s.spill(w)
		}
	}
	s.hold(b, est, w)
	return nil
}

func (s *store[T]) hold(b []T, est int64, w *Writer[T]) {
	s.mem = append(s.mem, b)
	s.memBytes += est
	w.held += est
	w.tc.Metrics.ObservePeakMemory(w.held)
}

// spill writes the batches held in memory to a new spill file and recycles them.
func (s *store[T]) spill(w *Writer[T]) error {
	if len(s.mem) == 0 {
		return nil
	}
	x := s.x
	wm := x.space.Options().WriterMemory()
	s.res.Force(wm)
	defer s.res.Shrink(wm)
	sw, err := x.space.Create()
	if err != nil {
		return fmt.Errorf("flow: edge %s: spill: %w", x.e.name, err)
	}
	codec := x.codec()
	for _, b := range s.mem {
		for i := range b {
			w.scratch = codec.Append(w.scratch[:0], &b[i])
			if err := sw.Append(w.scratch); err != nil {
				sw.Abort()
				return fmt.Errorf("flow: edge %s: spill to %s: %w", x.e.name, sw.Name(), err)
			}
		}
	}
	h, err := sw.Finish()
	if err != nil {
		return fmt.Errorf("flow: edge %s: spill to %s: %w", x.e.name, sw.Name(), err)
	}
	s.files = append(s.files, h)
	s.spilled += h.Bytes
	w.tc.Metrics.spilled.Add(h.Bytes)
	for i, b := range s.mem {
		x.putBatch(b)
		s.mem[i] = nil
	}
	s.mem = s.mem[:0]
	s.res.Shrink(s.memBytes)
	w.held -= s.memBytes
	s.memBytes = 0
	return nil
}

// release removes the store's files and releases its reservation; it is
// idempotent.
func (s *store[T]) release() {
	if s.state == storeReleased {
		return
	}
	s.state = storeReleased
	for _, h := range s.files {
		_ = s.x.space.Remove(h)
	}
	s.files = nil
	for i := range s.mem {
		s.mem[i] = nil
	}
	s.mem = nil
	_ = s.res.Release()
}

// storeReader replays a store: its spill files in order, then its memory
// batches. It belongs to one goroutine.
type storeReader[T any] struct {
	s     *store[T]
	file  int // next file
	r     *spill.Reader
	mi    int // next memory batch
	arena *memory.Arena
	rmem  int64
}

func newStoreReader[T any](s *store[T]) *storeReader[T] {
	s.state = storeReading
	return &storeReader[T]{s: s}
}

// next returns the next batch, whose ownership passes to the caller, or nil at
// the end, when the store is released.
func (it *storeReader[T]) next() ([]T, error) {
	s := it.s
	x := s.x
	for it.file < len(s.files) {
		if it.r == nil {
			h := s.files[it.file]
			it.rmem = x.space.Options().ReaderMemory()
			s.res.Force(it.rmem)
			r, err := x.space.Open(h)
			if err != nil {
				s.res.Shrink(it.rmem)
				return nil, fmt.Errorf("flow: edge %s: open %s: %w", x.e.name, h.Name, err)
			}
			it.r = r
			if it.arena == nil {
				it.arena = memory.NewArena(0)
			}
		}
		b := x.getBatch()
		for len(b) < x.batchSize {
			rec, err := it.r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				x.putBatch(b)
				return nil, fmt.Errorf("flow: edge %s: read %s: %w", x.e.name, it.r.Name(), err)
			}
			var zero T
			b = append(b, zero)
			if _, err := x.codec().DecodeArena(rec, &b[len(b)-1], it.arena); err != nil {
				x.putBatch(b)
				return nil, fmt.Errorf("flow: edge %s: read %s: %w", x.e.name, it.r.Name(), err)
			}
		}
		if len(b) == x.batchSize {
			return b, nil
		}
		// end of this file
		err := it.r.Close()
		it.r = nil
		s.res.Shrink(it.rmem)
		_ = x.space.Remove(s.files[it.file])
		it.file++
		if err != nil {
			x.putBatch(b)
			return nil, fmt.Errorf("flow: edge %s: read %s: %w", x.e.name, s.files[it.file-1].Name, err)
		}
		if len(b) > 0 {
			return b, nil
		}
		x.putBatch(b)
	}
	if it.mi < len(s.mem) {
		b := s.mem[it.mi]
		s.mem[it.mi] = nil
		it.mi++
		return b, nil
	}
	s.files = nil
	s.release()
	return nil, nil
}

// close abandons the replay, closing an open spill file; the store's files and
// reservation go with the job's cleanup.
func (it *storeReader[T]) close() {
	if it.r != nil {
		_ = it.r.Close()
		it.r = nil
		it.s.res.Shrink(it.rmem)
	}
}

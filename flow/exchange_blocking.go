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
type store struct {
	x        *exchange
	res      *memory.Reservation
	state    storeState
	mem      []rawBatch
	memBytes int64
	files    []spill.Handle
	spilled  int64 // record bytes written to spill files
}

// add appends a batch, taking ownership of it. spillAll is called when the
// reservation cannot grow: it spills every store of the producer.
func (s *store) add(b rawBatch, w *producer) error {
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

func (s *store) hold(b rawBatch, est int64, w *producer) {
	s.mem = append(s.mem, b)
	s.memBytes += est
	w.held += est
	w.tc.Metrics.ObservePeakMemory(w.held)
}

// spill writes the batches held in memory to a new spill file and recycles them.
func (s *store) spill(w *producer) error {
	if len(s.mem) == 0 {
		return nil
	}
	x := s.x
	h, err := spillFile(x.space, s.res, x.e.name, func(sw *spill.Writer) error {
		for _, b := range s.mem {
			if err := x.codec.spill(sw, b, &w.scratch); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.files = append(s.files, h)
	s.spilled += h.Bytes
	w.tc.Metrics.spilled.Add(h.Bytes)
	for i, b := range s.mem {
		x.put(b)
		s.mem[i] = rawBatch{}
	}
	s.mem = s.mem[:0]
	s.res.Shrink(s.memBytes)
	w.held -= s.memBytes
	s.memBytes = 0
	return nil
}

// spillFile writes a new spill file of space with write, holding the
// writer's memory on res meanwhile.
func spillFile(space *spill.Space, res *memory.Reservation, edge string, write func(*spill.Writer) error) (spill.Handle, error) {
	wm := space.Options().WriterMemory()
	res.Force(wm)
	defer res.Shrink(wm)
	sw, err := space.Create()
	if err != nil {
		return spill.Handle{}, fmt.Errorf("flow: edge %s: spill: %w", edge, err)
	}
	if err := write(sw); err != nil {
		sw.Abort()
		return spill.Handle{}, fmt.Errorf("flow: edge %s: spill to %s: %w", edge, sw.Name(), err)
	}
	h, err := sw.Finish()
	if err != nil {
		return spill.Handle{}, fmt.Errorf("flow: edge %s: spill to %s: %w", edge, sw.Name(), err)
	}
	return h, nil
}

// release removes the store's files and releases its reservation; it is
// idempotent.
func (s *store) release() {
	if s.state == storeReleased {
		return
	}
	s.state = storeReleased
	for _, h := range s.files {
		_ = s.x.space.Remove(h)
	}
	s.files = nil
	clear(s.mem)
	s.mem = nil
	_ = s.res.Release()
}

// storeReader replays a store: its spill files in order, then its memory
// batches. It belongs to one goroutine.
type storeReader struct {
	s  *store
	fr fileReplay
	mi int // next memory batch
}

// fileReplay is the spill file a storeReader reads.
type fileReplay struct {
	file  int // next file
	r     *spill.Reader
	arena *memory.Arena
	rmem  int64
}

// open opens the next of files unless one is open, holding the reader's
// memory on res while it is.
func (f *fileReplay) open(space *spill.Space, res *memory.Reservation, files []spill.Handle, edge string) error {
	if f.r != nil {
		return nil
	}
	h := files[f.file]
	f.rmem = space.Options().ReaderMemory()
	res.Force(f.rmem)
	r, err := space.Open(h)
	if err != nil {
		res.Shrink(f.rmem)
		return fmt.Errorf("flow: edge %s: open %s: %w", edge, h.Name, err)
	}
	f.r = r
	if f.arena == nil {
		f.arena = memory.NewArena(0)
	}
	return nil
}

// next returns the open file's next record, or io.EOF at its end.
func (f *fileReplay) next(edge string) ([]byte, error) {
	rec, err := f.r.Next()
	if err != nil && err != io.EOF {
		return nil, f.readErr(edge, err)
	}
	return rec, err
}

func (f *fileReplay) readErr(edge string, err error) error {
	return fmt.Errorf("flow: edge %s: read %s: %w", edge, f.r.Name(), err)
}

// finish closes the open file, which was read to its end, and removes it.
func (f *fileReplay) finish(space *spill.Space, res *memory.Reservation, files []spill.Handle, edge string) error {
	err := f.r.Close()
	f.r = nil
	res.Shrink(f.rmem)
	_ = space.Remove(files[f.file])
	f.file++
	if err != nil {
		return fmt.Errorf("flow: edge %s: read %s: %w", edge, files[f.file-1].Name, err)
	}
	return nil
}

// close closes an open file; the files and the reservation go with the job's
// cleanup.
func (f *fileReplay) close(res *memory.Reservation) {
	if f.r != nil {
		_ = f.r.Close()
		f.r = nil
		res.Shrink(f.rmem)
	}
}

func newStoreReader(s *store) *storeReader {
	s.state = storeReading
	return &storeReader{s: s}
}

// next returns the next batch, whose ownership passes to the caller, or the
// zero rawBatch at the end, when the store is released.
func (it *storeReader) next() (rawBatch, error) {
	s := it.s
	x := s.x
	name := x.e.name
	for it.fr.file < len(s.files) {
		if err := it.fr.open(x.space, s.res, s.files, name); err != nil {
			return rawBatch{}, err
		}
		b, err := x.codec.replay(x.get(), x.batchSize, &it.fr, name)
		if err != nil && err != io.EOF {
			x.put(b)
			return rawBatch{}, err
		}
		if b.n == x.batchSize {
			return b, nil
		}
		// end of this file
		if err := it.fr.finish(x.space, s.res, s.files, name); err != nil {
			x.put(b)
			return rawBatch{}, err
		}
		if b.n > 0 {
			return b, nil
		}
		x.put(b)
	}
	if it.mi < len(s.mem) {
		b := s.mem[it.mi]
		s.mem[it.mi] = rawBatch{}
		it.mi++
		return b, nil
	}
	s.files = nil
	s.release()
	return rawBatch{}, nil
}

// close abandons the replay, closing an open spill file; the store's files and
// reservation go with the job's cleanup.
func (it *storeReader) close() { it.fr.close(it.s.res) }

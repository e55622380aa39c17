package typed

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// Spool holds one partition of records of T between the supersteps of an
// iteration: the partial solution a tail stores for the head, a workset, a
// delta, or a loop-invariant input replayed every superstep. Records are
// serialized (uvarint length, then memory.Codec bytes) into segments of the
// job's memory manager; when the budget is exhausted the segments are written
// to a spill file and freed, so a spool never fails for lack of memory.
//
// A Spool belongs to one goroutine at a time: the iteration's barrier orders
// the tail that fills it and the head that replays it.
type Spool[T any] struct {
	records
	codec *memory.Codec[T]
}

// records is the untyped part of a Spool: encoded records in segments and
// spill files, compiled once for every record type.
type records struct {
	name  string
	res   *memory.Reservation
	space *spill.Space
	// segs are segments, each cut to the bytes used, and records larger than
	// a segment, each in memory of its own (big[i] says which), in the
	// order the records came
	segs    [][]byte
	big     []bool
	files   []spill.Handle
	n       int64
	spilled int64 // record bytes written to spill files since NewSpool
	scratch []byte
	segSize int
	// resMu guards res while several goroutines replay the spool at once
	// (a loop source replays it to each of its outputs).
	resMu sync.Mutex
}

// NewSpool returns an empty spool named name, taking its memory and spill
// files from env.
func NewSpool[T any](env resource.Env, name string, codec *memory.Codec[T]) *Spool[T] {
	return &Spool[T]{
		codec: codec,
		records: records{
			name:    name,
			res:     env.Memory.NewReservation(name),
			space:   spill.NewSpace(env.FS, name, env.Spill),
			segSize: env.Memory.SegmentSize(),
		},
	}
}

// Len returns the records added since the last reset.
func (s *records) Len() int64 { return s.n }

// SpilledBytes returns the record bytes the spool wrote to spill files since
// NewSpool, resets included.
func (s *records) SpilledBytes() int64 { return s.spilled }

// Add appends a batch.
func (s *Spool[T]) Add(b []T) error {
	for i := range b {
		s.scratch = s.codec.Append(s.scratch[:0], &b[i])
		if err := s.put(s.scratch); err != nil {
			return err
		}
	}
	return nil
}

// Fill adds every batch of in until it ends.
func (s *Spool[T]) Fill(ctx context.Context, in Batches[T]) error {
	for {
		b, err := in.Next(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := s.Add(b); err != nil {
			return err
		}
	}
}

// put stores one encoded record.
func (s *records) put(rec []byte) error {
	s.n++
	var hdr [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(hdr[:], uint64(len(rec)))
	size := h + len(rec)
	if size > s.segSize {
		// larger than a segment: memory of its own, forced (one record is the
		// minimum to make progress), spilled with the rest
		s.res.Force(int64(size))
		b := make([]byte, 0, size)
		b = append(append(b, hdr[:h]...), rec...)
		s.segs, s.big = append(s.segs, b), append(s.big, true)
		return nil
	}
	if len(s.segs) == 0 || s.big[len(s.segs)-1] || cap(s.segs[len(s.segs)-1])-len(s.segs[len(s.segs)-1]) < size {
		seg, err := s.res.Segment()
		if errors.Is(err, memory.ErrBudgetExceeded) {
			if err := s.spill(); err != nil {
				return err
			}
			seg = s.res.ForceSegment()
		} else if err != nil {
			return err
		}
		s.segs, s.big = append(s.segs, seg[:0]), append(s.big, false)
	}
	last := &s.segs[len(s.segs)-1]
	*last = append(append(*last, hdr[:h]...), rec...)
	return nil
}

// each calls fn with every record held in memory, in the order they came.
func (s *records) each(fn func(rec []byte) error) error {
	for _, seg := range s.segs {
		if err := walkRecords(seg, fn); err != nil {
			return err
		}
	}
	return nil
}

func walkRecords(b []byte, fn func(rec []byte) error) error {
	for len(b) > 0 {
		l, h := binary.Uvarint(b)
		if h <= 0 || uint64(len(b)-h) < l {
			return fmt.Errorf("typed: internal error: corrupt spool record")
		}
		if err := fn(b[h : h+int(l)]); err != nil {
			return err
		}
		b = b[h+int(l):]
	}
	return nil
}

// spill writes the records held in memory to a spill file and frees their
// memory.
func (s *records) spill() error {
	if len(s.segs) == 0 {
		return nil
	}
	w, err := s.space.Create()
	if err != nil {
		return fmt.Errorf("typed: %s: spill: %w", s.name, err)
	}
	if err := s.each(w.Append); err != nil {
		w.Abort()
		return fmt.Errorf("typed: %s: spill to %s: %w", s.name, w.Name(), err)
	}
	h, err := w.Finish()
	if err != nil {
		return fmt.Errorf("typed: %s: spill to %s: %w", s.name, w.Name(), err)
	}
	s.files = append(s.files, h)
	s.spilled += h.Bytes
	s.freeMemory()
	return nil
}

func (s *records) freeMemory() {
	for i, seg := range s.segs {
		if s.big[i] {
			s.res.Shrink(int64(cap(seg)))
		} else {
			s.res.FreeSegment(seg[:cap(seg)])
		}
	}
	clear(s.segs)
	s.segs, s.big = s.segs[:0], s.big[:0]
}

// Replay decodes every record (spilled first, then in memory) and passes them
// to fn in batches of up to batch records. Decoded strings and slices are
// fresh memory: fn's receivers may keep them. Several goroutines may replay a
// spool at once, as long as none adds to it.
func (s *Spool[T]) Replay(ctx context.Context, batch int, fn func([]T) error) error {
	buf := make([]T, 0, batch)
	arena := memory.NewArena(0)
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		err := fn(buf)
		clear(buf)
		buf = buf[:0]
		return err
	}
	decode := func(rec []byte) error {
		var zero T
		buf = append(buf, zero)
		if _, err := s.codec.DecodeArena(rec, &buf[len(buf)-1], arena); err != nil {
			return fmt.Errorf("typed: %s: decode: %w", s.name, err)
		}
		if len(buf) == batch {
			return flush()
		}
		return nil
	}
	if err := s.walk(decode); err != nil {
		return err
	}
	return flush()
}

// walk calls fn with every record, spilled first, then in memory.
func (s *records) walk(fn func(rec []byte) error) error {
	for _, h := range s.files {
		if err := s.replayFile(h, fn); err != nil {
			return err
		}
	}
	return s.each(fn)
}

func (s *records) replayFile(h spill.Handle, fn func(rec []byte) error) error {
	rm := s.space.Options().ReaderMemory()
	s.resMu.Lock()
	s.res.Force(rm)
	s.resMu.Unlock()
	defer func() {
		s.resMu.Lock()
		s.res.Shrink(rm)
		s.resMu.Unlock()
	}()
	r, err := s.space.Open(h)
	if err != nil {
		return fmt.Errorf("typed: %s: open %s: %w", s.name, h.Name, err)
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("typed: %s: read %s: %w", s.name, h.Name, err)
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

// Reset empties the spool for reuse: memory freed, files removed.
func (s *records) Reset() {
	s.freeMemory()
	for _, h := range s.files {
		_ = s.space.Remove(h)
	}
	s.files = s.files[:0]
	s.n = 0
}

// Release frees everything; the spool must not be used afterwards.
func (s *records) Release() {
	s.Reset()
	_ = s.space.Close()
	_ = s.res.Release()
}

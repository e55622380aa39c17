package core

// Emitter collects an operator's output records into a batch and pushes it
// downstream when full and on Flush. The first error of a push is kept
// and returned by Flush.
type Emitter[T any] struct {
	out Output[T]
	buf []Record[T]
	err error
}

// NewEmitter returns an emitter into out of batches of size records.
func NewEmitter[T any](out Output[T], size int) *Emitter[T] {
	return &Emitter[T]{out: out, buf: make([]Record[T], 0, size)}
}

// Emit appends a record, pushing the batch when full.
func (e *Emitter[T]) Emit(v T, ts int64) {
	e.buf = append(e.buf, Record[T]{Value: v, Timestamp: ts})
	if len(e.buf) == cap(e.buf) {
		e.push()
	}
}

// EmitAll appends a record per value of vs, all with timestamp ts, pushing
// the batch whenever it fills.
func (e *Emitter[T]) EmitAll(vs []T, ts int64) {
	if cap(e.buf) == 0 {
		for _, v := range vs {
			e.Emit(v, ts)
		}
		return
	}
	for len(vs) > 0 {
		n := min(cap(e.buf)-len(e.buf), len(vs))
		for _, v := range vs[:n] {
			e.buf = append(e.buf, Record[T]{Value: v, Timestamp: ts})
		}
		vs = vs[n:]
		if len(e.buf) == cap(e.buf) {
			e.push()
		}
	}
}

// EmitStamped appends a record per value of vs with the timestamp of ts of
// the same index, pushing the batch whenever it fills.
func (e *Emitter[T]) EmitStamped(vs []T, ts []int64) {
	if cap(e.buf) == 0 {
		for i, v := range vs {
			e.Emit(v, ts[i])
		}
		return
	}
	for len(vs) > 0 {
		n := min(cap(e.buf)-len(e.buf), len(vs))
		for i, v := range vs[:n] {
			e.buf = append(e.buf, Record[T]{Value: v, Timestamp: ts[i]})
		}
		vs, ts = vs[n:], ts[n:]
		if len(e.buf) == cap(e.buf) {
			e.push()
		}
	}
}

func (e *Emitter[T]) push() {
	if len(e.buf) > 0 && e.err == nil {
		e.err = e.out.Push(e.buf)
	}
	e.buf = e.buf[:0]
}

// Flush pushes what is pending and returns the first error of a push.
func (e *Emitter[T]) Flush() error {
	e.push()
	return e.err
}

// Flusher is an Emitter of any type.
type Flusher interface{ Flush() error }

// FlushAll flushes every flusher, stopping at the first error.
func FlushAll(fl []Flusher) error {
	for _, f := range fl {
		if err := f.Flush(); err != nil {
			return err
		}
	}
	return nil
}

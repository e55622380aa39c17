package source

import (
	"context"
	"io"
	"iter"
	"time"
)

// FromSeq reads the values of seq, which must yield the same values each
// time it is ranged over. It is one split whose position is the index of its
// next value; a reader restored at index k ranges over seq again and skips
// the first k values. The source is bounded (seq must end).
func FromSeq[T any](seq iter.Seq[T], opts ...Option) Source[T] {
	c := newConfig(opts)
	return &simple[T]{
		cfg:  c,
		kind: Bounded,
		splits: func(int) ([]Split, error) {
			return []Split{{ID: "seq", Len: -1}}, nil
		},
		open: func(_ context.Context, _ ReaderContext, s Split) (splitReader[T], error) {
			next, stop := iter.Pull(seq)
			r := &seqReader[T]{s: s, pull: next, stop: stop, buf: make([]T, 0, c.batch)}
			for range s.Offset {
				if _, ok := next(); !ok {
					break
				}
			}
			return r, nil
		},
	}
}

// seqReader pulls the values of an iter.Seq.
type seqReader[T any] struct {
	s    Split
	pull func() (T, bool)
	stop func()
	buf  []T
	done bool
}

func (r *seqReader[T]) next(_ context.Context, limit int) ([]T, time.Duration, error) {
	b := r.buf[:0]
	for !r.done && len(b) < min(cap(b), limit) {
		v, ok := r.pull()
		if !ok {
			r.done = true
			break
		}
		b = append(b, v)
	}
	r.buf = b
	if len(b) == 0 {
		return nil, 0, io.EOF
	}
	r.s.Offset += int64(len(b))
	r.s.Records += int64(len(b))
	return b, 0, nil
}

func (r *seqReader[T]) position() Split { return r.s }
func (r *seqReader[T]) close() error    { r.stop(); return nil }

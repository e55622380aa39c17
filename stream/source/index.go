package source

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/weirdata/weir/clock"
)

// ranges cuts total records into n contiguous ranges as Flink's
// NumberSequenceIterator.split does: the first total mod n ranges hold one
// record more. Empty ranges are left out.
func ranges(total uint64, n int) [][2]uint64 {
	n = max(n, 1)
	per, extra := total/uint64(n), total%uint64(n)
	var out [][2]uint64
	var at uint64
	for i := range uint64(n) {
		size := per
		if i < extra {
			size++
		}
		if size > 0 {
			out = append(out, [2]uint64{at, size})
		}
		at += size
	}
	return out
}

// indexSplits is the splits of a source of count records addressed by
// index, one range per reader, Offset at the range's first index plus base.
func indexSplits(kind string, base int64, count uint64, n int) []Split {
	var out []Split
	for i, r := range ranges(count, n) {
		out = append(out, Split{ID: fmt.Sprintf("%s %d", kind, i), Offset: base + int64(r[0]), Len: int64(r[1])})
	}
	return out
}

// indexReader hands out at(i) for the indexes of a split, optionally paced
// to perSecond records per second: record k after the reader opened is
// released at open + k/perSecond, the first at once (a smooth bursty rate
// limiter without a burst, as Flink's GuavaRateLimiter).
type indexReader[T any] struct {
	s     Split
	at    func(i int64) T
	buf   []T
	every time.Duration // 0: no pacing
	clock clock.Clock
	start time.Time
	sent  int64 // records released since start
}

func newIndexReader[T any](s Split, at func(int64) T, c config, perSecond float64) *indexReader[T] {
	r := &indexReader[T]{s: s, at: at, buf: make([]T, 0, c.batch), clock: c.clock}
	if perSecond > 0 {
		r.every = max(time.Duration(float64(time.Second)/perSecond), 1)
		r.start = c.clock.Now()
	}
	return r
}

func (r *indexReader[T]) next(_ context.Context, limit int) ([]T, time.Duration, error) {
	left := r.s.Len - r.s.Records
	if r.s.Len >= 0 && left <= 0 {
		return nil, 0, io.EOF
	}
	n := int64(min(cap(r.buf), limit))
	if r.s.Len >= 0 {
		n = min(n, left)
	}
	if r.every > 0 {
		due := int64(r.clock.Now().Sub(r.start)/r.every) + 1 - r.sent
		if due <= 0 {
			return nil, r.start.Add(time.Duration(r.sent) * r.every).Sub(r.clock.Now()), nil
		}
		n = min(n, due)
		r.sent += n
	}
	b := r.buf[:0]
	for i := range n {
		b = append(b, r.at(r.s.Offset+i))
	}
	r.s.Offset += n
	r.s.Records += n
	r.buf = b
	return b, 0, nil
}

func (r *indexReader[T]) position() Split { return r.s }
func (r *indexReader[T]) close() error    { return nil }

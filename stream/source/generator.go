package source

import (
	"context"
	"math"
)

// Generator produces fn(0), fn(1), ... as Flink's DataGeneratorSource: the
// indexes are cut into one range per reader, each generated in order, and
// with perSecond > 0 each of the parallelism readers releases perSecond /
// parallelism records per second (Flink's RateLimiterStrategy.perSecond: the
// first at once, then one every 1/rate seconds, by the source's Clock).
// count > 0 bounds the source to count records; count <= 0 makes it
// unbounded (it generates up to math.MaxInt64 records, which Flink spells
// count = Long.MAX_VALUE). A split's position is its next index.
func Generator[T any](fn func(index int64) T, count int64, perSecond float64, opts ...Option) Source[T] {
	c := newConfig(opts)
	kind := Bounded
	if count <= 0 {
		kind, count = Unbounded, math.MaxInt64
	}
	return &simple[T]{
		cfg:  c,
		kind: kind,
		splits: func(n int) ([]Split, error) {
			return indexSplits("generator", 0, uint64(count), n), nil
		},
		open: func(_ context.Context, rc ReaderContext, s Split) (splitReader[T], error) {
			rate := 0.0
			if perSecond > 0 {
				rate = perSecond / float64(max(rc.Parallelism, 1))
			}
			return newIndexReader(s, fn, c, rate), nil
		},
	}
}

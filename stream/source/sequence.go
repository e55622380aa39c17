package source

import (
	"context"
	"fmt"
)

// Sequence reads the numbers from through to, both included, as Flink's
// NumberSequenceSource: the range is cut into one sub-range per reader, each
// read in order. A split's position is its next number. The source is
// bounded.
func Sequence(from, to int64, opts ...Option) (Source[int64], error) {
	if from > to {
		return nil, fmt.Errorf("stream/source: sequence from %d to %d: from must be <= to", from, to)
	}
	count := uint64(to-from) + 1
	if count == 0 {
		return nil, fmt.Errorf("stream/source: sequence from %d to %d holds more than 2^64-1 numbers", from, to)
	}
	c := newConfig(opts)
	at := func(i int64) int64 { return i }
	return &simple[int64]{
		cfg:  c,
		kind: Bounded,
		splits: func(n int) ([]Split, error) {
			return indexSplits("sequence", from, count, n), nil
		},
		open: func(_ context.Context, _ ReaderContext, s Split) (splitReader[int64], error) {
			return newIndexReader(s, at, c, 0), nil
		},
	}, nil
}

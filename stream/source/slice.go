package source

import (
	"context"
	"fmt"
)

// FromSlice reads items, cut into one range of indexes per reader (as
// Flink's NumberSequenceSource cuts its numbers). A split's position is the
// index of its next item. The source is bounded.
func FromSlice[T any](items []T, opts ...Option) Source[T] {
	c := newConfig(opts)
	at := func(i int64) T { return items[i] }
	return &simple[T]{
		cfg:  c,
		kind: Bounded,
		splits: func(n int) ([]Split, error) {
			return indexSplits("slice", 0, uint64(len(items)), n), nil
		},
		open: func(_ context.Context, _ ReaderContext, s Split) (splitReader[T], error) {
			if s.Offset < 0 || s.Records < 0 || s.Records > s.Len || s.Offset+s.Len-s.Records > int64(len(items)) {
				return nil, fmt.Errorf("stream/source: split %s is outside a slice of %d items", s, len(items))
			}
			return newIndexReader(s, at, c, 0), nil
		},
	}
}

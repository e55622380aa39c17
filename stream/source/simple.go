package source

import "context"

// simple is a Source whose splits are all known at start: every source but
// the monitored directory.
type simple[T any] struct {
	cfg    config
	kind   Boundedness
	splits func(parallelism int) ([]Split, error)
	open   func(ctx context.Context, rc ReaderContext, s Split) (splitReader[T], error)
}

func (s *simple[T]) Boundedness() Boundedness { return s.kind }

func (s *simple[T]) Enumerator(parallelism int, restored *EnumeratorState) (Enumerator, error) {
	var splits []Split
	if restored == nil {
		var err error
		if splits, err = s.splits(parallelism); err != nil {
			return nil, err
		}
	}
	return newEnumerator(splits, parallelism, s.cfg, restored, nil, 0)
}

func (s *simple[T]) Reader(rc ReaderContext) (Reader[T], error) {
	return newReader(rc, s.cfg, s.kind, func(ctx context.Context, sp Split) (splitReader[T], error) {
		return s.open(ctx, rc, sp)
	}), nil
}

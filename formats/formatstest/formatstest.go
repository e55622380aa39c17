// Package formatstest holds what tests of sources and sinks share: reading
// a source whole, in input order.
package formatstest

import (
	"context"

	"github.com/weirdata/weir/formats"
)

// ReadAll reads every split of src in order and returns each record as
// line formats it.
func ReadAll[T, L any](ctx context.Context, src formats.Source[T], line func(T) L) ([]L, error) {
	splits, err := src.Splits(ctx)
	if err != nil {
		return nil, err
	}
	var out []L
	for _, s := range splits {
		if err := src.Read(ctx, s, func(b []T) error {
			for _, r := range b {
				out = append(out, line(r))
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

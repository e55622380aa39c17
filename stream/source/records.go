package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/weirdata/weir/formats"
	"github.com/weirdata/weir/formats/csv"
	"github.com/weirdata/weir/formats/parquet"
)

// CSV reads CSV files through formats/csv with opts (header, delimiter, ...):
// T's fields map to the columns as formats/csv maps them, and a malformed
// record is an error naming the file, the line and the column. A split is
// one file; its position is the index of its next record, and a reader
// restored at record k decodes the file again and skips the first k
// records. opts.BatchRows sets the batch size.
func CSV[T any](opts csv.Options) Format[T] {
	return recordFormat[T]{source: func(path string) (formats.Source[T], error) { return csv.Open[T](path, opts) }}
}

// Parquet reads Parquet files through formats/parquet with opts (filters,
// NullAsZero, BatchRows); in a directory it reads the *.parquet files. A split is one file; its position is the index of
// its next row (among the rows the filters keep), and a reader restored at
// row k decodes the file again and skips the first k rows.
func Parquet[T any](opts ...parquet.Option) Format[T] {
	return recordFormat[T]{suffix: ".parquet", source: func(path string) (formats.Source[T], error) { return parquet.Open[T](path, opts...) }}
}

// recordFormat reads one file through a formats.Source, its splits in order.
type recordFormat[T any] struct {
	suffix string
	source func(path string) (formats.Source[T], error)
}

func (f recordFormat[T]) ext() string { return f.suffix }

var errStop = errors.New("stream/source: reader closed")

func (f recordFormat[T]) open(_ context.Context, s Split, _ config) (splitReader[T], error) {
	src, err := f.source(s.ID)
	if err != nil {
		return nil, fmt.Errorf("stream/source: %w", err)
	}
	// The format pushes batches to a callback; iter.Pull turns that into
	// pulls. While the reader holds a batch the format is suspended inside
	// its callback, so the batch stays valid until the next pull. The format
	// reads with a background context: the reader checks its own ctx before
	// each pull, and close stops the format at its callback.
	seq := func(yield func([]T, error) bool) {
		ctx := context.Background()
		splits, err := src.Splits(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		for _, sp := range splits {
			err := src.Read(ctx, sp, func(batch []T) error {
				if !yield(batch, nil) {
					return errStop
				}
				return nil
			})
			if errors.Is(err, errStop) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
		}
	}
	next, stop := iter.Pull2(seq)
	return &recordReader[T]{s: s, pull: next, stop: stop, skip: s.Records}, nil
}

// recordReader pulls the batches of a file, skipping the records a restored
// position says were read.
type recordReader[T any] struct {
	s    Split
	pull func() ([]T, error, bool)
	stop func()
	skip int64
}

func (r *recordReader[T]) next(ctx context.Context, _ int) ([]T, time.Duration, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		b, err, ok := r.pull()
		if !ok {
			return nil, 0, io.EOF
		}
		if err != nil {
			return nil, 0, fmt.Errorf("stream/source: %w", err)
		}
		if r.skip > 0 {
			k := min(r.skip, int64(len(b)))
			b, r.skip = b[k:], r.skip-k
		}
		if len(b) == 0 {
			continue
		}
		r.s.Offset += int64(len(b))
		r.s.Records += int64(len(b))
		return b, 0, nil
	}
}

func (r *recordReader[T]) position() Split { return r.s }
func (r *recordReader[T]) close() error    { r.stop(); return nil }

package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"time"

	"github.com/weirdata/weir/formats"
	"github.com/weirdata/weir/formats/csv"
	"github.com/weirdata/weir/formats/parquet"
)

// CSV reads CSV files through formats/csv with opts (header, delimiter, ...):
// T's fields map to the columns as formats/csv maps them, and a malformed
// record is an error naming the file, the line and the column. A split is
// one file; its position is the byte offset of its next record and the
// number of records before it, so a restored reader resumes mid-file (it
// counts the lines before the offset once, for its errors' line numbers).
// A file is read as it was when its split was opened, to its last complete
// line if it grew since (see formats/csv). opts.BatchRows sets the batch
// size; opts.SplitSize is ignored.
func CSV[T any](opts csv.Options) Format[T] { return csvFormat[T]{opts: opts} }

type csvFormat[T any] struct{ opts csv.Options }

func (csvFormat[T]) ext() string { return "" }

func (f csvFormat[T]) open(_ context.Context, s Split, _ config) (splitReader[T], error) {
	if s.Records > 0 && s.Offset <= s.Records {
		return nil, fmt.Errorf("stream/source: split %s: the position is a record index, as CSV positions were before they became byte offsets; restore it with the weir that wrote it", s)
	}
	o := f.opts
	o.SplitSize = math.MaxInt64 // a file is one split
	// csv's errors name their package and the file: returned as they are.
	src, err := csv.Open[T](s.ID, o)
	if err != nil {
		return nil, err
	}
	splits, err := src.Splits(context.Background())
	if err != nil {
		return nil, err
	}
	r := &csvReader[T]{s: s}
	if len(splits) == 0 { // no records
		return r, nil
	}
	sp := splits[0]
	if s.Offset > 0 {
		if sp, err = src.Seek(sp, s.Offset); err != nil {
			return nil, err
		}
	}
	if r.r, err = src.NewReader(sp); err != nil {
		return nil, err
	}
	return r, nil
}

// badRecord is a CSV record that cannot be read: a restart reads it again,
// so no restart cures it (Unrecoverable).
type badRecord struct{ err *csv.RecordError }

func (e badRecord) Error() string       { return e.err.Error() }
func (e badRecord) Unwrap() error       { return e.err }
func (e badRecord) Unrecoverable() bool { return true }

// csvReader reads one CSV file.
type csvReader[T any] struct {
	s Split
	r *csv.Reader[T] // nil for a file without records
}

func (r *csvReader[T]) next(ctx context.Context, limit int) ([]T, time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if r.r == nil {
		return nil, 0, io.EOF
	}
	b, err := r.r.NextN(limit)
	if err == io.EOF {
		return nil, 0, io.EOF
	} else if re := (*csv.RecordError)(nil); errors.As(err, &re) {
		return nil, 0, fmt.Errorf("stream/source: %w", badRecord{re})
	} else if err != nil {
		return nil, 0, fmt.Errorf("stream/source: %w", err)
	}
	r.s.Records += int64(len(b))
	r.s.Offset = r.r.Offset()
	return b, 0, nil
}

func (r *csvReader[T]) position() Split { return r.s }

func (r *csvReader[T]) close() error {
	if r.r == nil {
		return nil
	}
	return r.r.Close()
}

// Parquet reads Parquet files through formats/parquet with opts (filters,
// NullAsZero, BatchRows); in a directory it reads the *.parquet files. A split is one file; its position is the index of
// its next row (among the rows the filters keep), and a reader restored at
// row k decodes the file again and skips the first k rows.
func Parquet[T any](opts ...parquet.Option) Format[T] {
	return recordFormat[T]{suffix: ".parquet", source: func(path string) (formats.Source[T], error) { return parquet.Open[T](path, opts...) }}
}

// recordFormat reads one file through a formats.Source, its splits in order
// (Parquet).
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

package formats

import "context"

// Split is one independently readable piece of a source.
type Split interface {
	// String names the split for errors and progress ("lineitem.parquet row group 3").
	String() string
	// Size is the split's size in bytes as stored, for scheduling and estimates.
	Size() int64
}

// Source reads records of type T.
type Source[T any] interface {
	// Splits lists the pieces of the input, in input order.
	Splits(ctx context.Context) ([]Split, error)
	// Read decodes one split and calls fn with its records a batch at a time, in
	// order. Read checks ctx once per batch. The batch is valid only during fn.
	Read(ctx context.Context, s Split, fn func(batch []T) error) error
	// Stats returns what the source knows without reading the data.
	Stats(ctx context.Context) (Stats, error)
}

// Stats describe a source for the optimizer. Unknown numbers are -1.
type Stats struct {
	Rows    int64 // rows in all splits
	Bytes   int64 // bytes as stored
	Columns map[string]ColumnStats
}

// ColumnStats describe one column. Min and Max hold the column's Go value
// (int64, float64, string, time.Time, ...) or nil when unknown.
type ColumnStats struct {
	Min, Max  any
	NullCount int64 // -1 when unknown
	Distinct  int64 // -1 when unknown
}

// Sink writes records of type T.
type Sink[T any] interface {
	// Create opens the writer of subtask i of n. With n == 1 it writes the sink's
	// path itself; with n > 1 the path is a directory holding one file per subtask,
	// named part-00000.ext, part-00001.ext, ... in subtask order.
	Create(ctx context.Context, i, n int) (Writer[T], error)
}

// Writer writes one output file.
type Writer[T any] interface {
	// Write appends a batch; the writer does not keep the slice.
	Write(batch []T) error
	// Commit flushes and closes the file and renames it to its final name.
	Commit() error
	// Abort closes and removes the temporary file; it is safe after Commit (a no-op)
	// and more than once.
	Abort()
}

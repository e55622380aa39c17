package formats

import (
	"context"
	"fmt"
	"sync/atomic"
)

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

// ParallelSplitter is implemented by sources that cut their input to suit the
// number of readers sharing it: SplitsFor lists the pieces as Splits does, but
// about equal in size and, where the input is big enough, a multiple of n of
// them, so that n readers taking pieces from a shared queue get about equal
// shares. dataset.FromSource calls it with the operator's parallelism.
type ParallelSplitter interface {
	SplitsFor(ctx context.Context, n int) ([]Split, error)
}

// MinSplitSize is the smallest byte range SplitTarget cuts to give n readers
// a share each.
const MinSplitSize = 64 << 10

// SplitTarget returns the size of the byte ranges to cut total bytes into for
// n readers, none larger than maxSize. The number of ranges is the least that
// keeps them within maxSize, raised to a multiple of n. When that would make
// ranges shorter than MinSplitSize, it is instead raised only as far as
// ranges of MinSplitSize allow. The ranges are equal. n < 1 counts as 1.
func SplitTarget(total, maxSize int64, n int) int64 {
	n64 := int64(max(n, 1))
	maxSize = max(maxSize, 1)
	if total <= 0 {
		return maxSize
	}
	base := (total-1)/maxSize + 1 // no overflow when maxSize is math.MaxInt64
	count := (base + n64 - 1) / n64 * n64
	if count > base && total/count < MinSplitSize {
		count = max(base, total/MinSplitSize)
	}
	return (total + count - 1) / count
}

// ByteRanges cuts size bytes into equal ranges of at most target bytes (the
// last ones a byte shorter where size does not divide), calling fn with each
// range's start and end in order. An empty file has no range.
func ByteRanges(size, target int64, fn func(start, end int64)) {
	if size <= 0 {
		return
	}
	target = max(target, 1)
	count := (size + target - 1) / target
	for i := range count {
		fn(size*i/count, size*(i+1)/count)
	}
}

// ReadMemorer is implemented by sources that hold decode buffers while they
// read a split, beyond the batches they pass on. ReadMemory returns their
// bytes for s; the caller reserves them from its memory budget for the length
// of Read, so that the rest of the budget shrinks accordingly.
type ReadMemorer interface {
	ReadMemory(s Split) int64
}

// KeySet is a set of integer keys: a runtime join filter, the keys of a hash
// join's build side, that a source tests rows against before it decodes the
// rest of them.
type KeySet interface {
	// Keep narrows sel, indexes into vals, to the rows whose value is in the
	// set, in order, reusing sel's array.
	Keep(vals []int64, sel []int32) []int32
}

// KeyFilterer is implemented by sources that can drop the rows whose integer
// column holds no key of a KeySet, testing that column before they decode
// the row's other columns (Parquet).
type KeyFilterer[T any] interface {
	// KeyColumn reports why column cannot be filtered by integer keys, or nil
	// when it can: it must be an integer column that Read decodes.
	KeyColumn(column string) error
	// ReadKeys is Read keeping only the rows whose column holds a key of keys;
	// rows where the column is NULL are kept. removed counts the rows it
	// dropped.
	ReadKeys(ctx context.Context, s Split, column string, keys KeySet, removed *atomic.Int64, fn func(batch []T) error) error
}

// Stats describe a source for the optimizer. Unknown numbers are -1.
type Stats struct {
	Rows  int64 // rows in all splits
	Bytes int64 // bytes as stored
	// Matching estimates the rows that pass the source's declared filters
	// (equal to Rows without filters): each filter's share of a split's rows is
	// read off the column's min/max statistics, assuming values spread evenly.
	Matching int64
	Columns  map[string]ColumnStats
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

// ValueCopier is implemented by writers that keep nothing of a batch's records
// once Write returns, not even the bytes their strings and slices point to: they
// encode or copy what they need. A producer may then hand them records whose
// bytes it reuses after Write, saving a copy.
type ValueCopier interface {
	CopiesValues()
}

// RawWriter is implemented by writers of records that are byte strings
// (string or []byte): WriteRaw writes one record given as its bytes, which are
// valid only during the call, like Write([]T{T(b)}). A producer whose records
// are views of bytes it reuses record by record (a merge of sorted runs) then
// hands them over without copying them first.
type RawWriter interface {
	WriteRaw(b []byte) error
}

// Writer writes one output file in two phases, as Flink's output formats do:
// each subtask writes and closes its file, and the job publishes every file
// only after all of its tasks succeeded.
//
// The calls go Write* Close Commit, or stop at any point with Abort:
//
//	open --Write--> open --Close--> closed --Commit--> committed
//	  \                               \
//	   +--Abort--> aborted <-----------+--Abort
//
// Until Commit the data lives in a temporary file beside the final name, hidden
// from readers of the output; Commit makes it visible with one rename. A Writer
// is used by one goroutine at a time; the subtask that wrote it may hand it to
// another goroutine to Commit or Abort. Errors name the file.
type Writer[T any] interface {
	// Write appends a batch; the writer does not keep the slice. Write after
	// Close, Commit or Abort is an error.
	Write(batch []T) error
	// Close completes the temporary file: it flushes buffers, writes any
	// footer, syncs and closes it. Its errors are the writing task's errors;
	// when it fails the temporary file is removed. After Close only Commit or
	// Abort may be called.
	Close() error
	// Commit renames the closed temporary file to its final name. It is called
	// once per writer, after every task of the job succeeded. Commit without a
	// successful Close, or after Abort, is an error and publishes nothing.
	Commit() error
	// Abort removes the temporary file, closing it first if Close was not
	// called. It is a no-op after Commit and safe to call more than once.
	Abort()
}

// Remover is implemented by writers that can take back a committed file: when
// a job commits several writers and a later Commit fails, the job calls Remove
// on the writers it already committed so that a failed job leaves nothing.
// Remove is called only after a successful Commit; it is best effort.
type Remover interface {
	// Remove deletes the committed file.
	Remove() error
}

// WriterState is the phase a Writer is in; implementations use it to check the
// order of calls and to say in errors why a call is refused.
type WriterState int

// The phases of a Writer. A writer starts Open.
const (
	Open      WriterState = iota // accepting Write
	Closed                       // temporary file complete, waiting for Commit or Abort
	Committed                    // renamed to its final name
	Aborted                      // temporary file removed (or committed file removed)
)

func (s WriterState) String() string {
	switch s {
	case Open:
		return "open"
	case Closed:
		return "closed"
	case Committed:
		return "committed"
	case Aborted:
		return "aborted"
	}
	return fmt.Sprintf("WriterState(%d)", int(s))
}

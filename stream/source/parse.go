package source

import (
	"context"
	"fmt"
)

// Parse makes records of src's lines with fn. A line fn fails on is an error
// naming the split (the file, or host:port for a socket) and the line's
// number in it: "stream/source: orders.txt line 17: ...". Positions are
// src's: a restored reader resumes at the line after the last one parsed.
// The batch of records is reused from call to call.
func Parse[T any](src Source[string], fn func(line string) (T, error)) Source[T] {
	return &parsed[T]{src: src, fn: fn}
}

type parsed[T any] struct {
	src Source[string]
	fn  func(string) (T, error)
}

func (p *parsed[T]) Boundedness() Boundedness { return p.src.Boundedness() }

func (p *parsed[T]) Enumerator(parallelism int, restored *EnumeratorState) (Enumerator, error) {
	return p.src.Enumerator(parallelism, restored)
}

func (p *parsed[T]) Reader(rc ReaderContext) (Reader[T], error) {
	r, err := p.src.Reader(rc)
	if err != nil {
		return nil, err
	}
	return &parseReader[T]{Reader: r, fn: p.fn}, nil
}

// parseReader parses the batches of a reader of lines.
type parseReader[T any] struct {
	Reader[string]
	fn  func(string) (T, error)
	buf []T
}

func (r *parseReader[T]) Next(ctx context.Context) (Batch[T], error) {
	b, err := r.Reader.Next(ctx)
	if err != nil || b.End {
		return Batch[T]{Split: b.Split, First: b.First, End: b.End}, err
	}
	out := r.buf[:0]
	for i, line := range b.Records {
		v, err := r.fn(line)
		if err != nil {
			return Batch[T]{}, &ParseError{Split: b.Split, Line: b.First + int64(i) + 1, Err: err}
		}
		out = append(out, v)
	}
	r.buf = out
	return Batch[T]{Split: b.Split, First: b.First, Records: out}, nil
}

// ParseError is a line of a source that its parse function failed on. The
// same line fails the same way on every read, so no restart of the job
// cures it (Unrecoverable).
type ParseError struct {
	Split string // the file, or host:port
	Line  int64  // from 1
	Err   error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("stream/source: %s line %d: %v", e.Split, e.Line, e.Err)
}

// Unwrap returns the parse function's error.
func (e *ParseError) Unwrap() error { return e.Err }

// Unrecoverable reports true: a restart reads the line again.
func (e *ParseError) Unrecoverable() bool { return true }

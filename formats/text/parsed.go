package text

import (
	"context"
	"fmt"
	"io"
	"os"
	"unsafe"

	"github.com/weirdata/weir/formats"
)

// ParseError is a malformed line of an input file read by a parsed source
// (OpenParsed). Programs return it wrapped only in their own prefix, so that
// the one-line message names the file and the line.
type ParseError struct {
	File string // the file, as given or as a directory or glob expanded it
	Line int    // 1-based
	Err  error  // what is wrong with the line
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s line %d: %v", e.File, e.Line, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// parsedSource reads files of lines and parses every line into a T. Files are
// cut into byte ranges by the split rule, as Source cuts them; a split that
// meets a malformed line counts the lines before it in the file, so that the
// error names its line. Read may run concurrently for different splits.
type parsedSource[T any] struct {
	files []fileInfo
	opts  Options
	parse func(line []byte, s *Strings) (T, error)
}

var _ formats.ParallelSplitter = (*parsedSource[int])(nil)

// maxParsedLine is the longest line a parsed source reads.
const maxParsedLine = 1 << 30

// OpenParsed opens a file, a directory or a glob (formats.Expand's rules) of
// lines as a source of T with default options: parse turns each line (without
// '\n' or a trailing '\r') into a record. The line is valid only during the
// call; parse copies what it keeps, for strings through s (one Strings per
// reading goroutine). A malformed line stops Read with a *ParseError naming
// the file and the line. A line longer than 1 GiB is an error.
func OpenParsed[T any](path string, parse func(line []byte, s *Strings) (T, error)) (formats.Source[T], error) {
	return OpenParsedWith(path, Options{}, parse)
}

// OpenParsedWith is OpenParsed with options: SplitSize, BatchRows and
// ChunkSize (the read buffer, reused from read to read) as for Source.
func OpenParsedWith[T any](path string, opts Options, parse func(line []byte, s *Strings) (T, error)) (formats.Source[T], error) {
	opts.EnsureDefaults()
	paths, err := formats.Expand(path, "")
	if err != nil {
		return nil, err
	}
	s := &parsedSource[T]{opts: opts, parse: parse}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			return nil, fmt.Errorf("%s is a directory", p)
		}
		s.files = append(s.files, fileInfo{path: p, size: st.Size()})
	}
	return s, nil
}

// Splits cuts every file into equal byte ranges of at most SplitSize.
func (s *parsedSource[T]) Splits(ctx context.Context) ([]formats.Split, error) {
	return s.SplitsFor(ctx, 1)
}

// SplitsFor cuts every file into equal byte ranges for n readers
// (formats.SplitTarget over the files' total size, at most SplitSize).
func (s *parsedSource[T]) SplitsFor(ctx context.Context, n int) ([]formats.Split, error) {
	return splitFiles(s.files, s.opts.SplitSize, n), ctx.Err()
}

// Stats reports the files' size; the number of lines is unknown.
func (s *parsedSource[T]) Stats(ctx context.Context) (formats.Stats, error) {
	st := formats.Stats{Rows: -1, Matching: -1}
	for _, f := range s.files {
		st.Bytes += f.size
	}
	return st, ctx.Err()
}

// Read parses the lines of one split, a batch at a time, checking ctx once
// per batch.
func (s *parsedSource[T]) Read(ctx context.Context, sp formats.Split, fn func(batch []T) error) error {
	ts, ok := sp.(*Split)
	if !ok {
		return fmt.Errorf("formats/text: split %s is not a text split", sp)
	}
	f, err := os.Open(ts.file)
	if err != nil {
		return fmt.Errorf("formats/text: %w", err)
	}
	defer f.Close()
	r := lineReader{f: f, name: ts.file, chunk: s.opts.ChunkSize, maxLine: maxParsedLine}
	if err := r.seek(ts.start); err != nil {
		return err
	}
	first := r.pos // the offset of the split's first line
	batch := make([]T, 0, s.opts.BatchRows)
	var strs Strings
	line := 0 // lines read in this split
	for r.pos < ts.end {
		b, err := r.line()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		line++
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
		v, err := s.parse(b, &strs)
		if err != nil {
			before, cerr := linesBefore(f, ts.file, first)
			if cerr != nil {
				return cerr
			}
			return &ParseError{File: ts.file, Line: before + line, Err: err}
		}
		batch = append(batch, v)
		if len(batch) == cap(batch) {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if len(batch) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn(batch)
}

// stringsChunk is the size of a Strings' chunks.
const stringsChunk = 64 << 10

// Strings makes strings by copying bytes into large chunks it never
// overwrites, so that a string costs no allocation of its own. A string keeps
// its whole chunk alive. A Strings is not safe for concurrent use.
type Strings struct {
	buf []byte
}

// String returns a string holding a copy of b.
func (s *Strings) String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > cap(s.buf)-len(s.buf) {
		s.buf = make([]byte, 0, max(stringsChunk, len(b)))
	}
	n := len(s.buf)
	s.buf = append(s.buf, b...)
	return unsafe.String(&s.buf[n], len(b))
}

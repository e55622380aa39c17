package examples

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"unsafe"

	"github.com/weirdata/weir/formats"
)

// ParseError is a malformed line of an input file. Run functions return it
// wrapped only in their own prefix ("examples: weblog: "), so that the one-line
// message names the file and the line.
type ParseError struct {
	File string // the file, as given or as a directory or glob expanded it
	Line int    // 1-based
	Err  error  // what is wrong with the line
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s line %d: %v", e.File, e.Line, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// lineSource reads files of lines and parses every line into a T. Each file is
// one split read from start to end, so that an error can name its line; the
// program's other operators still run in parallel after the first shuffle.
// It implements formats.Source[T]; Read may run concurrently for different files.
type lineSource[T any] struct {
	files []fileSplit
	// parse turns one line (without '\n' or a trailing '\r') into a record. The
	// line is valid only during the call: parse copies what it keeps through the
	// slab.
	parse func(line []byte, sl *slab) (T, error)
}

// fileSplit is one whole file.
type fileSplit struct {
	path string
	size int64
}

func (s *fileSplit) String() string { return s.path }
func (s *fileSplit) Size() int64    { return s.size }

var _ formats.Source[Edge] = (*lineSource[Edge])(nil)

// openLines opens a file, a directory or a glob (formats.Expand's rules) of lines.
func openLines[T any](path string, parse func([]byte, *slab) (T, error)) (*lineSource[T], error) {
	paths, err := formats.Expand(path, "")
	if err != nil {
		return nil, err
	}
	s := &lineSource[T]{parse: parse}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			return nil, fmt.Errorf("%s is a directory", p)
		}
		s.files = append(s.files, fileSplit{path: p, size: st.Size()})
	}
	return s, nil
}

// Splits returns one split per file.
func (s *lineSource[T]) Splits(ctx context.Context) ([]formats.Split, error) {
	out := make([]formats.Split, len(s.files))
	for i := range s.files {
		out[i] = &s.files[i]
	}
	return out, ctx.Err()
}

// Stats reports the files' size; the number of lines is unknown.
func (s *lineSource[T]) Stats(ctx context.Context) (formats.Stats, error) {
	st := formats.Stats{Rows: -1}
	for _, f := range s.files {
		st.Bytes += f.size
	}
	return st, ctx.Err()
}

// readBatch is the number of records Read passes at a time.
const readBatch = 1024

// Read parses the lines of one file, a batch at a time, checking ctx once per
// batch. A malformed line stops it with a *ParseError.
func (s *lineSource[T]) Read(ctx context.Context, sp formats.Split, fn func(batch []T) error) error {
	fs, ok := sp.(*fileSplit)
	if !ok {
		return fmt.Errorf("examples: split %s is not a file", sp)
	}
	f, err := os.Open(fs.path)
	if err != nil {
		return fmt.Errorf("examples: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<30)
	batch := make([]T, 0, readBatch)
	var sl slab
	line := 0
	for sc.Scan() {
		line++
		v, err := s.parse(sc.Bytes(), &sl)
		if err != nil {
			return &ParseError{File: fs.path, Line: line, Err: err}
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
	if err := sc.Err(); err != nil {
		return fmt.Errorf("examples: read %s after line %d: %w", fs.path, line, err)
	}
	if len(batch) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn(batch)
}

// slabSize is the size of a slab's chunks.
const slabSize = 64 << 10

// slab makes strings by copying bytes into large chunks it never overwrites,
// so that a string costs no allocation of its own. A string keeps its whole
// chunk alive. A slab is not safe for concurrent use.
type slab struct {
	buf []byte
}

// str returns a string holding a copy of b.
func (s *slab) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > cap(s.buf)-len(s.buf) {
		s.buf = make([]byte, 0, max(slabSize, len(b)))
	}
	n := len(s.buf)
	s.buf = append(s.buf, b...)
	return unsafe.String(&s.buf[n], len(b))
}

package text

import (
	"bufio"
	"context"
	"fmt"
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

// parsedSource reads files of lines and parses every line into a T. Each file
// is one split read from start to end, so that an error can name its line;
// the program's other operators still run in parallel after the first
// shuffle. Read may run concurrently for different files.
type parsedSource[T any] struct {
	files []parsedFile
	parse func(line []byte, s *Strings) (T, error)
}

// parsedFile is one whole file.
type parsedFile struct {
	path string
	size int64
}

func (s *parsedFile) String() string { return s.path }
func (s *parsedFile) Size() int64    { return s.size }

// OpenParsed opens a file, a directory or a glob (formats.Expand's rules) of
// lines as a source of T: parse turns each line (without '\n' or a trailing
// '\r') into a record. The line is valid only during the call; parse copies
// what it keeps, for strings through s (one Strings per reading goroutine). A
// malformed line stops Read with a *ParseError naming the file and the line.
func OpenParsed[T any](path string, parse func(line []byte, s *Strings) (T, error)) (formats.Source[T], error) {
	paths, err := formats.Expand(path, "")
	if err != nil {
		return nil, err
	}
	s := &parsedSource[T]{parse: parse}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			return nil, fmt.Errorf("%s is a directory", p)
		}
		s.files = append(s.files, parsedFile{path: p, size: st.Size()})
	}
	return s, nil
}

// Splits returns one split per file.
func (s *parsedSource[T]) Splits(ctx context.Context) ([]formats.Split, error) {
	out := make([]formats.Split, len(s.files))
	for i := range s.files {
		out[i] = &s.files[i]
	}
	return out, ctx.Err()
}

// Stats reports the files' size; the number of lines is unknown.
func (s *parsedSource[T]) Stats(ctx context.Context) (formats.Stats, error) {
	st := formats.Stats{Rows: -1, Matching: -1}
	for _, f := range s.files {
		st.Bytes += f.size
	}
	return st, ctx.Err()
}

// parsedBatch is the number of records Read passes at a time.
const parsedBatch = 1024

// Read parses the lines of one file, a batch at a time, checking ctx once per
// batch.
func (s *parsedSource[T]) Read(ctx context.Context, sp formats.Split, fn func(batch []T) error) error {
	fs, ok := sp.(*parsedFile)
	if !ok {
		return fmt.Errorf("formats/text: split %s is not a file", sp)
	}
	f, err := os.Open(fs.path)
	if err != nil {
		return fmt.Errorf("formats/text: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<30)
	batch := make([]T, 0, parsedBatch)
	var strs Strings
	line := 0
	for sc.Scan() {
		line++
		v, err := s.parse(sc.Bytes(), &strs)
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
		return fmt.Errorf("formats/text: read %s after line %d: %w", fs.path, line, err)
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

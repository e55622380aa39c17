package csv

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"unsafe"

	"github.com/weirdata/weir/formats"
)

// Source reads records of type T from CSV files. It implements formats.Source[T];
// Read may be called concurrently for different splits.
type Source[T any] struct {
	opts  Options
	cols  []column
	files []*file
}

// file is one input file with its header resolved.
type file struct {
	path      string
	size      int64
	empty     bool     // no header and no records: yields nothing
	header    []string // column names (nil with NoHeader)
	idx       []int    // per struct field, its column in a record
	width     int      // fields per record
	dataStart int64    // offset of the first record after the header
	dataLine  int64    // line number at dataStart
}

// Split is a range of whole records of one file.
type Split struct {
	f          *file
	start, end int64
	line       int64 // the line number at start
}

// String names the split.
func (s *Split) String() string {
	return fmt.Sprintf("%s bytes %d-%d", s.f.path, s.start, s.end)
}

// Size is the split's length in bytes.
func (s *Split) Size() int64 { return s.end - s.start }

var _ formats.Source[struct{ A int }] = (*Source[struct{ A int }])(nil)

// Open opens a file, a directory or a glob of CSV files, reads each header and
// resolves T's fields against it (formats.Resolve).
func Open[T any](path string, opts Options) (*Source[T], error) {
	opts.EnsureDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	cols, err := columnsOf[T]()
	if err != nil {
		return nil, err
	}
	paths, err := formats.Expand(path, "")
	if err != nil {
		return nil, fmt.Errorf("formats/csv: %w", err)
	}
	s := &Source[T]{opts: opts, cols: cols}
	for _, p := range paths {
		f, err := s.openFile(p)
		if err != nil {
			return nil, err
		}
		s.files = append(s.files, f)
	}
	return s, nil
}

// openFile reads the header of path.
func (s *Source[T]) openFile(path string) (*file, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("formats/csv: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("formats/csv: %w", err)
	}
	f := &file{path: path, size: st.Size(), dataLine: 1}
	if s.opts.NoHeader {
		f.width = len(s.cols)
		f.idx = make([]int, len(s.cols))
		for i := range f.idx {
			f.idx[i] = i
		}
		return f, nil
	}
	sc := newScanner(&s.opts)
	buf := make([]byte, 0, 64<<10)
	for {
		n, err := io.ReadFull(fd, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		atEOF := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !atEOF {
			return nil, fmt.Errorf("formats/csv: read %s: %w", path, err)
		}
		data := buf[f.dataStart:]
		for {
			n, status, err := sc.next(data, atEOF)
			if err != nil {
				return nil, fmt.Errorf("formats/csv: %s line %d (header): %w", path, f.dataLine, err)
			}
			switch status {
			case statusEOF:
				if atEOF {
					f.empty = true
					return f, nil
				}
			case statusSkip:
				data = data[n:]
				f.dataStart += int64(n)
				f.dataLine += int64(sc.lines)
				continue
			case statusRecord:
				for i := range sc.fields {
					f.header = append(f.header, string(sc.field(data, i)))
				}
				f.dataStart += int64(n)
				f.dataLine += int64(sc.lines)
				fields := make([]formats.Field, len(s.cols))
				for i := range s.cols {
					fields[i] = s.cols[i].Field
				}
				f.idx, err = formats.Resolve(fields, f.header, path)
				if err != nil {
					return nil, fmt.Errorf("formats/csv: %w", err)
				}
				f.width = len(f.header)
				return f, nil
			}
			break // need more
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// Splits cuts each file into ranges of whole records of about SplitSize bytes.
// A file bigger than SplitSize is read once to place the boundaries: a boundary
// is the byte after a '\n' that an even number of quotes precedes (in RFC 4180 a
// newline is inside a quoted field exactly when an odd number of quotes precedes
// it). A file read with a Comment character is one split, since a comment may
// hold a quote.
func (s *Source[T]) Splits(ctx context.Context) ([]formats.Split, error) {
	var out []formats.Split
	for _, f := range s.files {
		if f.empty || f.dataStart >= f.size {
			continue
		}
		if f.size-f.dataStart <= s.opts.SplitSize || s.opts.Comment != 0 {
			out = append(out, &Split{f: f, start: f.dataStart, end: f.size, line: f.dataLine})
			continue
		}
		splits, err := s.boundaries(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, splits...)
	}
	return out, ctx.Err()
}

func (s *Source[T]) boundaries(ctx context.Context, f *file) ([]formats.Split, error) {
	fd, err := os.Open(f.path)
	if err != nil {
		return nil, fmt.Errorf("formats/csv: %w", err)
	}
	defer fd.Close()
	br := bufio.NewReaderSize(io.NewSectionReader(fd, f.dataStart, f.size-f.dataStart), 1<<20)
	var out []formats.Split
	start, startLine, line := f.dataStart, f.dataLine, f.dataLine
	pos, odd := start, false
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		target := start + s.opts.SplitSize
		for pos < target {
			chunk, err := br.Peek(int(min(target-pos, int64(br.Size()))))
			if len(chunk) == 0 && err != nil {
				break
			}
			odd = odd != (bytes.Count(chunk, []byte{quote})%2 == 1)
			line += int64(bytes.Count(chunk, []byte{'\n'}))
			br.Discard(len(chunk))
			pos += int64(len(chunk))
		}
		end := f.size
		for pos < f.size {
			c, err := br.ReadByte()
			if err != nil {
				return nil, fmt.Errorf("formats/csv: split %s: %w", f.path, err)
			}
			pos++
			if c == quote {
				odd = !odd
			} else if c == '\n' {
				line++
				if !odd {
					end = pos
					break
				}
			}
		}
		if target >= f.size || end >= f.size {
			return append(out, &Split{f: f, start: start, end: f.size, line: startLine}), nil
		}
		out = append(out, &Split{f: f, start: start, end: end, line: startLine})
		start, startLine = end, line
	}
}

// Stats reports the files' total size; the number of rows is unknown.
func (s *Source[T]) Stats(ctx context.Context) (formats.Stats, error) {
	st := formats.Stats{Rows: -1, Matching: -1}
	for _, f := range s.files {
		st.Bytes += f.size
	}
	return st, ctx.Err()
}

// Read calls fn with the records of split sp, a batch at a time. The batch slice
// is reused; strings, []byte values and pointees in it stay valid afterwards.
func (s *Source[T]) Read(ctx context.Context, sp formats.Split, fn func(batch []T) error) error {
	cs, ok := sp.(*Split)
	if !ok {
		return fmt.Errorf("formats/csv: split %s is not a CSV split", sp)
	}
	f := cs.f
	fd, err := os.Open(f.path)
	if err != nil {
		return fmt.Errorf("formats/csv: %w", err)
	}
	defer fd.Close()
	r := io.NewSectionReader(fd, cs.start, cs.end-cs.start)
	sc := newScanner(&s.opts)
	d := newDecoder(s.cols, &s.opts)
	buf := make([]byte, s.opts.ChunkSize)
	lo, hi, atEOF, line := 0, 0, false, cs.line
	batch := make([]T, s.opts.BatchRows)
	n := 0
	for {
		used, st, err := sc.next(buf[lo:hi], atEOF)
		if err != nil {
			return fmt.Errorf("formats/csv: %s line %d: %w", f.path, line, err)
		}
		if st == statusEOF && atEOF {
			break
		}
		switch st {
		case statusNeedMore, statusEOF:
			if lo > 0 {
				copy(buf, buf[lo:hi])
				hi, lo = hi-lo, 0
			}
			if hi == len(buf) {
				buf = append(buf, make([]byte, len(buf))...)
			}
			m, err := io.ReadFull(r, buf[hi:])
			hi += m
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				atEOF = true
			} else if err != nil {
				return fmt.Errorf("formats/csv: read %s: %w", f.path, err)
			}
		case statusSkip:
			lo += used
			line += int64(sc.lines)
		case statusRecord:
			if len(sc.fields) != f.width {
				return fmt.Errorf("formats/csv: %s line %d: %d fields, want %d", f.path, line, len(sc.fields), f.width)
			}
			data := buf[lo:hi]
			row := unsafe.Pointer(&batch[n])
			for ci, fi := range f.idx {
				if err := d.set(ci, row, sc.field(data, fi), sc.fields[fi].quoted); err != nil {
					return fmt.Errorf("formats/csv: %s line %d, column %s: %w", f.path, line, s.columnName(f, ci), err)
				}
			}
			lo += used
			line += int64(sc.lines)
			n++
			if n == len(batch) {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := fn(batch); err != nil {
					return err
				}
				n = 0
				d.newBatch()
			}
		}
	}
	if n == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn(batch[:n])
}

func (s *Source[T]) columnName(f *file, ci int) string {
	if f.header != nil {
		return f.header[f.idx[ci]]
	}
	return s.cols[ci].Field.Column
}

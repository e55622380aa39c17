package csv

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/weirdata/weir/formats"
)

// Source reads records of type T from CSV files. It implements formats.Source[T];
// Read may be called concurrently for different splits.
type Source[T any] struct {
	opts  Options
	cols  []column
	metas []meta
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

var (
	_ formats.Source[struct{ A int }] = (*Source[struct{ A int }])(nil)
	_ formats.ParallelSplitter        = (*Source[struct{ A int }])(nil)
)

// Open opens a file, a directory or a glob of CSV files, reads each header and
// resolves T's fields against it (formats.Resolve).
func Open[T any](path string, opts Options) (*Source[T], error) {
	opts.EnsureDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	cols, metas, err := columnsOf[T](&opts)
	if err != nil {
		return nil, err
	}
	paths, err := formats.Expand(path, "")
	if err != nil {
		return nil, fmt.Errorf("formats/csv: %w", err)
	}
	s := &Source[T]{opts: opts, cols: cols, metas: metas}
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
	if err := formats.NotRegular(path); err != nil {
		return nil, fmt.Errorf("formats/csv: %w", err)
	}
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
	var head [len(bom)]byte
	if n, _ := io.ReadFull(fd, head[:]); n == len(bom) && string(head[:]) == bom {
		f.dataStart = int64(len(bom))
	}
	if s.opts.NoHeader {
		f.width = len(s.cols)
		f.idx = make([]int, len(s.cols))
		for i := range f.idx {
			f.idx[i] = i
		}
		return f, nil
	}
	if _, err := fd.Seek(f.dataStart, io.SeekStart); err != nil {
		return nil, fmt.Errorf("formats/csv: %w", err)
	}
	sc := newScanner(&s.opts)
	buf := make([]byte, 0, 64<<10)
	off := 0 // of the header's first byte in buf
	for {
		n, err := io.ReadFull(fd, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		atEOF := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !atEOF {
			return nil, fmt.Errorf("formats/csv: read %s: %w", path, err)
		}
		data := buf[off:]
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
				off += n
				f.dataStart += int64(n)
				f.dataLine += int64(sc.lines)
				continue
			case statusRecord:
				if n > s.opts.MaxRecordSize {
					return nil, fmt.Errorf("formats/csv: %s line %d (header): a record longer than the limit of %d bytes (Options.MaxRecordSize)", path, f.dataLine, s.opts.MaxRecordSize)
				}
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
		if len(buf)-off >= s.opts.MaxRecordSize {
			return nil, fmt.Errorf("formats/csv: %s line %d (header): a record longer than the limit of %d bytes (Options.MaxRecordSize)", path, f.dataLine, s.opts.MaxRecordSize)
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// bom is the UTF-8 byte-order mark, which a file may start with (Excel writes
// it); it is skipped.
const bom = "\xef\xbb\xbf"

// Splits cuts each file into ranges of whole records of about SplitSize bytes
// (formats.SplitTarget: equal steps over all files' records, at most
// SplitSize). A file bigger than the step is read once to place the boundaries: a boundary
// is the byte after a '\n' that an even number of quotes precedes (in RFC 4180 a
// newline is inside a quoted field exactly when an odd number of quotes precedes
// it). A file read with a Comment character is one split, since a comment may
// hold a quote.
func (s *Source[T]) Splits(ctx context.Context) ([]formats.Split, error) { return s.SplitsFor(ctx, 1) }

// SplitsFor cuts the files as Splits does, for n readers: the step between
// boundaries is formats.SplitTarget of the records' total size, at most
// SplitSize.
func (s *Source[T]) SplitsFor(ctx context.Context, n int) ([]formats.Split, error) {
	var total int64
	for _, f := range s.files {
		if !f.empty && f.dataStart < f.size {
			total += f.size - f.dataStart
		}
	}
	step := formats.SplitTarget(total, s.opts.SplitSize, n)
	var out []formats.Split
	for _, f := range s.files {
		if f.empty || f.dataStart >= f.size {
			continue
		}
		if f.size-f.dataStart <= step || s.opts.Comment != 0 {
			out = append(out, &Split{f: f, start: f.dataStart, end: f.size, line: f.dataLine})
			continue
		}
		splits, err := s.boundaries(ctx, f, step)
		if err != nil {
			return nil, err
		}
		out = append(out, splits...)
	}
	return out, ctx.Err()
}

// boundaries cuts f into splits of about step bytes of records.
func (s *Source[T]) boundaries(ctx context.Context, f *file, step int64) ([]formats.Split, error) {
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
		target := start + step
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
	r, err := s.NewReader(sp)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		b, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(b); err != nil {
			return err
		}
	}
}

func (s *Source[T]) columnName(f *file, ci int) string {
	if f.header != nil {
		return f.header[f.idx[ci]]
	}
	return s.cols[ci].Field.Column
}

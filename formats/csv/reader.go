package csv

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"unsafe"

	"github.com/weirdata/weir/formats"
)

// Seek returns the rest of split sp from the byte offset off in its file, an
// Offset that a Reader of sp reported (a record's start). Its line numbers go
// on from sp's: Seek counts the lines before off.
func (s *Source[T]) Seek(sp formats.Split, off int64) (formats.Split, error) {
	cs, ok := sp.(*Split)
	if !ok {
		return nil, fmt.Errorf("formats/csv: split %s is not a CSV split", sp)
	}
	if off < cs.start || off > cs.end {
		return nil, fmt.Errorf("formats/csv: %s: offset %d is outside the split's bytes %d-%d", cs.f.path, off, cs.start, cs.end)
	}
	fd, err := os.Open(cs.f.path)
	if err != nil {
		return nil, fmt.Errorf("formats/csv: %w", err)
	}
	defer fd.Close()
	buf := make([]byte, 1<<20)
	lines := int64(0)
	r := io.NewSectionReader(fd, cs.start, off-cs.start)
	for {
		n, err := r.Read(buf)
		lines += int64(bytes.Count(buf[:n], []byte{'\n'}))
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("formats/csv: read %s: %w", cs.f.path, err)
		}
	}
	return &Split{f: cs.f, start: off, end: cs.end, line: cs.line + lines}, nil
}

// RecordError is a record that cannot be read: its file, the line where it
// starts and, for a bad value, its column.
type RecordError struct {
	Path   string
	Line   int64
	Column string // "" when the record as a whole is bad
	Err    error
}

func (e *RecordError) Error() string {
	if e.Column != "" {
		return fmt.Sprintf("formats/csv: %s line %d, column %s: %v", e.Path, e.Line, e.Column, e.Err)
	}
	return fmt.Sprintf("formats/csv: %s line %d: %v", e.Path, e.Line, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Reader reads the records of one split in order, a batch per Next. Offset and
// Line give the position of the next record, from which Seek resumes. A Reader
// is used by one goroutine; Close releases its file.
type Reader[T any] struct {
	s      *Source[T]
	f      *file
	fd     *os.File
	r      *io.SectionReader
	end    int64 // the split's end in the file
	sc     *scanner
	d      *decoder
	buf    []byte
	lo, hi int   // buf[lo:hi] is read and not consumed
	atEOF  bool  // r has no more bytes
	off    int64 // the file offset of buf[lo]
	line   int64 // the line number at buf[lo]
	batch  []T
	handed bool  // the batch was handed out: the next one takes fresh pointees
	grown  int8  // 0 unknown, 1 the file grew past its size at Open, -1 it did not
	err    error // sticky: Next returns it again
}

// NewReader opens the file of split sp for reading its records.
func (s *Source[T]) NewReader(sp formats.Split) (*Reader[T], error) {
	cs, ok := sp.(*Split)
	if !ok {
		return nil, fmt.Errorf("formats/csv: split %s is not a CSV split", sp)
	}
	fd, err := os.Open(cs.f.path)
	if err != nil {
		return nil, fmt.Errorf("formats/csv: %w", err)
	}
	return &Reader[T]{
		s: s, f: cs.f, fd: fd, r: io.NewSectionReader(fd, cs.start, cs.end-cs.start), end: cs.end,
		sc: newScanner(&s.opts), d: newDecoder(s.cols, &s.opts),
		buf: make([]byte, s.opts.ChunkSize), off: cs.start, line: cs.line,
		batch: make([]T, s.opts.BatchRows),
	}, nil
}

// Offset is the byte offset in the file of the next record (or of the end of
// the split once Next returned io.EOF).
func (r *Reader[T]) Offset() int64 { return r.off }

// Line is the line number where the next record starts.
func (r *Reader[T]) Line() int64 { return r.line }

// Close closes the file.
func (r *Reader[T]) Close() error {
	if r.fd == nil {
		return nil
	}
	err := r.fd.Close()
	r.fd = nil
	return err
}

// Next returns the next batch of records, valid until the next call (the
// values its strings, []byte and pointers refer to stay valid), or io.EOF
// after the last one. An error is returned again by every later call.
//
// A file that grew since Open is read to its size then, up to its last
// complete line: an unterminated last record there is being written and is
// not read.
func (r *Reader[T]) Next() ([]T, error) { return r.NextN(len(r.batch)) }

// NextN is Next returning at most limit records (and at most
// Options.BatchRows).
func (r *Reader[T]) NextN(limit int) ([]T, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.handed {
		r.d.newBatch()
		r.handed = false
	}
	n, want := 0, min(max(limit, 1), len(r.batch))
loop:
	for n < want {
		data := r.buf[r.lo:r.hi]
		used, st, err := r.sc.next(data, r.atEOF)
		if err != nil {
			if err == errUnterminated && r.growing() {
				r.stop()
				break loop
			}
			return nil, r.fail(&RecordError{Path: r.f.path, Line: r.line, Err: err})
		}
		switch st {
		case statusEOF:
			if r.atEOF {
				r.err = io.EOF
				break loop
			}
			if err := r.fill(); err != nil {
				return nil, r.fail(err)
			}
			continue
		case statusNeedMore:
			if r.hi-r.lo >= r.s.opts.MaxRecordSize {
				return nil, r.fail(r.tooLong())
			}
			if err := r.fill(); err != nil {
				return nil, r.fail(err)
			}
			continue
		case statusSkip:
			r.lo += used
			r.off += int64(used)
			r.line += int64(r.sc.lines)
			continue
		}
		// statusRecord
		if used > r.s.opts.MaxRecordSize {
			return nil, r.fail(r.tooLong())
		}
		if r.atEOF && used == len(data) && data[used-1] != '\n' && r.growing() {
			r.stop()
			break loop
		}
		if len(r.sc.fields) != r.f.width {
			return nil, r.fail(&RecordError{Path: r.f.path, Line: r.line, Err: fmt.Errorf("%d fields, want %d", len(r.sc.fields), r.f.width)})
		}
		row := unsafe.Pointer(&r.batch[n])
		for ci, fi := range r.f.idx {
			if err := r.d.set(ci, row, r.sc.field(data, fi), r.sc.fields[fi].quoted); err != nil {
				return nil, r.fail(&RecordError{Path: r.f.path, Line: r.line, Column: r.s.columnName(r.f, ci), Err: err})
			}
		}
		for _, m := range r.s.metas {
			v := r.off
			if m.kind == metaLine {
				v = r.line
			}
			*(*int64)(unsafe.Add(row, m.offset)) = v
		}
		r.lo += used
		r.off += int64(used)
		r.line += int64(r.sc.lines)
		n++
	}
	if n == 0 {
		if r.err == nil {
			r.err = io.EOF
		}
		return nil, r.err
	}
	r.handed = true
	return r.batch[:n], nil
}

// tooLong is the error of a record at buf[lo] longer than MaxRecordSize.
func (r *Reader[T]) tooLong() error {
	return &RecordError{Path: r.f.path, Line: r.line,
		Err: fmt.Errorf("a record longer than the limit of %d bytes (Options.MaxRecordSize)", r.s.opts.MaxRecordSize)}
}

// fail keeps err for the next calls and returns it.
func (r *Reader[T]) fail(err error) error {
	r.err = err
	return err
}

// stop ends the split before the record at buf[lo], which a writer has not
// finished.
func (r *Reader[T]) stop() {
	r.lo = r.hi
	r.err = io.EOF
}

// growing reports whether the split ends the file and the file grew since
// Open: its last record there may be cut short.
func (r *Reader[T]) growing() bool {
	if r.end != r.f.size {
		return false
	}
	if r.grown == 0 {
		r.grown = -1
		if st, err := r.fd.Stat(); err == nil && st.Size() > r.f.size {
			r.grown = 1
		}
	}
	return r.grown == 1
}

// fill reads more of the split after buf[lo:hi], moving it to the front and
// growing the buffer when it is full.
func (r *Reader[T]) fill() error {
	if r.lo > 0 {
		copy(r.buf, r.buf[r.lo:r.hi])
		r.hi, r.lo = r.hi-r.lo, 0
	}
	if r.hi == len(r.buf) {
		r.buf = append(r.buf, make([]byte, len(r.buf))...)
	}
	m, err := io.ReadFull(r.r, r.buf[r.hi:])
	r.hi += m
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		r.atEOF = true
	} else if err != nil {
		return fmt.Errorf("formats/csv: read %s: %w", r.f.path, err)
	}
	return nil
}

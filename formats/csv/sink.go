package csv

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"
	"unsafe"

	"github.com/weirdata/weir/formats"
)

// Sink writes records of type T as CSV. It implements formats.Sink[T].
type Sink[T any] struct {
	path string
	opts Options
}

var _ formats.Sink[struct{ A int }] = (*Sink[struct{ A int }])(nil)

// NewSink returns a sink writing path (a file when n == 1, else a directory of
// part-00000.csv, ...): a header row of column names unless opts.NoHeader, then
// one row per record, quoted as RFC 4180 asks. Type errors surface from Create.
func NewSink[T any](path string, opts Options) formats.Sink[T] {
	return &Sink[T]{path: path, opts: opts}
}

// Create opens the writer of subtask i of n.
func (s *Sink[T]) Create(ctx context.Context, i, n int) (formats.Writer[T], error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	opts := s.opts
	opts.EnsureDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	cols, _, err := columnsOf[T](&opts)
	if err != nil {
		return nil, err
	}
	final, err := formats.PartPath(s.path, i, n, ".csv")
	if err != nil {
		return nil, fmt.Errorf("formats/csv: %w", err)
	}
	tf, err := formats.CreateTemp("formats/csv", final)
	if err != nil {
		return nil, err
	}
	w := &writer[T]{TempFile: tf, w: bufio.NewWriterSize(tf.F, 1<<20), cols: cols, opts: opts}
	if !opts.NoHeader {
		for ci := range cols {
			w.sep(ci)
			w.line = w.appendText(w.line, []byte(cols[ci].Field.Column), ci == 0)
		}
		if err := w.endLine(); err != nil {
			w.Abort()
			return nil, err
		}
	}
	return w, nil
}

// writer writes one CSV file; see formats.Writer.
type writer[T any] struct {
	*formats.TempFile // Commit, Abort and Remove
	w                 *bufio.Writer
	cols              []column
	opts              Options
	line              []byte // the row being formatted
	err               error  // a write error: Write and Close return it
}

var _ formats.Remover = (*writer[struct{ A int }])(nil)

func (w *writer[T]) sep(ci int) {
	if ci > 0 {
		w.line = append(w.line, byte(w.opts.Delimiter))
	}
}

func (w *writer[T]) endLine() error {
	w.line = append(w.line, '\n')
	_, err := w.w.Write(w.line)
	w.line = w.line[:0]
	if err != nil {
		w.err = fmt.Errorf("formats/csv: write %s: %w", w.F.Name(), err)
	}
	return w.err
}

// Write appends one row per record.
func (w *writer[T]) Write(batch []T) error {
	if err := w.Check("write", formats.Open); err != nil {
		return err
	}
	if w.err != nil {
		return w.err
	}
	for i := range batch {
		row := unsafe.Pointer(&batch[i])
		for ci := range w.cols {
			w.sep(ci)
			w.appendField(ci, unsafe.Add(row, w.cols[ci].Field.Offset))
		}
		if err := w.endLine(); err != nil {
			return err
		}
	}
	return nil
}

// appendField formats the field of column ci at p.
func (w *writer[T]) appendField(ci int, p unsafe.Pointer) {
	c := &w.cols[ci]
	if c.Kind == formats.KindBytes {
		b := *(*[]byte)(p)
		if b == nil {
			w.line = append(w.line, w.opts.NullString...)
		} else {
			w.line = w.appendText(w.line, b, ci == 0)
		}
		return
	}
	if c.Ptr {
		p = *(*unsafe.Pointer)(p)
		if p == nil {
			w.line = append(w.line, w.opts.NullString...)
			return
		}
	}
	switch c.Kind {
	case formats.KindInt:
		var v int64
		switch c.Size {
		case 1:
			v = int64(*(*int8)(p))
		case 2:
			v = int64(*(*int16)(p))
		case 4:
			v = int64(*(*int32)(p))
		default:
			v = *(*int64)(p)
		}
		w.line = strconv.AppendInt(w.line, v, 10)
	case formats.KindUint:
		var v uint64
		switch c.Size {
		case 1:
			v = uint64(*(*uint8)(p))
		case 2:
			v = uint64(*(*uint16)(p))
		case 4:
			v = uint64(*(*uint32)(p))
		default:
			v = *(*uint64)(p)
		}
		w.line = strconv.AppendUint(w.line, v, 10)
	case formats.KindFloat32:
		w.line = strconv.AppendFloat(w.line, float64(*(*float32)(p)), 'g', -1, 32)
	case formats.KindFloat64:
		w.line = strconv.AppendFloat(w.line, *(*float64)(p), 'g', -1, 64)
	case formats.KindBool:
		w.line = strconv.AppendBool(w.line, *(*bool)(p))
	case formats.KindString:
		s := *(*string)(p)
		w.line = w.appendText(w.line, unsafe.Slice(unsafe.StringData(s), len(s)), ci == 0)
	case formats.KindTime:
		t := *(*time.Time)(p)
		layout := w.opts.TimeLayout
		if layout == "" {
			layout = time.RFC3339Nano
			if t.Location() == time.UTC && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
				layout = time.DateOnly
			}
		}
		w.line = t.AppendFormat(w.line, layout)
	}
}

// appendText appends b, quoted when a reader would otherwise misread it: when it
// is empty or NullString, holds a delimiter, quote, '\r' or '\n', starts or ends
// with a space or tab, or starts a first field with the comment character or
// the byte-order mark (which a reader skips at the start of a file).
func (w *writer[T]) appendText(dst, b []byte, first bool) []byte {
	need := len(b) == 0 || string(b) == w.opts.NullString ||
		isSpace(b[0]) || isSpace(b[len(b)-1]) ||
		(first && w.opts.Comment != 0 && b[0] == byte(w.opts.Comment)) ||
		(first && bytes.HasPrefix(b, []byte(bom)))
	if !need {
		d := byte(w.opts.Delimiter)
		for _, c := range b {
			if c == d || c == quote || c == '\r' || c == '\n' {
				need = true
				break
			}
		}
	}
	if !need {
		return append(dst, b...)
	}
	dst = append(dst, quote)
	for _, c := range b {
		if c == quote {
			dst = append(dst, quote)
		}
		dst = append(dst, c)
	}
	return append(dst, quote)
}

// Close flushes, syncs and closes the temporary file; on error it removes it.
func (w *writer[T]) Close() error {
	if err := w.Check("close", formats.Open); err != nil {
		return err
	}
	err := w.err
	if err == nil {
		if ferr := w.w.Flush(); ferr != nil {
			err = w.Errorf("close", ferr)
		}
	}
	return w.Finish(err)
}

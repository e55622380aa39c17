package arrow

import (
	"context"
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirdata/weir/formats"
)

// SinkOptions tune a Sink. The zero value is ready to use.
type SinkOptions struct {
	// BatchRows is the most rows per record batch; 65536 when 0. Rows of
	// consecutive Writes are gathered until a batch is full.
	BatchRows int
}

// Sink writes records of type T as Arrow IPC files. It implements formats.Sink[T].
type Sink[T any] struct {
	path string
	opts SinkOptions
}

var _ formats.Sink[struct{ A int }] = (*Sink[struct{ A int }])(nil)

// NewSink returns a sink writing path (a file when n == 1, else a directory of
// part-00000.arrow, ...) with default options.
func NewSink[T any](path string) formats.Sink[T] { return NewSinkWith[T](path, SinkOptions{}) }

// NewSinkWith returns a sink writing path with opts. The schema comes from T's
// fields: integers of their width, float32/64, bool, string as String, []byte as
// Binary, time.Time as Timestamp[ns, UTC]; pointer fields and []byte are
// nullable. Type errors surface from Create.
func NewSinkWith[T any](path string, opts SinkOptions) formats.Sink[T] {
	if opts.BatchRows <= 0 {
		opts.BatchRows = 1 << 16
	}
	return &Sink[T]{path: path, opts: opts}
}

// Schema returns the Arrow schema the sink writes for T.
func Schema[T any]() (*arrow.Schema, error) {
	cols, err := columnsOf[T]()
	if err != nil {
		return nil, err
	}
	return schemaOf(cols), nil
}

func schemaOf(cols []column) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i := range cols {
		c := &cols[i]
		fields[i] = arrow.Field{Name: c.Field.Column, Type: arrowType(c), Nullable: c.Ptr || c.Kind == formats.KindBytes}
	}
	return arrow.NewSchema(fields, nil)
}

// Create opens the writer of subtask i of n.
func (s *Sink[T]) Create(ctx context.Context, i, n int) (formats.Writer[T], error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cols, err := columnsOf[T]()
	if err != nil {
		return nil, err
	}
	final, err := formats.PartPath(s.path, i, n, ".arrow")
	if err != nil {
		return nil, fmt.Errorf("formats/arrow: %w", err)
	}
	tf, err := formats.CreateTemp("formats/arrow", final)
	if err != nil {
		return nil, err
	}
	schema := schemaOf(cols)
	fw, err := ipc.NewFileWriter(tf.F, ipc.WithSchema(schema), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		tf.Abort()
		return nil, tf.Errorf("create", err)
	}
	w := &writer[T]{
		TempFile: tf, fw: fw, cols: cols, rows: s.opts.BatchRows,
		b: array.NewRecordBuilder(memory.DefaultAllocator, schema),
	}
	tf.OnAbort = w.b.Release
	return w, nil
}

// The instants a Timestamp[ns] holds.
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// writer writes one Arrow IPC file; see formats.Writer.
type writer[T any] struct {
	*formats.TempFile // Commit, Abort and Remove
	fw                *ipc.FileWriter
	b                 *array.RecordBuilder
	cols              []column
	rows              int   // rows per record batch
	pending           int   // rows in the builder
	err               error // a write error: Write and Close return it
}

var _ formats.Remover = (*writer[struct{ A int }])(nil)

// Write appends the batch's rows to the builder, writing a record batch each
// time it holds BatchRows rows.
func (w *writer[T]) Write(batch []T) error {
	if err := w.Check("write", formats.Open); err != nil {
		return err
	}
	for len(batch) > 0 && w.err == nil {
		k := min(len(batch), w.rows-w.pending)
		w.append(batch[:k])
		w.pending += k
		batch = batch[k:]
		if w.pending == w.rows {
			w.flush()
		}
	}
	return w.err
}

// append copies rows into the builders, one column at a time.
func (w *writer[T]) append(rows []T) {
	base := unsafe.Pointer(unsafe.SliceData(rows))
	stride := unsafe.Sizeof(rows[0])
	for ci := range w.cols {
		c := &w.cols[ci]
		ap := appender{c: c, base: base, stride: stride, n: len(rows)}
		switch b := w.b.Field(ci).(type) {
		case *array.Int8Builder:
			appendVals(&ap, b.Append, b.AppendNull)
		case *array.Int16Builder:
			appendVals(&ap, b.Append, b.AppendNull)
		case *array.Int32Builder:
			appendVals(&ap, b.Append, b.AppendNull)
		case *array.Int64Builder:
			appendVals(&ap, b.Append, b.AppendNull)
		case *array.Uint8Builder:
			appendVals(&ap, b.Append, b.AppendNull)
		case *array.Uint16Builder:
			appendVals(&ap, b.Append, b.AppendNull)
		case *array.Uint32Builder:
			appendVals(&ap, b.Append, b.AppendNull)
		case *array.Uint64Builder:
			appendVals(&ap, b.Append, b.AppendNull)
		case *array.Float32Builder:
			appendVals(&ap, b.Append, b.AppendNull)
		case *array.Float64Builder:
			appendVals(&ap, b.Append, b.AppendNull)
		case *array.BooleanBuilder:
			appendVals(&ap, b.Append, b.AppendNull)
		case *array.StringBuilder:
			appendVals(&ap, b.Append, b.AppendNull)
		case *array.BinaryBuilder:
			for i := range ap.n {
				v := *(*[]byte)(ap.field(i))
				if v == nil {
					b.AppendNull()
				} else {
					b.Append(v)
				}
			}
		case *array.TimestampBuilder:
			for i := range ap.n {
				p := ap.value(i)
				if p == nil {
					b.AppendNull()
					continue
				}
				t := *(*time.Time)(p)
				if t.Before(minTime) || t.After(maxTime) {
					// The builders now disagree on their length: the writer is done.
					w.err = fmt.Errorf("formats/arrow: write %s: field %s: %v is outside the nanosecond timestamp range", w.Final, c.Field.GoName, t)
					return
				}
				b.Append(arrow.Timestamp(t.UnixNano()))
			}
		}
	}
}

// appender reads one field of n rows.
type appender struct {
	c      *column
	base   unsafe.Pointer
	stride uintptr
	n      int
}

func (ap *appender) field(i int) unsafe.Pointer {
	return unsafe.Add(ap.base, uintptr(i)*ap.stride+ap.c.Field.Offset)
}

// value returns the address of row i's value, or nil for a nil pointer.
func (ap *appender) value(i int) unsafe.Pointer {
	p := ap.field(i)
	if ap.c.Ptr {
		p = *(*unsafe.Pointer)(p)
	}
	return p
}

// appendVals appends each row's value of type V (the field's own layout).
func appendVals[V any](ap *appender, add func(V), null func()) {
	for i := range ap.n {
		if p := ap.value(i); p == nil {
			null()
		} else {
			add(*(*V)(p))
		}
	}
}

// flush writes the builder's rows as one record batch.
func (w *writer[T]) flush() {
	if w.pending == 0 || w.err != nil {
		return
	}
	rec := w.b.NewRecordBatch()
	defer rec.Release()
	w.pending = 0
	if err := w.fw.Write(rec); err != nil {
		w.err = fmt.Errorf("formats/arrow: write %s: %w", w.F.Name(), err)
	}
}

// Close writes the last batch and the footer, syncs and closes the temporary
// file; on error it removes it.
func (w *writer[T]) Close() error {
	if err := w.Check("close", formats.Open); err != nil {
		return err
	}
	w.flush()
	w.b.Release()
	err := w.err
	if err == nil {
		if ferr := w.fw.Close(); ferr != nil {
			err = w.Errorf("close", ferr)
		}
	}
	return w.Finish(err)
}

package parquet

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unsafe"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/weirdata/weir/formats"
)

// Codec is the compression a Sink writes with.
type Codec int

// The codecs; Zstd is the default.
const (
	Zstd Codec = iota
	Snappy
	Gzip
	Uncompressed
)

// DefaultRowGroupRows is the default number of rows per row group.
const DefaultRowGroupRows = 122880

// DefaultDecimalScale is the scale of a Decimal column whose field has no
// `weir:"name,scale=N"` tag option.
const DefaultDecimalScale = 2

// SinkOption configures NewSink.
type SinkOption func(*sinkOptions)

type sinkOptions struct {
	codec  Codec
	rgRows int64
}

// WithCodec sets the compression codec.
func WithCodec(c Codec) SinkOption { return func(o *sinkOptions) { o.codec = c } }

// RowGroupRows sets the number of rows per row group (n < 1 means 1).
func RowGroupRows(n int64) SinkOption { return func(o *sinkOptions) { o.rgRows = max(n, 1) } }

// sink writes T as Parquet.
type sink[T any] struct {
	path string
	opts sinkOptions
}

// NewSink returns a Sink writing T to path as Parquet: one column per
// mapped field, named by formats.FieldsOf, REQUIRED for value fields and
// OPTIONAL for pointer fields (nil writes NULL). Field types map as: intN to
// INT(n, signed), uintN to INT(n, unsigned), float32 FLOAT, float64 DOUBLE,
// bool BOOLEAN, string STRING, []byte BYTE_ARRAY, Date DATE, time.Time
// TIMESTAMP(nanos, UTC) and Decimal DECIMAL(18, scale) as INT64 with the scale
// of the `scale=N` tag option (default DefaultDecimalScale); a Decimal that
// would lose digits at that scale is an error.
//
// Columns appear in the file in name order (parquet-go orders a group's
// fields by name); readers map them by name, so this only shows in tools
// that list columns. Write converts a batch a column at a time, with one
// encoder per field chosen by Create, straight into that column's writer
// (no rows are assembled), and allocates nothing per row once its value
// buffer has grown; every RowGroupRows rows end a row group. time.Time must lie within the int64 nanosecond range (1678-2262).
//
// Each writer writes a temporary file beside its final name, completes it
// (footer, fsync) on Close and renames it on Commit. A Writer is used by one goroutine; different subtasks' writers
// may run at once.
func NewSink[T any](path string, opts ...SinkOption) formats.Sink[T] {
	s := &sink[T]{path: path, opts: sinkOptions{codec: Zstd, rgRows: DefaultRowGroupRows}}
	for _, o := range opts {
		o(&s.opts)
	}
	return s
}

// encodeFunc returns the value of a field at p, or false if it cannot be
// written (a Decimal that loses digits).
type encodeFunc func(p unsafe.Pointer) (pq.Value, bool)

type column struct {
	field  formats.Field
	leaf   int
	ptr    bool
	encode encodeFunc
}

// writer writes one file, a column at a time: each batch's values of one
// field are encoded into that column's buffer of values and handed to the
// column's writer (pq.Writer.ColumnWriters), a chunk of at most writeRows
// rows at a time, and the row group is ended (pq.Writer.Flush) every rgRows
// rows. No row is assembled.
type writer[T any] struct {
	*formats.TempFile // Commit, Abort and Remove
	pw                *pq.Writer
	cols              []column
	vals              []pq.Value // one column's values of a chunk
	rgRows            int64
	inGroup           int64 // rows written to the current row group
}

// writeRows bounds the rows handed to a column writer at once: it may end a
// page only between two calls, so this bounds how far a page outgrows the
// writer's page size. It is the 64 rows parquet-go's own WriteRows writes at
// a time, cut at row group ends as it cuts them, so pages end where
// WriteRows would end them and the file's bytes are the same.
const writeRows = 64

var _ formats.Remover = (*writer[struct{ A int }])(nil)

func (s *sink[T]) Create(ctx context.Context, i, n int) (formats.Writer[T], error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("formats/parquet: create %s: %w", s.path, err)
	}
	if n < 1 || i < 0 || i >= n {
		return nil, fmt.Errorf("formats/parquet: create %s: subtask %d of %d", s.path, i, n)
	}
	final, err := formats.PartPath(s.path, i, n, ".parquet")
	if err != nil {
		return nil, fmt.Errorf("formats/parquet: create %s: %w", s.path, err)
	}
	fields, err := formats.Fields[T]()
	if err != nil {
		return nil, fmt.Errorf("formats/parquet: create %s: %w", final, err)
	}
	group := pq.Group{}
	cols := make([]column, len(fields))
	for k, fl := range fields {
		node, enc, err := nodeFor(fl.Type, fl.Opts)
		if err != nil {
			return nil, fmt.Errorf("formats/parquet: create %s: field %s: %w", final, fl.GoName, err)
		}
		group[fl.Column] = node
		cols[k] = column{field: fl, ptr: fl.Type.Kind() == reflect.Pointer, encode: enc}
	}
	schema := pq.NewSchema("weir", group)
	for k := range cols {
		for leaf, path := range schema.Columns() {
			if len(path) == 1 && path[0] == cols[k].field.Column {
				cols[k].leaf = leaf
			}
		}
	}
	var codec compress.Codec
	switch s.opts.codec {
	case Snappy:
		codec = &snappy.Codec{}
	case Gzip:
		codec = &gzip.Codec{}
	case Uncompressed:
		codec = &uncompressed.Codec{}
	default:
		codec = &zstdCodec{}
	}
	cfg, err := pq.NewWriterConfig(schema, pq.Compression(codec), pq.MaxRowsPerRowGroup(s.opts.rgRows))
	if err != nil {
		return nil, fmt.Errorf("formats/parquet: create %s: %w", final, err)
	}
	tf, err := formats.CreateTemp("formats/parquet", final)
	if err != nil {
		return nil, err
	}
	return &writer[T]{TempFile: tf, pw: pq.NewWriter(tf.F, cfg), cols: cols, rgRows: s.opts.rgRows}, nil
}

// nodeFor returns the schema node and encoder of a field type.
func nodeFor(t reflect.Type, opts string) (pq.Node, encodeFunc, error) {
	if t.Kind() == reflect.Pointer {
		node, enc, err := nodeFor(t.Elem(), opts)
		if err != nil {
			return nil, nil, err
		}
		return pq.Optional(node), func(p unsafe.Pointer) (pq.Value, bool) {
			e := *(*unsafe.Pointer)(p)
			if e == nil {
				return pq.NullValue(), true
			}
			return enc(e)
		}, nil
	}
	switch t {
	case typeDate:
		return pq.Date(), func(p unsafe.Pointer) (pq.Value, bool) { return pq.Int32Value(*(*int32)(p)), true }, nil
	case typeTime:
		return pq.Timestamp(pq.Nanosecond), func(p unsafe.Pointer) (pq.Value, bool) {
			return pq.Int64Value((*time.Time)(p).UnixNano()), true
		}, nil
	case typeDecimal:
		scale := int32(DefaultDecimalScale)
		for _, opt := range strings.Split(opts, ",") {
			if v, ok := strings.CutPrefix(opt, "scale="); ok {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 || n > 18 {
					return nil, nil, fmt.Errorf("bad tag option %q", opt)
				}
				scale = int32(n)
			}
		}
		return pq.Decimal(int(scale), 18, pq.Int64Type), func(p unsafe.Pointer) (pq.Value, bool) {
			d := *(*Decimal)(p)
			switch {
			case d.Scale < scale && d.Scale >= 0:
				d = d.Rescale(scale)
			case d.Scale > scale && d.Scale <= 18:
				if d.Unscaled%pow10[d.Scale-scale] != 0 {
					return pq.Value{}, false
				}
				d = d.Rescale(scale)
			case d.Scale != scale:
				return pq.Value{}, false
			}
			return pq.Int64Value(d.Unscaled), true
		}, nil
	}
	switch t.Kind() {
	case reflect.Int8:
		return pq.Int(8), func(p unsafe.Pointer) (pq.Value, bool) { return pq.Int32Value(int32(*(*int8)(p))), true }, nil
	case reflect.Int16:
		return pq.Int(16), func(p unsafe.Pointer) (pq.Value, bool) { return pq.Int32Value(int32(*(*int16)(p))), true }, nil
	case reflect.Int32:
		return pq.Int(32), func(p unsafe.Pointer) (pq.Value, bool) { return pq.Int32Value(*(*int32)(p)), true }, nil
	case reflect.Int64:
		return pq.Int(64), func(p unsafe.Pointer) (pq.Value, bool) { return pq.Int64Value(*(*int64)(p)), true }, nil
	case reflect.Int:
		return pq.Int(64), func(p unsafe.Pointer) (pq.Value, bool) { return pq.Int64Value(int64(*(*int)(p))), true }, nil
	case reflect.Uint8:
		return pq.Uint(8), func(p unsafe.Pointer) (pq.Value, bool) { return pq.Int32Value(int32(*(*uint8)(p))), true }, nil
	case reflect.Uint16:
		return pq.Uint(16), func(p unsafe.Pointer) (pq.Value, bool) { return pq.Int32Value(int32(*(*uint16)(p))), true }, nil
	case reflect.Uint32:
		return pq.Uint(32), func(p unsafe.Pointer) (pq.Value, bool) { return pq.Int32Value(int32(*(*uint32)(p))), true }, nil
	case reflect.Uint64:
		return pq.Uint(64), func(p unsafe.Pointer) (pq.Value, bool) { return pq.Int64Value(int64(*(*uint64)(p))), true }, nil
	case reflect.Uint:
		return pq.Uint(64), func(p unsafe.Pointer) (pq.Value, bool) { return pq.Int64Value(int64(*(*uint)(p))), true }, nil
	case reflect.Float32:
		return pq.Leaf(pq.FloatType), func(p unsafe.Pointer) (pq.Value, bool) { return pq.FloatValue(*(*float32)(p)), true }, nil
	case reflect.Float64:
		return pq.Leaf(pq.DoubleType), func(p unsafe.Pointer) (pq.Value, bool) { return pq.DoubleValue(*(*float64)(p)), true }, nil
	case reflect.Bool:
		return pq.Leaf(pq.BooleanType), func(p unsafe.Pointer) (pq.Value, bool) { return pq.BooleanValue(*(*bool)(p)), true }, nil
	case reflect.String:
		return pq.String(), func(p unsafe.Pointer) (pq.Value, bool) {
			s := *(*string)(p)
			return pq.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s))), true
		}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return pq.Leaf(pq.ByteArrayType), func(p unsafe.Pointer) (pq.Value, bool) { return pq.ByteArrayValue(*(*[]byte)(p)), true }, nil
		}
	}
	return nil, nil, fmt.Errorf("type %s cannot be written to Parquet", t)
}

// Write appends batch. On error the writer is aborted.
func (w *writer[T]) Write(batch []T) error {
	if err := w.Check("write", formats.Open); err != nil {
		return err
	}
	for off := 0; off < len(batch); {
		n := int(min(int64(len(batch)-off), w.rgRows-w.inGroup, writeRows))
		if err := w.writeChunk(batch[off:off+n], off); err != nil {
			w.Abort()
			return err
		}
		off += n
		if w.inGroup += int64(n); w.inGroup == w.rgRows {
			w.inGroup = 0
			if err := w.pw.Flush(); err != nil {
				w.Abort()
				return fmt.Errorf("formats/parquet: write %s: %w", w.Final, err)
			}
		}
	}
	return nil
}

// writeChunk writes rows, those of the batch from its row first on, to the
// current row group, column by column.
func (w *writer[T]) writeChunk(rows []T, first int) error {
	cws := w.pw.ColumnWriters()
	w.vals = grow(w.vals, len(rows))
	vals := w.vals
	for k := range w.cols {
		c := &w.cols[k]
		for r := range rows {
			v, ok := c.encode(unsafe.Add(unsafe.Pointer(&rows[r]), c.field.Offset))
			if !ok {
				return fmt.Errorf("formats/parquet: write %s: field %s of row %d cannot be represented at the column's scale", w.Final, c.field.GoName, first+r)
			}
			def := 0
			if c.ptr && !v.IsNull() {
				def = 1
			}
			vals[r] = v.Level(0, def, c.leaf)
		}
		if _, err := cws[c.leaf].WriteRowValues(vals); err != nil {
			return fmt.Errorf("formats/parquet: write %s: %w", w.Final, err)
		}
	}
	clear(vals) // drop the references of byte array values
	return nil
}

// Close writes the footer, syncs and closes the temporary file; on error it
// removes it.
func (w *writer[T]) Close() error {
	if err := w.Check("close", formats.Open); err != nil {
		return err
	}
	var err error
	if perr := w.pw.Close(); perr != nil {
		err = w.Errorf("close", perr)
	}
	return w.Finish(err)
}

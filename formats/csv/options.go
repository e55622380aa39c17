package csv

import (
	"fmt"
	"reflect"
	"time"
	"unsafe"

	"github.com/weirdata/weir/formats"
)

// Options configure a Source and a Sink. The zero value reads and writes RFC 4180
// files with a header row, ',' between fields and empty fields as NULL.
type Options struct {
	// Delimiter separates fields; ',' when 0. It must be an ASCII character other
	// than '"', '\r' and '\n'.
	Delimiter rune
	// NoHeader says files have no header row: columns map to fields in field
	// order, and the sink writes no header.
	NoHeader bool
	// Comment, when not 0, starts a comment line (only at the start of a record).
	// A file read with a Comment character is one split.
	Comment rune
	// NullString is the text of NULL besides the empty field: an unquoted field
	// equal to it (or empty) sets a pointer field (or a []byte) to nil. The sink
	// writes NULL as NullString and quotes strings equal to it.
	NullString string
	// TrimSpace trims spaces and tabs around every field (outside its quotes).
	TrimSpace bool
	// TimeLayout parses and formats time.Time fields. When empty, a 10-byte value
	// is read as "2006-01-02" and any other as RFC 3339; the sink writes a UTC
	// midnight as "2006-01-02" and any other instant as RFC 3339 with nanoseconds.
	TimeLayout string
	// SplitSize is the target size of a split in bytes; 32 MiB when 0.
	SplitSize int64
	// BatchRows is the most records per batch; 1024 when 0.
	BatchRows int
	// ChunkSize is the size of each read; 1 MiB when 0. A record longer than a
	// chunk grows the buffer.
	ChunkSize int
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.Delimiter == 0 {
		o.Delimiter = ','
	}
	if o.SplitSize <= 0 {
		o.SplitSize = 32 << 20
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 1024
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = 1 << 20
	}
}

func (o *Options) validate() error {
	bad := func(r rune) bool { return r >= 0x80 || r < 0 || r == '"' || r == '\r' || r == '\n' }
	if bad(o.Delimiter) {
		return fmt.Errorf("formats/csv: delimiter %q is not an ASCII character other than quote and newline", o.Delimiter)
	}
	if o.Comment != 0 && (bad(o.Comment) || o.Comment == o.Delimiter) {
		return fmt.Errorf("formats/csv: comment %q is not an ASCII character other than quote, newline and delimiter", o.Comment)
	}
	return nil
}

// kind is how a column's text becomes a field value.
type kind uint8

const (
	kindInt kind = iota // signed integer of size bytes
	kindUint
	kindFloat32
	kindFloat64
	kindBool
	kindString
	kindBytes
	kindTime
)

// column is one struct field with the way to parse and format it, chosen once.
type column struct {
	field formats.Field
	kind  kind
	size  uintptr // bytes of the value (of the pointee for pointer fields)
	ptr   bool    // the field is a pointer: nil is NULL
}

var (
	timeType  = reflect.TypeFor[time.Time]()
	bytesType = reflect.TypeFor[[]byte]()
)

// columnsOf maps T's fields to columns, rejecting types the format cannot hold.
func columnsOf[T any]() ([]column, error) {
	fields, err := formats.Fields[T]()
	if err != nil {
		return nil, fmt.Errorf("formats/csv: %w", err)
	}
	cols := make([]column, len(fields))
	for i, f := range fields {
		c := column{field: f}
		t := f.Type
		if t.Kind() == reflect.Pointer {
			c.ptr, t = true, t.Elem()
		}
		c.size = t.Size()
		switch {
		case t == timeType:
			c.kind = kindTime
		case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && t.ConvertibleTo(bytesType):
			c.kind = kindBytes
		default:
			switch t.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				c.kind = kindInt
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
				c.kind = kindUint
			case reflect.Float32:
				c.kind = kindFloat32
			case reflect.Float64:
				c.kind = kindFloat64
			case reflect.Bool:
				c.kind = kindBool
			case reflect.String:
				c.kind = kindString
			default:
				return nil, fmt.Errorf("formats/csv: field %s of type %s: unsupported type", f.GoName, f.Type)
			}
		}
		if c.ptr && c.kind == kindBytes {
			return nil, fmt.Errorf("formats/csv: field %s: use []byte, not *[]byte (nil is NULL)", f.GoName)
		}
		cols[i] = c
	}
	return cols, nil
}

// newElems allocates n values of c's pointee type, for pointer fields.
func newElems(c *column, n int) unsafe.Pointer {
	switch c.kind {
	case kindString:
		return unsafe.Pointer(unsafe.SliceData(make([]string, n)))
	case kindTime:
		return unsafe.Pointer(unsafe.SliceData(make([]time.Time, n)))
	case kindBool:
		return unsafe.Pointer(unsafe.SliceData(make([]bool, n)))
	}
	switch c.size {
	case 1:
		return unsafe.Pointer(unsafe.SliceData(make([]uint8, n)))
	case 2:
		return unsafe.Pointer(unsafe.SliceData(make([]uint16, n)))
	case 4:
		return unsafe.Pointer(unsafe.SliceData(make([]uint32, n)))
	default:
		return unsafe.Pointer(unsafe.SliceData(make([]uint64, n)))
	}
}

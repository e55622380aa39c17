package arrow

import (
	"fmt"
	"reflect"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirdata/weir/formats"
)

// kind is the Go side of a column, chosen once per type.
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

// column is one struct field and how it is copied.
type column struct {
	field formats.Field
	kind  kind
	size  uintptr // bytes of the value (of the pointee for pointer fields)
	ptr   bool    // the field is a pointer: nil is null
}

var (
	timeType  = reflect.TypeFor[time.Time]()
	bytesType = reflect.TypeFor[[]byte]()
)

func columnsOf[T any]() ([]column, error) {
	fields, err := formats.Fields[T]()
	if err != nil {
		return nil, fmt.Errorf("formats/arrow: %w", err)
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
				return nil, fmt.Errorf("formats/arrow: field %s of type %s: unsupported type", f.GoName, f.Type)
			}
		}
		if c.ptr && c.kind == kindBytes {
			return nil, fmt.Errorf("formats/arrow: field %s: use []byte, not *[]byte (nil is null)", f.GoName)
		}
		cols[i] = c
	}
	return cols, nil
}

// arrowType is the type the sink writes for c.
func arrowType(c *column) arrow.DataType {
	switch c.kind {
	case kindInt:
		switch c.size {
		case 1:
			return arrow.PrimitiveTypes.Int8
		case 2:
			return arrow.PrimitiveTypes.Int16
		case 4:
			return arrow.PrimitiveTypes.Int32
		}
		return arrow.PrimitiveTypes.Int64
	case kindUint:
		switch c.size {
		case 1:
			return arrow.PrimitiveTypes.Uint8
		case 2:
			return arrow.PrimitiveTypes.Uint16
		case 4:
			return arrow.PrimitiveTypes.Uint32
		}
		return arrow.PrimitiveTypes.Uint64
	case kindFloat32:
		return arrow.PrimitiveTypes.Float32
	case kindFloat64:
		return arrow.PrimitiveTypes.Float64
	case kindBool:
		return arrow.FixedWidthTypes.Boolean
	case kindString:
		return arrow.BinaryTypes.String
	case kindBytes:
		return arrow.BinaryTypes.Binary
	}
	return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
}

// accepts says whether a column of arrow type dt can fill c.
func accepts(c *column, dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return c.kind == kindInt || c.kind == kindUint
	case arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
		return c.kind == kindFloat32 || c.kind == kindFloat64
	case arrow.BOOL:
		return c.kind == kindBool
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return c.kind == kindString || c.kind == kindBytes
	case arrow.DICTIONARY:
		switch dt.(*arrow.DictionaryType).ValueType.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
			return c.kind == kindString || c.kind == kindBytes
		}
		return false
	case arrow.DATE32, arrow.DATE64:
		return c.kind == kindTime
	case arrow.TIMESTAMP:
		if c.kind != kindTime {
			return false
		}
		_, err := dt.(*arrow.TimestampType).GetZone()
		return err == nil
	}
	return false
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

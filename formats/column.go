package formats

import (
	"fmt"
	"reflect"
	"time"
	"unsafe"
)

// Kind is how a format reads and writes one struct field: the field's type
// reduced to what the codecs handle.
type Kind uint8

const (
	KindInt  Kind = iota // a signed integer of Column.Size bytes
	KindUint             // an unsigned integer of Column.Size bytes
	KindFloat32
	KindFloat64
	KindBool
	KindString
	KindBytes // []byte (or a named type of it)
	KindTime  // time.Time
)

// Column is one struct field mapped to a column, with its Kind, chosen once
// when a source or sink is built.
type Column struct {
	Field Field
	Kind  Kind
	Size  uintptr // bytes of the value (of the pointee for pointer fields)
	Ptr   bool    // the field is a pointer: nil is NULL
}

var (
	timeType  = reflect.TypeFor[time.Time]()
	bytesType = reflect.TypeFor[[]byte]()
)

// Columns maps T's fields (see Fields) to Columns, rejecting field types the
// row formats (CSV, Arrow) cannot hold. Its errors name the field; the caller
// adds its package's name.
func Columns[T any]() ([]Column, error) {
	fields, err := Fields[T]()
	if err != nil {
		return nil, err
	}
	cols := make([]Column, len(fields))
	for i, f := range fields {
		c := Column{Field: f}
		t := f.Type
		if t.Kind() == reflect.Pointer {
			c.Ptr, t = true, t.Elem()
		}
		c.Size = t.Size()
		switch {
		case t == timeType:
			c.Kind = KindTime
		case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && t.ConvertibleTo(bytesType):
			c.Kind = KindBytes
		default:
			switch t.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				c.Kind = KindInt
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
				c.Kind = KindUint
			case reflect.Float32:
				c.Kind = KindFloat32
			case reflect.Float64:
				c.Kind = KindFloat64
			case reflect.Bool:
				c.Kind = KindBool
			case reflect.String:
				c.Kind = KindString
			default:
				return nil, fmt.Errorf("field %s of type %s: unsupported type", f.GoName, f.Type)
			}
		}
		if c.Ptr && c.Kind == KindBytes {
			return nil, fmt.Errorf("field %s: use []byte, not *[]byte (nil is NULL)", f.GoName)
		}
		cols[i] = c
	}
	return cols, nil
}

// NewElems allocates n values of c's pointee type (for the values of a
// batch's pointer fields, one allocation per batch) and returns the first.
func NewElems(c *Column, n int) unsafe.Pointer {
	switch c.Kind {
	case KindString:
		return unsafe.Pointer(unsafe.SliceData(make([]string, n)))
	case KindTime:
		return unsafe.Pointer(unsafe.SliceData(make([]time.Time, n)))
	case KindBool:
		return unsafe.Pointer(unsafe.SliceData(make([]bool, n)))
	}
	switch c.Size {
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

package arrow

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirdata/weir/formats"
)

// column is a struct field mapped to a column (see formats.Columns).
type column = formats.Column

// columnsOf maps T's fields to columns, rejecting types the format cannot hold.
func columnsOf[T any]() ([]column, error) {
	cols, err := formats.Columns[T]()
	if err != nil {
		return nil, fmt.Errorf("formats/arrow: %w", err)
	}
	return cols, nil
}

// arrowType is the type the sink writes for c.
func arrowType(c *column) arrow.DataType {
	switch c.Kind {
	case formats.KindInt:
		switch c.Size {
		case 1:
			return arrow.PrimitiveTypes.Int8
		case 2:
			return arrow.PrimitiveTypes.Int16
		case 4:
			return arrow.PrimitiveTypes.Int32
		}
		return arrow.PrimitiveTypes.Int64
	case formats.KindUint:
		switch c.Size {
		case 1:
			return arrow.PrimitiveTypes.Uint8
		case 2:
			return arrow.PrimitiveTypes.Uint16
		case 4:
			return arrow.PrimitiveTypes.Uint32
		}
		return arrow.PrimitiveTypes.Uint64
	case formats.KindFloat32:
		return arrow.PrimitiveTypes.Float32
	case formats.KindFloat64:
		return arrow.PrimitiveTypes.Float64
	case formats.KindBool:
		return arrow.FixedWidthTypes.Boolean
	case formats.KindString:
		return arrow.BinaryTypes.String
	case formats.KindBytes:
		return arrow.BinaryTypes.Binary
	}
	return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
}

// accepts says whether a column of arrow type dt can fill c.
func accepts(c *column, dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return c.Kind == formats.KindInt || c.Kind == formats.KindUint
	case arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
		return c.Kind == formats.KindFloat32 || c.Kind == formats.KindFloat64
	case arrow.BOOL:
		return c.Kind == formats.KindBool
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return c.Kind == formats.KindString || c.Kind == formats.KindBytes
	case arrow.DICTIONARY:
		switch dt.(*arrow.DictionaryType).ValueType.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
			return c.Kind == formats.KindString || c.Kind == formats.KindBytes
		}
		return false
	case arrow.DATE32, arrow.DATE64:
		return c.Kind == formats.KindTime
	case arrow.TIMESTAMP:
		if c.Kind != formats.KindTime {
			return false
		}
		_, err := dt.(*arrow.TimestampType).GetZone()
		return err == nil
	}
	return false
}

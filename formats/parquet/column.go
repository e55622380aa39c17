package parquet

import (
	"fmt"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// vecKind is the form a column takes in a decoded vector.
type vecKind uint8

const (
	vecInts   vecKind = iota // BOOLEAN (0/1), INT32 (widened), INT64
	vecFloats                // FLOAT (widened), DOUBLE
	vecBytes                 // BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY
)

// colDesc describes a file column: where it is, how it is stored and what
// its logical type makes of it. It is built once per file column by Open.
type colDesc struct {
	name     string
	leaf     int // leaf index: the column chunk's index in a row group
	phys     pq.Kind
	vec      vecKind
	maxDef   byte
	decimal  bool
	scale    int32
	date     bool
	tsUnit   int64 // nanoseconds per unit of a TIMESTAMP; 0 for other columns
	unsigned bool  // INT(n, false)
	text     bool  // STRING, ENUM, JSON
}

// describe inspects a top-level column of a file.
func describe(c *pq.Column) (colDesc, error) {
	d := colDesc{name: c.Name()}
	if !c.Leaf() {
		return d, fmt.Errorf("column %q is a group; only flat columns are supported", d.name)
	}
	if c.Repeated() || c.MaxRepetitionLevel() > 0 {
		return d, fmt.Errorf("column %q is repeated; only flat columns are supported", d.name)
	}
	if c.MaxDefinitionLevel() > 1 {
		return d, fmt.Errorf("column %q has definition level %d; only flat columns are supported", d.name, c.MaxDefinitionLevel())
	}
	d.leaf = c.Index()
	d.maxDef = byte(c.MaxDefinitionLevel())
	t := c.Type()
	d.phys = t.Kind()
	switch d.phys {
	case pq.Boolean, pq.Int32, pq.Int64:
		d.vec = vecInts
	case pq.Float, pq.Double:
		d.vec = vecFloats
	case pq.ByteArray, pq.FixedLenByteArray:
		d.vec = vecBytes
	default:
		return d, fmt.Errorf("column %q has unsupported physical type %s", d.name, d.phys)
	}
	if lt := t.LogicalType(); lt != nil {
		switch v := lt.Value.(type) {
		case *format.DecimalType:
			if d.phys != pq.Int32 && d.phys != pq.Int64 {
				return d, fmt.Errorf("column %q: DECIMAL stored as %s is not supported (only INT32 and INT64)", d.name, d.phys)
			}
			if v.Scale < 0 || v.Scale > 18 {
				return d, fmt.Errorf("column %q: DECIMAL scale %d is not supported", d.name, v.Scale)
			}
			d.decimal, d.scale = true, v.Scale
		case *format.DateType:
			d.date = true
		case *format.TimestampType:
			if d.phys != pq.Int64 {
				return d, fmt.Errorf("column %q: TIMESTAMP stored as %s is not supported", d.name, d.phys)
			}
			d.tsUnit = int64(v.Unit.Value.Duration())
		case *format.IntType:
			d.unsigned = !v.IsSigned
		case *format.StringType, *format.EnumType, *format.JsonType:
			d.text = true
		}
	}
	return d, nil
}

// typeName names the column's type for errors: "INT64 DECIMAL(scale=2)".
func (d *colDesc) typeName() string {
	s := d.phys.String()
	switch {
	case d.decimal:
		s += fmt.Sprintf(" DECIMAL(scale=%d)", d.scale)
	case d.date:
		s += " DATE"
	case d.tsUnit != 0:
		s += " TIMESTAMP"
	case d.unsigned:
		s += " UNSIGNED"
	case d.text:
		s += " STRING"
	}
	return s
}

// topColumns lists a file's top-level columns and their names.
func topColumns(f *pq.File) ([]*pq.Column, []string) {
	cols := f.Root().Columns()
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name()
	}
	return cols, names
}

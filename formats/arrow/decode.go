package arrow

import (
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/weirdata/weir/formats"
)

// copyBatch fills rows from rec, column by column. Each column picks its copy
// loop once by its Arrow type; the loops index the rows by offset.
func (s *Source[T]) copyBatch(f *file, rec arrow.RecordBatch, rows []T) error {
	if len(rows) == 0 {
		return nil
	}
	base := unsafe.Pointer(unsafe.SliceData(rows))
	stride := unsafe.Sizeof(rows[0])
	for ci, j := range f.idx {
		c := &s.cols[ci]
		arr := rec.Column(j)
		cp := copier{c: c, base: base, stride: stride, n: len(rows), arr: arr, nulls: arr.NullN() > 0}
		if err := cp.run(); err != nil {
			return fmt.Errorf("formats/arrow: %s column %s: %w", f.path, f.schema.Field(j).Name, err)
		}
	}
	return nil
}

// copier copies one Arrow column into one field of n rows.
type copier struct {
	c      *column
	base   unsafe.Pointer // the first row
	stride uintptr
	n      int
	arr    arrow.Array
	nulls  bool           // the column has nulls
	elems  unsafe.Pointer // pointees for a pointer field, allocated on first use
	used   int
}

// dst returns where row i's value goes, or nil when it is null (the field set
// to nil). A null in a non-pointer field is an error.
func (cp *copier) dst(i int) (unsafe.Pointer, error) {
	p := unsafe.Add(cp.base, uintptr(i)*cp.stride+cp.c.Field.Offset)
	null := cp.nulls && cp.arr.IsNull(i)
	if !cp.c.Ptr {
		if null {
			if cp.c.Kind == formats.KindBytes {
				*(*[]byte)(p) = nil
				return nil, nil
			}
			return nil, fmt.Errorf("row %d: null in non-pointer field %s", i, cp.c.Field.GoName)
		}
		return p, nil
	}
	if null {
		*(*unsafe.Pointer)(p) = nil
		return nil, nil
	}
	if cp.elems == nil {
		cp.elems = formats.NewElems(cp.c, cp.n)
	}
	e := unsafe.Add(cp.elems, uintptr(cp.used)*cp.c.Size)
	cp.used++
	*(*unsafe.Pointer)(p) = e
	return e, nil
}

func (cp *copier) run() error {
	switch a := cp.arr.(type) {
	case *array.Int8:
		return copyInts(cp, a.Int8Values(), false)
	case *array.Int16:
		return copyInts(cp, a.Int16Values(), false)
	case *array.Int32:
		return copyInts(cp, a.Int32Values(), false)
	case *array.Int64:
		return copyInts(cp, a.Int64Values(), false)
	case *array.Uint8:
		return copyInts(cp, a.Uint8Values(), true)
	case *array.Uint16:
		return copyInts(cp, a.Uint16Values(), true)
	case *array.Uint32:
		return copyInts(cp, a.Uint32Values(), true)
	case *array.Uint64:
		return copyInts(cp, a.Uint64Values(), true)
	case *array.Float32:
		return copyFloats(cp, a.Float32Values(), func(v float32) float64 { return float64(v) })
	case *array.Float64:
		return copyFloats(cp, a.Float64Values(), func(v float64) float64 { return v })
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		return copyFloats(cp, a.Values(), func(v decimal128.Num) float64 { return v.ToFloat64(scale) })
	case *array.Boolean:
		for i := range cp.n {
			p, err := cp.dst(i)
			if err != nil {
				return err
			}
			if p != nil {
				*(*bool)(p) = a.Value(i)
			}
		}
		return nil
	case *array.String:
		return copyBinary(cp, a.ValueOffsets(), a.ValueBytes())
	case *array.LargeString:
		return copyBinary(cp, a.ValueOffsets(), a.ValueBytes())
	case *array.Binary:
		return copyBinary(cp, a.ValueOffsets(), a.ValueBytes())
	case *array.LargeBinary:
		return copyBinary(cp, a.ValueOffsets(), a.ValueBytes())
	case *array.Dictionary:
		switch d := a.Dictionary().(type) {
		case *array.String:
			return copyDict(cp, a, d.ValueOffsets(), d.ValueBytes())
		case *array.LargeString:
			return copyDict(cp, a, d.ValueOffsets(), d.ValueBytes())
		case *array.Binary:
			return copyDict(cp, a, d.ValueOffsets(), d.ValueBytes())
		case *array.LargeBinary:
			return copyDict(cp, a, d.ValueOffsets(), d.ValueBytes())
		}
	case *array.Date32:
		return copyTimes(cp, a.Date32Values(), func(v arrow.Date32) time.Time { return v.ToTime() })
	case *array.Date64:
		return copyTimes(cp, a.Date64Values(), func(v arrow.Date64) time.Time { return v.ToTime() })
	case *array.Timestamp:
		toTime, err := a.DataType().(*arrow.TimestampType).GetToTimeFunc()
		if err != nil {
			return err
		}
		return copyTimes(cp, a.TimestampValues(), toTime)
	}
	return fmt.Errorf("unsupported Arrow type %s", cp.arr.DataType())
}

// copyInts copies integers into an integer field, checking its range.
func copyInts[A int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](cp *copier, vals []A, unsigned bool) error {
	c := cp.c
	bits := c.Size * 8
	for i := range cp.n {
		p, err := cp.dst(i)
		if err != nil {
			return err
		}
		if p == nil {
			continue
		}
		v := vals[i]
		if c.Kind == formats.KindInt {
			var x int64
			if unsigned {
				u := uint64(v)
				if u > math.MaxInt64 || (bits < 64 && u >= 1<<(bits-1)) {
					return fmt.Errorf("row %d: %d overflows %s", i, u, c.Field.Type)
				}
				x = int64(u)
			} else {
				x = int64(v)
				if bits < 64 && (x < -1<<(bits-1) || x >= 1<<(bits-1)) {
					return fmt.Errorf("row %d: %d overflows %s", i, x, c.Field.Type)
				}
			}
			switch c.Size {
			case 1:
				*(*int8)(p) = int8(x)
			case 2:
				*(*int16)(p) = int16(x)
			case 4:
				*(*int32)(p) = int32(x)
			default:
				*(*int64)(p) = x
			}
			continue
		}
		if !unsigned && int64(v) < 0 {
			return fmt.Errorf("row %d: %d overflows %s", i, int64(v), c.Field.Type)
		}
		u := uint64(v)
		if bits < 64 && u >= 1<<bits {
			return fmt.Errorf("row %d: %d overflows %s", i, u, c.Field.Type)
		}
		switch c.Size {
		case 1:
			*(*uint8)(p) = uint8(u)
		case 2:
			*(*uint16)(p) = uint16(u)
		case 4:
			*(*uint32)(p) = uint32(u)
		default:
			*(*uint64)(p) = u
		}
	}
	return nil
}

// copyFloats copies numbers converted by conv into a float field.
func copyFloats[A any](cp *copier, vals []A, conv func(A) float64) error {
	for i := range cp.n {
		p, err := cp.dst(i)
		if err != nil {
			return err
		}
		if p == nil {
			continue
		}
		if cp.c.Kind == formats.KindFloat32 {
			*(*float32)(p) = float32(conv(vals[i]))
		} else {
			*(*float64)(p) = conv(vals[i])
		}
	}
	return nil
}

// copyTimes copies instants converted by conv into a time.Time field.
func copyTimes[A any](cp *copier, vals []A, conv func(A) time.Time) error {
	for i := range cp.n {
		p, err := cp.dst(i)
		if err != nil {
			return err
		}
		if p != nil {
			*(*time.Time)(p) = conv(vals[i])
		}
	}
	return nil
}

// copyBinary copies variable-length values: the column's bytes are copied once
// into a Go slab and the strings or slices point into it.
func copyBinary[O int32 | int64](cp *copier, offsets []O, data []byte) error {
	if len(offsets) < cp.n+1 {
		return fmt.Errorf("%d offsets for %d rows", len(offsets), cp.n)
	}
	lo, hi := offsets[0], offsets[cp.n]
	if lo < 0 || hi < lo || int64(hi) > int64(len(data)) {
		return fmt.Errorf("offsets %d..%d outside %d bytes of data", lo, hi, len(data))
	}
	slab := make([]byte, hi-lo)
	copy(slab, data[lo:hi])
	for i := range cp.n {
		p, err := cp.dst(i)
		if err != nil {
			return err
		}
		if p == nil {
			continue
		}
		a, b := offsets[i]-lo, offsets[i+1]-lo
		if a < 0 || b < a || int64(b) > int64(len(slab)) {
			return fmt.Errorf("row %d: offsets %d..%d outside the data", i, a, b)
		}
		v := slab[a:b:b]
		if cp.c.Kind == formats.KindBytes {
			*(*[]byte)(p) = v
		} else {
			*(*string)(p) = unsafe.String(unsafe.SliceData(v), len(v))
		}
	}
	return nil
}

// copyDict copies a dictionary-encoded string or binary column: the
// dictionary's bytes are copied once into a Go slab and every row points at its
// entry there. A null entry in the dictionary reads as empty.
func copyDict[O int32 | int64](cp *copier, a *array.Dictionary, offsets []O, data []byte) error {
	entries := len(offsets) - 1
	if entries < 0 {
		entries = 0
	}
	var lo, hi O
	if entries > 0 {
		lo, hi = offsets[0], offsets[entries]
	}
	if lo < 0 || hi < lo || int64(hi) > int64(len(data)) {
		return fmt.Errorf("dictionary offsets %d..%d outside %d bytes of data", lo, hi, len(data))
	}
	slab := make([]byte, hi-lo)
	copy(slab, data[lo:hi])
	for i := range cp.n {
		p, err := cp.dst(i)
		if err != nil {
			return err
		}
		if p == nil {
			continue
		}
		k := a.GetValueIndex(i)
		if k < 0 || k >= entries {
			return fmt.Errorf("row %d: dictionary index %d outside %d entries", i, k, entries)
		}
		x, y := offsets[k]-lo, offsets[k+1]-lo
		if x < 0 || y < x || int64(y) > int64(len(slab)) {
			return fmt.Errorf("row %d: dictionary offsets %d..%d outside the data", i, x, y)
		}
		v := slab[x:y:y]
		if cp.c.Kind == formats.KindBytes {
			*(*[]byte)(p) = v
		} else {
			*(*string)(p) = unsafe.String(unsafe.SliceData(v), len(v))
		}
	}
	return nil
}

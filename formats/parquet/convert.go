package parquet

import (
	"fmt"
	"reflect"
	"time"
	"unsafe"
)

// copyFunc copies the selected rows of a column vector into a field of
// consecutive structs: row sel[j] goes to dst + j*stride. It returns -1, or
// the j of the first value that does not fit the field. It is chosen once per
// field and file by Open; its loop is monomorphic.
type copyFunc func(v *vector, sel []int32, dst unsafe.Pointer, stride uintptr) int

// allocFunc allocates an array of n field elements for pointer fields.
type allocFunc func(n int) unsafe.Pointer

var (
	typeTime    = reflect.TypeFor[time.Time]()
	typeDate    = reflect.TypeFor[Date]()
	typeDecimal = reflect.TypeFor[Decimal]()
)

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~int | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint
}

// copierFor chooses how column d fills a field of type t (not a pointer).
func copierFor(t reflect.Type, d *colDesc) (copyFunc, allocFunc, error) {
	mismatch := func() (copyFunc, allocFunc, error) {
		return nil, nil, fmt.Errorf("column %q of type %s cannot be read into a field of type %s", d.name, d.typeName(), t)
	}
	plainInt := d.vec == vecInts && d.phys != boolKind && !d.date && d.tsUnit == 0
	switch t {
	case typeTime:
		switch {
		case d.date:
			return copyDateTime, alloc[time.Time], nil
		case d.tsUnit != 0:
			return copyTimestamp(d.tsUnit), alloc[time.Time], nil
		}
		return mismatch()
	case typeDate:
		if !d.date {
			return mismatch()
		}
		return copyInt[int32](false), alloc[int32], nil
	case typeDecimal:
		if !plainInt || d.unsigned {
			return mismatch()
		}
		return copyDecimal(d.scale), alloc[Decimal], nil
	}
	u64 := d.unsigned && d.phys == int64Kind
	intOK := d.vec == vecInts && d.phys != boolKind && (!d.decimal || d.scale == 0)
	switch t.Kind() {
	case reflect.Int8:
		return intCopier[int8](d, intOK, u64)
	case reflect.Int16:
		return intCopier[int16](d, intOK, u64)
	case reflect.Int32:
		return intCopier[int32](d, intOK, u64)
	case reflect.Int64:
		return intCopier[int64](d, intOK, u64)
	case reflect.Int:
		return intCopier[int](d, intOK, u64)
	case reflect.Uint8:
		return intCopier[uint8](d, intOK, u64)
	case reflect.Uint16:
		return intCopier[uint16](d, intOK, u64)
	case reflect.Uint32:
		return intCopier[uint32](d, intOK, u64)
	case reflect.Uint64:
		return intCopier[uint64](d, intOK, u64)
	case reflect.Uint:
		return intCopier[uint](d, intOK, u64)
	case reflect.Float32:
		switch {
		case d.vec == vecFloats:
			return copyFloat[float32], alloc[float32], nil
		case plainInt && !u64:
			return copyScaled[float32](d.scale), alloc[float32], nil
		}
		return mismatch()
	case reflect.Float64:
		switch {
		case d.vec == vecFloats:
			return copyFloat[float64], alloc[float64], nil
		case plainInt && !u64:
			return copyScaled[float64](d.scale), alloc[float64], nil
		}
		return mismatch()
	case reflect.Bool:
		if d.phys != boolKind {
			return mismatch()
		}
		return copyBool, alloc[bool], nil
	case reflect.String:
		if d.vec != vecBytes {
			return mismatch()
		}
		return copyString, alloc[string], nil
	case reflect.Slice:
		if d.vec != vecBytes || t.Elem().Kind() != reflect.Uint8 {
			return mismatch()
		}
		return copyByteSlice, alloc[[]byte], nil
	}
	return mismatch()
}

func intCopier[D integer](d *colDesc, ok, u64 bool) (copyFunc, allocFunc, error) {
	if !ok {
		var zero D
		return nil, nil, fmt.Errorf("column %q of type %s cannot be read into a field of type %T", d.name, d.typeName(), zero)
	}
	return copyInt[D](u64), alloc[D], nil
}

func alloc[D any](n int) unsafe.Pointer {
	return unsafe.Pointer(unsafe.SliceData(make([]D, n)))
}

// copyInt copies integers, range-checked: a value that does not survive the
// conversion to D fails. unsigned64 reads the int64 slots as uint64.
func copyInt[D integer](unsigned64 bool) copyFunc {
	if unsigned64 {
		return func(v *vector, sel []int32, dst unsafe.Pointer, stride uintptr) int {
			ints := v.ints
			for j, r := range sel {
				u := uint64(ints[r])
				d := D(u)
				if uint64(d) != u || d < 0 {
					return j
				}
				*(*D)(unsafe.Add(dst, uintptr(j)*stride)) = d
			}
			return -1
		}
	}
	return func(v *vector, sel []int32, dst unsafe.Pointer, stride uintptr) int {
		ints := v.ints
		for j, r := range sel {
			x := ints[r]
			d := D(x)
			if int64(d) != x || (d < 0) != (x < 0) {
				return j
			}
			*(*D)(unsafe.Add(dst, uintptr(j)*stride)) = d
		}
		return -1
	}
}

func copyFloat[D float32 | float64](v *vector, sel []int32, dst unsafe.Pointer, stride uintptr) int {
	fs := v.floats
	for j, r := range sel {
		*(*D)(unsafe.Add(dst, uintptr(j)*stride)) = D(fs[r])
	}
	return -1
}

// copyScaled reads integers (DECIMAL unscaled values) as floats: x / 10^scale,
// one correctly rounded division, so 1700 at scale 2 is exactly 17.
func copyScaled[D float32 | float64](scale int32) copyFunc {
	p := float64(pow10[scale])
	return func(v *vector, sel []int32, dst unsafe.Pointer, stride uintptr) int {
		ints := v.ints
		for j, r := range sel {
			*(*D)(unsafe.Add(dst, uintptr(j)*stride)) = D(float64(ints[r]) / p)
		}
		return -1
	}
}

func copyDecimal(scale int32) copyFunc {
	return func(v *vector, sel []int32, dst unsafe.Pointer, stride uintptr) int {
		ints := v.ints
		for j, r := range sel {
			*(*Decimal)(unsafe.Add(dst, uintptr(j)*stride)) = Decimal{Unscaled: ints[r], Scale: scale}
		}
		return -1
	}
}

func copyBool(v *vector, sel []int32, dst unsafe.Pointer, stride uintptr) int {
	ints := v.ints
	for j, r := range sel {
		*(*bool)(unsafe.Add(dst, uintptr(j)*stride)) = ints[r] != 0
	}
	return -1
}

func copyDateTime(v *vector, sel []int32, dst unsafe.Pointer, stride uintptr) int {
	ints, valid := v.ints, v.valid
	for j, r := range sel {
		var t time.Time
		if valid[r] {
			t = time.Unix(ints[r]*86400, 0).UTC()
		}
		*(*time.Time)(unsafe.Add(dst, uintptr(j)*stride)) = t
	}
	return -1
}

func copyTimestamp(unit int64) copyFunc {
	per := int64(time.Second) / unit // units per second
	return func(v *vector, sel []int32, dst unsafe.Pointer, stride uintptr) int {
		ints, valid := v.ints, v.valid
		for j, r := range sel {
			var t time.Time
			if valid[r] {
				x := ints[r]
				sec := floorDiv(x, per)
				t = time.Unix(sec, (x-sec*per)*unit).UTC()
			}
			*(*time.Time)(unsafe.Add(dst, uintptr(j)*stride)) = t
		}
		return -1
	}
}

// selectedBytes returns one new slab holding the selected rows' bytes back
// to back (only the rows that are not stable, when skipStable); strings and
// slices into it stay valid after the batch.
func selectedBytes(v *vector, sel []int32, skipStable bool) []byte {
	total := 0
	for _, r := range sel {
		if !skipStable || !v.stable[r] {
			total += len(v.refs[r])
		}
	}
	if total == 0 {
		return nil
	}
	// Values of a plain page lie back to back: copy runs, not rows.
	slab := make([]byte, 0, total)
	var run []byte
	for _, r := range sel {
		b := v.refs[r]
		if skipStable && v.stable[r] || len(b) == 0 {
			continue
		}
		if len(run) > 0 && unsafe.SliceData(b) == unsafe.SliceData(run[len(run):cap(run)]) && cap(run)-len(run) >= len(b) {
			run = run[:len(run)+len(b)]
			continue
		}
		slab = append(slab, run...)
		run = b
	}
	return append(slab, run...)
}

// copyString fills string fields. Dictionary strings are shared (one copy
// per column chunk); the other strings are copied into one slab per batch.
func copyString(v *vector, sel []int32, dst unsafe.Pointer, stride uintptr) int {
	for j, r := range sel {
		if !v.stable[r] { // from here on, through a slab
			return copyStringSlab(v, sel[j:], unsafe.Add(dst, uintptr(j)*stride), stride)
		}
		b := v.refs[r]
		*(*string)(unsafe.Add(dst, uintptr(j)*stride)) = unsafe.String(unsafe.SliceData(b), len(b))
	}
	return -1
}

// copyStringSlab is copyString for rows that are not all shared.
func copyStringSlab(v *vector, sel []int32, dst unsafe.Pointer, stride uintptr) int {
	slab := selectedBytes(v, sel, true)
	o := 0
	for j, r := range sel {
		b := v.refs[r]
		var s string
		switch {
		case len(b) == 0:
		case v.stable[r]:
			s = unsafe.String(unsafe.SliceData(b), len(b))
		default:
			s = unsafe.String(&slab[o], len(b))
			o += len(b)
		}
		*(*string)(unsafe.Add(dst, uintptr(j)*stride)) = s
	}
	return -1
}

// copyByteSlice fills []byte fields, always from a new slab per batch: the
// caller may modify them.
func copyByteSlice(v *vector, sel []int32, dst unsafe.Pointer, stride uintptr) int {
	slab := selectedBytes(v, sel, false)
	o := 0
	for j, r := range sel {
		n := len(v.refs[r])
		var b []byte
		if v.valid[r] {
			b = slab[o : o+n : o+n]
		}
		*(*[]byte)(unsafe.Add(dst, uintptr(j)*stride)) = b
		o += n
	}
	return -1
}

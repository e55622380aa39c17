package sink

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"
)

// appendFunc appends the Java-style string of the value v holds.
type appendFunc func(dst []byte, v reflect.Value) []byte

// ToString returns a function appending a value of type T as Flink prints
// the equivalent Java value with toString (see the package doc for the
// rules). The type is inspected once, here; the returned function may be
// called from several goroutines.
func ToString[T any]() func(dst []byte, v T) []byte {
	t := reflect.TypeFor[T]()
	if t == reflect.TypeFor[string]() {
		return func(dst []byte, v T) []byte { return append(dst, *any(&v).(*string)...) }
	}
	fn := appenderOf(t)
	return func(dst []byte, v T) []byte { return fn(dst, reflect.ValueOf(&v).Elem()) }
}

var (
	stringerType = reflect.TypeFor[fmt.Stringer]()
	errorType    = reflect.TypeFor[error]()
	timeType     = reflect.TypeFor[time.Time]()
)

// appenderOf builds the appender of type t.
func appenderOf(t reflect.Type) appendFunc {
	if t == timeType {
		return func(dst []byte, v reflect.Value) []byte { return appendInstant(dst, v.Interface().(time.Time)) }
	}
	if t.Kind() != reflect.Interface {
		isNil := func(v reflect.Value) bool { return t.Kind() == reflect.Pointer && v.IsNil() }
		switch {
		case t.Implements(errorType):
			return func(dst []byte, v reflect.Value) []byte {
				if isNil(v) {
					return append(dst, "null"...)
				}
				if !v.CanInterface() {
					return appendFallback(dst, v)
				}
				return append(dst, v.Interface().(error).Error()...)
			}
		case t.Implements(stringerType):
			return func(dst []byte, v reflect.Value) []byte {
				if isNil(v) {
					return append(dst, "null"...)
				}
				if !v.CanInterface() {
					return appendFallback(dst, v)
				}
				return append(dst, v.Interface().(fmt.Stringer).String()...)
			}
		case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(stringerType):
			return func(dst []byte, v reflect.Value) []byte {
				if !v.CanInterface() {
					return appendFallback(dst, v)
				}
				p := reflect.New(t)
				p.Elem().Set(v)
				return append(dst, p.Interface().(fmt.Stringer).String()...)
			}
		}
	}
	switch t.Kind() {
	case reflect.String:
		return func(dst []byte, v reflect.Value) []byte { return append(dst, v.String()...) }
	case reflect.Bool:
		return func(dst []byte, v reflect.Value) []byte { return strconv.AppendBool(dst, v.Bool()) }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(dst []byte, v reflect.Value) []byte { return strconv.AppendInt(dst, v.Int(), 10) }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(dst []byte, v reflect.Value) []byte { return strconv.AppendUint(dst, v.Uint(), 10) }
	case reflect.Float64:
		return func(dst []byte, v reflect.Value) []byte { return AppendJavaDouble(dst, v.Float(), 64) }
	case reflect.Float32:
		return func(dst []byte, v reflect.Value) []byte { return AppendJavaDouble(dst, v.Float(), 32) }
	case reflect.Pointer:
		elem := appenderOf(t.Elem())
		return func(dst []byte, v reflect.Value) []byte {
			if v.IsNil() {
				return append(dst, "null"...)
			}
			return elem(dst, v.Elem())
		}
	case reflect.Interface:
		return func(dst []byte, v reflect.Value) []byte {
			if v.IsNil() {
				return append(dst, "null"...)
			}
			e := v.Elem()
			return appenderOf(e.Type())(dst, e)
		}
	case reflect.Slice, reflect.Array:
		elem := appenderOf(t.Elem())
		return func(dst []byte, v reflect.Value) []byte {
			if t.Kind() == reflect.Slice && v.IsNil() {
				return append(dst, "null"...)
			}
			dst = append(dst, '[')
			for i := range v.Len() {
				if i > 0 {
					dst = append(dst, ", "...)
				}
				dst = elem(dst, v.Index(i))
			}
			return append(dst, ']')
		}
	case reflect.Map:
		key, elem := appenderOf(t.Key()), appenderOf(t.Elem())
		return func(dst []byte, v reflect.Value) []byte {
			if v.IsNil() {
				return append(dst, "null"...)
			}
			entries := make([]string, 0, v.Len())
			var b []byte
			for it := v.MapRange(); it.Next(); {
				b = key(b[:0], it.Key())
				b = append(b, '=')
				b = elem(b, it.Value())
				entries = append(entries, string(b))
			}
			slices.Sort(entries)
			dst = append(dst, '{')
			for i, e := range entries {
				if i > 0 {
					dst = append(dst, ", "...)
				}
				dst = append(dst, e...)
			}
			return append(dst, '}')
		}
	case reflect.Struct:
		fields := make([]appendFunc, t.NumField())
		for i := range fields {
			fields[i] = appenderOf(t.Field(i).Type)
		}
		return func(dst []byte, v reflect.Value) []byte {
			dst = append(dst, '(')
			for i, f := range fields {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = f(dst, v.Field(i))
			}
			return append(dst, ')')
		}
	}
	return appendFallback
}

// appendFallback prints what Java has no counterpart for (complex numbers,
// channels, functions) as fmt's %v does.
func appendFallback(dst []byte, v reflect.Value) []byte { return fmt.Append(dst, v) }

// AppendJavaDouble appends f as Java's Double.toString (bitSize 64) or
// Float.toString (bitSize 32) prints it: the shortest digits that read back
// as f; plain decimal with at least one digit after the point when
// 1e-3 <= |f| < 1e7 ("1.0", "3.5", "0.001", "1234567.0"), else computerized
// scientific notation ("1.0E10", "1.0E-4", "-2.5E7"); "NaN", "Infinity",
// "-Infinity", "0.0" and "-0.0". As JDK 19 and later, when one digit would
// do it prints the two-digit decimal closest to f ("4.9E-324").
func AppendJavaDouble(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	var buf [32]byte
	// 'e' with the shortest precision: d[.ddd]e±xx
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, bitSize)
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	mant, exp := e, 0
	for i, c := range e {
		if c == 'e' {
			mant = e[:i]
			exp, _ = strconv.Atoi(string(e[i+1:]))
			break
		}
	}
	var digits [24]byte
	nd := 0
	for _, c := range mant {
		if c != '.' {
			digits[nd] = c
			nd++
		}
	}
	if nd == 1 {
		// Java picks, when one digit would do, the two-digit decimal
		// closest to f (4.9E-324, not 5.0E-324), then drops a zero.
		e = strconv.AppendFloat(buf[:0], math.Abs(f), 'e', 1, bitSize)
		digits[0], digits[1] = e[0], e[2]
		exp, _ = strconv.Atoi(string(e[4:]))
		if nd = 2; digits[1] == '0' {
			nd = 1
		}
	}
	ds := digits[:nd] // the value is d.ddd × 10^exp
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		if exp >= 0 {
			// integer part: ds[:exp+1], padded with zeros
			for i := 0; i <= exp; i++ {
				if i < len(ds) {
					dst = append(dst, ds[i])
				} else {
					dst = append(dst, '0')
				}
			}
			dst = append(dst, '.')
			if exp+1 < len(ds) {
				return append(dst, ds[exp+1:]...)
			}
			return append(dst, '0')
		}
		dst = append(dst, "0."...)
		for i := 0; i < -exp-1; i++ {
			dst = append(dst, '0')
		}
		return append(dst, ds...)
	}
	dst = append(dst, ds[0], '.')
	if len(ds) > 1 {
		dst = append(dst, ds[1:]...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(exp), 10)
}

// appendInstant appends t as Java's Instant.toString: ISO-8601 in UTC with
// the fraction of a second in groups of three digits, left out when zero
// ("2015-02-26T13:18:38.630Z").
func appendInstant(dst []byte, t time.Time) []byte {
	t = t.UTC()
	dst = t.AppendFormat(dst, "2006-01-02T15:04:05")
	if ns := t.Nanosecond(); ns != 0 {
		switch {
		case ns%1e6 == 0:
			dst = fmt.Appendf(dst, ".%03d", ns/1e6)
		case ns%1e3 == 0:
			dst = fmt.Appendf(dst, ".%06d", ns/1e3)
		default:
			dst = fmt.Appendf(dst, ".%09d", ns)
		}
	}
	return append(dst, 'Z')
}

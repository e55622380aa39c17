package state

import (
	"fmt"
	"math"
	"reflect"
	"unicode/utf8"
	"unsafe"

	"github.com/weirdata/weir/memory"
)

// HashFunc returns a key's hash code, the int whose murmur hash picks the key
// group (Flink's key.hashCode()).
type HashFunc[K comparable] func(K) int32

// NewHashFunc chooses, once per key type, the hash code of K by its kind, so
// that weir assigns a key the key group Flink assigns the same key:
//
//   - string: Java's String.hashCode over the string's UTF-16 code units
//     (invalid UTF-8 bytes count as U+FFFD each);
//   - int64: Long.hashCode, (int)(v ^ v>>>32); int32 and int: Integer.hashCode,
//     the value (an int is truncated to its low 32 bits); int16, int8 and uint16:
//     Short, Byte and Character.hashCode, the value;
//   - bool: Boolean.hashCode, 1231 for true and 1237 for false;
//   - float64: Double.hashCode of doubleToLongBits (every NaN is 0x7ff8000000000000);
//     float32: Float.hashCode of floatToIntBits (every NaN is 0x7fc00000);
//   - any other comparable type (structs, arrays, unsigned integers): Java's
//     Arrays.hashCode(byte[]) (h = 31*h + b over signed bytes, from 1) of the
//     value's memory.Codec bytes.
//
// Named types use their underlying kind. Go's == and Java's equals differ at
// two places: 0.0 and -0.0 are one Go key but two Java keys (with different
// groups), and a NaN key is never equal to itself in Go, so its state cannot
// be found again: do not key by NaN. A struct key hashed by its Codec bytes
// must not carry -0.0 or padding that differs between equal values.
func NewHashFunc[K comparable]() (HashFunc[K], error) {
	t := reflect.TypeFor[K]()
	switch t.Kind() {
	case reflect.String:
		return func(k K) int32 { return JavaStringHash(*(*string)(unsafe.Pointer(&k))) }, nil
	case reflect.Int64:
		return func(k K) int32 { return javaLongHash(*(*int64)(unsafe.Pointer(&k))) }, nil
	case reflect.Int:
		return func(k K) int32 { return int32(*(*int)(unsafe.Pointer(&k))) }, nil
	case reflect.Int32:
		return func(k K) int32 { return *(*int32)(unsafe.Pointer(&k)) }, nil
	case reflect.Int16:
		return func(k K) int32 { return int32(*(*int16)(unsafe.Pointer(&k))) }, nil
	case reflect.Int8:
		return func(k K) int32 { return int32(*(*int8)(unsafe.Pointer(&k))) }, nil
	case reflect.Uint16:
		return func(k K) int32 { return int32(*(*uint16)(unsafe.Pointer(&k))) }, nil
	case reflect.Bool:
		return func(k K) int32 {
			if *(*bool)(unsafe.Pointer(&k)) {
				return 1231
			}
			return 1237
		}, nil
	case reflect.Float64:
		return func(k K) int32 { return JavaDoubleHash(*(*float64)(unsafe.Pointer(&k))) }, nil
	case reflect.Float32:
		return func(k K) int32 { return javaFloatHash(*(*float32)(unsafe.Pointer(&k))) }, nil
	}
	c, err := memory.NewCodec[K]()
	if err != nil {
		return nil, fmt.Errorf("state: key type %s: %w", t, err)
	}
	var buf []byte // one goroutine per backend: the scratch is the backend's
	return func(k K) int32 {
		buf = c.Append(buf[:0], &k)
		return javaBytesHash(buf)
	}, nil
}

// JavaStringHash is Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1] over
// the UTF-16 code units of s.
func JavaStringHash(s string) int32 {
	var h int32
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			h = 31*h + int32(b)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

func javaLongHash(v int64) int32 { return int32(v ^ int64(uint64(v)>>32)) }

// JavaDoubleHash is Java's Double.hashCode: the long hash of doubleToLongBits,
// which maps every NaN to 0x7ff8000000000000.
func JavaDoubleHash(f float64) int32 {
	if f != f {
		return javaLongHash(0x7ff8000000000000)
	}
	return javaLongHash(int64(math.Float64bits(f)))
}

func javaFloatHash(f float32) int32 {
	if f != f {
		return 0x7fc00000
	}
	return int32(math.Float32bits(f))
}

// javaBytesHash is Java's Arrays.hashCode(byte[]).
func javaBytesHash(b []byte) int32 {
	h := int32(1)
	for _, c := range b {
		h = 31*h + int32(int8(c))
	}
	return h
}

package memory

import (
	"encoding/binary"
	"math"
	"time"
)

// Key encoding: every key is carried as bytes whose bytewise order (bytes.Compare)
// is the key's order, so sort, merge, join and grouping compare keys without
// knowing their types, a normalized-key prefix is just the first eight bytes, and
// the hash of a key is the hash of its bytes. Composite keys are the concatenation
// of their fields' encodings; every encoding is prefix-free, so concatenation keeps
// the order field by field. A descending field is its ascending encoding with every
// byte inverted (Invert).
//
// Orders: integers numerically; floats numerically with -0.0 equal to 0.0 and every
// NaN equal to every other NaN and greater than +Inf (as Flink and DuckDB order
// them); strings and byte slices bytewise (the order of LC_ALL=C sort); false before
// true; times by instant.

// AppendUint64 appends the order-preserving encoding of v (8 bytes).
func AppendUint64(dst []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(dst, v) }

// AppendUint32 appends the order-preserving encoding of v (4 bytes).
func AppendUint32(dst []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(dst, v) }

// AppendUint16 appends the order-preserving encoding of v (2 bytes).
func AppendUint16(dst []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(dst, v) }

// AppendUint8 appends the order-preserving encoding of v (1 byte).
func AppendUint8(dst []byte, v uint8) []byte { return append(dst, v) }

// AppendInt64 appends the order-preserving encoding of v (8 bytes).
func AppendInt64(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^(1<<63))
}

// AppendInt32 appends the order-preserving encoding of v (4 bytes).
func AppendInt32(dst []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(v)^(1<<31))
}

// AppendInt16 appends the order-preserving encoding of v (2 bytes).
func AppendInt16(dst []byte, v int16) []byte {
	return binary.BigEndian.AppendUint16(dst, uint16(v)^(1<<15))
}

// AppendInt8 appends the order-preserving encoding of v (1 byte).
func AppendInt8(dst []byte, v int8) []byte { return append(dst, uint8(v)^0x80) }

// AppendFloat64 appends the order-preserving encoding of v (8 bytes).
func AppendFloat64(dst []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(dst, float64Bits(v))
}

// AppendFloat32 appends the order-preserving encoding of v (4 bytes).
func AppendFloat32(dst []byte, v float32) []byte {
	return binary.BigEndian.AppendUint32(dst, float32Bits(v))
}

func float64Bits(v float64) uint64 {
	if v != v {
		return math.MaxUint64 // every NaN, after +Inf
	}
	if v == 0 {
		v = 0 // -0.0 == 0.0
	}
	u := math.Float64bits(v)
	if u>>63 != 0 {
		return ^u
	}
	return u | 1<<63
}

func float32Bits(v float32) uint32 {
	if v != v {
		return math.MaxUint32
	}
	if v == 0 {
		v = 0
	}
	u := math.Float32bits(v)
	if u>>31 != 0 {
		return ^u
	}
	return u | 1<<31
}

// AppendBool appends the order-preserving encoding of v (1 byte).
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// AppendTime appends the order-preserving encoding of t's instant (12 bytes: Unix
// seconds, then nanoseconds). The location is not part of the key.
func AppendTime(dst []byte, t time.Time) []byte {
	dst = AppendInt64(dst, t.Unix())
	return AppendUint32(dst, uint32(t.Nanosecond()))
}

// AppendString appends the order-preserving, prefix-free encoding of s: its bytes
// with 0x00 escaped as 0x00 0xFF, then the terminator 0x00 0x01.
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0 {
			dst = append(dst, 0, 0xFF)
		} else {
			dst = append(dst, c)
		}
	}
	return append(dst, 0, 1)
}

// AppendBytes is AppendString for a byte slice.
func AppendBytes(dst []byte, b []byte) []byte {
	for _, c := range b {
		if c == 0 {
			dst = append(dst, 0, 0xFF)
		} else {
			dst = append(dst, c)
		}
	}
	return append(dst, 0, 1)
}

// Invert flips every byte of b in place: applied to the bytes one field appended, it
// turns that field's ascending order into descending.
func Invert(b []byte) {
	for i := range b {
		b[i] = ^b[i]
	}
}

// Prefix returns the normalized-key prefix of an encoded key: its first eight bytes
// as a big-endian integer, zero-padded. Where two prefixes differ, their order is the
// keys' order; where they are equal, the keys must be compared in full.
func Prefix(key []byte) uint64 {
	if len(key) >= 8 {
		return binary.BigEndian.Uint64(key)
	}
	var p uint64
	for i, c := range key {
		p |= uint64(c) << (56 - 8*i)
	}
	return p
}

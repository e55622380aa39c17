// Package wire reads the binary formats weir writes itself (state
// snapshots, checkpoint metadata): varints, bytes and counts from a byte
// slice, keeping the first error.
//
// A Decoder never panics on corrupt input: a read past the end, a varint
// that does not end or a count beyond the bytes left sets Err, and every
// read after that returns the zero value. The caller checks Err once, at
// the end.
package wire

import (
	"encoding/binary"
	"fmt"
)

// Decoder reads fields from B, which shrinks as they are read. Err is
// the first error.
type Decoder struct {
	B   []byte
	Err error
}

// Fail sets Err, unless it is set.
func (d *Decoder) Fail(format string, args ...any) {
	if d.Err == nil {
		d.Err = fmt.Errorf(format, args...)
	}
}

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.B)
	if n <= 0 {
		d.Fail("bad uvarint")
		return 0
	}
	d.B = d.B[n:]
	return v
}

// Varint reads a signed (zig-zag) varint.
func (d *Decoder) Varint() int64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Varint(d.B)
	if n <= 0 {
		d.Fail("bad varint")
		return 0
	}
	d.B = d.B[n:]
	return v
}

// Int reads a uvarint that must fit an int32 (a parallelism, an index).
func (d *Decoder) Int() int {
	v := d.Uvarint()
	if v > 1<<31-1 {
		d.Fail("value %d out of range", v)
		return 0
	}
	return int(v)
}

// Count reads a count of items each of which takes at least a byte: a
// count beyond the bytes left is corrupt.
func (d *Decoder) Count() int {
	v := d.Uvarint()
	if v > uint64(len(d.B)) {
		d.Fail("count %d beyond the %d bytes left", v, len(d.B))
		return 0
	}
	return int(v)
}

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if d.Err != nil {
		return 0
	}
	if len(d.B) == 0 {
		d.Fail("truncated")
		return 0
	}
	c := d.B[0]
	d.B = d.B[1:]
	return c
}

// Bool reads a byte that must be 0 or 1.
func (d *Decoder) Bool() bool {
	switch c := d.Byte(); c {
	case 0:
		return false
	case 1:
		return true
	default:
		d.Fail("flag %d", c)
		return false
	}
}

// Bytes reads n bytes; the slice aliases B.
func (d *Decoder) Bytes(n uint64) []byte {
	if d.Err != nil {
		return nil
	}
	if n > uint64(len(d.B)) {
		d.Fail("truncated: %d bytes of %d", len(d.B), n)
		return nil
	}
	v := d.B[:n]
	d.B = d.B[n:]
	return v
}

// LenString reads a uvarint length and that many bytes as a string.
func (d *Decoder) LenString() string { return string(d.Bytes(d.Uvarint())) }

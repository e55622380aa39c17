package memory

import (
	"encoding/binary"
	"errors"
	"unsafe"
)

// This file runs programs: encode appends a value's serialized form, decoder.run
// reads one back. Neither calls reflect; both walk the ops with unsafe pointer
// arithmetic, so their cost per record is a switch per op.

// sliceHeader is the layout of every Go slice. Its data field is an unsafe.Pointer,
// so writing a header through it keeps the garbage collector's write barrier.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// maxDepth bounds the nesting of pointers and slices a decoder follows, so that
// corrupt input cannot exhaust the stack through a recursive type.
const maxDepth = 10000

// maxEmpty bounds the length of a decoded slice of zero-size elements, which
// costs no input bytes per element.
const maxEmpty = 1 << 31

// Reasons for corrupt input. Decode wraps them with the type, the byte position
// and ErrCorrupt.
var (
	errTruncated = errors.New("truncated input")
	errLength    = errors.New("length exceeds the input left")
	errVarint    = errors.New("bad varint")
	errBool      = errors.New("bool byte is not 0 or 1")
	errFlag      = errors.New("pointer flag is not 0 or 1")
	errNanos     = errors.New("time nanoseconds out of range")
	errZone      = errors.New("unknown time zone kind")
	errDepth     = errors.New("nesting deeper than 10000")
)

// encode appends the value of program p at base to dst.
func encode(dst []byte, p *program, base unsafe.Pointer) []byte {
	for i := range p.ops {
		o := &p.ops[i]
		ptr := unsafe.Add(base, o.off)
		switch o.kind {
		case opRaw:
			dst = append(dst, unsafe.Slice((*byte)(ptr), o.size)...)
		case opString:
			s := *(*string)(ptr)
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		case opBytes:
			b := *(*[]byte)(ptr)
			if b == nil {
				dst = append(dst, 0)
				continue
			}
			dst = binary.AppendUvarint(dst, uint64(len(b))+1)
			dst = append(dst, b...)
		case opTime:
			dst = appendTime(dst, ptr)
		case opPtr:
			q := *(*unsafe.Pointer)(ptr)
			if q == nil {
				dst = append(dst, 0)
				continue
			}
			dst = append(dst, 1)
			dst = encode(dst, o.elem, q)
		case opSlice:
			h := (*sliceHeader)(ptr)
			if h.data == nil {
				dst = append(dst, 0)
				continue
			}
			dst = binary.AppendUvarint(dst, uint64(h.len)+1)
			dst = encodeArray(dst, o.elem, h.data, h.len)
		case opArray:
			dst = encodeArray(dst, o.elem, ptr, o.n)
		}
	}
	return dst
}

// encodeArray appends n consecutive values of program p starting at base.
func encodeArray(dst []byte, p *program, base unsafe.Pointer, n int) []byte {
	if p.flat {
		return append(dst, unsafe.Slice((*byte)(base), uintptr(n)*p.size)...)
	}
	for j := 0; j < n; j++ {
		dst = encode(dst, p, unsafe.Add(base, uintptr(j)*p.size))
	}
	return dst
}

// decoder reads values from src. With an arena, strings, byte slices and
// pointer-free elements are carved from it; otherwise each is allocated.
type decoder struct {
	src   []byte
	pos   int
	arena *Arena
	depth int
}

func (d *decoder) left() int { return len(d.src) - d.pos }

func (d *decoder) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.src[d.pos:])
	if n <= 0 {
		if n == 0 {
			return 0, errTruncated
		}
		return 0, errVarint
	}
	d.pos += n
	return v, nil
}

// length reads a uvarint byte count and checks it against the input left.
func (d *decoder) length() (int, error) {
	v, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	if v > uint64(d.left()) {
		return 0, errLength
	}
	return int(v), nil
}

// take returns the next n bytes, which the caller has checked are there.
func (d *decoder) take(n int) []byte {
	b := d.src[d.pos : d.pos+n : d.pos+n]
	d.pos += n
	return b
}

// run decodes one value of program p into the memory at base, overwriting it.
func (d *decoder) run(p *program, base unsafe.Pointer) error {
	for i := range p.ops {
		o := &p.ops[i]
		ptr := unsafe.Add(base, o.off)
		switch o.kind {
		case opRaw:
			if err := d.raw(ptr, o.size, o.bools); err != nil {
				return err
			}
		case opString:
			n, err := d.length()
			if err != nil {
				return err
			}
			switch {
			case n == 0:
				*(*string)(ptr) = ""
			case d.arena != nil:
				*(*string)(ptr) = d.arena.String(d.take(n))
			default:
				*(*string)(ptr) = string(d.take(n))
			}
		case opBytes:
			if err := d.bytes(ptr); err != nil {
				return err
			}
		case opTime:
			if err := d.time(ptr); err != nil {
				return err
			}
		case opPtr:
			if d.left() < 1 {
				return errTruncated
			}
			flag := d.src[d.pos]
			d.pos++
			switch flag {
			case 0:
				*(*unsafe.Pointer)(ptr) = nil
			case 1:
				q := d.alloc(o.elem, 1)
				if err := d.nested(o.elem, q, 1); err != nil {
					return err
				}
				*(*unsafe.Pointer)(ptr) = q
			default:
				return errFlag
			}
		case opSlice:
			if err := d.slice(o.elem, ptr); err != nil {
				return err
			}
		case opArray:
			if err := d.array(o.elem, ptr, o.n); err != nil {
				return err
			}
		}
	}
	return nil
}

// raw copies size bytes to ptr after checking that the bools among them are 0 or 1.
func (d *decoder) raw(ptr unsafe.Pointer, size uintptr, bools []uintptr) error {
	n := int(size)
	if d.left() < n {
		return errTruncated
	}
	s := d.src[d.pos : d.pos+n]
	for _, b := range bools {
		if s[b] > 1 {
			return errBool
		}
	}
	copy(unsafe.Slice((*byte)(ptr), n), s)
	d.pos += n
	return nil
}

func (d *decoder) bytes(ptr unsafe.Pointer) error {
	v, err := d.uvarint()
	if err != nil {
		return err
	}
	if v == 0 {
		*(*[]byte)(ptr) = nil
		return nil
	}
	if v-1 > uint64(d.left()) {
		return errLength
	}
	n := int(v - 1)
	switch {
	case n == 0:
		*(*[]byte)(ptr) = []byte{}
	case d.arena != nil:
		*(*[]byte)(ptr) = d.arena.Bytes(d.take(n))
	default:
		b := make([]byte, n)
		copy(b, d.take(n))
		*(*[]byte)(ptr) = b
	}
	return nil
}

func (d *decoder) slice(elem *program, ptr unsafe.Pointer) error {
	v, err := d.uvarint()
	if err != nil {
		return err
	}
	if v == 0 {
		*(*sliceHeader)(ptr) = sliceHeader{}
		return nil
	}
	// Every element of non-zero size takes at least one byte of input (and a flat
	// one its size), so the length is bounded by the input left: corrupt input
	// cannot make the decoder allocate much more than it reads.
	limit := uint64(maxEmpty)
	if elem.size > 0 {
		limit = uint64(d.left() / max(elem.minLen, 1))
	}
	if v-1 > limit {
		return errLength
	}
	n := int(v - 1)
	q := d.alloc(elem, n)
	if err := d.nested(elem, q, n); err != nil {
		return err
	}
	*(*sliceHeader)(ptr) = sliceHeader{data: q, len: n, cap: n}
	return nil
}

// nested decodes n values of elem at q one level deeper.
func (d *decoder) nested(elem *program, q unsafe.Pointer, n int) error {
	if d.depth++; d.depth > maxDepth {
		return errDepth
	}
	err := d.array(elem, q, n)
	d.depth--
	return err
}

// array decodes n consecutive values of program p starting at base.
func (d *decoder) array(p *program, base unsafe.Pointer, n int) error {
	if len(p.ops) == 0 || n == 0 {
		return nil
	}
	if p.flat && len(p.ops[0].bools) == 0 {
		if uint64(d.left()) < uint64(n)*uint64(p.size) {
			return errTruncated
		}
		return d.raw(base, uintptr(n)*p.size, nil)
	}
	for j := 0; j < n; j++ {
		if err := d.run(p, unsafe.Add(base, uintptr(j)*p.size)); err != nil {
			return err
		}
	}
	return nil
}

// alloc returns zeroed memory for n values of program p: from the arena when the
// values hold no pointers, else typed for the garbage collector.
func (d *decoder) alloc(p *program, n int) unsafe.Pointer {
	if n == 0 || p.size == 0 {
		return unsafeNewArray(p.rtype, 0) // the runtime's zero-size base, no allocation
	}
	if d.arena != nil && p.ptrFree {
		return d.arena.alloc(int(p.size)*n, int(p.align))
	}
	if n == 1 {
		return unsafeNew(p.rtype)
	}
	return unsafeNewArray(p.rtype, n)
}

package memory

import (
	"errors"
	"fmt"
	"reflect"
	"unsafe"
)

// ErrCorrupt is returned, wrapped with the type and the byte position, when Decode
// meets input that no Append could have produced.
var ErrCorrupt = errors.New("memory: corrupt serialized value")

// Codec serializes values of type T to bytes and back. NewCodec derives it once
// per type with reflect, compiling T into a flat program of ops (a kind and an
// unsafe field offset each); Append and Decode then run that program with pointer
// arithmetic and call no reflect per record.
//
// Supported: bool, every signed and unsigned integer kind but uintptr, float32,
// float64, complex64, complex128, string, []byte, time.Time, fixed-size arrays,
// nested structs, pointers, and slices of any supported type, including named types
// of these kinds and recursive types (through pointers and slices). Unexported
// fields are serialized too: the codec copies a value's full state. Maps, channels,
// functions, interfaces, unsafe.Pointer and uintptr are rejected by NewCodec with an
// error naming the field path.
//
// Serialized form: fixed-size fields (numbers, bools, arrays and structs of them) in
// host layout, so a struct made only of them is one block of unsafe.Sizeof(T) bytes
// copied in one move (Flat reports it); lengths as uvarints; a pointer as a nil flag
// byte then its pointee. The form is local to a process and its machine (spill
// files, in-process exchanges): it is not a storage or wire format.
//
// What a round trip preserves: every field bit for bit (floats included: NaN
// payloads, -0.0), nil versus empty for slices and []byte (not for strings, which
// have no nil), nil versus non-nil pointers. Pointers are followed, not shared: two
// fields pointing at one value decode as two copies, and a value with a pointer
// cycle must not be appended (Append would not terminate). time.Time keeps its
// instant, zone abbreviation and offset, and its location where it can; see the
// serialized form in codec_time.go.
//
// A Codec is immutable and safe for concurrent use.
type Codec[T any] struct {
	prog *program
}

// NewCodec derives, once per type and when a program is built, a serializer for T.
// It returns an error naming the first unsupported field, e.g.
// "memory: codec for main.Order: field Items[].Tags: map[string]int is not supported".
func NewCodec[T any]() (*Codec[T], error) {
	p, err := programFor(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	return &Codec[T]{prog: p}, nil
}

// Flat reports whether T is made only of fixed-size fields without pointers, so
// that its serialized form is its memory, unsafe.Sizeof(T) bytes.
func (c *Codec[T]) Flat() bool { return c.prog.flat }

// MinSize returns the fewest bytes a serialized T takes.
func (c *Codec[T]) MinSize() int { return c.prog.minLen }

// Append appends the serialized form of *v to dst and returns the extended slice.
// It allocates only to grow dst.
func (c *Codec[T]) Append(dst []byte, v *T) []byte {
	p := c.prog
	if p.flat {
		return append(dst, unsafe.Slice((*byte)(unsafe.Pointer(v)), p.size)...)
	}
	return encode(dst, p, unsafe.Pointer(v))
}

// Decode reads one value from the start of src into *v, overwriting all of it, and
// returns the number of bytes consumed. Strings, slices and pointees are freshly
// allocated and do not alias src. On corrupt or truncated input it returns an
// error wrapping ErrCorrupt, leaves *v partly written, and neither panics nor
// allocates much more than len(src).
func (c *Codec[T]) Decode(src []byte, v *T) (int, error) {
	return c.decode(src, v, nil)
}

// DecodeArena is Decode with strings, byte slices and pointer-free slice elements
// and pointees carved from a instead of allocated one by one, so that decoding a
// batch of records costs O(1) allocations. Slices and pointees that hold pointers
// are still allocated. A nil a makes it Decode.
func (c *Codec[T]) DecodeArena(src []byte, v *T, a *Arena) (int, error) {
	return c.decode(src, v, a)
}

// decode is decodeAt written out again: calling decodeAt from here costs a
// flat record's decode a tenth more (BenchmarkCodec/flat/Decode, 6.4 against
// 7.0 ns).
func (c *Codec[T]) decode(src []byte, v *T, a *Arena) (int, error) {
	p := c.prog
	d := decoder{src: src, arena: a}
	var err error
	switch {
	case p.flat && p.size == 0:
		return 0, nil // nothing to read: struct{} and the like
	case p.flat:
		err = d.raw(unsafe.Pointer(v), p.size, p.ops[0].bools)
	default:
		err = d.run(p, unsafe.Pointer(v))
	}
	if err != nil {
		return d.pos, decodeErr(p, &d, len(src), err)
	}
	return d.pos, nil
}

// decodeErr is the error of a decode of p that failed with err.
func decodeErr(p *program, d *decoder, n int, err error) error {
	return fmt.Errorf("memory: decode %s at byte %d of %d: %v: %w", p.name, d.pos, n, err, ErrCorrupt)
}

// Raw is a Codec with its type erased, for code that is compiled once for
// every type (a runtime moving batches of records of any type): it encodes
// and decodes the value a pointer points to, which must be of the Codec's
// type. Its zero value is no codec.
type Raw struct{ prog *program }

// Raw returns the codec with its type erased.
func (c *Codec[T]) Raw() Raw { return Raw{c.prog} }

// Valid reports whether r is a codec (not the zero Raw).
func (r Raw) Valid() bool { return r.prog != nil }

// Flat is Codec.Flat.
func (r Raw) Flat() bool { return r.prog.flat }

// Size returns the size of the codec's type in memory, unsafe.Sizeof.
func (r Raw) Size() uintptr { return r.prog.size }

// Append is Codec.Append of the value at v.
func (r Raw) Append(dst []byte, v unsafe.Pointer) []byte {
	p := r.prog
	if p.flat {
		return append(dst, unsafe.Slice((*byte)(v), p.size)...)
	}
	return encode(dst, p, v)
}

// Decode is Codec.DecodeArena into the value at v.
func (r Raw) Decode(src []byte, v unsafe.Pointer, a *Arena) (int, error) {
	return decodeAt(r.prog, src, v, a)
}

func decodeAt(p *program, src []byte, v unsafe.Pointer, a *Arena) (int, error) {
	d := decoder{src: src, arena: a}
	var err error
	switch {
	case p.flat && p.size == 0:
		return 0, nil // nothing to read: struct{} and the like
	case p.flat:
		err = d.raw(v, p.size, p.ops[0].bools)
	default:
		err = d.run(p, v)
	}
	if err != nil {
		return d.pos, decodeErr(p, &d, len(src), err)
	}
	return d.pos, nil
}

// DefaultSlabSize is the slab size of an Arena whose size is not given.
const DefaultSlabSize = 64 << 10

// Arena is an append-only slab allocator for decoded strings, byte slices and
// pointer-free slice elements and pointees, so that decoding a batch of records
// costs O(1) allocations instead of one per string. When the current slab is full
// it starts a new one; it never reuses memory, so whatever it handed out stays
// valid for as long as it is referenced (a slab lives while any string in it does).
// Requests larger than a quarter slab get their own allocation.
//
// The zero value is ready to use with DefaultSlabSize slabs. An Arena is not safe
// for concurrent use: give each decoding goroutine its own.
//
// Byte slices carved from an Arena have their capacity equal to their length, so
// appending to one reallocates instead of overwriting a neighbour.
type Arena struct {
	slab     []byte // the current slab: len is the part handed out
	slabSize int
	slabs    int
}

// NewArena returns an Arena whose slabs are slabSize bytes (DefaultSlabSize when
// slabSize is zero or negative, at least 1 KiB otherwise).
func NewArena(slabSize int) *Arena {
	if slabSize <= 0 {
		slabSize = DefaultSlabSize
	}
	return &Arena{slabSize: max(slabSize, 1<<10)}
}

// Slabs returns the number of slabs and separate large blocks allocated so far.
func (a *Arena) Slabs() int { return a.slabs }

// String returns a string holding a copy of b, carved from the arena.
func (a *Arena) String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	p := a.alloc(len(b), 1)
	copy(unsafe.Slice((*byte)(p), len(b)), b)
	return unsafe.String((*byte)(p), len(b))
}

// Bytes returns a copy of b carved from the arena (nil for nil, empty for empty).
func (a *Arena) Bytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	if len(b) == 0 {
		return []byte{}
	}
	p := a.alloc(len(b), 1)
	s := unsafe.Slice((*byte)(p), len(b))
	copy(s, b)
	return s
}

// alloc returns n > 0 zeroed bytes aligned to align (a power of two of at most 8).
// Slabs come from make([]byte), which the runtime aligns to at least 8 bytes at
// these sizes.
func (a *Arena) alloc(n, align int) unsafe.Pointer {
	size := a.slabSize
	if size == 0 {
		size = DefaultSlabSize
	}
	off := (len(a.slab) + align - 1) &^ (align - 1)
	if off+n > cap(a.slab) {
		a.slabs++
		if n > size/4 {
			b := make([]byte, n)
			return unsafe.Pointer(&b[0])
		}
		a.slab = make([]byte, 0, size)
		off = 0
	}
	a.slab = a.slab[:off+n]
	return unsafe.Pointer(&a.slab[off])
}

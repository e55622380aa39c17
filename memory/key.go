package memory

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
	"unsafe"
)

// Order is the direction of one key part.
type Order uint8

const (
	// Ascending orders a part from its least to its greatest value.
	Ascending Order = iota
	// Descending orders a part from its greatest to its least value.
	Descending
)

func (o Order) String() string {
	switch o {
	case Ascending:
		return "asc"
	case Descending:
		return "desc"
	}
	return fmt.Sprintf("Order(%d)", uint8(o))
}

// Compare compares two encoded keys: bytes.Compare, which is the keys' order.
func Compare(a, b []byte) int { return bytes.Compare(a, b) }

// KeyPart is one part of a Key: a field of T named by its path (Field) or a key
// function (Func), with a direction. It is checked by NewKey.
type KeyPart[T any] struct {
	path  string
	order Order
	kind  keyKind                   // Func: the kind of the function's result
	ext   func(*T) (uint64, string) // Func: the result as bits or string
	cmp   func(a, b *T) int         // Func: the typed comparison of two results
	fn    string                    // Func: the result type, for String and errors
	whole bool                      // ValueKey: the whole value of a non-struct T
}

// Field returns a key part on the field of T at path: field names separated by dots
// ("Ship.Date"), exported or not, through nested structs (not through pointers);
// promoted fields of embedded structs may be named directly. The field must be a
// bool, an integer or float kind, a string, a []byte, a time.Time, or a fixed-size
// array of these, named types included.
func Field[T any](path string, o Order) KeyPart[T] {
	return KeyPart[T]{path: path, order: o}
}

// Func returns a key part computed by fn, whose result is of an ordered type
// (integers, floats, strings and named types of them). fn is called for every
// record the key encodes or compares, so it should be cheap and must not allocate
// to stay off the hot path's allocation budget.
func Func[T any, K cmp.Ordered](fn func(*T) K, o Order) KeyPart[T] {
	rt := reflect.TypeFor[K]()
	kind := scalarKind(rt)
	p := KeyPart[T]{order: o, kind: kind, fn: rt.String()}
	if fn == nil {
		return p
	}
	p.ext = func(v *T) (uint64, string) {
		k := fn(v)
		return scalarBits(kind, unsafe.Pointer(&k))
	}
	p.cmp = func(a, b *T) int { return compareOrdered(fn(a), fn(b)) }
	return p
}

// Key encodes values of T as keys in the order-preserving encoding of keyenc.go:
// the concatenation of its parts' encodings, a Descending part inverted. The part
// encoders are chosen by NewKey, so Append is a loop over parts without reflect.
//
// A Key is immutable and safe for concurrent use.
type Key[T any] struct {
	parts []keyPart[T]
	desc  string
}

type keyPart[T any] struct {
	field fieldEnc
	desc  bool
	ext   func(*T) (uint64, string)
	cmp   func(a, b *T) int
}

// NewKey returns the key of the given parts, most significant first. Its errors
// name the bad part's path and type. A key without parts encodes every value as
// the empty key: one group.
func NewKey[T any](parts ...KeyPart[T]) (*Key[T], error) {
	t := reflect.TypeFor[T]()
	k := &Key[T]{parts: make([]keyPart[T], 0, len(parts))}
	names := make([]string, 0, len(parts))
	for i, p := range parts {
		if p.order > Descending {
			return nil, fmt.Errorf("memory: key for %s: part %d: invalid order %d", t, i, p.order)
		}
		kp := keyPart[T]{desc: p.order == Descending}
		name := p.path
		if p.fn != "" {
			if p.ext == nil {
				return nil, fmt.Errorf("memory: key for %s: part %d: nil key function", t, i)
			}
			if p.kind == kInvalid {
				return nil, fmt.Errorf("memory: key for %s: part %d: key function result %s cannot be a key", t, i, p.fn)
			}
			kp.field.kind, kp.ext, kp.cmp = p.kind, p.ext, p.cmp
			name = "func() " + p.fn
		} else if p.whole {
			f, err := keyEncoder(t)
			if err != nil {
				return nil, fmt.Errorf("memory: key for %s: %w", t, err)
			}
			kp.field = f
			name = "value"
		} else {
			f, err := resolveField(t, p.path)
			if err != nil {
				return nil, err
			}
			kp.field = f
		}
		k.parts = append(k.parts, kp)
		names = append(names, name+" "+p.order.String())
	}
	k.desc = strings.Join(names, ", ")
	return k, nil
}

// ValueKey returns the ascending key of whole values of K: K itself when it is a
// bool, number, string, []byte, time.Time or array of these; for a struct, its
// fields in declaration order (nested structs field by field), so that the key
// order is the lexicographic order of the fields. It is how the DataSet API keys
// records by the result of a key selector.
func ValueKey[K any]() (*Key[K], error) {
	t := reflect.TypeFor[K]()
	if t.Kind() != reflect.Struct || isTime(t) {
		return NewKey(KeyPart[K]{whole: true})
	}
	var parts []KeyPart[K]
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Type.Kind() == reflect.Struct && !isTime(f.Type) {
				walk(f.Type, prefix+f.Name+".")
				continue
			}
			parts = append(parts, Field[K](prefix+f.Name, Ascending))
		}
	}
	walk(t, "")
	if len(parts) == 0 {
		return nil, fmt.Errorf("memory: key for %s: a struct key needs at least one field", t)
	}
	return NewKey(parts...)
}

// String describes the key, e.g. "Ship.Date desc, ID asc".
func (k *Key[T]) String() string { return k.desc }

// Append appends the encoded key of *v to dst. It allocates only to grow dst (and
// whatever a Func part's function allocates).
func (k *Key[T]) Append(dst []byte, v *T) []byte {
	base := unsafe.Pointer(v)
	for i := range k.parts {
		p := &k.parts[i]
		start := len(dst)
		if p.ext != nil {
			bits, s := p.ext(v)
			dst = appendScalar(dst, p.field.kind, bits, s)
		} else {
			dst = appendField(dst, &p.field, unsafe.Add(base, p.field.off))
		}
		if p.desc {
			Invert(dst[start:])
		}
	}
	return dst
}

// Compare compares the keys of *a and *b by their typed values: integers
// numerically, floats numerically with -0.0 == 0.0 and NaN equal to NaN and
// greater than +Inf, strings and byte slices bytewise, false before true, times by
// instant (wall clock, never the monotonic reading), arrays element by element, a
// Descending part reversed. Its sign is always that of bytes.Compare of the two
// encoded keys.
func (k *Key[T]) Compare(a, b *T) int {
	pa, pb := unsafe.Pointer(a), unsafe.Pointer(b)
	for i := range k.parts {
		p := &k.parts[i]
		var c int
		if p.cmp != nil {
			c = p.cmp(a, b)
		} else {
			c = compareField(&p.field, unsafe.Add(pa, p.field.off), unsafe.Add(pb, p.field.off))
		}
		if c != 0 {
			if p.desc {
				return -c
			}
			return c
		}
	}
	return 0
}

// Hash returns Hash(k.Append(nil, v), seed) without allocating, unless the encoded
// key is longer than 128 bytes.
func (k *Key[T]) Hash(v *T, seed uint64) uint64 {
	var buf [128]byte
	return Hash(k.Append(buf[:0], v), seed)
}

// keyKind is the encoding of one key field.
type keyKind uint8

const (
	kInvalid keyKind = iota
	kBool
	kInt8
	kInt16
	kInt32
	kInt64
	kUint8
	kUint16
	kUint32
	kUint64
	kFloat32
	kFloat64
	kString
	kBytes
	kTime
	kArray
)

// fieldEnc encodes one field at offset off of the value.
type fieldEnc struct {
	kind   keyKind
	off    uintptr
	n      int       // kArray: length
	stride uintptr   // kArray: element size
	elem   *fieldEnc // kArray: element encoding, at offset 0
}

// resolveField finds the field of struct type t at a dotted path and its encoder.
func resolveField(t reflect.Type, path string) (fieldEnc, error) {
	fail := func(msg string) (fieldEnc, error) {
		return fieldEnc{}, fmt.Errorf("memory: key for %s: field %q: %s", t, path, msg)
	}
	cur, off := t, uintptr(0)
	for _, name := range strings.Split(path, ".") {
		if cur.Kind() != reflect.Struct || isTime(cur) {
			return fail(cur.String() + " has no fields")
		}
		sf, ok := cur.FieldByName(name)
		if !ok {
			return fail(cur.String() + " has no field " + name)
		}
		x := cur
		for _, idx := range sf.Index {
			if x.Kind() != reflect.Struct {
				return fail(name + " is promoted through the pointer " + x.String())
			}
			f := x.Field(idx)
			off += f.Offset
			x = f.Type
		}
		cur = sf.Type
	}
	f, err := keyEncoder(cur)
	if err != nil {
		return fail(err.Error())
	}
	f.off = off
	return f, nil
}

// keyEncoder returns the encoder of a field of type t at offset 0.
func keyEncoder(t reflect.Type) (fieldEnc, error) {
	if isTime(t) {
		return fieldEnc{kind: kTime}, nil
	}
	switch t.Kind() {
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return fieldEnc{kind: kBytes}, nil
		}
	case reflect.Array:
		elem, err := keyEncoder(t.Elem())
		if err != nil {
			return fieldEnc{}, err
		}
		return fieldEnc{kind: kArray, n: t.Len(), stride: t.Elem().Size(), elem: &elem}, nil
	default:
		if k := scalarKind(t); k != kInvalid {
			return fieldEnc{kind: k}, nil
		}
	}
	return fieldEnc{}, fmt.Errorf("%s cannot be a key", t)
}

// scalarKind returns the encoding of a bool, number or string type, or kInvalid.
func scalarKind(t reflect.Type) keyKind {
	switch t.Kind() {
	case reflect.Bool:
		return kBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return [...]keyKind{1: kInt8, 2: kInt16, 4: kInt32, 8: kInt64}[t.Size()]
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return [...]keyKind{1: kUint8, 2: kUint16, 4: kUint32, 8: kUint64}[t.Size()]
	case reflect.Float32:
		return kFloat32
	case reflect.Float64:
		return kFloat64
	case reflect.String:
		return kString
	}
	return kInvalid
}

// scalarBits reads the scalar of kind k at p: numbers as bits (signed integers
// sign-extended), strings as themselves.
func scalarBits(k keyKind, p unsafe.Pointer) (uint64, string) {
	switch k {
	case kBool, kUint8:
		return uint64(*(*uint8)(p)), ""
	case kInt8:
		return uint64(*(*int8)(p)), ""
	case kInt16:
		return uint64(*(*int16)(p)), ""
	case kUint16:
		return uint64(*(*uint16)(p)), ""
	case kInt32:
		return uint64(*(*int32)(p)), ""
	case kUint32, kFloat32:
		return uint64(*(*uint32)(p)), ""
	case kInt64, kUint64, kFloat64:
		return *(*uint64)(p), ""
	case kString:
		return 0, *(*string)(p)
	}
	return 0, ""
}

// appendScalar appends the encoding of a scalar given as scalarBits returns it.
func appendScalar(dst []byte, k keyKind, bits uint64, s string) []byte {
	switch k {
	case kBool:
		return AppendBool(dst, bits != 0)
	case kInt8:
		return AppendInt8(dst, int8(bits))
	case kInt16:
		return AppendInt16(dst, int16(bits))
	case kInt32:
		return AppendInt32(dst, int32(bits))
	case kInt64:
		return AppendInt64(dst, int64(bits))
	case kUint8:
		return AppendUint8(dst, uint8(bits))
	case kUint16:
		return AppendUint16(dst, uint16(bits))
	case kUint32:
		return AppendUint32(dst, uint32(bits))
	case kUint64:
		return AppendUint64(dst, bits)
	case kFloat32:
		return AppendFloat32(dst, math.Float32frombits(uint32(bits)))
	case kFloat64:
		return AppendFloat64(dst, math.Float64frombits(bits))
	case kString:
		return AppendString(dst, s)
	}
	return dst
}

// appendField appends the encoding of the field of encoder f at p.
func appendField(dst []byte, f *fieldEnc, p unsafe.Pointer) []byte {
	switch f.kind {
	case kBytes:
		return AppendBytes(dst, *(*[]byte)(p))
	case kTime:
		return AppendTime(dst, *(*time.Time)(p))
	case kArray:
		for j := 0; j < f.n; j++ {
			dst = appendField(dst, f.elem, unsafe.Add(p, uintptr(j)*f.stride))
		}
		return dst
	}
	bits, s := scalarBits(f.kind, p)
	return appendScalar(dst, f.kind, bits, s)
}

// compareField compares the fields of encoder f at a and b by their typed values.
func compareField(f *fieldEnc, a, b unsafe.Pointer) int {
	switch f.kind {
	case kBool:
		return cmp.Compare(*(*uint8)(a), *(*uint8)(b))
	case kInt8:
		return cmp.Compare(*(*int8)(a), *(*int8)(b))
	case kInt16:
		return cmp.Compare(*(*int16)(a), *(*int16)(b))
	case kInt32:
		return cmp.Compare(*(*int32)(a), *(*int32)(b))
	case kInt64:
		return cmp.Compare(*(*int64)(a), *(*int64)(b))
	case kUint8:
		return cmp.Compare(*(*uint8)(a), *(*uint8)(b))
	case kUint16:
		return cmp.Compare(*(*uint16)(a), *(*uint16)(b))
	case kUint32:
		return cmp.Compare(*(*uint32)(a), *(*uint32)(b))
	case kUint64:
		return cmp.Compare(*(*uint64)(a), *(*uint64)(b))
	case kFloat32:
		return compareOrdered(*(*float32)(a), *(*float32)(b))
	case kFloat64:
		return compareOrdered(*(*float64)(a), *(*float64)(b))
	case kString:
		return strings.Compare(*(*string)(a), *(*string)(b))
	case kBytes:
		return bytes.Compare(*(*[]byte)(a), *(*[]byte)(b))
	case kTime:
		// By Unix seconds and nanoseconds, as AppendTime encodes them; Time.Compare
		// would use monotonic clock readings where both times have one.
		ta, tb := (*time.Time)(a), (*time.Time)(b)
		if c := cmp.Compare(ta.Unix(), tb.Unix()); c != 0 {
			return c
		}
		return cmp.Compare(ta.Nanosecond(), tb.Nanosecond())
	case kArray:
		for j := 0; j < f.n; j++ {
			d := uintptr(j) * f.stride
			if c := compareField(f.elem, unsafe.Add(a, d), unsafe.Add(b, d)); c != 0 {
				return c
			}
		}
	}
	return 0
}

// compareOrdered is cmp.Compare with NaN greatest instead of least, the order of
// the float encoding: NaN equals NaN and is greater than +Inf; -0.0 equals 0.0.
func compareOrdered[K cmp.Ordered](x, y K) int {
	xn, yn := x != x, y != y
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

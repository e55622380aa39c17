package memory

import (
	"fmt"
	"reflect"
	"sync"
	"time"
	"unsafe"
)

// This file turns a Go type into a program: the one place in the codec that uses
// reflect. It runs once per type (programs are cached), when a program is built.

// program is the compiled form of one Go type: a flat list of ops, each naming a
// field by its offset from the value's address, run by encode and decoder.run with
// unsafe pointer arithmetic. Nested structs are inlined into their parent's ops;
// pointers, slices and arrays of non-flat elements point at their element's program,
// which may be the program itself (recursive types). A program is immutable once
// compiled and shared by every goroutine.
type program struct {
	name    string         // the type, for errors
	size    uintptr        // unsafe.Sizeof of the type
	align   uintptr        // unsafe.Alignof of the type
	rtype   unsafe.Pointer // the runtime type, for allocating elements the GC can scan
	ptrFree bool           // holds no pointers: may be carved from an Arena slab
	flat    bool           // ops is one opRaw over the whole value
	minLen  int            // fewest bytes one encoded value takes
	ops     []op
}

type opKind uint8

const (
	// opRaw copies size bytes at off verbatim (host byte order). The bytes at bools
	// (relative to off) are bools, which decoding checks are 0 or 1.
	opRaw opKind = iota
	// opString is uvarint(len) and the bytes.
	opString
	// opBytes is uvarint(0) for nil, else uvarint(len+1) and the bytes.
	opBytes
	// opTime is the instant and the location; see appendTime.
	opTime
	// opPtr is a byte 0 for nil, else 1 and the pointee (elem).
	opPtr
	// opSlice is uvarint(0) for nil, else uvarint(len+1) and the elements (elem).
	opSlice
	// opArray is n elements of elem, elem.size apart.
	opArray
)

type op struct {
	kind  opKind
	off   uintptr
	size  uintptr   // opRaw: bytes copied
	n     int       // opArray: length
	bools []uintptr // opRaw: offsets of bool bytes, relative to off
	elem  *program  // opPtr, opSlice, opArray
}

var (
	timeType = reflect.TypeFor[time.Time]()
	programs sync.Map // reflect.Type -> *program, for NewCodec
)

// programFor returns the cached program of t, compiling it on first use.
func programFor(t reflect.Type) (*program, error) {
	if p, ok := programs.Load(t); ok {
		return p.(*program), nil
	}
	c := compiler{root: t, memo: map[reflect.Type]*program{}}
	p, err := c.program(t, "")
	if err != nil {
		return nil, err
	}
	c.fixMinLen()
	programs.Store(t, p)
	return p, nil
}

type compiler struct {
	root reflect.Type
	memo map[reflect.Type]*program // programs of this compilation, for recursive types
}

// program compiles t, whose values sit at path in the root type.
func (c *compiler) program(t reflect.Type, path string) (*program, error) {
	if p, ok := c.memo[t]; ok {
		return p, nil
	}
	p := &program{
		name:  t.String(),
		size:  t.Size(),
		align: uintptr(t.Align()),
		rtype: rtypeOf(t),
	}
	c.memo[t] = p // before the fields, so that recursive references find it
	if err := c.emit(p, t, 0, path); err != nil {
		return nil, err
	}
	p.ptrFree = isFixed(t)
	p.flat = p.ptrFree
	return p, nil
}

// emit appends to p the ops for a value of type t at offset off.
func (c *compiler) emit(p *program, t reflect.Type, off uintptr, path string) error {
	if isFixed(t) {
		p.addRaw(off, t.Size(), boolOffsets(nil, t, 0))
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if isTime(t) {
			p.ops = append(p.ops, op{kind: opTime, off: off})
			return nil
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if err := c.emit(p, f.Type, off+f.Offset, joinPath(path, f.Name)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Array:
		if t.Len() == 0 {
			return c.check(t.Elem(), path+"[]")
		}
		elem, err := c.program(t.Elem(), path+"[]")
		if err != nil {
			return err
		}
		p.ops = append(p.ops, op{kind: opArray, off: off, n: t.Len(), elem: elem})
		return nil
	case reflect.String:
		p.ops = append(p.ops, op{kind: opString, off: off})
		return nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			p.ops = append(p.ops, op{kind: opBytes, off: off})
			return nil
		}
		elem, err := c.program(t.Elem(), path+"[]")
		if err != nil {
			return err
		}
		p.ops = append(p.ops, op{kind: opSlice, off: off, elem: elem})
		return nil
	case reflect.Pointer:
		elem, err := c.program(t.Elem(), path)
		if err != nil {
			return err
		}
		p.ops = append(p.ops, op{kind: opPtr, off: off, elem: elem})
		return nil
	}
	return c.unsupported(t, path)
}

// check reports an unsupported type inside a zero-length array, which has no ops.
func (c *compiler) check(t reflect.Type, path string) error {
	_, err := c.program(t, path)
	return err
}

func (c *compiler) unsupported(t reflect.Type, path string) error {
	what := t.String()
	if t.PkgPath() != "" && t.Kind() != reflect.UnsafePointer {
		what = fmt.Sprintf("%s (kind %s)", t, t.Kind()) // a named type: say what it is
	}
	if path == "" {
		return fmt.Errorf("memory: codec for %s: %s is not supported", c.root, what)
	}
	return fmt.Errorf("memory: codec for %s: field %s: %s is not supported", c.root, path, what)
}

// addRaw appends a raw block, merging it with a raw block just before it: only
// padding can lie between the two, and copying padding is harmless.
func (p *program) addRaw(off, size uintptr, bools []uintptr) {
	if size == 0 {
		return
	}
	if k := len(p.ops) - 1; k >= 0 && p.ops[k].kind == opRaw {
		last := &p.ops[k]
		for _, b := range bools {
			last.bools = append(last.bools, off-last.off+b)
		}
		last.size = off + size - last.off
		return
	}
	p.ops = append(p.ops, op{kind: opRaw, off: off, size: size, bools: bools})
}

// fixMinLen computes minLen for every program of the compilation. Arrays take
// their element's minimum, so it iterates until nothing changes; a cycle always
// passes through a pointer or a slice, whose minimum is one byte, so it ends.
func (c *compiler) fixMinLen() {
	for changed := true; changed; {
		changed = false
		for _, p := range c.memo {
			n := 0
			for i := range p.ops {
				o := &p.ops[i]
				switch o.kind {
				case opRaw:
					n += int(o.size)
				case opTime:
					n += timeMinLen
				case opArray:
					n += o.n * o.elem.minLen
				default:
					n++
				}
			}
			if n != p.minLen {
				p.minLen, changed = n, true
			}
		}
	}
}

// isFixed reports whether t is a fixed-size value without pointers that the codec
// supports: booleans, numbers, and arrays and structs of them.
func isFixed(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return isFixed(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if !isFixed(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// boolOffsets appends the offsets of the bools in fixed type t, placed at off.
func boolOffsets(dst []uintptr, t reflect.Type, off uintptr) []uintptr {
	switch t.Kind() {
	case reflect.Bool:
		return append(dst, off)
	case reflect.Array:
		if hasBool(t.Elem()) {
			for i := 0; i < t.Len(); i++ {
				dst = boolOffsets(dst, t.Elem(), off+uintptr(i)*t.Elem().Size())
			}
		}
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			dst = boolOffsets(dst, f.Type, off+f.Offset)
		}
	}
	return dst
}

func hasBool(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool:
		return true
	case reflect.Array:
		return t.Len() > 0 && hasBool(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if hasBool(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// isTime reports whether t is time.Time or a named type defined on it.
func isTime(t reflect.Type) bool {
	return t == timeType || (t.Kind() == reflect.Struct && t.ConvertibleTo(timeType))
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// rtypeOf returns the runtime type descriptor behind t: reflect.Type's only
// implementation is *reflect.rtype, whose data word is that descriptor.
func rtypeOf(t reflect.Type) unsafe.Pointer {
	type iface struct{ tab, data unsafe.Pointer }
	return (*iface)(unsafe.Pointer(&t)).data
}

// unsafeNew and unsafeNewArray allocate zeroed memory for one or n values of a
// runtime type, typed for the garbage collector: what reflect.New and
// reflect.MakeSlice do underneath, without a reflect.Value (MakeSlice also
// allocates the slice header on the heap). The runtime keeps these two symbols
// for linkname users (go.dev/issue/67401).
//
//go:linkname unsafeNew reflect.unsafe_New
func unsafeNew(rtype unsafe.Pointer) unsafe.Pointer

//go:linkname unsafeNewArray reflect.unsafe_NewArray
func unsafeNewArray(rtype unsafe.Pointer, n int) unsafe.Pointer

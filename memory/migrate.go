package memory

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unsafe"
)

// ErrIncompatible is wrapped by NewMigration's errors when values of the old
// schema cannot become values of the new type.
var ErrIncompatible = errors.New("memory: incompatible schema")

// Migration reads values serialized under an older schema of a struct type
// into the type as it is now, as Flink's PojoSerializer does on restore:
// fields are matched by name; a field the type gained gets its zero value,
// a field it lost is dropped. Any other change (a field's kind, an array's
// length) is incompatible. Migration runs reflect per value: it is for
// restoring state, not for hot loops.
type Migration[T any] struct {
	old  reflect.Type // rebuilt from the old schema, with the same layout
	prog *program
	conv conv
}

// conv copies src, a value of an old type, into dst, a zero value of the
// current one.
type conv func(dst, src reflect.Value)

// NewMigration returns the migration from values written under schema old
// (SchemaOf's bytes) to T, or nil when old is T's schema and the Codec reads
// them as they are. Its errors name the field: "memory: migrate
// main.Acc: field Count: int64 in the snapshot, string now: incompatible".
func NewMigration[T any](old []byte) (*Migration[T], error) {
	t := reflect.TypeFor[T]()
	cur, err := schemaOf(t)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(cur, old) {
		return nil, nil
	}
	n, err := parseSchema(old)
	if err != nil {
		return nil, fmt.Errorf("memory: migrate %s: %w", t, err)
	}
	m := &Migration[T]{}
	if m.old, err = rebuild(n, t, ""); err != nil {
		return nil, err
	}
	if m.prog, err = programFor(m.old); err != nil {
		return nil, fmt.Errorf("memory: migrate %s: %w", t, err)
	}
	if m.conv, err = converter(n, t, t, ""); err != nil {
		return nil, err
	}
	return m, nil
}

// Decode reads one value of the old schema from the start of src into *v,
// overwriting all of it, and returns the number of bytes consumed.
func (m *Migration[T]) Decode(src []byte, v *T) (int, error) {
	old := reflect.New(m.old)
	d := decoder{src: src}
	if err := d.run(m.prog, old.UnsafePointer()); err != nil {
		return d.pos, fmt.Errorf("memory: decode %s at byte %d of %d: %v: %w", m.prog.name, d.pos, len(src), err, ErrCorrupt)
	}
	var zero T
	*v = zero
	m.conv(reflect.ValueOf(v).Elem(), old.Elem())
	return d.pos, nil
}

// maxRebuilt bounds the size of a type rebuilt from a schema, so that a
// damaged schema cannot make a restore allocate without bound.
const maxRebuilt = 1 << 26

var basicTypes = map[reflect.Kind]reflect.Type{
	reflect.Bool: reflect.TypeFor[bool](), reflect.Int: reflect.TypeFor[int](), reflect.Int8: reflect.TypeFor[int8](),
	reflect.Int16: reflect.TypeFor[int16](), reflect.Int32: reflect.TypeFor[int32](), reflect.Int64: reflect.TypeFor[int64](),
	reflect.Uint: reflect.TypeFor[uint](), reflect.Uint8: reflect.TypeFor[uint8](), reflect.Uint16: reflect.TypeFor[uint16](),
	reflect.Uint32: reflect.TypeFor[uint32](), reflect.Uint64: reflect.TypeFor[uint64](), reflect.Float32: reflect.TypeFor[float32](),
	reflect.Float64: reflect.TypeFor[float64](), reflect.Complex64: reflect.TypeFor[complex64](),
	reflect.Complex128: reflect.TypeFor[complex128](), reflect.String: reflect.TypeFor[string](),
}

// rebuild returns a type with n's layout: the codec reads the old bytes into
// it. Its struct fields are named F0, F1, ... (exported, so reflect reads
// them); names do not change a layout.
func rebuild(n *schemaNode, root reflect.Type, path string) (reflect.Type, error) {
	switch n.kind {
	case schemaTime:
		return timeType, nil
	case schemaRef:
		return nil, fmt.Errorf("memory: migrate %s: %s: a recursive type changed: %w", root, where(path), ErrIncompatible)
	case reflect.Array:
		e, err := rebuild(n.elem, root, path+"[]")
		if err != nil {
			return nil, err
		}
		if n.n > 0 && e.Size() > maxRebuilt/uintptr(n.n) {
			return nil, fmt.Errorf("memory: migrate %s: %s: %w: [%d]%s is larger than %d bytes", root, where(path), ErrSchema, n.n, e, maxRebuilt)
		}
		return reflect.ArrayOf(n.n, e), nil
	case reflect.Slice, reflect.Pointer:
		e, err := rebuild(n.elem, root, path+"[]")
		if err != nil {
			return nil, err
		}
		if n.kind == reflect.Slice {
			return reflect.SliceOf(e), nil
		}
		return reflect.PointerTo(e), nil
	case reflect.Struct:
		fs := make([]reflect.StructField, len(n.fields))
		for i, f := range n.fields {
			ft, err := rebuild(f.node, root, joinPath(path, f.name))
			if err != nil {
				return nil, err
			}
			fs[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: ft}
		}
		var size uintptr
		for _, f := range fs {
			if size += f.Type.Size(); size > maxRebuilt {
				return nil, fmt.Errorf("memory: migrate %s: %s: %w: a struct larger than %d bytes", root, where(path), ErrSchema, maxRebuilt)
			}
		}
		return reflect.StructOf(fs), nil
	}
	return basicTypes[n.kind], nil
}

func where(path string) string {
	if path == "" {
		return "the value"
	}
	return "field " + path
}

// converter compiles the copy from values of node n to values of type t.
func converter(n *schemaNode, t, root reflect.Type, path string) (conv, error) {
	incompatible := func() (conv, error) {
		var sb strings.Builder
		n.format(&sb)
		return nil, fmt.Errorf("memory: migrate %s: %s: %s in the snapshot, %s now: %w", root, where(path), sb.String(), t, ErrIncompatible)
	}
	if n.kind == schemaTime {
		if !isTime(t) {
			return incompatible()
		}
		return func(dst, src reflect.Value) { dst.Set(src.Convert(t)) }, nil
	}
	if isTime(t) || n.kind != t.Kind() {
		return incompatible()
	}
	switch n.kind {
	case reflect.Array:
		if n.n != t.Len() {
			return incompatible()
		}
		e, err := converter(n.elem, t.Elem(), root, path+"[]")
		if err != nil {
			return nil, err
		}
		return func(dst, src reflect.Value) {
			for i := 0; i < src.Len(); i++ {
				e(dst.Index(i), src.Index(i))
			}
		}, nil
	case reflect.Slice:
		e, err := converter(n.elem, t.Elem(), root, path+"[]")
		if err != nil {
			return nil, err
		}
		return func(dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			s := reflect.MakeSlice(t, src.Len(), src.Len())
			for i := 0; i < src.Len(); i++ {
				e(s.Index(i), src.Index(i))
			}
			dst.Set(s)
		}, nil
	case reflect.Pointer:
		e, err := converter(n.elem, t.Elem(), root, path)
		if err != nil {
			return nil, err
		}
		return func(dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			p := reflect.New(t.Elem())
			e(p.Elem(), src.Elem())
			dst.Set(p)
		}, nil
	case reflect.Struct:
		type step struct {
			from, to int
			conv     conv
		}
		var steps []step
		for j := 0; j < t.NumField(); j++ {
			f := t.Field(j)
			for i, of := range n.fields {
				if of.name != f.Name {
					continue
				}
				c, err := converter(of.node, f.Type, root, joinPath(path, f.Name))
				if err != nil {
					return nil, err
				}
				steps = append(steps, step{i, j, c})
			}
		}
		return func(dst, src reflect.Value) {
			for _, s := range steps {
				d := dst.Field(s.to)
				if !d.CanSet() { // unexported: the codec copies those too
					d = reflect.NewAt(d.Type(), unsafe.Pointer(d.UnsafeAddr())).Elem()
				}
				s.conv(d, src.Field(s.from))
			}
		}, nil
	}
	return func(dst, src reflect.Value) { dst.Set(src.Convert(t)) }, nil
}

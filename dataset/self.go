package dataset

import (
	"reflect"
	"unsafe"

	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/memory"
)

// Self is the key selector of the whole record, like Flink's "*" key
// expression: Sort(lines, Self[string], Ascending) sorts strings by their bytes.
//
// Any selector works, but Self lets Sort, SortPartition and the range
// partitioners store a string or []byte record once, as its own key, instead of
// once as the key and once more as the record: half the bytes to sort, spill and
// merge.
func Self[T any](v T) T { return v }

// isSelf reports whether sel is self, a non-generic instantiation of Self (in
// generic code Self[T] would be a different function value). It compares code
// pointers once, when the program is built.
func isSelf[T, K, S any](sel func(T) K, self func(S) S) bool {
	return sel != nil && reflect.ValueOf(sel).Pointer() == reflect.ValueOf(self).Pointer()
}

// newSortKeyer is newOrderedKeyer, except that sorting strings or byte slices
// ascending by Self gives a raw keyer: the key is the record's bytes (bytewise
// order is the order of a single string key, so no escaping is needed), and the
// sort keeps no separate copy of the record. A raw key is only ever compared with
// keys from the same keyer.
func newSortKeyer[T, K any](sel func(T) K, o Order) (*keyer[T], error) {
	k, err := typed.NewOrderedKeyer(sel, o)
	if err != nil || o != Ascending {
		return k, err
	}
	var zero T
	switch any(zero).(type) {
	case string:
		if !isSelf(sel, Self[string]) {
			return k, nil
		}
		k.Raw = func(v *T) []byte {
			s := *(*string)(unsafe.Pointer(v))
			return unsafe.Slice(unsafe.StringData(s), len(s))
		}
		k.FromRaw = func(b []byte, a *memory.Arena) T {
			var s string
			if a == nil { // b is the record's memory
				s = unsafe.String(unsafe.SliceData(b), len(b))
			} else {
				s = a.String(b)
			}
			return *(*T)(unsafe.Pointer(&s))
		}
	case []byte:
		if !isSelf(sel, Self[[]byte]) {
			return k, nil
		}
		k.Raw = func(v *T) []byte { return *(*[]byte)(unsafe.Pointer(v)) }
		k.FromRaw = func(b []byte, a *memory.Arena) T {
			if a != nil {
				b = a.Bytes(b)
			}
			return *(*T)(unsafe.Pointer(&b))
		}
	default:
		return k, nil
	}
	raw := k.Raw
	k.Append = func(dst []byte, v *T) []byte { return append(dst, raw(v)...) }
	return k, nil
}

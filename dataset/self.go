package dataset

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/memory"
)

// Self returns the key selector of the whole record, like Flink's "*" key
// expression: Sort(lines, Self[string](), Ascending) sorts strings by their
// bytes.
//
// Any selector works, but Self's lets Sort, SortPartition and the range
// partitioners store a string or []byte record once, as its own key, instead of
// once as the key and once more as the record: half the bytes to sort, spill and
// merge. They recognize the selector by its value, not its code: Self returns
// the same function value for each T, so it may be passed through generic code
// freely; a function of your own that returns its argument is an ordinary
// selector.
func Self[T any]() func(T) T {
	t := reflect.TypeFor[T]()
	if f, ok := selves.Load(t); ok {
		return f.(func(T) T)
	}
	f, _ := selves.LoadOrStore(t, func(v T) T { return v })
	return f.(func(T) T)
}

// selves holds Self's function value per record type.
var selves sync.Map // reflect.Type -> func(T) T

// isSelf reports whether sel is the function value Self returns for T: the
// same func value, compared by the pointer it holds, once, when the program is
// built.
func isSelf[T, K any](sel func(T) K) bool {
	f, ok := any(sel).(func(T) T)
	if !ok || f == nil {
		return false
	}
	self, ok := selves.Load(reflect.TypeFor[T]())
	if !ok {
		return false
	}
	g := self.(func(T) T)
	return *(*unsafe.Pointer)(unsafe.Pointer(&f)) == *(*unsafe.Pointer)(unsafe.Pointer(&g))
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
		if !isSelf(sel) {
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
		if !isSelf(sel) {
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

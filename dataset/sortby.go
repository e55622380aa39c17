package dataset

import (
	"strings"

	"github.com/weirdata/weir/internal/typed"
)

// SortKey is one part of a composite sort key: a selector and a direction.
type SortKey[T any] struct {
	k    *keyer[T]
	err  error
	typ  string // the part's key type
	desc bool
}

// By returns the sort key part sel in direction o, for SortBy and
// SortPartitionBy: SortBy(ds, By(revenue, Descending), By(date, Ascending)).
func By[T, K any](sel func(T) K, o Order) SortKey[T] {
	k, err := typed.NewOrderedKeyer[T, K](sel, o)
	return SortKey[T]{k: k, err: err, typ: typeName[K](), desc: o == Descending}
}

// SortBy is Sort on a composite key, most significant part first, each part in
// its own direction.
func SortBy[T any](ds *DataSet[T], keys ...SortKey[T]) *DataSet[T] {
	return sortByKeys(ds, keys, true, "SortBy at "+caller(1))
}

// SortPartitionBy is SortPartition on a composite key (see SortBy).
func SortPartitionBy[T any](ds *DataSet[T], keys ...SortKey[T]) *DataSet[T] {
	return sortByKeys(ds, keys, false, "SortPartitionBy at "+caller(1))
}

// sortByKeys sorts by the parts of keys. The optimizer sees one key whose
// type lists the parts' types ("(int64, string)") with a direction per part.
func sortByKeys[T any](ds *DataSet[T], keys []SortKey[T], total bool, where string) *DataSet[T] {
	parts := make([]*keyer[T], 0, len(keys))
	types := make([]string, 0, len(keys))
	desc := make([]bool, 0, len(keys))
	k := &keyer[T]{}
	for _, sk := range keys {
		if sk.err != nil {
			ds.env.fail(where, sk.err)
			parts = nil
			break
		}
		parts = append(parts, sk.k)
		types = append(types, sk.typ)
		desc = append(desc, sk.desc)
	}
	if parts != nil {
		k.Append = func(dst []byte, v *T) []byte {
			for _, p := range parts {
				dst = p.Append(dst, v)
			}
			return dst
		}
	}
	out := sortByKeyer(ds, k, total, where)
	sortFacts(out.n, "("+strings.Join(types, ", ")+")", desc)
	return out
}

package dataset

// SortKey is one part of a composite sort key: a selector and a direction.
type SortKey[T any] struct {
	k   *keyer[T]
	err error
}

// By returns the sort key part sel in direction o, for SortBy and
// SortPartitionBy: SortBy(ds, By(revenue, Descending), By(date, Ascending)).
func By[T, K any](sel func(T) K, o Order) SortKey[T] {
	k, err := newOrderedKeyer[T, K](sel, o)
	return SortKey[T]{k: k, err: err}
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

func sortByKeys[T any](ds *DataSet[T], keys []SortKey[T], total bool, where string) *DataSet[T] {
	parts := make([]*keyer[T], 0, len(keys))
	for _, k := range keys {
		if k.err != nil {
			ds.env.fail(where, k.err)
			return sortByKeyer(ds, &keyer[T]{}, total, where)
		}
		parts = append(parts, k.k)
	}
	return sortByKeyer(ds, &keyer[T]{append: func(dst []byte, v *T) []byte {
		for _, p := range parts {
			dst = p.append(dst, v)
		}
		return dst
	}}, total, where)
}

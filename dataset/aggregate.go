package dataset

import "github.com/weirdata/weir/dataset/agg"

// KV is a key with a value: the result of an aggregation per key.
type KV[K, V any] struct {
	Key   K
	Value V
}

// Aggregate computes the aggregate function fn (agg.Sum, agg.Count, ...) over
// each group and emits one KV per key. The key fields named with On name the
// fields of KV.Key.
func Aggregate[T, K, A any](g *Grouping[T, K], fn agg.Func[T, A]) *DataSet[KV[K, A]] {
	sel := g.sel
	kv := Map(g.ds, func(v T) KV[K, A] { return KV[K, A]{Key: sel(v), Value: fn.Init(v)} })
	kv.n.opt.Name = "Aggregate (init) at " + caller(1)
	byKey := GroupBy(kv, func(p KV[K, A]) K { return p.Key })
	byKey.keys = g.keys
	out := reduce(byKey, func(a, b KV[K, A]) KV[K, A] { return KV[K, A]{Key: a.Key, Value: fn.Merge(a.Value, b.Value)} },
		"Aggregate at "+caller(1))
	kv.n.keysOf = out.n // the init map copies the key fields into KV.Key
	return out
}

// AggregateAll computes the aggregate function fn over the whole data set: one
// record (none for an empty input). Each subtask aggregates its part; one
// subtask merges them.
func AggregateAll[T, A any](ds *DataSet[T], fn agg.Func[T, A]) *DataSet[A] {
	one := Map(ds, fn.Init)
	one.n.opt.Name = "AggregateAll (init) at " + caller(1)
	return reduce(GroupBy(one, func(A) bool { return true }), fn.Merge, "AggregateAll at "+caller(1))
}

// Distinct keeps one record per key.
func Distinct[T, K any](ds *DataSet[T], key func(T) K) *DataSet[T] {
	r := reduce(GroupBy(ds, key), func(a, _ T) T { return a }, "Distinct at "+caller(1))
	r.n.opt.PreservesAll = true // it emits input records
	return r
}

package dataset

import "cmp"

// KV is a key with a value: the result of an aggregation per key.
type KV[K, V any] struct {
	Key   K
	Value V
}

// Agg is an aggregation of records of T into an accumulator of A: Init makes
// the accumulator of one record, Merge combines two (associatively and
// commutatively). Sum, Min, Max, Count and Avg build the usual ones; a struct
// accumulator with its own Init and Merge computes several at once.
type Agg[T, A any] struct {
	Init  func(T) A
	Merge func(a, b A) A
}

// Number is what Sum, Min, Max and Avg aggregate.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Sum adds up f over the records.
func Sum[T any, N Number](f func(T) N) Agg[T, N] {
	return Agg[T, N]{Init: f, Merge: func(a, b N) N { return a + b }}
}

// Adder is a value type with an Add method, such as parquet.Decimal.
type Adder[A any] interface {
	Add(A) A
}

// SumOf adds up f over the records with A's Add method: sums of exact decimals
// (parquet.Decimal) or any other number type of your own.
func SumOf[T any, A Adder[A]](f func(T) A) Agg[T, A] {
	return Agg[T, A]{Init: f, Merge: func(a, b A) A { return a.Add(b) }}
}

// Min is the least f over the records.
func Min[T any, N cmp.Ordered](f func(T) N) Agg[T, N] {
	return Agg[T, N]{Init: f, Merge: func(a, b N) N { return min(a, b) }}
}

// Max is the greatest f over the records.
func Max[T any, N cmp.Ordered](f func(T) N) Agg[T, N] {
	return Agg[T, N]{Init: f, Merge: func(a, b N) N { return max(a, b) }}
}

// CountOf counts the records.
func CountOf[T any]() Agg[T, int64] {
	return Agg[T, int64]{Init: func(T) int64 { return 1 }, Merge: func(a, b int64) int64 { return a + b }}
}

// Mean is an average's accumulator: its value is Sum / Count.
type Mean struct {
	Sum   float64
	Count int64
}

// Value returns the average, NaN for no records.
func (m Mean) Value() float64 { return m.Sum / float64(m.Count) }

// Avg averages f over the records.
func Avg[T any, N Number](f func(T) N) Agg[T, Mean] {
	return Agg[T, Mean]{
		Init:  func(v T) Mean { return Mean{Sum: float64(f(v)), Count: 1} },
		Merge: func(a, b Mean) Mean { return Mean{a.Sum + b.Sum, a.Count + b.Count} },
	}
}

// MinBy keeps, per group, the record with the least f (Flink's minBy); ties keep
// either.
func MinBy[T any, N cmp.Ordered](f func(T) N) Agg[T, T] {
	return Agg[T, T]{Init: func(v T) T { return v }, Merge: func(a, b T) T {
		if f(b) < f(a) {
			return b
		}
		return a
	}}
}

// MaxBy keeps, per group, the record with the greatest f.
func MaxBy[T any, N cmp.Ordered](f func(T) N) Agg[T, T] {
	return Agg[T, T]{Init: func(v T) T { return v }, Merge: func(a, b T) T {
		if f(b) > f(a) {
			return b
		}
		return a
	}}
}

// Aggregate computes agg over each group and emits one KV per key. The key
// fields named with On name the fields of KV.Key.
func Aggregate[T, K, A any](g *Grouping[T, K], agg Agg[T, A]) *DataSet[KV[K, A]] {
	sel := g.sel
	kv := Map(g.ds, func(v T) KV[K, A] { return KV[K, A]{Key: sel(v), Value: agg.Init(v)} })
	kv.n.opt.Name = "Aggregate (init) at " + caller(1)
	byKey := GroupBy(kv, func(p KV[K, A]) K { return p.Key })
	byKey.keys = g.keys
	out := reduce(byKey, func(a, b KV[K, A]) KV[K, A] { return KV[K, A]{Key: a.Key, Value: agg.Merge(a.Value, b.Value)} },
		"Aggregate at "+caller(1))
	kv.n.keysOf = out.n // the init map copies the key fields into KV.Key
	return out
}

// AggregateAll computes agg over the whole data set: one record (none for an
// empty input). Each subtask aggregates its part; one subtask merges them.
func AggregateAll[T, A any](ds *DataSet[T], agg Agg[T, A]) *DataSet[A] {
	one := Map(ds, agg.Init)
	one.n.opt.Name = "AggregateAll (init) at " + caller(1)
	return reduce(GroupBy(one, func(A) bool { return true }), agg.Merge, "AggregateAll at "+caller(1))
}

// Distinct keeps one record per key.
func Distinct[T, K any](ds *DataSet[T], key func(T) K) *DataSet[T] {
	r := reduce(GroupBy(ds, key), func(a, _ T) T { return a }, "Distinct at "+caller(1))
	r.n.opt.PreservesAll = true // it emits input records
	return r
}

// Package agg holds the aggregate functions of dataset.Aggregate and
// dataset.AggregateAll: agg.Sum, agg.Count, agg.Min, agg.Max, agg.Avg,
// agg.MinBy, agg.MaxBy and agg.SumAdder, and the Func type to write others.
//
//	perCountry := dataset.Aggregate(dataset.GroupBy(sales, country), agg.Sum(amount))
//
// A Func is a pair of plain functions that the engine runs in its combiners
// and aggregations, in any grouping and order of the records: Merge must be
// associative and commutative.
package agg

import "cmp"

// Func is an aggregate function of records of T into an accumulator of A:
// Init makes the accumulator of one record, Merge combines two
// (associatively and commutatively). A struct accumulator with its own Init and
// Merge computes several aggregates at once.
type Func[T, A any] struct {
	Init  func(T) A
	Merge func(a, b A) A
}

// Number is what Sum, Min, Max and Avg aggregate.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Sum adds up f over the records.
func Sum[T any, N Number](f func(T) N) Func[T, N] {
	return Func[T, N]{Init: f, Merge: func(a, b N) N { return a + b }}
}

// Adder is a value type with an Add method, such as parquet.Decimal.
type Adder[A any] interface {
	Add(A) A
}

// SumAdder adds up f over the records with A's Add method: sums of exact
// decimals (parquet.Decimal) or any other number type of your own.
func SumAdder[T any, A Adder[A]](f func(T) A) Func[T, A] {
	return Func[T, A]{Init: f, Merge: func(a, b A) A { return a.Add(b) }}
}

// Min is the least f over the records.
func Min[T any, N cmp.Ordered](f func(T) N) Func[T, N] {
	return Func[T, N]{Init: f, Merge: func(a, b N) N { return min(a, b) }}
}

// Max is the greatest f over the records.
func Max[T any, N cmp.Ordered](f func(T) N) Func[T, N] {
	return Func[T, N]{Init: f, Merge: func(a, b N) N { return max(a, b) }}
}

// Count counts the records.
func Count[T any]() Func[T, int64] {
	return Func[T, int64]{Init: func(T) int64 { return 1 }, Merge: func(a, b int64) int64 { return a + b }}
}

// Mean is an average's accumulator: its value is Sum / Count.
type Mean struct {
	Sum   float64
	Count int64
}

// Value returns the average, NaN for no records.
func (m Mean) Value() float64 { return m.Sum / float64(m.Count) }

// Avg averages f over the records.
func Avg[T any, N Number](f func(T) N) Func[T, Mean] {
	return Func[T, Mean]{
		Init:  func(v T) Mean { return Mean{Sum: float64(f(v)), Count: 1} },
		Merge: func(a, b Mean) Mean { return Mean{a.Sum + b.Sum, a.Count + b.Count} },
	}
}

// MinBy keeps, per group, the record with the least f (Flink's minBy); ties
// keep either.
func MinBy[T any, N cmp.Ordered](f func(T) N) Func[T, T] {
	return Func[T, T]{Init: func(v T) T { return v }, Merge: func(a, b T) T {
		if f(b) < f(a) {
			return b
		}
		return a
	}}
}

// MaxBy keeps, per group, the record with the greatest f; ties keep either.
func MaxBy[T any, N cmp.Ordered](f func(T) N) Func[T, T] {
	return Func[T, T]{Init: func(v T) T { return v }, Merge: func(a, b T) T {
		if f(b) > f(a) {
			return b
		}
		return a
	}}
}

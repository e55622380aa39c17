package stream

import (
	"cmp"
	"fmt"
)

// Number is what Sum adds.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Sum is the rolling sum of a field per key, read by get and written by
// set: as Flink's sum(field), the result is the key's first record with
// the field replaced by the running sum.
func Sum[T any, K comparable, N Number](ks KeyedStream[T, K], get func(T) N, set func(*T, N)) DataStream[T] {
	if get == nil || set == nil {
		ks.ds.env.fail(caller(1), fmt.Errorf("Sum: nil field function"))
		return reduce(ks, "Sum", func(acc, _ T) T { return acc })
	}
	return reduceWith(ks, "Sum", sumFn(get, set))
}

// sumFn makes Sum's reduce function per subtask: set writes through a
// pointer, one per subtask, not per record.
func sumFn[T any, N Number](get func(T) N, set func(*T, N)) func() func(acc, v T) T {
	return func() func(acc, v T) T {
		p := new(T)
		return func(acc, v T) T {
			*p = acc
			set(p, get(acc)+get(v))
			return *p
		}
	}
}

// Min is the rolling minimum of a field per key: the key's first record
// with the field replaced by the minimum so far (Flink's min(field)).
func Min[T any, K comparable, N cmp.Ordered](ks KeyedStream[T, K], get func(T) N, set func(*T, N)) DataStream[T] {
	if get == nil || set == nil {
		ks.ds.env.fail(caller(1), fmt.Errorf("Min: nil field function"))
		return reduce(ks, "Min", func(acc, _ T) T { return acc })
	}
	return reduceWith(ks, "Min", minFn(get, set))
}

func minFn[T any, N cmp.Ordered](get func(T) N, set func(*T, N)) func() func(acc, v T) T {
	return func() func(acc, v T) T {
		p := new(T)
		return func(acc, v T) T {
			if x := get(v); x < get(acc) {
				*p = acc
				set(p, x)
				return *p
			}
			return acc
		}
	}
}

// Max is the rolling maximum of a field per key: the key's first record
// with the field replaced by the maximum so far (Flink's max(field)).
func Max[T any, K comparable, N cmp.Ordered](ks KeyedStream[T, K], get func(T) N, set func(*T, N)) DataStream[T] {
	if get == nil || set == nil {
		ks.ds.env.fail(caller(1), fmt.Errorf("Max: nil field function"))
		return reduce(ks, "Max", func(acc, _ T) T { return acc })
	}
	return reduceWith(ks, "Max", maxFn(get, set))
}

func maxFn[T any, N cmp.Ordered](get func(T) N, set func(*T, N)) func() func(acc, v T) T {
	return func() func(acc, v T) T {
		p := new(T)
		return func(acc, v T) T {
			if x := get(v); x > get(acc) {
				*p = acc
				set(p, x)
				return *p
			}
			return acc
		}
	}
}

// MinBy is the record with the smallest field per key so far; on ties the
// first such record stays (Flink's minBy(field)).
func MinBy[T any, K comparable, N cmp.Ordered](ks KeyedStream[T, K], get func(T) N) DataStream[T] {
	if get == nil {
		ks.ds.env.fail(caller(1), fmt.Errorf("MinBy: nil field function"))
		return reduce(ks, "MinBy", func(acc, _ T) T { return acc })
	}
	return reduce(ks, "MinBy", minByFn(get))
}

func minByFn[T any, N cmp.Ordered](get func(T) N) func(acc, v T) T {
	return func(acc, v T) T {
		if get(v) < get(acc) {
			return v
		}
		return acc
	}
}

// MaxBy is the record with the largest field per key so far; on ties the
// first such record stays (Flink's maxBy(field)).
func MaxBy[T any, K comparable, N cmp.Ordered](ks KeyedStream[T, K], get func(T) N) DataStream[T] {
	if get == nil {
		ks.ds.env.fail(caller(1), fmt.Errorf("MaxBy: nil field function"))
		return reduce(ks, "MaxBy", func(acc, _ T) T { return acc })
	}
	return reduce(ks, "MaxBy", maxByFn(get))
}

func maxByFn[T any, N cmp.Ordered](get func(T) N) func(acc, v T) T {
	return func(acc, v T) T {
		if get(v) > get(acc) {
			return v
		}
		return acc
	}
}

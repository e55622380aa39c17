package stream

import "cmp"

// Number is what Sum adds.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Sum is the rolling sum of a field per key, read by get and written by
// set: as Flink's sum(field), the result is the key's first record with
// the field replaced by the running sum.
func Sum[T any, K comparable, N Number](ks KeyedStream[T, K], get func(T) N, set func(*T, N)) DataStream[T] {
	return reduceWith(ks, "Sum", func() func(acc, v T) T {
		p := new(T) // set writes through a pointer: one per subtask, not per record
		return func(acc, v T) T {
			*p = acc
			set(p, get(acc)+get(v))
			return *p
		}
	})
}

// Min is the rolling minimum of a field per key: the key's first record
// with the field replaced by the minimum so far (Flink's min(field)).
func Min[T any, K comparable, N cmp.Ordered](ks KeyedStream[T, K], get func(T) N, set func(*T, N)) DataStream[T] {
	return reduceWith(ks, "Min", func() func(acc, v T) T {
		p := new(T)
		return func(acc, v T) T {
			if x := get(v); x < get(acc) {
				*p = acc
				set(p, x)
				return *p
			}
			return acc
		}
	})
}

// Max is the rolling maximum of a field per key: the key's first record
// with the field replaced by the maximum so far (Flink's max(field)).
func Max[T any, K comparable, N cmp.Ordered](ks KeyedStream[T, K], get func(T) N, set func(*T, N)) DataStream[T] {
	return reduceWith(ks, "Max", func() func(acc, v T) T {
		p := new(T)
		return func(acc, v T) T {
			if x := get(v); x > get(acc) {
				*p = acc
				set(p, x)
				return *p
			}
			return acc
		}
	})
}

// MinBy is the record with the smallest field per key so far; on ties the
// first such record stays (Flink's minBy(field)).
func MinBy[T any, K comparable, N cmp.Ordered](ks KeyedStream[T, K], get func(T) N) DataStream[T] {
	return reduce(ks, "MinBy", func(acc, v T) T {
		if get(v) < get(acc) {
			return v
		}
		return acc
	})
}

// MaxBy is the record with the largest field per key so far; on ties the
// first such record stays (Flink's maxBy(field)).
func MaxBy[T any, K comparable, N cmp.Ordered](ks KeyedStream[T, K], get func(T) N) DataStream[T] {
	return reduce(ks, "MaxBy", func(acc, v T) T {
		if get(v) > get(acc) {
			return v
		}
		return acc
	})
}

package stream

import (
	"cmp"
	"fmt"

	"github.com/weirdata/weir/stream/window"
)

// WindowSum sums a field per window, with Flink's field rules: the result
// is the window's first element with the field replaced by the sum.
func WindowSum[T any, K comparable, W window.Window, N Number](ws WindowedStream[T, K, W], get func(T) N, set func(*T, N)) DataStream[T] {
	if get == nil || set == nil {
		ws.ks.ds.env.fail(caller(1), fmt.Errorf("WindowSum: nil field function"))
		return windowed(ws, "Window(Sum)", reduceSpec[K, W](func() func(acc, v T) T { return func(acc, _ T) T { return acc } }), passThrough[K, W, T])
	}
	return windowed(ws, "Window(Sum)", reduceSpec[K, W](sumFn(get, set)), passThrough[K, W, T])
}

// WindowMin is the minimum of a field per window: the window's first
// element with the field replaced by the minimum.
func WindowMin[T any, K comparable, W window.Window, N cmp.Ordered](ws WindowedStream[T, K, W], get func(T) N, set func(*T, N)) DataStream[T] {
	if get == nil || set == nil {
		ws.ks.ds.env.fail(caller(1), fmt.Errorf("WindowMin: nil field function"))
		return windowed(ws, "Window(Min)", reduceSpec[K, W](func() func(acc, v T) T { return func(acc, _ T) T { return acc } }), passThrough[K, W, T])
	}
	return windowed(ws, "Window(Min)", reduceSpec[K, W](minFn(get, set)), passThrough[K, W, T])
}

// WindowMax is the maximum of a field per window: the window's first
// element with the field replaced by the maximum.
func WindowMax[T any, K comparable, W window.Window, N cmp.Ordered](ws WindowedStream[T, K, W], get func(T) N, set func(*T, N)) DataStream[T] {
	if get == nil || set == nil {
		ws.ks.ds.env.fail(caller(1), fmt.Errorf("WindowMax: nil field function"))
		return windowed(ws, "Window(Max)", reduceSpec[K, W](func() func(acc, v T) T { return func(acc, _ T) T { return acc } }), passThrough[K, W, T])
	}
	return windowed(ws, "Window(Max)", reduceSpec[K, W](maxFn(get, set)), passThrough[K, W, T])
}

// WindowMinBy is the element with the smallest field per window, the
// first one on ties.
func WindowMinBy[T any, K comparable, W window.Window, N cmp.Ordered](ws WindowedStream[T, K, W], get func(T) N) DataStream[T] {
	if get == nil {
		ws.ks.ds.env.fail(caller(1), fmt.Errorf("WindowMinBy: nil field function"))
		get = func(T) N { var z N; return z }
	}
	fn := minByFn(get)
	return windowed(ws, "Window(MinBy)", reduceSpec[K, W](func() func(acc, v T) T { return fn }), passThrough[K, W, T])
}

// WindowMaxBy is the element with the largest field per window, the
// first one on ties.
func WindowMaxBy[T any, K comparable, W window.Window, N cmp.Ordered](ws WindowedStream[T, K, W], get func(T) N) DataStream[T] {
	if get == nil {
		ws.ks.ds.env.fail(caller(1), fmt.Errorf("WindowMaxBy: nil field function"))
		get = func(T) N { var z N; return z }
	}
	fn := maxByFn(get)
	return windowed(ws, "Window(MaxBy)", reduceSpec[K, W](func() func(acc, v T) T { return fn }), passThrough[K, W, T])
}

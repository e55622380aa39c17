package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
)

// ConnectedStreams are two streams, possibly of different types, read by
// one two-input operator (CoMap, CoFlatMap, CoProcess) that may share
// state between them.
type ConnectedStreams[A, B any] struct {
	a DataStream[A]
	b DataStream[B]
}

// Connect connects a and b.
func Connect[A, B any](a DataStream[A], b DataStream[B]) ConnectedStreams[A, B] {
	if a.env != b.env {
		a.env.fail(caller(1), fmt.Errorf("Connect: a stream of another program"))
	}
	return ConnectedStreams[A, B]{a: a, b: b}
}

// CoMap maps the records of the first stream with f1 and of the second
// with f2 into one stream; results keep their records' timestamps.
func CoMap[A, B, O any](cs ConnectedStreams[A, B], f1 func(A) O, f2 func(B) O) DataStream[O] {
	if f1 == nil || f2 == nil {
		cs.a.env.fail(caller(1), fmt.Errorf("CoMap: nil function"))
		return coFlatMap[A, B, O](cs, nil, nil, "CoMap")
	}
	return coFlatMap(cs,
		func(a A, emit func(O)) { emit(f1(a)) },
		func(b B, emit func(O)) { emit(f2(b)) }, "CoMap")
}

// CoFlatMap calls f1 for the records of the first stream and f2 for those
// of the second, each with an emit function.
func CoFlatMap[A, B, O any](cs ConnectedStreams[A, B], f1 func(A, func(O)), f2 func(B, func(O))) DataStream[O] {
	if f1 == nil || f2 == nil {
		cs.a.env.fail(caller(1), fmt.Errorf("CoFlatMap: nil function"))
	}
	return coFlatMap(cs, f1, f2, "CoFlatMap")
}

func coFlatMap[A, B, O any](cs ConnectedStreams[A, B], f1 func(A, func(O)), f2 func(B, func(O)), kind string) DataStream[O] {
	n := addNode[O](cs.a.env, "CoFlatMap", kind, cs.a.edge(), cs.b.edge())
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		o := op.NewCoFlatMap(f1, f2, core.OutOf[O](outs, ""), b.BatchSize())
		return o.Inputs(), o, nil
	}
	return stream[O](cs.a.env, n)
}

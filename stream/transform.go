package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
)

// Map applies fn to every record; the result keeps the record's timestamp.
func Map[T, U any](ds DataStream[T], fn func(T) U) DataStream[U] {
	n := addNode[U](ds.env, "Map", "Map", ds.edge())
	if fn == nil {
		ds.env.fail(caller(1), fmt.Errorf("Map: nil function"))
	}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		o := op.NewMap(fn, core.OutOf[U](outs, ""), b.BatchSize())
		return []any{o}, o, nil
	}
	return stream[U](ds.env, n)
}

// Filter keeps the records for which keep returns true.
func (ds DataStream[T]) Filter(keep func(T) bool) DataStream[T] {
	n := addNode[T](ds.env, "Filter", "Filter", ds.edge())
	if keep == nil {
		ds.env.fail(caller(1), fmt.Errorf("Filter: nil function"))
	}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		o := op.NewFilter(keep, core.OutOf[T](outs, ""), b.BatchSize())
		return []any{o}, o, nil
	}
	return stream[T](ds.env, n)
}

// FlatMap calls fn for every record with an emit function; everything it
// emits keeps the record's timestamp.
func FlatMap[T, U any](ds DataStream[T], fn func(v T, emit func(U))) DataStream[U] {
	n := addNode[U](ds.env, "FlatMap", "FlatMap", ds.edge())
	if fn == nil {
		ds.env.fail(caller(1), fmt.Errorf("FlatMap: nil function"))
	}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		o := op.NewFlatMap(fn, core.OutOf[U](outs, ""), b.BatchSize())
		return []any{o}, o, nil
	}
	return stream[U](ds.env, n)
}

// Union merges ds with others of the same type into one stream, in no
// particular order between them.
func (ds DataStream[T]) Union(others ...DataStream[T]) DataStream[T] {
	ins := []*graph.Edge{ds.edge()}
	for _, o := range others {
		if o.env != ds.env {
			ds.env.fail(caller(1), fmt.Errorf("Union: a stream of another program"))
			continue
		}
		ins = append(ins, o.edge())
	}
	n := addNode[T](ds.env, "Union", "Union", ins...)
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		o := &op.Union[T]{Out: core.OutOf[T](outs, "")}
		ins := make([]any, len(n.Inputs))
		for i := range ins {
			ins[i] = o
		}
		return ins, o, nil
	}
	return stream[T](ds.env, n)
}

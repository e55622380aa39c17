package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
)

// RichMapFunction is Flink's RichMapFunction: Map is called per record,
// and the job fails with the error it returns; Open, when set, once
// before any record with the function's RuntimeContext (its subtask and
// metric group); Close, when set, once at the end, on every path.
type RichMapFunction[T, U any] struct {
	Open  func(rc *RuntimeContext) error
	Map   func(v T) (U, error)
	Close func() error
}

// RichFlatMapFunction is Flink's RichFlatMapFunction: FlatMap is called
// per record with a collector, whose records keep the record's timestamp;
// Open and Close as RichMapFunction's.
type RichFlatMapFunction[T, U any] struct {
	Open    func(rc *RuntimeContext) error
	FlatMap func(v T, out Collector[U]) error
	Close   func() error
}

// RichFilterFunction is Flink's RichFilterFunction: Filter says per
// record whether to keep it; Open and Close as RichMapFunction's.
type RichFilterFunction[T any] struct {
	Open   func(rc *RuntimeContext) error
	Filter func(v T) (bool, error)
	Close  func() error
}

// RichMap applies the function newFn returns (once per subtask) to every
// record; the result keeps the record's timestamp. Map takes a plain
// function and costs less; RichMap is for a function that opens, closes,
// fails or reads its RuntimeContext.
func RichMap[T, U any](ds DataStream[T], newFn func() RichMapFunction[T, U]) DataStream[U] {
	n := addNode[U](ds.env, "Map", "Map", ds.edge())
	if newFn == nil {
		ds.env.fail(caller(1), fmt.Errorf("RichMap: nil function"))
	}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		fn := newFn()
		if fn.Map == nil {
			return nil, nil, fmt.Errorf("RichMap: no Map function")
		}
		life := op.Lifecycle{Open: opener(fn.Open, newRuntimeContext(b)), Close: fn.Close}
		o := op.NewRichMap(life, fn.Map, core.OutOf[U](outs, ""), b.BatchSize())
		return []any{o}, o, nil
	}
	return stream[U](ds.env, n)
}

// RichFlatMap applies the function newFn returns (once per subtask) to
// every record; what it collects keeps the record's timestamp.
func RichFlatMap[T, U any](ds DataStream[T], newFn func() RichFlatMapFunction[T, U]) DataStream[U] {
	n := addNode[U](ds.env, "FlatMap", "FlatMap", ds.edge())
	if newFn == nil {
		ds.env.fail(caller(1), fmt.Errorf("RichFlatMap: nil function"))
	}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		fn := newFn()
		if fn.FlatMap == nil {
			return nil, nil, fmt.Errorf("RichFlatMap: no FlatMap function")
		}
		o := outputs[U](b, outs)
		st := newCtx(b, nil, o)
		life := op.Lifecycle{Open: opener(fn.Open, newRuntimeContext(b)), Close: fn.Close}
		m := op.NewRichFlatMap(life, fn.FlatMap, collector(o, st), st, o.Out)
		return []any{m}, m, nil
	}
	return stream[U](ds.env, n)
}

// RichFilter keeps the records for which the function newFn returns (once
// per subtask) says so.
func (ds DataStream[T]) RichFilter(newFn func() RichFilterFunction[T]) DataStream[T] {
	n := addNode[T](ds.env, "Filter", "Filter", ds.edge())
	if newFn == nil {
		ds.env.fail(caller(1), fmt.Errorf("RichFilter: nil function"))
	}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		fn := newFn()
		if fn.Filter == nil {
			return nil, nil, fmt.Errorf("RichFilter: no Filter function")
		}
		life := op.Lifecycle{Open: opener(fn.Open, newRuntimeContext(b)), Close: fn.Close}
		f := op.NewRichFilter(life, fn.Filter, core.OutOf[T](outs, ""), b.BatchSize())
		return []any{f}, f, nil
	}
	return stream[T](ds.env, n)
}

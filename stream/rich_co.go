package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
)

// RichCoMapFunction is Flink's RichCoMapFunction: Map1 is called per
// record of the first stream and Map2 per record of the second, and the
// job fails with the error either returns; Open, when set, once before any
// record with the function's RuntimeContext; Close, when set, once at the
// end, on every path.
type RichCoMapFunction[A, B, O any] struct {
	Open  func(rc *RuntimeContext) error
	Map1  func(a A) (O, error)
	Map2  func(b B) (O, error)
	Close func() error
}

// RichCoFlatMapFunction is Flink's RichCoFlatMapFunction: FlatMap1 is
// called per record of the first stream and FlatMap2 per record of the
// second, each with a collector whose records keep the record's
// timestamp; Open and Close as RichCoMapFunction's.
type RichCoFlatMapFunction[A, B, O any] struct {
	Open     func(rc *RuntimeContext) error
	FlatMap1 func(a A, out Collector[O]) error
	FlatMap2 func(b B, out Collector[O]) error
	Close    func() error
}

// RichCoMap maps the records of both streams with the function newFn
// returns (once per subtask); results keep their records' timestamps.
// CoMap takes plain functions and costs less.
func RichCoMap[A, B, O any](cs ConnectedStreams[A, B], newFn func() RichCoMapFunction[A, B, O]) DataStream[O] {
	if newFn == nil {
		cs.a.env.fail(caller(1), fmt.Errorf("RichCoMap: nil function"))
	}
	return richCoFlatMap(cs, "CoMap", func() (RichCoFlatMapFunction[A, B, O], error) {
		fn := newFn()
		if fn.Map1 == nil || fn.Map2 == nil {
			return RichCoFlatMapFunction[A, B, O]{}, fmt.Errorf("RichCoMap: no Map1 or Map2 function")
		}
		return RichCoFlatMapFunction[A, B, O]{Open: fn.Open, Close: fn.Close,
			FlatMap1: func(a A, out Collector[O]) error {
				o, err := fn.Map1(a)
				if err == nil {
					out.Collect(o)
				}
				return err
			},
			FlatMap2: func(b B, out Collector[O]) error {
				o, err := fn.Map2(b)
				if err == nil {
					out.Collect(o)
				}
				return err
			}}, nil
	})
}

// RichCoFlatMap calls the function newFn returns (once per subtask) for
// the records of both streams.
func RichCoFlatMap[A, B, O any](cs ConnectedStreams[A, B], newFn func() RichCoFlatMapFunction[A, B, O]) DataStream[O] {
	if newFn == nil {
		cs.a.env.fail(caller(1), fmt.Errorf("RichCoFlatMap: nil function"))
	}
	return richCoFlatMap(cs, "CoFlatMap", func() (RichCoFlatMapFunction[A, B, O], error) {
		fn := newFn()
		if fn.FlatMap1 == nil || fn.FlatMap2 == nil {
			return fn, fmt.Errorf("RichCoFlatMap: no FlatMap1 or FlatMap2 function")
		}
		return fn, nil
	})
}

func richCoFlatMap[A, B, O any](cs ConnectedStreams[A, B], kind string, newFn func() (RichCoFlatMapFunction[A, B, O], error)) DataStream[O] {
	n := addNode[O](cs.a.env, "CoFlatMap", kind, cs.a.edge(), cs.b.edge())
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		fn, err := newFn()
		if err != nil {
			return nil, nil, err
		}
		o := outputs[O](b, outs)
		st := newCtx(b, nil, o)
		life := op.Lifecycle{Open: opener(fn.Open, newRuntimeContext(b)), Close: fn.Close}
		m := op.NewRichCoFlatMap(life, fn.FlatMap1, fn.FlatMap2, collector(o, st), st, o.Out)
		return m.Inputs(), m, nil
	}
	return stream[O](cs.a.env, n)
}

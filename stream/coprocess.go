package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
)

// CoProcessFunction is Flink's CoProcessFunction: ProcessElement1 is
// called for the records of the first stream, ProcessElement2 for those
// of the second; Open, when set, once before, with the function's
// RuntimeContext; Close, when set, once at the end.
type CoProcessFunction[A, B, O any] struct {
	Open            func(rc *RuntimeContext) error
	ProcessElement1 func(v A, ctx *Context, out Collector[O]) error
	ProcessElement2 func(v B, ctx *Context, out Collector[O]) error
	Close           func() error
	// NotifyCheckpointComplete and NotifyCheckpointAborted, when set, are
	// Flink's CheckpointListener, as ProcessFunction's.
	NotifyCheckpointComplete func(checkpointID int64) error
	NotifyCheckpointAborted  func(checkpointID int64) error
}

// CoProcess applies the function newFn returns (once per subtask) to the
// records of both streams.
func CoProcess[A, B, O any](cs ConnectedStreams[A, B], newFn func() CoProcessFunction[A, B, O]) DataStream[O] {
	n := addNode[O](cs.a.env, "CoProcess", "CoProcess", cs.a.edge(), cs.b.edge())
	if newFn == nil {
		cs.a.env.fail(caller(1), fmt.Errorf("CoProcess: nil function"))
	}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		fn := newFn()
		if fn.ProcessElement1 == nil || fn.ProcessElement2 == nil {
			return nil, nil, fmt.Errorf("CoProcess: ProcessElement1 and ProcessElement2 are needed")
		}
		o := outputs[O](b, outs)
		st := newCtx(b, nil, o)
		rc := newRuntimeContext(b)
		p := op.NewCoProcess(op.CoProcessFns[A, B, *Context, Collector[O]]{Open: opener(fn.Open, rc), ProcessElement1: fn.ProcessElement1,
			ProcessElement2: fn.ProcessElement2, Close: fn.Close,
			CheckpointComplete: fn.NotifyCheckpointComplete, CheckpointAborted: fn.NotifyCheckpointAborted},
			&Context{c: st, rc: rc}, collector(o, st), st, o)
		return p.Inputs(), p, nil
	}
	return stream[O](cs.a.env, n)
}

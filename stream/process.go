package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/state"
)

// ProcessFunction is Flink's ProcessFunction on a non-keyed stream:
// ProcessElement is called per record with its Context (timestamp,
// watermark, processing time, side outputs); Open, when set, once before,
// with the function's RuntimeContext (its subtask, metric group ...);
// Close, when set, once at the end, on every path.
//
// A function that keeps operator (non-keyed) state sets InitializeState and
// SnapshotState, Flink's CheckpointedFunction: InitializeState is called once
// per subtask before Open with the subtask's operator state store, restored
// when the job restores (restored says so); the function registers its
// states there (state.GetOperatorListState, state.GetUnionListState,
// state.GetBroadcastState) and reads what they hold. SnapshotState is called
// when a checkpoint snapshots the subtask, before the store is written: the
// function brings its states up to date.
type ProcessFunction[I, O any] struct {
	Open            func(rc *RuntimeContext) error
	ProcessElement  func(v I, ctx *Context, out Collector[O]) error
	Close           func() error
	InitializeState func(store *state.OperatorStore, restored bool) error
	SnapshotState   func(checkpointID int64) error
	// NotifyCheckpointComplete and NotifyCheckpointAborted, when set, are
	// Flink's CheckpointListener: called on the subtask's goroutine, between
	// records, once checkpoint checkpointID completed (every task
	// acknowledged it and it is stored) or was aborted. A notification may
	// be missed, after a failure or when the next checkpoint completes
	// first: a completed checkpoint stands for the earlier ones too.
	NotifyCheckpointComplete func(checkpointID int64) error
	NotifyCheckpointAborted  func(checkpointID int64) error
}

// Process applies the function newFn returns to every record of ds;
// newFn is called once per subtask.
func Process[I, O any](ds DataStream[I], newFn func() ProcessFunction[I, O]) DataStream[O] {
	n := addNode[O](ds.env, "Process", "Process", ds.edge())
	if newFn == nil {
		ds.env.fail(caller(1), fmt.Errorf("Process: nil function"))
	}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		fn := newFn()
		if fn.ProcessElement == nil {
			return nil, nil, fmt.Errorf("Process: no ProcessElement")
		}
		o := outputs[O](b, outs)
		st := newCtx(b, nil, o)
		rc := newRuntimeContext(b)
		p := op.NewProcess(op.ProcessFns[I, *Context, Collector[O]]{Open: opener(fn.Open, rc), ProcessElement: fn.ProcessElement,
			Close: fn.Close, InitializeState: fn.InitializeState, SnapshotState: fn.SnapshotState,
			CheckpointComplete: fn.NotifyCheckpointComplete, CheckpointAborted: fn.NotifyCheckpointAborted},
			&Context{c: st, rc: rc}, collector(o, st), st, o)
		return []any{p}, p, nil
	}
	return stream[O](ds.env, n)
}

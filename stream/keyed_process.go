package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
)

// KeyedProcessFunction is Flink's KeyedProcessFunction: ProcessElement is
// called per record with the record's key current, OnTimer per firing
// timer with the timer's key current; Open, when set, once before any
// record with the function's KeyedRuntimeContext, to get keyed state
// (GetState(rc, desc) and its siblings) and metrics; Close, when set, once
// at the end, on every path.
type KeyedProcessFunction[K comparable, I, O any] struct {
	Open           func(rc *KeyedRuntimeContext[K]) error
	ProcessElement func(v I, ctx *KeyedContext[K], out Collector[O]) error
	OnTimer        func(ts int64, ctx *KeyedContext[K], out Collector[O]) error
	Close          func() error
	// NotifyCheckpointComplete and NotifyCheckpointAborted, when set, are
	// Flink's CheckpointListener, as ProcessFunction's; no key is current.
	NotifyCheckpointComplete func(checkpointID int64) error
	NotifyCheckpointAborted  func(checkpointID int64) error
}

// KeyedProcess applies the function newFn returns to every record of ks;
// newFn is called once per subtask, as Flink has a function instance per
// parallel instance, so the state handles a function keeps are its
// subtask's. Records emitted from an event-time timer carry the timer's
// time; from a processing-time timer, no timestamp.
func KeyedProcess[I any, K comparable, O any](ks KeyedStream[I, K], newFn func() KeyedProcessFunction[K, I, O]) DataStream[O] {
	n := addKeyed[O](ks, "KeyedProcess", "KeyedProcess")
	if newFn == nil {
		ks.ds.env.fail(caller(1), fmt.Errorf("KeyedProcess: nil function"))
	}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		fn := newFn()
		if fn.ProcessElement == nil {
			return nil, nil, fmt.Errorf("KeyedProcess: no ProcessElement")
		}
		p, _ := keyedProcess[I](b, outs, ks.key, fn.Open, op.KeyedProcessFns[I, *KeyedContext[K], Collector[O]]{
			ProcessElement: fn.ProcessElement, OnTimer: fn.OnTimer, Close: fn.Close,
			CheckpointComplete: fn.NotifyCheckpointComplete, CheckpointAborted: fn.NotifyCheckpointAborted})
		if b.Batch() {
			s := op.NewSortedInput[I, K](p, ks.key)
			return []any{s}, s, nil
		}
		return []any{p}, p, nil
	}
	return stream[O](ks.ds.env, n)
}

// keyedProcess makes the keyed process operator of fns, whose context is
// a KeyedContext, opened with open, and returns it with its context.
func keyedProcess[I any, K comparable, O any](b *graph.Build, outs map[string]any, key func(I) K, open func(*KeyedRuntimeContext[K]) error,
	fns op.KeyedProcessFns[I, *KeyedContext[K], Collector[O]]) (*op.KeyedProcess[I, K, O, *KeyedContext[K], Collector[O]], *KeyedContext[K]) {
	o := outputs[O](b, outs)
	kc := &op.KeyedCtx[K]{}
	kc.Ctx = *newCtx(b, nil, o)
	rc := newKeyedRuntimeContext(b, &kc.Backend)
	ctx := &KeyedContext[K]{Context: Context{c: &kc.Ctx, rc: &rc.RuntimeContext}, k: kc, rc: rc}
	if open != nil {
		fns.Open = func(*KeyedContext[K]) error { return open(rc) }
	}
	p := op.NewKeyedProcess(b.MaxParallelism, fns, key, ctx, collector(o, &kc.Ctx), kc, o)
	kc.WM = p.WM()
	return p, ctx
}

package stream

import (
	"errors"
	"fmt"
	"time"

	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/window"
)

// WindowedStream is a KeyedStream grouped into windows by an assigner, as
// Flink's WindowedStream: set its trigger, evictor, allowed lateness and
// late side output, then apply a window function (Reduce, WindowAggregate,
// WindowProcess and their combinations, WindowSum ...).
type WindowedStream[T any, K comparable, W window.Window] struct {
	ks       KeyedStream[T, K]
	assigner window.Assigner[W]
	trigger  window.Trigger[W]
	evictor  window.Evictor[W]
	lateness int64
	lateTag  *OutputTag[T]
	all      bool // WindowAll: one subtask
}

// Window groups ks into the windows a assigns (Flink's window(assigner));
// the trigger is the assigner's default until Trigger sets another.
func Window[T any, K comparable, W window.Window](ks KeyedStream[T, K], a window.Assigner[W]) WindowedStream[T, K, W] {
	if a == nil {
		ks.ds.env.fail(caller(1), errors.New("Window: nil window assigner"))
		return WindowedStream[T, K, W]{ks: ks}
	}
	if err := window.Err(a); err != nil {
		ks.ds.env.fail(caller(1), err)
		return WindowedStream[T, K, W]{ks: ks}
	}
	return WindowedStream[T, K, W]{ks: ks, assigner: a, trigger: a.DefaultTrigger()}
}

// WindowAll groups the whole stream ds into windows, in one subtask, as
// Flink's windowAll: a window function applied to it runs at parallelism 1.
func WindowAll[T any, W window.Window](ds DataStream[T], a window.Assigner[W]) WindowedStream[T, int32, W] {
	ws := Window(KeyBy(ds, allKey[T]), a)
	ws.all = true
	return ws
}

func allKey[T any](T) int32 { return 0 }

// CountWindow groups ks into windows of size elements per key (Flink's
// countWindow(size): global windows with a purging count trigger).
func CountWindow[T any, K comparable](ks KeyedStream[T, K], size int64) WindowedStream[T, K, window.GlobalWindow] {
	ws := Window[T, K, window.GlobalWindow](ks, window.GlobalWindows())
	t := window.CountTriggerOf[window.GlobalWindow](size)
	if err := t.Err(); err != nil {
		ks.ds.env.fail(caller(1), fmt.Errorf("CountWindow: %w", err))
		return ws
	}
	ws.trigger = window.PurgingTriggerOf[window.GlobalWindow](t)
	return ws
}

// CountWindowSlide groups ks into sliding windows of the last size
// elements per key, evaluated every slide elements (Flink's
// countWindow(size, slide): global windows, a count evictor of size and a
// count trigger of slide).
func CountWindowSlide[T any, K comparable](ks KeyedStream[T, K], size, slide int64) WindowedStream[T, K, window.GlobalWindow] {
	ws := Window[T, K, window.GlobalWindow](ks, window.GlobalWindows())
	t := window.CountTriggerOf[window.GlobalWindow](slide)
	if t.Err() != nil || size <= 0 {
		ks.ds.env.fail(caller(1), fmt.Errorf("CountWindowSlide: size %d, slide %d: both must be positive", size, slide))
		return ws
	}
	ws.trigger = t
	ws.evictor = window.CountEvictorOf[window.GlobalWindow](int(size))
	return ws
}

// Trigger sets the trigger. A merging assigner (sessions) needs a trigger
// that can merge.
func (ws WindowedStream[T, K, W]) Trigger(t window.Trigger[W]) WindowedStream[T, K, W] {
	if t == nil {
		ws.ks.ds.env.fail(caller(1), errors.New("Window: nil trigger"))
		return ws
	}
	if err := window.Err(t); err != nil {
		ws.ks.ds.env.fail(caller(1), err)
		return ws
	}
	if _, ok := ws.assigner.(window.MergingAssigner[W]); ok && !t.CanMerge() {
		ws.ks.ds.env.fail(caller(1), fmt.Errorf("Window: a merging window assigner cannot be used with a trigger that does not support merging"))
		return ws
	}
	ws.trigger = t
	return ws
}

// Evictor sets an evictor: the windows keep their elements, and the
// function (reduce, aggregate, process) runs over what the evictor leaves.
// When it leaves nothing, as in Flink's EvictingWindowOperator, a process
// function sees no elements, an aggregate gives the result of a new
// accumulator and a reduce gives the zero value of T (Flink's null).
func (ws WindowedStream[T, K, W]) Evictor(e window.Evictor[W]) WindowedStream[T, K, W] {
	if e == nil {
		ws.ks.ds.env.fail(caller(1), errors.New("Window: nil evictor"))
		return ws
	}
	ws.evictor = e
	return ws
}

// AllowedLateness keeps event-time windows for d after their end: an
// element arriving then is added and fires the window again; the window's
// state is dropped when the watermark passes its watermark.Max + d.
func (ws WindowedStream[T, K, W]) AllowedLateness(d time.Duration) WindowedStream[T, K, W] {
	if d < 0 {
		ws.ks.ds.env.fail(caller(1), errors.New("Window: the allowed lateness cannot be negative"))
		return ws
	}
	ws.lateness = d.Milliseconds()
	return ws
}

// SideOutputLateData sends the elements dropped as late (no window took
// them and their timestamp + allowed lateness is at or below the
// watermark) to side output tag, with their timestamps; read it with
// GetSideOutput on the window function's stream.
func (ws WindowedStream[T, K, W]) SideOutputLateData(tag OutputTag[T]) WindowedStream[T, K, W] {
	if tag.id == "" {
		ws.ks.ds.env.fail(caller(1), errors.New("Window: side output tag with an empty id"))
		return ws
	}
	ws.lateTag = &tag
	return ws
}

// Reduce reduces every window's elements to one value incrementally (one
// accumulator per key and window), emitted when the window fires with the
// window's watermark.Max.
func (ws WindowedStream[T, K, W]) Reduce(fn func(acc, v T) T) DataStream[T] {
	if fn == nil {
		ws.ks.ds.env.fail(caller(1), errors.New("Window: nil reduce function"))
	}
	return windowed(ws, "Window(Reduce)", reduceSpec[K, W](func() func(acc, v T) T { return fn }), passThrough[K, W, T])
}

// WindowAggregate aggregates every window's elements incrementally with
// agg (one accumulator per key and window) and emits the result when the
// window fires.
func WindowAggregate[T any, K comparable, W window.Window, ACC, R any](ws WindowedStream[T, K, W], agg state.AggregateFunction[T, ACC, R]) DataStream[R] {
	if agg == nil {
		ws.ks.ds.env.fail(caller(1), errors.New("Window: nil aggregate function"))
	}
	return windowed(ws, "Window(Aggregate)", aggSpec[K, W](agg), passThrough[K, W, R])
}

// WindowProcess keeps every window's elements and hands them to the
// function newFn returns (one per subtask) when the window fires.
func WindowProcess[T any, K comparable, W window.Window, O any](ws WindowedStream[T, K, W], newFn func() ProcessWindowFunction[K, W, T, O]) DataStream[O] {
	if newFn == nil {
		ws.ks.ds.env.fail(caller(1), errors.New("Window: nil process window function"))
	}
	return windowed(ws, "Window(Process)", func() windowSpec[K, W, T, T] {
		return windowSpec[K, W, T, T]{mk: op.Listing[K, W, T], fold: func(vs []T) []T { return vs }}
	}, newFn)
}

// WindowReduceProcess reduces incrementally and hands the window's one
// reduced value to the process function when the window fires.
func WindowReduceProcess[T any, K comparable, W window.Window, O any](ws WindowedStream[T, K, W], fn func(acc, v T) T, newFn func() ProcessWindowFunction[K, W, T, O]) DataStream[O] {
	if fn == nil || newFn == nil {
		ws.ks.ds.env.fail(caller(1), errors.New("Window: nil reduce or process window function"))
	}
	return windowed(ws, "Window(Reduce, Process)", reduceSpec[K, W](func() func(acc, v T) T { return fn }), newFn)
}

// WindowAggregateProcess aggregates incrementally and hands the window's
// one result to the process function when the window fires.
func WindowAggregateProcess[T any, K comparable, W window.Window, ACC, R, O any](ws WindowedStream[T, K, W], agg state.AggregateFunction[T, ACC, R], newFn func() ProcessWindowFunction[K, W, R, O]) DataStream[O] {
	if agg == nil || newFn == nil {
		ws.ks.ds.env.fail(caller(1), errors.New("Window: nil aggregate or process window function"))
	}
	return windowed(ws, "Window(Aggregate, Process)", aggSpec[K, W](agg), newFn)
}

// windowSpec is how a window operator instance keeps its windows: mk
// makes the incremental contents, fold turns a window's elements into the
// function's input when an evictor makes the window keep elements.
type windowSpec[K comparable, W window.Window, T, IN any] struct {
	mk   func(b *state.Backend[K]) (op.Contents[W, T, IN], error)
	fold func([]T) []IN
}

func reduceSpec[K comparable, W window.Window, T any](newFn func() func(acc, v T) T) func() windowSpec[K, W, T, T] {
	return func() windowSpec[K, W, T, T] {
		fn := newFn()
		return windowSpec[K, W, T, T]{mk: op.Reducing[K, W](fn), fold: foldReduce(fn)}
	}
}

func aggSpec[K comparable, W window.Window, T, ACC, R any](agg state.AggregateFunction[T, ACC, R]) func() windowSpec[K, W, T, R] {
	return func() windowSpec[K, W, T, R] {
		return windowSpec[K, W, T, R]{mk: op.Aggregating[K, W](agg), fold: foldAggregate(agg)}
	}
}

// windowed adds the window operator; newSpec and newFn are called once per
// subtask.
func windowed[T any, K comparable, W window.Window, IN, O any](ws WindowedStream[T, K, W], name string,
	newSpec func() windowSpec[K, W, T, IN], newFn func() ProcessWindowFunction[K, W, IN, O]) DataStream[O] {
	ks := ws.ks
	n := addKeyed[O](ks, name, name)
	if ws.all {
		n.Parallelism = 1
	}
	lateID := ""
	if ws.lateTag != nil {
		lateID = ws.lateTag.id
		graph.SidePort[T](n, lateID)
	}
	if ws.assigner == nil || newFn == nil {
		return stream[O](ks.ds.env, n)
	}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		spec := newSpec()
		fn := newFn()
		if fn.Process == nil {
			return nil, nil, fmt.Errorf("%s: no Process function", name)
		}
		o := outputs[O](b, outs)
		wc := &op.WindowCtx[K, W]{}
		wc.Ctx = *newCtx(b, nil, o)
		rc := newKeyedRuntimeContext(b, &wc.Backend)
		ctx := &WindowContext[K, W]{Context: Context{c: &wc.Ctx, rc: &rc.RuntimeContext}, w: wc, rc: rc}
		fns := op.WindowFns[K, IN, *WindowContext[K, W], Collector[O]]{Process: fn.Process, Clear: fn.Clear, Close: fn.Close}
		if open := fn.Open; open != nil {
			fns.Open = func(*WindowContext[K, W]) error { return open(rc) }
		}
		p := op.NewWindow(b.MaxParallelism, op.WindowSpec[T, K, W, IN]{Key: ks.key, Assigner: ws.assigner, Trigger: ws.trigger,
			Evictor: ws.evictor, Lateness: ws.lateness, LateID: lateID, Contents: spec.mk, Fold: spec.fold},
			fns,
			ctx, collector(o, &wc.Ctx), wc, o)
		wc.WM = p.WM()
		if b.Batch() {
			s := op.NewSortedInput[T, K](p, ks.key)
			return []any{s}, s, nil
		}
		return []any{p}, p, nil
	}
	return stream[O](ks.ds.env, n)
}

// ProcessWindowFunction is Flink's ProcessWindowFunction: Process is called
// per firing with the window's key, its context (the window, watermark,
// processing time, keyed state) and its contents (every element, or the
// one incremental result); what it collects carries the window's
// watermark.Max. Open, when set, is called once before any record with
// the function's KeyedRuntimeContext, to get state and metrics: global
// keyed state by descriptor (GetState(rc, desc) and its siblings), and
// per-window state with the window type as namespace (state.NewValue[K,
// W, V] of rc.Backend()) set to ctx.Window() before use.
// Clear, when set, is called when a window's state is dropped, to clear
// its per-window state. Close, when set, once at the end.
type ProcessWindowFunction[K comparable, W window.Window, IN, O any] struct {
	Open    func(rc *KeyedRuntimeContext[K]) error
	Process func(key K, ctx *WindowContext[K, W], elems []IN, out Collector[O]) error
	Clear   func(ctx *WindowContext[K, W]) error
	Close   func() error
}

// WindowContext is what a ProcessWindowFunction sees: the window, the
// watermark and processing time, the current key and keyed state; side
// outputs are emitted with it (Output).
type WindowContext[K comparable, W window.Window] struct {
	Context
	w  *op.WindowCtx[K, W]
	rc *KeyedRuntimeContext[K]
}

// RuntimeContext returns the function's KeyedRuntimeContext.
func (c *WindowContext[K, W]) RuntimeContext() *KeyedRuntimeContext[K] { return c.rc }

// Window returns the window being processed.
func (c *WindowContext[K, W]) Window() W { return c.w.W }

// CurrentKey returns the key of the window being processed.
func (c *WindowContext[K, W]) CurrentKey() K { return c.w.Backend.CurrentKey() }

// Backend returns the operator's keyed state backend.
func (c *WindowContext[K, W]) Backend() *state.Backend[K] { return c.w.Backend }

// passThrough emits the window's incremental result.
func passThrough[K comparable, W window.Window, T any]() ProcessWindowFunction[K, W, T, T] {
	return ProcessWindowFunction[K, W, T, T]{
		Process: func(_ K, _ *WindowContext[K, W], elems []T, out Collector[T]) error {
			for _, v := range elems {
				out.Collect(v)
			}
			return nil
		},
	}
}

// foldReduce reduces what an evictor left. An evictor that left nothing
// gives the function one zero value, as Flink's ReduceApplyWindowFunction
// hands its function a single null (Go's zero value stands for Java's
// null): a window reduce emits it.
func foldReduce[T any](fn func(acc, v T) T) func([]T) []T {
	return func(vs []T) []T {
		if len(vs) == 0 {
			var zero T
			return []T{zero}
		}
		acc := vs[0]
		for _, v := range vs[1:] {
			acc = fn(acc, v)
		}
		return []T{acc}
	}
}

// foldAggregate aggregates what an evictor left; an empty window gives
// the result of an empty accumulator, as Flink's AggregateApplyWindowFunction.
func foldAggregate[T, ACC, R any](agg state.AggregateFunction[T, ACC, R]) func([]T) []R {
	return func(vs []T) []R {
		acc := agg.CreateAccumulator()
		for _, v := range vs {
			acc = agg.Add(v, acc)
		}
		return []R{agg.GetResult(acc)}
	}
}

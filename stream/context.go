package stream

import (
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// Collector receives a function's output records; they carry the timestamp
// of the record (or timer) being processed.
type Collector[O any] interface {
	Collect(v O)
}

// TimeDomain says which timer fired.
type TimeDomain uint8

// The time domains of timers.
const (
	EventTime TimeDomain = iota
	ProcessingTime
)

// Context is what a ProcessFunction sees of the record it processes.
type Context struct {
	c  *op.Ctx
	rc *RuntimeContext
}

// RuntimeContext returns the function's RuntimeContext: its subtask,
// parallelism and metric group.
func (c *Context) RuntimeContext() *RuntimeContext { return c.rc }

// Timestamp returns the record's timestamp, false when it has none.
func (c *Context) Timestamp() (int64, bool) { return c.c.TS, c.c.TS != watermark.Min }

// CurrentWatermark returns the operator's current watermark.
func (c *Context) CurrentWatermark() int64 { return *c.c.WM }

// CurrentProcessingTime returns the processing time in milliseconds.
func (c *Context) CurrentProcessingTime() int64 { return c.c.Now() }

func (c *Context) context() *Context { return c }

// SideContext is a context that side outputs can be emitted from.
type SideContext interface{ context() *Context }

// KeyedContext is what a KeyedProcessFunction sees: the record's (or the
// timer's) key and timestamp, timers and keyed state.
type KeyedContext[K comparable] struct {
	Context
	k  *op.KeyedCtx[K]
	rc *KeyedRuntimeContext[K]
}

// RuntimeContext returns the function's KeyedRuntimeContext: its
// subtask, parallelism, metric group and keyed state by descriptor.
func (c *KeyedContext[K]) RuntimeContext() *KeyedRuntimeContext[K] { return c.rc }

// CurrentKey returns the key of the record or timer being processed.
func (c *KeyedContext[K]) CurrentKey() K { return c.k.Backend.CurrentKey() }

// Backend returns the operator's keyed state backend (the same as
// RuntimeContext().Backend()).
func (c *KeyedContext[K]) Backend() *state.Backend[K] { return c.k.Backend }

// TimeDomain says whether the firing timer is an event-time or a
// processing-time one (in OnTimer).
func (c *KeyedContext[K]) TimeDomain() TimeDomain { return TimeDomain(c.k.Domain) }

// RegisterEventTimeTimer registers an event-time timer at ts for the
// current key; it fires once the watermark reaches ts.
func (c *KeyedContext[K]) RegisterEventTimeTimer(ts int64) {
	c.k.Timers.RegisterEventTimeTimer(state.Void{}, ts)
}

// RegisterProcessingTimeTimer registers a processing-time timer at ts (ms)
// for the current key.
func (c *KeyedContext[K]) RegisterProcessingTimeTimer(ts int64) {
	c.k.Timers.RegisterProcessingTimeTimer(state.Void{}, ts)
}

// DeleteEventTimeTimer deletes the current key's event-time timer at ts.
func (c *KeyedContext[K]) DeleteEventTimeTimer(ts int64) {
	c.k.Timers.DeleteEventTimeTimer(state.Void{}, ts)
}

// DeleteProcessingTimeTimer deletes the current key's processing-time
// timer at ts.
func (c *KeyedContext[K]) DeleteProcessingTimeTimer(ts int64) {
	c.k.Timers.DeleteProcessingTimeTimer(state.Void{}, ts)
}

// outputs makes an operator's main emitter and an emitter per side output
// a stream reads.
func outputs[O any](b *graph.Build, outs map[string]any) *op.Outputs[O] {
	o := &op.Outputs[O]{Out: core.NewEmitter(core.OutOf[O](outs, ""), b.BatchSize()), Sides: map[string]any{}}
	n := b.Node
	for _, name := range n.Order[1:] {
		if out, ok := outs[name]; ok {
			e := n.Ports[name].Emitter(out, b.BatchSize())
			o.Sides[name] = e
			o.Flushers = append(o.Flushers, e.(core.Flusher))
		}
	}
	o.Flushers = append(o.Flushers, o.Out)
	return o
}

// newCtx returns the context state of an operator built by b, its
// watermark *wm (nil: the task's) and its outputs o.
func newCtx[O any](b *graph.Build, wm *int64, o *op.Outputs[O]) *op.Ctx {
	if wm == nil {
		wm = b.Watermark()
	}
	st := op.NewCtx(b.Runtime, wm, o.Sides)
	return &st
}

// opener returns the operator's call of open with rc, nil when open is.
func opener[R any](open func(R) error, rc R) func() error {
	if open == nil {
		return nil
	}
	return func() error { return open(rc) }
}

// collector returns the collector of o's main output with st's timestamp.
func collector[O any](o *op.Outputs[O], st *op.Ctx) Collector[O] {
	return &op.Collector[O]{E: o.Out, C: st}
}

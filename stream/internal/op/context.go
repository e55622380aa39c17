package op

import (
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// Ctx is what the context of a user function reads of the record (or
// timer) being processed; the operator sets TS before each call.
type Ctx struct {
	TS  int64
	WM  *int64
	Now func() int64
	// Sides holds a *core.Emitter[T] per side output a stream reads.
	Sides map[string]any
	// Unclaimed, when set, receives the side outputs no stream reads (a
	// test harness's capture): see task.Config.SideOutputs.
	Unclaimed func(id string, mk func() any) any
}

// NewCtx returns the context state of an operator of rt whose watermark
// is *wm, emitting side outputs with sides.
func NewCtx(rt *task.Runtime, wm *int64, sides map[string]any) Ctx {
	return Ctx{TS: watermark.Min, WM: wm, Now: rt.Now, Sides: sides, Unclaimed: rt.Config().SideOutputs}
}

// SideEmitter returns the emitter of side output id of type T, or nil
// when nothing reads it.
func SideEmitter[T any](c *Ctx, id string) *core.Emitter[T] {
	if e, ok := c.Sides[id].(*core.Emitter[T]); ok {
		return e
	}
	if c.Unclaimed == nil {
		return nil
	}
	out, ok := c.Unclaimed(id, func() any { return &core.Records[T]{} }).(core.Output[T])
	if !ok {
		return nil
	}
	e := core.NewEmitter(out, 1) // a batch of one: pushed at once
	if c.Sides == nil {
		c.Sides = map[string]any{}
	}
	c.Sides[id] = e
	return e
}

// KeyedCtx is what the context of a keyed user function reads: the
// record's state and the operator's keyed state and timers.
type KeyedCtx[K comparable] struct {
	Ctx
	Backend *state.Backend[K]
	Timers  *state.Timers[K, state.Void]
	// Domain is the time domain of the firing timer (OnTimer): 0 event
	// time, 1 processing time.
	Domain uint8
}

// Collector emits with its context's timestamp.
type Collector[O any] struct {
	E *core.Emitter[O]
	C *Ctx
}

// Collect emits v.
func (c *Collector[O]) Collect(v O) { c.E.Emit(v, c.C.TS) }

// Outputs are an operator's main emitter and the flushers of it and its
// side outputs.
type Outputs[O any] struct {
	Out      *core.Emitter[O]
	Sides    map[string]any
	Flushers []core.Flusher
}

// Flush flushes every output.
func (o *Outputs[O]) Flush() error { return core.FlushAll(o.Flushers) }

package stream

import (
	"github.com/weirdata/weir/stream/state"
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
	ts      int64
	wm      *int64
	now     func() int64
	sides   map[string]any // an *emitter[T] per side output read downstream
	harness *harnessRun    // in a test harness: side outputs are captured
}

func newContext(rt *taskRuntime, wm *int64, sides map[string]any) Context {
	clock := rt.clock
	return Context{wm: wm, now: func() int64 { return clock.Now().UnixMilli() }, sides: sides, harness: rt.harness}
}

// Timestamp returns the record's timestamp, false when it has none.
func (c *Context) Timestamp() (int64, bool) { return c.ts, c.ts != NoTimestamp }

// CurrentWatermark returns the operator's current watermark.
func (c *Context) CurrentWatermark() int64 { return *c.wm }

// CurrentProcessingTime returns the processing time in milliseconds.
func (c *Context) CurrentProcessingTime() int64 { return c.now() }

func (c *Context) context() *Context { return c }

// SideContext is a context that side outputs can be emitted from.
type SideContext interface{ context() *Context }

// KeyedContext is what a KeyedProcessFunction sees: the record's (or the
// timer's) key and timestamp, timers and keyed state.
type KeyedContext[K comparable] struct {
	Context
	backend *state.Backend[K]
	timers  *state.Timers[K, state.Void]
	domain  TimeDomain
}

// CurrentKey returns the key of the record or timer being processed.
func (c *KeyedContext[K]) CurrentKey() K { return c.backend.CurrentKey() }

// Backend returns the operator's keyed state backend: get states from it
// with the state package's descriptors (state.GetValueState and others),
// in the function's Open.
func (c *KeyedContext[K]) Backend() *state.Backend[K] { return c.backend }

// TimeDomain says whether the firing timer is an event-time or a
// processing-time one (in OnTimer).
func (c *KeyedContext[K]) TimeDomain() TimeDomain { return c.domain }

// RegisterEventTimeTimer registers an event-time timer at ts for the
// current key; it fires once the watermark reaches ts.
func (c *KeyedContext[K]) RegisterEventTimeTimer(ts int64) {
	c.timers.RegisterEventTimeTimer(state.Void{}, ts)
}

// RegisterProcessingTimeTimer registers a processing-time timer at ts (ms)
// for the current key.
func (c *KeyedContext[K]) RegisterProcessingTimeTimer(ts int64) {
	c.timers.RegisterProcessingTimeTimer(state.Void{}, ts)
}

// DeleteEventTimeTimer deletes the current key's event-time timer at ts.
func (c *KeyedContext[K]) DeleteEventTimeTimer(ts int64) {
	c.timers.DeleteEventTimeTimer(state.Void{}, ts)
}

// DeleteProcessingTimeTimer deletes the current key's processing-time
// timer at ts.
func (c *KeyedContext[K]) DeleteProcessingTimeTimer(ts int64) {
	c.timers.DeleteProcessingTimeTimer(state.Void{}, ts)
}

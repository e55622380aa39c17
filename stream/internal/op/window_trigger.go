package op

import (
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/window"
)

// triggerCtx is the window.TriggerContext and OnMergeContext of a window
// operator: bound to the current key (the backend's) and window w; its
// timers are the operator's, with the window as namespace, and its raw
// states are keyed state with the window as namespace.
type triggerCtx[K comparable, W window.Window] struct {
	op     *state.Backend[K]
	timers *state.Timers[K, W]
	now    func() int64
	w      W
	merged []W // OnMerge: the windows merged into w
	states map[string]*state.Value[K, W, []byte]
	raw    rawState[K, W]
	ints   map[string]*state.Value[K, W, int64]
	i64    int64State[K, W]
	err    error // the first failure to register a trigger state
	skip   bool  // the event-time timer to register is known registered
}

func (c *triggerCtx[K, W]) CurrentWatermark() int64      { return c.timers.CurrentWatermark() }
func (c *triggerCtx[K, W]) CurrentProcessingTime() int64 { return c.now() }
func (c *triggerCtx[K, W]) RegisterEventTimeTimer(ts int64) {
	if !c.skip {
		c.timers.RegisterEventTimeTimer(c.w, ts)
	}
}
func (c *triggerCtx[K, W]) RegisterProcessingTimeTimer(ts int64) {
	c.timers.RegisterProcessingTimeTimer(c.w, ts)
}
func (c *triggerCtx[K, W]) DeleteEventTimeTimer(ts int64) { c.timers.DeleteEventTimeTimer(c.w, ts) }
func (c *triggerCtx[K, W]) DeleteProcessingTimeTimer(ts int64) {
	c.timers.DeleteProcessingTimeTimer(c.w, ts)
}

// value returns the keyed state of trigger state name, registering it on
// first use; a registration error is kept in the backend's Err.
func (c *triggerCtx[K, W]) value(name string) *state.Value[K, W, []byte] {
	s, ok := c.states[name]
	if !ok {
		var err error
		s, err = state.NewValue[K, W, []byte](c.op, state.ValueDescriptor[[]byte]{Name: "trigger-" + name})
		if err != nil {
			if c.err == nil {
				c.err = err
			}
			return nil
		}
		c.states[name] = s
	}
	return s
}

func (c *triggerCtx[K, W]) RawState(name string) window.RawState {
	c.raw = rawState[K, W]{s: c.value(name), w: c.w}
	return &c.raw
}

func (c *triggerCtx[K, W]) MergeRawState(name string, merge func(acc, v []byte) ([]byte, error)) error {
	s := c.value(name)
	if s == nil {
		return nil
	}
	return mergeWindowState(s, c.w, c.merged, merge)
}

// mergeWindowState folds s's values in the merged windows into window w,
// clearing them there, as Flink's mergePartitionedState.
func mergeWindowState[K comparable, W window.Window, V any](s *state.Value[K, W, V], w W, merged []W, merge func(acc, v V) (V, error)) error {
	s.SetNamespace(w)
	acc, have := s.Value()
	for _, m := range merged {
		if m == w {
			continue
		}
		s.SetNamespace(m)
		v, ok := s.Value()
		if !ok {
			continue
		}
		s.Clear()
		if have {
			var err error
			if v, err = merge(acc, v); err != nil {
				return err
			}
		}
		acc, have = v, true
	}
	s.SetNamespace(w)
	if have {
		s.Update(acc)
	}
	return nil
}

// rawState is one trigger state of the current key in window w.
type rawState[K comparable, W window.Window] struct {
	s *state.Value[K, W, []byte]
	w W
}

func (r *rawState[K, W]) Get() ([]byte, bool) {
	if r.s == nil {
		return nil, false
	}
	r.s.SetNamespace(r.w)
	return r.s.Value()
}

func (r *rawState[K, W]) Update(b []byte) {
	if r.s != nil {
		r.s.SetNamespace(r.w)
		r.s.Update(b)
	}
}

func (r *rawState[K, W]) Clear() {
	if r.s != nil {
		r.s.SetNamespace(r.w)
		r.s.Clear()
	}
}

// int64Value returns the keyed state of int64 trigger state name.
func (c *triggerCtx[K, W]) int64Value(name string) *state.Value[K, W, int64] {
	s, ok := c.ints[name]
	if !ok {
		var err error
		s, err = state.NewValue[K, W, int64](c.op, state.ValueDescriptor[int64]{Name: "trigger-" + name})
		if err != nil {
			if c.err == nil {
				c.err = err
			}
			return nil
		}
		if c.ints == nil {
			c.ints = map[string]*state.Value[K, W, int64]{}
		}
		c.ints[name] = s
	}
	return s
}

func (c *triggerCtx[K, W]) Int64State(name string) window.Int64State {
	c.i64 = int64State[K, W]{s: c.int64Value(name), w: c.w}
	return &c.i64
}

func (c *triggerCtx[K, W]) MergeInt64State(name string, merge func(acc, v int64) int64) {
	s := c.int64Value(name)
	if s == nil {
		return
	}
	// merge cannot fail
	_ = mergeWindowState(s, c.w, c.merged, func(acc, v int64) (int64, error) { return merge(acc, v), nil })
}

// int64State is one int64 trigger state of the current key in window w.
type int64State[K comparable, W window.Window] struct {
	s *state.Value[K, W, int64]
	w W
}

func (r *int64State[K, W]) Get() (int64, bool) {
	if r.s == nil {
		return 0, false
	}
	r.s.SetNamespace(r.w)
	return r.s.Value()
}

func (r *int64State[K, W]) Update(v int64) {
	if r.s != nil {
		r.s.SetNamespace(r.w)
		r.s.Update(v)
	}
}

func (r *int64State[K, W]) Clear() {
	if r.s != nil {
		r.s.SetNamespace(r.w)
		r.s.Clear()
	}
}

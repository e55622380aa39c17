package flow

import "math"

// valve combines the watermarks and watermark statuses of one input's
// channels into the input's watermark and status, as Flink's
// StatusWatermarkValve does:
//
//   - A channel's watermark only rises; a lower one is ignored, and so is any
//     watermark of an idle channel or while every channel is idle.
//   - The input's watermark is the minimum over the aligned channels: active
//     channels whose watermark is at least the last one emitted. Only a rise
//     is emitted.
//   - A channel that turns idle stops counting; when it held the minimum, the
//     minimum over the others may rise. When every channel is idle the input
//     turns idle, and if the last channel to turn idle held the minimum, the
//     maximum watermark over the channels is emitted first (the flush).
//   - A channel that turns active again counts once its watermark caught up
//     with the last emitted one; the first active channel turns the input
//     active.
//
// An ended channel (EndOfPartition) no longer counts at all: it is treated
// as turning idle for good and left out of the flush; when the last channel
// ends the valve emits nothing (the input ended).
type valve struct {
	ch   []chanMark
	last int64 // the last watermark emitted
	idle bool  // the last status emitted
	live int   // channels not ended
}

// chanMark is one channel's state in a valve.
type chanMark struct {
	wm      int64
	idle    bool
	aligned bool
	ended   bool
}

// valveOut is what one input to a valve emits: a watermark, then a status.
type valveOut struct {
	wm        int64
	hasWM     bool
	status    int64 // StatusActive or StatusIdle
	hasStatus bool
}

func newValve(n int) valve {
	v := valve{ch: make([]chanMark, n), last: math.MinInt64, live: n}
	for i := range v.ch {
		v.ch[i] = chanMark{wm: math.MinInt64, aligned: true}
	}
	return v
}

// watermark feeds channel c's watermark wm.
func (v *valve) watermark(c int, wm int64) (o valveOut) {
	s := &v.ch[c]
	if s.ended || v.idle || s.idle || wm <= s.wm {
		return o
	}
	s.wm = wm
	if !s.aligned && wm >= v.last {
		s.aligned = true
	}
	v.newMin(&o)
	return o
}

// status feeds channel c's watermark status.
func (v *valve) status(c int, idle bool) (o valveOut) {
	s := &v.ch[c]
	if s.ended {
		return o
	}
	switch {
	case idle && !s.idle:
		s.idle, s.aligned = true, false
		if !v.hasActive() {
			if s.wm == v.last {
				v.flushMax(&o)
			}
			v.idle = true
			o.status, o.hasStatus = StatusIdle, true
		} else if s.wm == v.last {
			v.newMin(&o)
		}
	case !idle && s.idle:
		s.idle = false
		if s.wm >= v.last {
			s.aligned = true
		}
		if v.idle {
			v.idle = false
			o.status, o.hasStatus = StatusActive, true
		}
	}
	return o
}

// end records that channel c ended.
func (v *valve) end(c int) (o valveOut) {
	s := &v.ch[c]
	if s.ended {
		return o
	}
	wasActive := !s.idle
	s.ended, s.aligned, s.idle = true, false, true
	v.live--
	if v.live == 0 || !wasActive {
		return o
	}
	if !v.hasActive() {
		if s.wm == v.last {
			v.flushMax(&o)
		}
		v.idle = true
		o.status, o.hasStatus = StatusIdle, true
		return o
	}
	v.newMin(&o)
	return o
}

func (v *valve) hasActive() bool {
	for i := range v.ch {
		if !v.ch[i].idle && !v.ch[i].ended {
			return true
		}
	}
	return false
}

// newMin emits the minimum over the aligned channels if it rose.
func (v *valve) newMin(o *valveOut) {
	m, some := int64(math.MaxInt64), false
	for i := range v.ch {
		if s := &v.ch[i]; s.aligned && !s.ended {
			m, some = min(m, s.wm), true
		}
	}
	if some && m > v.last {
		v.last = m
		o.wm, o.hasWM = m, true
	}
}

// flushMax emits the maximum over the channels not ended if it is above the
// last watermark.
func (v *valve) flushMax(o *valveOut) {
	m := int64(math.MinInt64)
	for i := range v.ch {
		if !v.ch[i].ended {
			m = max(m, v.ch[i].wm)
		}
	}
	if m > v.last {
		v.last = m
		o.wm, o.hasWM = m, true
	}
}

// combined combines the watermarks and statuses of a task's inputs, as
// Flink's AbstractStreamOperator does with IndexedCombinedWatermarkStatus:
// the task's watermark is the minimum over the inputs that are not idle and
// only rises; the task is idle when every input is. An input that ended
// no longer counts.
type combined struct {
	wm    []int64
	idle  []bool
	ended []bool
	cur   int64
	all   bool // every input idle
}

func newCombined(n int) combined {
	c := combined{wm: make([]int64, n), idle: make([]bool, n), ended: make([]bool, n), cur: math.MinInt64}
	for i := range c.wm {
		c.wm[i] = math.MinInt64
	}
	return c
}

// watermark records input i's watermark (which makes it active, as Flink's
// PartialWatermark.setWatermark does) and reports whether the combined
// watermark rose.
func (c *combined) watermark(i int, wm int64) bool {
	c.idle[i] = false
	c.wm[i] = max(c.wm[i], wm)
	return c.update()
}

// status records input i's idleness and reports whether the combined
// watermark rose; the combined idleness is c.all.
func (c *combined) status(i int, idle bool) bool {
	c.idle[i] = idle
	return c.update()
}

// end removes input i and reports whether the combined watermark rose.
func (c *combined) end(i int) bool {
	c.ended[i] = true
	return c.update()
}

func (c *combined) update() bool {
	m, all, some := int64(math.MaxInt64), true, false
	for i := range c.wm {
		if c.ended[i] {
			continue
		}
		some = true
		if !c.idle[i] {
			m, all = min(m, c.wm[i]), false
		}
	}
	if !some {
		return false
	}
	c.all = all
	if !all && m > c.cur {
		c.cur = m
		return true
	}
	return false
}

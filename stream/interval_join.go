package stream

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// IntervalJoinStreams are two keyed streams to join on intervals of event
// time (Flink's KeyedStream.IntervalJoin): Between sets the interval.
type IntervalJoinStreams[A, B any, K comparable] struct {
	a KeyedStream[A, K]
	b KeyedStream[B, K]
}

// IntervalJoin joins the elements of a with those of b of the same key
// whose timestamps fall in an interval around theirs (Flink's
// a.intervalJoin(b)).
func IntervalJoin[A, B any, K comparable](a KeyedStream[A, K], b KeyedStream[B, K]) IntervalJoinStreams[A, B, K] {
	return IntervalJoinStreams[A, B, K]{a: a, b: b}
}

// Between joins a left element at time t with the right elements at
// times in [t + lower, t + upper]; lower must not exceed upper.
func (s IntervalJoinStreams[A, B, K]) Between(lower, upper time.Duration) IntervalJoined[A, B, K] {
	if lower > upper {
		s.a.ds.env.fail(caller(1), errors.New("IntervalJoin: lowerBound <= upperBound must be fulfilled"))
	}
	return IntervalJoined[A, B, K]{s: s, lower: lower.Milliseconds(), upper: upper.Milliseconds()}
}

// IntervalJoined is an interval join with its bounds (Flink's
// IntervalJoined): the bounds are inclusive unless made exclusive; late
// elements (timestamp below the watermark) are dropped, or sent to a side
// output.
type IntervalJoined[A, B any, K comparable] struct {
	s                IntervalJoinStreams[A, B, K]
	lower, upper     int64
	lowerEx, upperEx bool
	leftLate         *OutputTag[A]
	rightLate        *OutputTag[B]
}

// LowerBoundExclusive leaves the lower bound out of the interval.
func (j IntervalJoined[A, B, K]) LowerBoundExclusive() IntervalJoined[A, B, K] {
	j.lowerEx = true
	return j
}

// UpperBoundExclusive leaves the upper bound out of the interval.
func (j IntervalJoined[A, B, K]) UpperBoundExclusive() IntervalJoined[A, B, K] {
	j.upperEx = true
	return j
}

// SideOutputLeftLateData sends the left elements dropped as late to tag.
func (j IntervalJoined[A, B, K]) SideOutputLeftLateData(tag OutputTag[A]) IntervalJoined[A, B, K] {
	j.leftLate = &tag
	return j
}

// SideOutputRightLateData sends the right elements dropped as late to tag.
func (j IntervalJoined[A, B, K]) SideOutputRightLateData(tag OutputTag[B]) IntervalJoined[A, B, K] {
	j.rightLate = &tag
	return j
}

// ProcessJoinFunction is Flink's ProcessJoinFunction: ProcessElement is
// called for every joined pair, its output timestamped with the larger of
// the two elements' timestamps. Open, when set, is called once before any
// record with the function's KeyedRuntimeContext; Close once at the end.
type ProcessJoinFunction[K comparable, A, B, O any] struct {
	Open           func(rc *KeyedRuntimeContext[K]) error
	ProcessElement func(left A, right B, ctx *JoinContext[K], out Collector[O]) error
	Close          func() error
}

// JoinContext is what a ProcessJoinFunction sees: the timestamps of the
// pair and of the result, the key, keyed state and the watermark; side
// outputs are emitted with it (Output), at the result's timestamp.
type JoinContext[K comparable] struct {
	kc          *KeyedContext[K]
	left, right int64
}

// LeftTimestamp is the timestamp of the left element.
func (c *JoinContext[K]) LeftTimestamp() int64 { return c.left }

// RightTimestamp is the timestamp of the right element.
func (c *JoinContext[K]) RightTimestamp() int64 { return c.right }

// Timestamp is the result's timestamp: the larger of the two.
func (c *JoinContext[K]) Timestamp() int64 { return max(c.left, c.right) }

// CurrentKey returns the key of the pair.
func (c *JoinContext[K]) CurrentKey() K { return c.kc.CurrentKey() }

// RuntimeContext returns the function's KeyedRuntimeContext.
func (c *JoinContext[K]) RuntimeContext() *KeyedRuntimeContext[K] { return c.kc.RuntimeContext() }

// Backend returns the operator's keyed state backend.
func (c *JoinContext[K]) Backend() *state.Backend[K] { return c.kc.Backend() }

// CurrentWatermark returns the operator's watermark.
func (c *JoinContext[K]) CurrentWatermark() int64 { return c.kc.CurrentWatermark() }

// CurrentProcessingTime returns the processing time in milliseconds.
func (c *JoinContext[K]) CurrentProcessingTime() int64 { return c.kc.CurrentProcessingTime() }

func (c *JoinContext[K]) context() *Context { return &c.kc.Context }

// The keyed state of an interval join: each side's elements by timestamp,
// and the cleanup timers by time with the sides they clean.
const (
	intervalLeftBuffer  = "interval-join-left-buffer"
	intervalRightBuffer = "interval-join-right-buffer"
	intervalCleanup     = "interval-join-cleanup"
	cleanLeft           = 1
	cleanRight          = 2
)

// IntervalJoinProcess runs the join with the function newFn returns (once
// per subtask), as Flink's IntervalJoinOperator: each element is buffered
// in keyed state under its timestamp and joined with the other side's
// buffered elements in its interval; an event-time timer drops it once no
// later element of the other side can join it.
func IntervalJoinProcess[A, B any, K comparable, O any](j IntervalJoined[A, B, K], newFn func() ProcessJoinFunction[K, A, B, O]) DataStream[O] {
	if newFn == nil {
		j.s.a.ds.env.fail(caller(1), errors.New("IntervalJoin: nil function"))
		newFn = func() ProcessJoinFunction[K, A, B, O] { return ProcessJoinFunction[K, A, B, O]{} }
	}
	lower, upper := j.lower, j.upper
	if j.lowerEx {
		lower++
	}
	if j.upperEx {
		upper--
	}
	out := keyedCoProcess(ConnectKeyed(j.s.a, j.s.b), func() KeyedCoProcessFunction[K, A, B, O] {
		fn := newFn()
		var (
			left    state.MapState[int64, []A]
			right   state.MapState[int64, []B]
			cleanup state.MapState[int64, uint8]
			jc      JoinContext[K]
		)
		register := func(ctx *KeyedContext[K], t int64, side uint8) {
			f, _ := cleanup.Get(t)
			cleanup.Put(t, f|side)
			ctx.RegisterEventTimeTimer(t)
		}
		late := func(ctx *KeyedContext[K]) (bool, error) {
			if ctx.c.TS == watermark.Min {
				return false, errors.New("stream: IntervalJoin: elements of an interval join need timestamps")
			}
			wm := ctx.CurrentWatermark()
			return wm != math.MinInt64 && ctx.c.TS < wm, nil
		}
		emit := func(ctx *KeyedContext[K], a A, b B, ta, tb int64, o Collector[O]) error {
			jc.kc, jc.left, jc.right = ctx, ta, tb
			ctx.c.TS = max(ta, tb)
			return fn.ProcessElement(a, b, &jc, o)
		}
		return KeyedCoProcessFunction[K, A, B, O]{
			Open: func(rc *KeyedRuntimeContext[K]) (err error) {
				if fn.ProcessElement == nil {
					return errors.New("stream: IntervalJoin: no ProcessElement function")
				}
				if left, err = GetMapState(rc, state.MapDescriptor[int64, []A]{Name: intervalLeftBuffer}); err != nil {
					return fmt.Errorf("stream: IntervalJoin: %w", err)
				}
				if right, err = GetMapState(rc, state.MapDescriptor[int64, []B]{Name: intervalRightBuffer}); err != nil {
					return fmt.Errorf("stream: IntervalJoin: %w", err)
				}
				if cleanup, err = GetMapState(rc, state.MapDescriptor[int64, uint8]{Name: intervalCleanup}); err != nil {
					return fmt.Errorf("stream: IntervalJoin: %w", err)
				}
				if fn.Open != nil {
					return fn.Open(rc)
				}
				return nil
			},
			ProcessElement1: func(v A, ctx *KeyedContext[K], o Collector[O]) error {
				ts := ctx.c.TS
				if isLate, err := late(ctx); err != nil || isLate {
					if isLate && j.leftLate != nil {
						Output(ctx, *j.leftLate, v)
					}
					return err
				}
				vs, _ := left.Get(ts)
				left.Put(ts, append(vs, v))
				for rt, bs := range right.All() {
					if rt < ts+lower || rt > ts+upper {
						continue
					}
					for _, b := range bs {
						if err := emit(ctx, v, b, ts, rt, o); err != nil {
							return err
						}
					}
				}
				ctx.c.TS = ts
				if upper > 0 {
					register(ctx, ts+upper, cleanLeft)
				} else {
					register(ctx, ts, cleanLeft)
				}
				return nil
			},
			ProcessElement2: func(v B, ctx *KeyedContext[K], o Collector[O]) error {
				ts := ctx.c.TS
				if isLate, err := late(ctx); err != nil || isLate {
					if isLate && j.rightLate != nil {
						Output(ctx, *j.rightLate, v)
					}
					return err
				}
				vs, _ := right.Get(ts)
				right.Put(ts, append(vs, v))
				// relative to a right element the interval is [ts - upper, ts - lower]
				for lt, as := range left.All() {
					if lt < ts-upper || lt > ts-lower {
						continue
					}
					for _, a := range as {
						if err := emit(ctx, a, v, lt, ts, o); err != nil {
							return err
						}
					}
				}
				ctx.c.TS = ts
				if -lower > 0 {
					register(ctx, ts-lower, cleanRight)
				} else {
					register(ctx, ts, cleanRight)
				}
				return nil
			},
			OnTimer: func(t int64, ctx *KeyedContext[K], _ Collector[O]) error {
				f, ok := cleanup.Get(t)
				if !ok {
					return nil
				}
				cleanup.Remove(t)
				if f&cleanLeft != 0 {
					if upper <= 0 {
						left.Remove(t)
					} else {
						left.Remove(t - upper)
					}
				}
				if f&cleanRight != 0 {
					if lower <= 0 {
						right.Remove(t + lower)
					} else {
						right.Remove(t)
					}
				}
				return nil
			},
			Close: fn.Close,
		}
	}, "IntervalJoin", caller(1))
	if j.leftLate != nil {
		graph.SidePort[A](out.n, j.leftLate.id)
	}
	if j.rightLate != nil {
		graph.SidePort[B](out.n, j.rightLate.id)
	}
	return out
}

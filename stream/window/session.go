package window

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Sessions assigns an element at ts to [ts, ts+gap) and merges the windows
// of a key that intersect, so that a session ends after a gap without
// elements (Flink's EventTimeSessionWindows, ProcessingTimeSessionWindows
// and their dynamic-gap variants).
type Sessions[T any] struct {
	gap       int64
	gapOf     func(T) int64 // the dynamic gap in ms, when set
	eventTime bool
	err       error
}

// EventTimeSessionWindows returns event-time sessions with a static gap.
func EventTimeSessionWindows(gap time.Duration) *Sessions[any] {
	return newSessions[any]("EventTimeSessionWindows", gap, nil, true)
}

// ProcessingTimeSessionWindows returns processing-time sessions with a
// static gap.
func ProcessingTimeSessionWindows(gap time.Duration) *Sessions[any] {
	return newSessions[any]("ProcessingTimeSessionWindows", gap, nil, false)
}

// DynamicEventTimeSessionWindows returns event-time sessions whose gap
// gapOf computes per element (Flink's withDynamicGap); a gap that is not
// positive fails the job.
func DynamicEventTimeSessionWindows[T any](gapOf func(T) time.Duration) *Sessions[T] {
	return newSessions("DynamicEventTimeSessionWindows", 0, gapOf, true)
}

// DynamicProcessingTimeSessionWindows is DynamicEventTimeSessionWindows in
// processing time.
func DynamicProcessingTimeSessionWindows[T any](gapOf func(T) time.Duration) *Sessions[T] {
	return newSessions("DynamicProcessingTimeSessionWindows", 0, gapOf, false)
}

func newSessions[T any](name string, gap time.Duration, gapOf func(T) time.Duration, event bool) *Sessions[T] {
	s := &Sessions[T]{gap: gap.Milliseconds(), eventTime: event}
	if gapOf != nil {
		s.gapOf = func(v T) int64 { return gapOf(v).Milliseconds() }
	} else if s.gap <= 0 {
		s.err = fmt.Errorf("window: %s parameters must satisfy 0 < size", name)
	}
	return s
}

// Err returns why the constructor's parameters are invalid, or nil.
func (s *Sessions[T]) Err() error { return s.err }

// AssignWindows returns [ts, ts+gap), ts being the processing time for
// processing-time sessions; an end past math.MaxInt64 is an ErrOutOfRange.
func (s *Sessions[T]) AssignWindows(elem any, ts int64, ctx AssignerContext, dst []TimeWindow) ([]TimeWindow, error) {
	if s.err != nil {
		return dst, s.err
	}
	if !s.eventTime {
		ts = ctx.CurrentProcessingTime()
	} else if ts == noTimestamp {
		return dst, errNoTimestamp
	}
	gap := s.gap
	if s.gapOf != nil {
		v, ok := elem.(*T)
		if !ok {
			return dst, fmt.Errorf("window: dynamic session gap of %T given an element %T", (*T)(nil), elem)
		}
		if gap = s.gapOf(*v); gap <= 0 {
			return dst, fmt.Errorf("window: dynamic session window gap must be positive, got %d ms", gap)
		}
	}
	if ts > math.MaxInt64-gap {
		return dst, outOfRange(ts, "sessions with a gap of %d ms", gap)
	}
	return append(dst, TimeWindow{ts, ts + gap}), nil
}

// DefaultTrigger is EventTimeTrigger or ProcessingTimeTrigger.
func (s *Sessions[T]) DefaultTrigger() Trigger[TimeWindow] {
	if s.eventTime {
		return EventTimeTrigger{}
	}
	return ProcessingTimeTrigger{}
}

// IsEventTime says whether the sessions are in event time.
func (s *Sessions[T]) IsEventTime() bool { return s.eventTime }

// MergeWindows merges the windows that intersect.
func (s *Sessions[T]) MergeWindows(windows []TimeWindow, merge func([]TimeWindow, TimeWindow)) error {
	MergeTimeWindows(windows, merge)
	return nil
}

// MergeTimeWindows is Flink's TimeWindow.mergeWindows: windows sorted by
// start are merged while they intersect the running cover; merge is called
// for each group of more than one window.
func MergeTimeWindows(windows []TimeWindow, merge func([]TimeWindow, TimeWindow)) {
	sorted := slices.Clone(windows)
	slices.SortStableFunc(sorted, func(a, b TimeWindow) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	var cur TimeWindow
	var group []TimeWindow
	flush := func() {
		if len(group) > 1 {
			merge(group, cur)
		}
	}
	for i, w := range sorted {
		if i > 0 && cur.Intersects(w) {
			cur = cur.Cover(w)
			group = append(group, w)
			continue
		}
		flush()
		cur, group = w, []TimeWindow{w}
	}
	flush()
}

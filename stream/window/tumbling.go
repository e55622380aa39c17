package window

import (
	"fmt"
	"math"
	"time"
)

// Tumbling assigns every element to one window of Size, aligned to the
// epoch shifted by Offset (Flink's TumblingEventTimeWindows and
// TumblingProcessingTimeWindows).
type Tumbling struct {
	size, offset int64
	eventTime    bool
}

// TumblingEventTimeWindows returns tumbling windows of size in event time;
// an offset, if given, shifts their starts (Flink's of(size, offset)).
func TumblingEventTimeWindows(size time.Duration, offset ...time.Duration) (*Tumbling, error) {
	return newTumbling("TumblingEventTimeWindows", size, offset, true)
}

// TumblingProcessingTimeWindows returns tumbling windows of size in
// processing time, shifted by offset if given.
func TumblingProcessingTimeWindows(size time.Duration, offset ...time.Duration) (*Tumbling, error) {
	return newTumbling("TumblingProcessingTimeWindows", size, offset, false)
}

func newTumbling(name string, size time.Duration, offset []time.Duration, event bool) (*Tumbling, error) {
	t := &Tumbling{size: size.Milliseconds(), eventTime: event}
	if len(offset) > 1 {
		return nil, fmt.Errorf("window: %s: one offset at most", name)
	}
	if len(offset) == 1 {
		t.offset = offset[0].Milliseconds()
	}
	if t.size <= 0 || abs(t.offset) >= t.size {
		return nil, fmt.Errorf("window: %s parameters must satisfy abs(offset) < size", name)
	}
	return t, nil
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// errNoTimestamp is Flink's message for an element without a timestamp in
// an event-time assigner.
// noTimestamp is the timestamp of an element that has none (the stream
// package's NoTimestamp).
const noTimestamp = math.MinInt64

var errNoTimestamp error = &noTimestampError{}

// noTimestampError is a record without a timestamp: it has none on every
// read, so no restart of the job cures it (Unrecoverable).
type noTimestampError struct{}

func (*noTimestampError) Error() string {
	return "window: record has no timestamp (NoTimestamp); did you forget a watermark strategy that assigns timestamps?"
}

func (*noTimestampError) Unrecoverable() bool { return true }

// AssignWindows returns the window containing ts (event time) or the
// current processing time.
func (t *Tumbling) AssignWindows(_ any, ts int64, ctx AssignerContext, dst []TimeWindow) ([]TimeWindow, error) {
	if !t.eventTime {
		ts = ctx.CurrentProcessingTime()
	} else if ts == noTimestamp {
		return dst, errNoTimestamp
	}
	start := GetWindowStartWithOffset(ts, t.offset, t.size)
	return append(dst, TimeWindow{start, start + t.size}), nil
}

// AssignEach is AssignWindows for a run of elements (EachAssigner).
func (t *Tumbling) AssignEach(ts []int64, ctx AssignerContext, dst []TimeWindow) error {
	dst = dst[:len(ts)]
	if !t.eventTime {
		now := ctx.CurrentProcessingTime()
		start := GetWindowStartWithOffset(now, t.offset, t.size)
		for i := range dst {
			dst[i] = TimeWindow{start, start + t.size}
		}
		return nil
	}
	for i, v := range ts {
		if v == noTimestamp {
			return errNoTimestamp
		}
		start := GetWindowStartWithOffset(v, t.offset, t.size)
		dst[i] = TimeWindow{start, start + t.size}
	}
	return nil
}

// DefaultTrigger is EventTimeTrigger or ProcessingTimeTrigger.
func (t *Tumbling) DefaultTrigger() Trigger[TimeWindow] {
	if t.eventTime {
		return EventTimeTrigger{}
	}
	return ProcessingTimeTrigger{}
}

// IsEventTime says whether the windows are in event time.
func (t *Tumbling) IsEventTime() bool { return t.eventTime }

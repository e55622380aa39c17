package window

import (
	"errors"
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
	err          error
}

// TumblingEventTimeWindows returns tumbling windows of size in event time;
// an offset, if given, shifts their starts (Flink's of(size, offset)).
func TumblingEventTimeWindows(size time.Duration, offset ...time.Duration) *Tumbling {
	return newTumbling("TumblingEventTimeWindows", size, offset, true)
}

// TumblingProcessingTimeWindows returns tumbling windows of size in
// processing time, shifted by offset if given.
func TumblingProcessingTimeWindows(size time.Duration, offset ...time.Duration) *Tumbling {
	return newTumbling("TumblingProcessingTimeWindows", size, offset, false)
}

func newTumbling(name string, size time.Duration, offset []time.Duration, event bool) *Tumbling {
	t := &Tumbling{size: size.Milliseconds(), eventTime: event}
	if len(offset) > 1 {
		t.err = fmt.Errorf("window: %s: one offset at most", name)
		return t
	}
	if len(offset) == 1 {
		t.offset = offset[0].Milliseconds()
	}
	if t.size <= 0 || abs(t.offset) >= t.size {
		t.err = fmt.Errorf("window: %s parameters must satisfy abs(offset) < size", name)
	}
	return t
}

// Err returns why the constructor's parameters are invalid, or nil.
func (t *Tumbling) Err() error { return t.err }

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// noTimestamp is the timestamp of an element that has none (the stream
// API's watermark.Min).
const noTimestamp = math.MinInt64

// errNoTimestamp is Flink's message for an element without a timestamp in
// an event-time assigner.
var errNoTimestamp error = &noTimestampError{}

// noTimestampError is a record without a timestamp: it has none on every
// read, so no restart of the job cures it (Unrecoverable).
type noTimestampError struct{}

func (*noTimestampError) Error() string {
	return "window: record has no timestamp (math.MinInt64, watermark.Min, which no timestamp may be); did you forget a watermark strategy that assigns timestamps?"
}

func (*noTimestampError) Unrecoverable() bool { return true }

// ErrOutOfRange is the error of an event-time element whose window would
// start below math.MinInt64 or end above math.MaxInt64: it has no window
// whose end follows its start, and the assigner refuses it.
var ErrOutOfRange = errors.New("window: the element's window reaches past the int64 range of timestamps")

// outOfRange is ErrOutOfRange for the element at ts in the windows named.
func outOfRange(ts int64, windows string, args ...any) error {
	return &rangeError{fmt.Sprintf("timestamp %d in %s", ts, fmt.Sprintf(windows, args...))}
}

// rangeError is ErrOutOfRange with the element's timestamp and windows. The
// element has the same timestamp on every read, so no restart of the job
// cures it (Unrecoverable).
type rangeError struct{ what string }

func (e *rangeError) Error() string        { return ErrOutOfRange.Error() + ": " + e.what }
func (e *rangeError) Is(target error) bool { return target == ErrOutOfRange }
func (e *rangeError) Unrecoverable() bool  { return true }

// sinceStart returns ts - start for the start of the window of the grid of
// size shifted by offset (abs(offset) < size) that holds ts, in [0, size):
// (ts - offset) mod size, computed without overflow. The start (Flink's
// getWindowStartWithOffset) is ts minus it, when that is not below
// math.MinInt64.
func sinceStart(ts, offset, size int64) int64 {
	r := (ts%size - offset) % size // in (-size, size)
	if r < 0 {
		r += size
	}
	return r
}

// tumbling returns the window of size (offset) holding ts, and false when it
// does not fit in int64.
func tumbling(ts, offset, size int64) (TimeWindow, bool) {
	r := sinceStart(ts, offset, size)
	if ts < math.MinInt64+r || ts-r > math.MaxInt64-size {
		return TimeWindow{}, false
	}
	return TimeWindow{ts - r, ts - r + size}, true
}

// AssignWindows returns the window containing ts (event time) or the
// current processing time. A window reaching past the int64 range is an
// ErrOutOfRange.
func (t *Tumbling) AssignWindows(_ any, ts int64, ctx AssignerContext, dst []TimeWindow) ([]TimeWindow, error) {
	if t.err != nil {
		return dst, t.err
	}
	if !t.eventTime {
		ts = ctx.CurrentProcessingTime()
	} else if ts == noTimestamp {
		return dst, errNoTimestamp
	}
	w, ok := tumbling(ts, t.offset, t.size)
	if !ok {
		return dst, t.outOfRange(ts)
	}
	return append(dst, w), nil
}

func (t *Tumbling) outOfRange(ts int64) error {
	return outOfRange(ts, "tumbling windows of %d ms (offset %d ms)", t.size, t.offset)
}

// AssignEach is AssignWindows for a run of elements (EachAssigner).
func (t *Tumbling) AssignEach(ts []int64, ctx AssignerContext, dst []TimeWindow) error {
	dst = dst[:len(ts)]
	if !t.eventTime {
		now := ctx.CurrentProcessingTime()
		w, ok := tumbling(now, t.offset, t.size)
		if !ok {
			return t.outOfRange(now)
		}
		for i := range dst {
			dst[i] = w
		}
		return nil
	}
	for i, v := range ts {
		if v == noTimestamp {
			return errNoTimestamp
		}
		w, ok := tumbling(v, t.offset, t.size)
		if !ok {
			return t.outOfRange(v)
		}
		dst[i] = w
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

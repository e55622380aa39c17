package window

import (
	"fmt"
	"math"
	"time"
)

// Sliding assigns every element to the windows of Size that start every
// Slide (shifted by Offset) and contain it (Flink's SlidingEventTimeWindows
// and SlidingProcessingTimeWindows).
type Sliding struct {
	size, slide, offset int64
	eventTime           bool
	err                 error
}

// SlidingEventTimeWindows returns sliding windows of size every slide in
// event time, shifted by offset if given.
func SlidingEventTimeWindows(size, slide time.Duration, offset ...time.Duration) *Sliding {
	return newSliding("SlidingEventTimeWindows", size, slide, offset, true)
}

// SlidingProcessingTimeWindows returns sliding windows of size every slide
// in processing time, shifted by offset if given.
func SlidingProcessingTimeWindows(size, slide time.Duration, offset ...time.Duration) *Sliding {
	return newSliding("SlidingProcessingTimeWindows", size, slide, offset, false)
}

func newSliding(name string, size, slide time.Duration, offset []time.Duration, event bool) *Sliding {
	s := &Sliding{size: size.Milliseconds(), slide: slide.Milliseconds(), eventTime: event}
	if len(offset) > 1 {
		s.err = fmt.Errorf("window: %s: one offset at most", name)
		return s
	}
	if len(offset) == 1 {
		s.offset = offset[0].Milliseconds()
	}
	if s.slide <= 0 || abs(s.offset) >= s.slide || s.size <= 0 {
		s.err = fmt.Errorf("window: %s parameters must satisfy abs(offset) < slide and size > 0", name)
	}
	return s
}

// Err returns why the constructor's parameters are invalid, or nil.
func (s *Sliding) Err() error { return s.err }

// AssignWindows returns every window containing ts (or the processing
// time), the latest start first, as Flink lists them. When one of them
// reaches past the int64 range the element gets none and an ErrOutOfRange.
func (s *Sliding) AssignWindows(_ any, ts int64, ctx AssignerContext, dst []TimeWindow) ([]TimeWindow, error) {
	if s.err != nil {
		return dst, s.err
	}
	if !s.eventTime {
		ts = ctx.CurrentProcessingTime()
	} else if ts == noTimestamp {
		return dst, errNoTimestamp
	}
	n := len(dst)
	r := sinceStart(ts, s.offset, s.slide)
	if ts < math.MinInt64+r { // the last start is below the range
		if r < s.size {
			return dst, s.outOfRange(ts)
		}
		return dst, nil // its window does not hold ts, nor do those before
	}
	start := ts - r
	// [start, start+size) holds ts while ts - start < size; ts - start
	// grows by slide from [0, slide), so it does not overflow
	for ts-start < s.size {
		if start > math.MaxInt64-s.size {
			return dst[:n], s.outOfRange(ts)
		}
		dst = append(dst, TimeWindow{start, start + s.size})
		if start < math.MinInt64+s.slide { // the next start is below the range
			if ts-start < s.size-s.slide {
				return dst[:n], s.outOfRange(ts)
			}
			break
		}
		start -= s.slide
	}
	return dst, nil
}

func (s *Sliding) outOfRange(ts int64) error {
	return outOfRange(ts, "sliding windows of %d ms every %d ms (offset %d ms)", s.size, s.slide, s.offset)
}

// DefaultTrigger is EventTimeTrigger or ProcessingTimeTrigger.
func (s *Sliding) DefaultTrigger() Trigger[TimeWindow] {
	if s.eventTime {
		return EventTimeTrigger{}
	}
	return ProcessingTimeTrigger{}
}

// IsEventTime says whether the windows are in event time.
func (s *Sliding) IsEventTime() bool { return s.eventTime }

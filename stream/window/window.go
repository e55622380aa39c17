package window

import (
	"fmt"
	"math"
)

// Window is what an assigner groups elements into: comparable (it is the
// namespace of keyed state and timers) with a largest timestamp, the
// timestamp of the results the window emits.
type Window interface {
	comparable
	MaxTimestamp() int64
}

// TimeWindow is Flink's TimeWindow: the interval [Start, End), in
// milliseconds.
type TimeWindow struct {
	Start, End int64
}

// MaxTimestamp is End - 1, the largest timestamp inside the window.
func (w TimeWindow) MaxTimestamp() int64 { return w.End - 1 }

// Intersects says whether w and o overlap or touch (w.Start <= o.End and
// w.End >= o.Start): session windows that intersect merge.
func (w TimeWindow) Intersects(o TimeWindow) bool { return w.Start <= o.End && w.End >= o.Start }

// Cover is the smallest window containing w and o.
func (w TimeWindow) Cover(o TimeWindow) TimeWindow {
	return TimeWindow{Start: min(w.Start, o.Start), End: max(w.End, o.End)}
}

func (w TimeWindow) String() string {
	return fmt.Sprintf("TimeWindow{start=%d, end=%d}", w.Start, w.End)
}

// GetWindowStartWithOffset is Flink's TimeWindow.getWindowStartWithOffset:
// the start of the window of size (shifted by offset) that contains ts.
func GetWindowStartWithOffset(ts, offset, size int64) int64 {
	r := (ts - offset) % size
	if r < 0 {
		return ts - (r + size)
	}
	return ts - r
}

// GlobalWindow is the one window of GlobalWindows: every element of a key
// is in it, and it never ends.
type GlobalWindow struct{}

// MaxTimestamp is the largest int64: the end of time.
func (GlobalWindow) MaxTimestamp() int64 { return math.MaxInt64 }

func (GlobalWindow) String() string { return "GlobalWindow" }

// Err returns the construction error of an assigner or trigger made with
// invalid parameters (its Err method), or nil. The constructors return one
// value, so that they can be written inline, as Flink's
// window(TumblingEventTimeWindows.of(size)); stream.Window and
// WindowedStream.Trigger report the error when the program is built,
// naming the caller's line, and the assigner or trigger returns it from
// its first call.
func Err(v any) error {
	if c, ok := v.(interface{ Err() error }); ok {
		return c.Err()
	}
	return nil
}

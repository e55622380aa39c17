package core

import "math"

// NoTimestamp is the timestamp of a record that has none (Flink's
// StreamRecord without a timestamp). It is also the watermark before any
// (watermark.Min): event time has not started.
const NoTimestamp int64 = math.MinInt64

// MaxTimestamp is the watermark of an input that ended (watermark.Max):
// every event-time timer fires.
const MaxTimestamp int64 = math.MaxInt64

// Record is an element of a stream with its event timestamp in
// milliseconds (NoTimestamp when it has none).
type Record[T any] struct {
	Value     T
	Timestamp int64
}

// HasTimestamp says whether the record carries a timestamp.
func (r Record[T]) HasTimestamp() bool { return r.Timestamp != NoTimestamp }

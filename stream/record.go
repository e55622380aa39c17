package stream

import "math"

// NoTimestamp is the timestamp of a record that has none (Flink's
// StreamRecord without a timestamp); it equals watermark.Min.
const NoTimestamp int64 = math.MinInt64

// Record is an element of a DataStream with its event timestamp in
// milliseconds (NoTimestamp when it has none). Records travel in batches
// ([]Record[T]) between operators and tasks.
type Record[T any] struct {
	Value     T
	Timestamp int64
}

// HasTimestamp says whether the record carries a timestamp.
func (r Record[T]) HasTimestamp() bool { return r.Timestamp != NoTimestamp }

package stream

import "github.com/weirdata/weir/stream/internal/core"

// NoTimestamp is the timestamp of a record that has none (Flink's
// StreamRecord without a timestamp); it equals watermark.Min.
const NoTimestamp = core.NoTimestamp

// Record is an element of a DataStream, Value, with its event timestamp in
// milliseconds, Timestamp (NoTimestamp when it has none); HasTimestamp
// says whether it has one. Records travel in batches ([]Record[T])
// between operators and tasks.
type Record[T any] = core.Record[T]

package stream

import "github.com/weirdata/weir/stream/internal/core"

// Record is an element of a DataStream, Value, with its event timestamp in
// milliseconds, Timestamp (watermark.Min, Flink's StreamRecord without a
// timestamp, when it has none); HasTimestamp
// says whether it has one. Records travel in batches ([]Record[T])
// between operators and tasks.
type Record[T any] = core.Record[T]

package core

import "github.com/weirdata/weir/stream/watermark"

// Record is an element of a stream with its event timestamp in
// milliseconds (watermark.Min when it has none).
type Record[T any] struct {
	Value     T
	Timestamp int64
}

// HasTimestamp says whether the record carries a timestamp.
func (r Record[T]) HasTimestamp() bool { return r.Timestamp != watermark.Min }

package watermark

import (
	"fmt"
	"time"
)

// BoundedOutOfOrderness is Flink's BoundedOutOfOrdernessWatermarks: for
// events at most a bound out of order, it emits periodically the largest
// timestamp seen minus the bound minus 1 (Min before any event).
type BoundedOutOfOrderness[T any] struct {
	maxTimestamp int64
	bound        int64 // milliseconds
}

// NewBoundedOutOfOrderness returns a generator for events at most bound out
// of order; bound is used in whole milliseconds (truncated) and must not be
// negative.
func NewBoundedOutOfOrderness[T any](bound time.Duration) (*BoundedOutOfOrderness[T], error) {
	if bound < 0 {
		return nil, fmt.Errorf("watermark: the out-of-orderness bound %v is negative", bound)
	}
	ms := bound.Milliseconds()
	// start so that the lowest watermark is Min
	return &BoundedOutOfOrderness[T]{maxTimestamp: Min + ms + 1, bound: ms}, nil
}

// OnEvent raises the largest timestamp seen.
func (g *BoundedOutOfOrderness[T]) OnEvent(_ T, timestamp int64, _ Output) {
	g.maxTimestamp = max(g.maxTimestamp, timestamp)
}

// OnTimestamps raises the largest timestamp seen (TimestampGenerator).
func (g *BoundedOutOfOrderness[T]) OnTimestamps(ts []int64) {
	m := g.maxTimestamp
	for _, t := range ts {
		m = max(m, t)
	}
	g.maxTimestamp = m
}

// OnPeriodicEmit emits the largest timestamp seen minus the bound minus 1.
func (g *BoundedOutOfOrderness[T]) OnPeriodicEmit(out Output) {
	out.EmitWatermark(g.maxTimestamp - g.bound - 1)
}

// NewAscendingTimestamps returns Flink's AscendingTimestampsWatermarks: a
// bounded out-of-orderness generator with bound 0, whose watermark is the
// largest timestamp seen minus 1.
func NewAscendingTimestamps[T any]() *BoundedOutOfOrderness[T] {
	return &BoundedOutOfOrderness[T]{maxTimestamp: Min + 1}
}

// noWatermarks is Flink's NoWatermarksGenerator.
type noWatermarks[T any] struct{}

func (noWatermarks[T]) OnEvent(T, int64, Output) {}
func (noWatermarks[T]) OnPeriodicEmit(Output)    {}

package metrics

import "sync/atomic"

// Counter is Flink's Counter: a count that goes up and down. The zero
// Counter counts from zero; it is safe for concurrent use, and Inc is one
// atomic addition.
type Counter struct{ n atomic.Int64 }

// Inc adds one.
func (c *Counter) Inc() { c.n.Add(1) }

// IncBy adds n.
func (c *Counter) IncBy(n int64) { c.n.Add(n) }

// Dec subtracts one.
func (c *Counter) Dec() { c.n.Add(-1) }

// DecBy subtracts n.
func (c *Counter) DecBy(n int64) { c.n.Add(-n) }

// Count returns the count.
func (c *Counter) Count() int64 { return c.n.Load() }

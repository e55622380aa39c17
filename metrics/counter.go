package metrics

import "sync/atomic"

// Counter is Flink's SimpleCounter: a count that goes up and down, kept
// by the goroutine that updates it (the subtask's, whose functions call
// Inc) with plain arithmetic, and published for readers by Group.Publish
// (the runtime publishes after each batch). The zero Counter counts from
// zero.
type Counter struct {
	n, last int64        // the updater's count, and the one published last
	pub     atomic.Int64 // what readers see
}

// Inc adds one.
func (c *Counter) Inc() { c.n++ }

// IncBy adds n.
func (c *Counter) IncBy(n int64) { c.n += n }

// Dec subtracts one.
func (c *Counter) Dec() { c.n-- }

// DecBy subtracts n.
func (c *Counter) DecBy(n int64) { c.n -= n }

// Count returns the count, on the updating goroutine.
func (c *Counter) Count() int64 { return c.n }

// publish makes the count visible to readers (on the updating goroutine).
func (c *Counter) publish() {
	if c.n != c.last {
		c.last = c.n
		c.pub.Store(c.n)
	}
}

// published returns the count as of the last publish, on any goroutine.
func (c *Counter) published() int64 { return c.pub.Load() }

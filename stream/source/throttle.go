package source

import (
	"time"

	"github.com/weirdata/weir/clock"
)

// Throttle paces a reader to a rate of records per second on a clock, as
// Flink's RateLimiterStrategy.perSecond: record k after the first read is
// due at start + k/rate. A reader that fell more than a second behind (its
// subtask was backpressured) starts anew rather than catch up in a burst,
// and one allowance is at most a hundredth of a second's records, so that
// the records flow evenly. The readers of this package pace by it when
// ReaderContext.Rate is set, and so may the readers of other sources
// (connectors/kafka's). A Throttle is used by one goroutine.
//
//	for {
//		n, wait := t.Allowance()
//		if n == 0 { sleep(wait); continue }
//		... read at most n records, k of them ...
//		t.Took(k)
//	}
type Throttle struct {
	every time.Duration // between two records
	burst int           // the most records of one allowance
	clock clock.Clock
	start time.Time // zero: nothing read yet
	sent  int64     // records read since start
}

// NewThrottle returns a throttle of perSecond records per second (more
// than 0) on clock.
func NewThrottle(perSecond float64, clock clock.Clock) *Throttle {
	return &Throttle{every: max(time.Duration(float64(time.Second)/perSecond), 1),
		burst: max(int(perSecond/100), 1), clock: clock}
}

// Allowance returns how many records may be read now, or 0 and how long
// to wait for the next one.
func (t *Throttle) Allowance() (int, time.Duration) {
	now := t.clock.Now()
	if t.start.IsZero() {
		t.start = now
	}
	due := t.start.Add(time.Duration(t.sent) * t.every)
	if now.Before(due) {
		return 0, due.Sub(now)
	}
	if now.Sub(due) > time.Second {
		t.start, t.sent = now, 0
		return 1, 0
	}
	n := int64(now.Sub(t.start)/t.every) + 1 - t.sent
	return int(min(n, int64(t.burst))), 0
}

// Took counts n records read.
func (t *Throttle) Took(n int) { t.sent += int64(n) }

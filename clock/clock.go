package clock

import (
	"context"
	"time"
)

// Clock is a processing-time clock: what a job, a source or a sink reads
// as the current time and how it waits. System is the wall clock; Manual
// moves only when a test moves it. Implementations are safe for concurrent
// use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Timer returns a timer whose channel receives once the clock reached at
	// (at once when at is not after Now). A task loop selects on it next to
	// its inputs and its context.
	Timer(at time.Time) Timer
}

// Timer is a wait for a time of a Clock.
type Timer interface {
	// C returns the channel that receives the clock's time once the timer's
	// time came. It receives at most one value.
	C() <-chan time.Time
	// Stop cancels the timer; it reports whether the timer was still waiting
	// (false: it already fired or was stopped). After Stop returned true the
	// channel receives nothing.
	Stop() bool
}

// System is the wall clock: time.Now and time.Timer.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// Timer returns a time.Timer that fires at at.
func (System) Timer(at time.Time) Timer {
	return systemTimer{time.NewTimer(time.Until(at))}
}

type systemTimer struct{ t *time.Timer }

func (s systemTimer) C() <-chan time.Time { return s.t.C }
func (s systemTimer) Stop() bool          { return s.t.Stop() }

// Sleep waits d on c, or until ctx is done (returning ctx.Err()). A done
// ctx or a d of zero or less returns at once.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if err := ctx.Err(); err != nil || d <= 0 {
		return err
	}
	t := c.Timer(c.Now().Add(d))
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		t.Stop()
		return ctx.Err()
	}
}

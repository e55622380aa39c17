package flow

import "time"

// Clock is a job's processing-time clock (Options.Clock, TaskContext.Clock):
// what a task reads as the current time and how it waits for a
// processing-time timer. SystemClock is the wall clock; ManualClock moves only
// when a test moves it, so processing-time behaviour is deterministic.
// Implementations are safe for concurrent use.
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

// SystemClock is the wall clock: time.Now and time.Timer.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// Timer returns a time.Timer that fires at at.
func (SystemClock) Timer(at time.Time) Timer {
	return systemTimer{time.NewTimer(time.Until(at))}
}

type systemTimer struct{ t *time.Timer }

func (s systemTimer) C() <-chan time.Time { return s.t.C }
func (s systemTimer) Stop() bool          { return s.t.Stop() }

package watermark

import (
	"fmt"
	"time"

	"github.com/weirdata/weir/clock"
)

// Idleness is Flink's WatermarksWithIdleness: it wraps a generator and marks
// the output idle when no event came for longer than a timeout. Idleness is
// decided in OnPeriodicEmit only: the first periodic emission that saw no
// event since the previous one starts a countdown, and a later one more than
// the timeout after that marks the output idle, once, instead of asking the
// wrapped generator for its watermark. The next event ends the idleness.
type Idleness[T any] struct {
	inner  Generator[T]
	before BeforeEventGenerator[T] // inner, when it is one
	timer  idlenessTimer
	isIdle bool
}

// NewIdleness wraps g with idleness detection after timeout, measured on
// clk (nil: clock.System). timeout must be above zero.
func NewIdleness[T any](g Generator[T], timeout time.Duration, clk clock.Clock) (*Idleness[T], error) {
	if timeout <= 0 {
		return nil, fmt.Errorf("watermark: the idle timeout %v is not above zero", timeout)
	}
	if g == nil {
		return nil, fmt.Errorf("watermark: idleness needs a generator to wrap")
	}
	if clk == nil {
		clk = clock.System{}
	}
	before, _ := g.(BeforeEventGenerator[T])
	return &Idleness[T]{inner: g, before: before, timer: idlenessTimer{clock: clk, maxIdle: timeout}}, nil
}

// OnEvent passes the event on and records the activity.
func (g *Idleness[T]) OnEvent(event T, timestamp int64, out Output) {
	g.inner.OnEvent(event, timestamp, out)
	g.timer.activity()
	g.isIdle = false
}

// OnBeforeEvent passes the event on to a wrapped BeforeEventGenerator.
func (g *Idleness[T]) OnBeforeEvent(event T, timestamp int64, out Output) {
	if g.before != nil {
		g.before.OnBeforeEvent(event, timestamp, out)
	}
}

// setPaused stops (or restarts) the clock idleness is measured on: a split
// paused by watermark alignment is not read, and the time it waits does
// not count towards its idleness (Flink's PausableRelativeClock).
func (g *Idleness[T]) setPaused(paused bool) { g.timer.setPaused(paused) }

// OnPeriodicEmit marks the output idle once the timeout passed without
// events, and otherwise asks the wrapped generator.
func (g *Idleness[T]) OnPeriodicEmit(out Output) {
	if g.timer.checkIfIdle() {
		if !g.isIdle {
			out.MarkIdle()
			g.isIdle = true
		}
		return
	}
	g.inner.OnPeriodicEmit(out)
}

// idlenessTimer is Flink's WatermarksWithIdleness.IdlenessTimer.
type idlenessTimer struct {
	clock   clock.Clock
	maxIdle time.Duration
	// counter counts events; lastCounter is its value at the last check
	counter, lastCounter uint64
	// since is when a check first found no activity since the previous one;
	// counting tells whether it is set
	since    time.Time
	counting bool
	// the time spent paused, and since when the timer is paused (zero:
	// it is not): now excludes both
	pausedFor time.Duration
	pausedAt  time.Time
}

func (t *idlenessTimer) activity() { t.counter++ }

// now is the clock's time less the time the timer spent paused; it stands
// still while paused.
func (t *idlenessTimer) now() time.Time {
	if !t.pausedAt.IsZero() {
		return t.pausedAt.Add(-t.pausedFor)
	}
	return t.clock.Now().Add(-t.pausedFor)
}

func (t *idlenessTimer) setPaused(paused bool) {
	switch {
	case paused && t.pausedAt.IsZero():
		t.pausedAt = t.clock.Now()
	case !paused && !t.pausedAt.IsZero():
		t.pausedFor += t.clock.Now().Sub(t.pausedAt)
		t.pausedAt = time.Time{}
	}
}

// checkIfIdle reports whether the timeout passed since the first check that
// saw no activity since the check before it.
func (t *idlenessTimer) checkIfIdle() bool {
	switch {
	case t.counter != t.lastCounter:
		// activity since the last check: reset the countdown
		t.lastCounter = t.counter
		t.counting = false
		return false
	case !t.counting:
		// the first check without activity: start the countdown
		t.since = t.now()
		t.counting = true
		return false
	default:
		return t.now().Sub(t.since) > t.maxIdle
	}
}

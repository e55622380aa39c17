package watermark

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
)

// TestIdlenessTimeoutChecks follows Flink's WatermarksWithIdlenessTest
// (testZeroTimeout, testNegativeTimeout).
func TestIdlenessTimeoutChecks(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Millisecond} {
		if _, err := NewIdleness[any](NewAscendingTimestamps[any](), d, nil); err == nil || !strings.Contains(err.Error(), "not above zero") {
			t.Errorf("timeout %v: got %v", d, err)
		}
	}
}

// TestIdlenessTimer follows Flink's WatermarksWithIdlenessTest on the
// IdlenessTimer.
func TestIdlenessTimer(t *testing.T) {
	newTimer := func(c clock.Clock, d time.Duration) *idlenessTimer { return &idlenessTimer{clock: c, maxIdle: d} }
	makeIdle := func(t *testing.T, c *clock.Manual, d time.Duration) *idlenessTimer {
		tm := newTimer(c, d)
		tm.checkIfIdle() // start the timer
		c.Advance(d + time.Millisecond)
		if !tm.checkIfIdle() {
			t.Fatal("timer did not trigger")
		}
		return tm
	}
	t.Run("testInitiallyActive", func(t *testing.T) {
		if newTimer(newManualClock(), 10*time.Millisecond).checkIfIdle() {
			t.Fatal("idle at first")
		}
	})
	t.Run("testIdleWithoutEvents", func(t *testing.T) {
		c := newManualClock()
		tm := newTimer(c, 10*time.Millisecond)
		tm.checkIfIdle()
		c.Advance(11 * time.Millisecond)
		if !tm.checkIfIdle() {
			t.Fatal("not idle")
		}
	})
	t.Run("testRepeatedIdleChecks", func(t *testing.T) {
		c := newManualClock()
		tm := makeIdle(t, c, 122*time.Millisecond)
		if !tm.checkIfIdle() {
			t.Fatal("not idle")
		}
		c.Advance(100 * time.Millisecond)
		if !tm.checkIfIdle() {
			t.Fatal("not idle")
		}
	})
	t.Run("testActiveAfterIdleness", func(t *testing.T) {
		c := newManualClock()
		tm := makeIdle(t, c, 10*time.Millisecond)
		tm.activity()
		if tm.checkIfIdle() {
			t.Fatal("idle after activity")
		}
	})
	t.Run("testIdleActiveIdle", func(t *testing.T) {
		c := newManualClock()
		tm := makeIdle(t, c, 122*time.Millisecond)
		tm.activity()
		if tm.checkIfIdle() {
			t.Fatal("idle after activity")
		}
		tm.checkIfIdle() // start the timer
		c.Advance(123 * time.Millisecond)
		if !tm.checkIfIdle() {
			t.Fatal("not idle again")
		}
	})
	t.Run("exactlyTheTimeoutIsNotIdle", func(t *testing.T) {
		c := newManualClock()
		tm := newTimer(c, 10*time.Millisecond)
		tm.checkIfIdle()
		c.Advance(10 * time.Millisecond)
		if tm.checkIfIdle() {
			t.Fatal("idle at exactly the timeout: Flink needs strictly more")
		}
	})
}

// TestIdlenessGenerator: the wrapped generator is asked while events come;
// after the timeout the output is marked idle once; an event ends the
// idleness and the wrapped generator's watermark follows.
func TestIdlenessGenerator(t *testing.T) {
	c := newManualClock()
	g, err := NewIdleness[any](NewAscendingTimestamps[any](), 100*time.Millisecond, c)
	if err != nil {
		t.Fatal(err)
	}
	out := &testingOutput{}
	g.OnEvent(nil, 10, out)
	g.OnPeriodicEmit(out) // activity: 9
	c.Advance(200 * time.Millisecond)
	g.OnPeriodicEmit(out) // starts the countdown: 9
	c.Advance(100 * time.Millisecond)
	g.OnPeriodicEmit(out) // exactly the timeout: 9
	c.Advance(time.Millisecond)
	g.OnPeriodicEmit(out) // idle
	g.OnPeriodicEmit(out) // still idle: nothing
	g.OnEvent(nil, 20, out)
	g.OnPeriodicEmit(out) // 19
	if got, want := strings.Join(out.calls, " "), "9 9 9 idle 19"; got != want {
		t.Fatalf("calls %q, want %q", got, want)
	}
}

// TestIdlenessRandom runs random events, periodic emissions and clock moves
// against a model stated over the history: a periodic emission marks idle
// iff no event came since the emission that started the quiet spell (the
// first emission after the last event that saw no event since the previous
// emission) and more than the timeout passed since that emission; the
// output is marked idle once per idle spell, and otherwise the wrapped
// generator's watermark is emitted.
func TestIdlenessRandom(t *testing.T) {
	const timeout = 50 * time.Millisecond
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 2))
		c := newManualClock()
		g, err := NewIdleness[any](NewAscendingTimestamps[any](), timeout, c)
		if err != nil {
			t.Fatal(err)
		}
		out := &testingOutput{}
		var (
			eventsSinceEmit bool // an event since the previous periodic emission
			quietStart      time.Time
			quiet           bool // quietStart is set
			markedIdle      bool
			largest         = Min + 1
		)
		for step := range 300 {
			switch rng.IntN(3) {
			case 0:
				ts := rng.Int64N(1000)
				largest = max(largest, ts)
				g.OnEvent(nil, ts, out)
				eventsSinceEmit, markedIdle = true, false
			case 1:
				c.Advance(time.Duration(rng.IntN(40)) * time.Millisecond)
			case 2:
				n := len(out.calls)
				g.OnPeriodicEmit(out)
				var want string
				switch {
				case eventsSinceEmit:
					eventsSinceEmit, quiet = false, false
					want = itoa(largest - 1)
				case !quiet:
					quiet, quietStart = true, c.Now()
					want = itoa(largest - 1)
				case c.Now().Sub(quietStart) > timeout:
					if !markedIdle {
						want = "idle"
					}
					markedIdle = true
				default:
					want = itoa(largest - 1)
				}
				got := strings.Join(out.calls[n:], " ")
				if got != want {
					t.Fatalf("seed %d step %d: periodic emission reported %q, want %q", seed, step, got, want)
				}
			}
		}
	}
}

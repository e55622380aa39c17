package clock

import (
	"context"
	"sync"
	"time"
)

// Manual is a Clock that moves only when Advance or Set moves it: the
// processing-time clock of deterministic tests. Moving it fires every timer
// whose time came, before Advance or Set returns, with the clock's new time;
// each timer's channel is buffered, so firing never blocks. Safe for
// concurrent use.
type Manual struct {
	mu      sync.Mutex
	now     time.Time
	waiting []*manualTimer
	changed chan struct{} // closed and replaced when waiting changes
}

// NewManual returns a Manual reading start.
func NewManual(start time.Time) *Manual {
	return &Manual{now: start, changed: make(chan struct{})}
}

// Now returns the clock's time.
func (c *Manual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Timer returns a timer that fires when the clock reaches at; at once when at
// is not after Now.
func (c *Manual) Timer(at time.Time) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{c: c, at: at, ch: make(chan time.Time, 1)}
	if !at.After(c.now) {
		t.ch <- c.now
		return t
	}
	c.waiting = append(c.waiting, t)
	c.notify()
	return t
}

// Advance moves the clock forward by d (a negative d is ignored) and fires
// the timers that came due.
func (c *Manual) Advance(d time.Duration) {
	if d < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(c.now.Add(d))
}

// Set moves the clock to t, if t is after its time, and fires the timers
// that came due. A clock never goes back.
func (c *Manual) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.setLocked(t)
	}
}

func (c *Manual) setLocked(t time.Time) {
	c.now = t
	var due []*manualTimer
	keep := c.waiting[:0]
	for _, w := range c.waiting {
		if !w.at.After(t) {
			due = append(due, w)
		} else {
			keep = append(keep, w)
		}
	}
	clear(c.waiting[len(keep):])
	c.waiting = keep
	if len(due) == 0 {
		return
	}
	for _, w := range due {
		w.ch <- t
	}
	c.notify()
}

// Waiting returns the number of timers not yet fired nor stopped.
func (c *Manual) Waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiting)
}

// AwaitWaiting blocks until at least n timers are waiting, or ctx ends: how a
// test knows that a task has set its timer before it moves the clock.
func (c *Manual) AwaitWaiting(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		if len(c.waiting) >= n {
			c.mu.Unlock()
			return nil
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// notify wakes AwaitWaiting; c.mu is held.
func (c *Manual) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

type manualTimer struct {
	c  *Manual
	at time.Time
	ch chan time.Time
}

func (t *manualTimer) C() <-chan time.Time { return t.ch }

func (t *manualTimer) Stop() bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, w := range c.waiting {
		if w == t {
			c.waiting = append(c.waiting[:i], c.waiting[i+1:]...)
			c.notify()
			return true
		}
	}
	return false
}

package clock

import (
	"math/rand/v2"
	"testing"
	"time"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fired reports whether t's channel holds a value, and which.
func fired(t Timer) (time.Time, bool) {
	select {
	case v := <-t.C():
		return v, true
	default:
		return time.Time{}, false
	}
}

// TestManual: timers fire when the clock reaches them, with the clock's
// time; a timer in the past fires at once; Stop cancels a waiting timer only;
// the clock never goes back.
func TestManual(t *testing.T) {
	c := NewManual(epoch)
	a := c.Timer(epoch.Add(10 * time.Second))
	b := c.Timer(epoch.Add(5 * time.Second))
	d := c.Timer(epoch.Add(20 * time.Second))
	past := c.Timer(epoch.Add(-time.Second))
	if v, ok := fired(past); !ok || !v.Equal(epoch) {
		t.Fatalf("a timer in the past: fired %v %v, want at once with %v", ok, v, epoch)
	}
	if c.Waiting() != 3 {
		t.Fatalf("%d waiting, want 3", c.Waiting())
	}
	c.Advance(5 * time.Second)
	if v, ok := fired(b); !ok || !v.Equal(epoch.Add(5*time.Second)) {
		t.Fatalf("b: %v %v", ok, v)
	}
	if _, ok := fired(a); ok {
		t.Fatal("a fired early")
	}
	if !d.Stop() || d.Stop() {
		t.Fatal("Stop of a waiting timer must report true once")
	}
	c.Set(epoch) // back: ignored
	c.Advance(-time.Hour)
	if !c.Now().Equal(epoch.Add(5 * time.Second)) {
		t.Fatalf("clock went back to %v", c.Now())
	}
	c.Set(epoch.Add(time.Minute))
	if _, ok := fired(a); !ok {
		t.Fatal("a did not fire")
	}
	if _, ok := fired(d); ok {
		t.Fatal("a stopped timer fired")
	}
	if a.Stop() {
		t.Fatal("Stop of a fired timer reported true")
	}
	if c.Waiting() != 0 {
		t.Fatalf("%d waiting after all fired", c.Waiting())
	}
}

// TestManualRandom runs random timers, stops and moves against a naive
// model: a timer has fired iff it was not stopped while waiting and the clock
// reached its time; it fires with the clock's time of the move that reached it.
func TestManualRandom(t *testing.T) {
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 9))
		c := NewManual(epoch)
		type model struct {
			timer   Timer
			at      time.Time
			stopped bool
			firedAt time.Time
			fired   bool
		}
		var ts []*model
		now := epoch
		for range 200 {
			switch rng.IntN(4) {
			case 0, 1:
				at := now.Add(time.Duration(rng.IntN(100)-10) * time.Millisecond)
				m := &model{timer: c.Timer(at), at: at}
				if !at.After(now) {
					m.fired, m.firedAt = true, now
				}
				ts = append(ts, m)
			case 2:
				now = now.Add(time.Duration(rng.IntN(30)) * time.Millisecond)
				c.Set(now)
				for _, m := range ts {
					if !m.fired && !m.stopped && !m.at.After(now) {
						m.fired, m.firedAt = true, now
					}
				}
			case 3:
				if len(ts) == 0 {
					continue
				}
				m := ts[rng.IntN(len(ts))]
				want := !m.fired && !m.stopped
				if got := m.timer.Stop(); got != want {
					t.Fatalf("seed %d: Stop returned %v, want %v", seed, got, want)
				}
				m.stopped = m.stopped || want
			}
		}
		waiting := 0
		for i, m := range ts {
			v, ok := fired(m.timer)
			if ok != m.fired || (ok && !v.Equal(m.firedAt)) {
				t.Fatalf("seed %d timer %d (at %v): fired %v at %v, want %v at %v", seed, i, m.at, ok, v, m.fired, m.firedAt)
			}
			if !m.fired && !m.stopped {
				waiting++
			}
		}
		if c.Waiting() != waiting {
			t.Fatalf("seed %d: %d waiting, want %d", seed, c.Waiting(), waiting)
		}
	}
}

// TestSystem: a system timer fires no earlier than its time; a stopped
// one never fires.
func TestSystem(t *testing.T) {
	var c Clock = System{}
	start := c.Now()
	at := start.Add(20 * time.Millisecond)
	tm := c.Timer(at)
	select {
	case v := <-tm.C():
		if v.Before(at) {
			t.Fatalf("fired at %v, before %v", v, at)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("system timer did not fire")
	}
	stopped := c.Timer(c.Now().Add(time.Hour))
	if !stopped.Stop() {
		t.Fatal("Stop of a waiting system timer reported false")
	}
	select {
	case <-stopped.C():
		t.Fatal("a stopped system timer fired")
	case <-time.After(30 * time.Millisecond):
	}
}

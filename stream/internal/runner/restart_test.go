package runner

import (
	"testing"
	"time"
)

// TestRestartStrategies follows Flink's restart strategies: fixed delay
// counts attempts, failure rate counts failures within its interval,
// exponential delay grows the backoff by its multiplier up to its maximum
// and starts again after a run of the reset threshold; the default is
// exponential delay (1 s, 1 min, 1.5, 1 h) under checkpoints, else none.
func TestRestartStrategies(t *testing.T) {
	t0 := time.UnixMilli(0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type step struct {
		fail, started int // seconds
		delay         time.Duration
		ok            bool
	}
	cases := []struct {
		name  string
		s     RestartStrategy
		ck    bool
		steps []step
	}{
		{"none", RestartStrategy{Kind: RestartNone}, true, []step{{1, 0, 0, false}}},
		{"default without checkpoints", RestartStrategy{}, false, []step{{1, 0, 0, false}}},
		{"fixed", RestartStrategy{Kind: RestartFixed, Attempts: 2, Delay: 3 * time.Second}, false, []step{{1, 0, 3 * time.Second, true}, {5, 4, 3 * time.Second, true}, {9, 8, 0, false}}},
		{"failure rate", RestartStrategy{Kind: RestartFailureRate, Failures: 3, Interval: time.Minute, Delay: time.Second}, false, []step{
			{0, 0, time.Second, true}, {70, 1, time.Second, true}, {80, 71, time.Second, true}, {90, 81, 0, false}}},
		{"exponential", RestartStrategy{Kind: RestartExponential, Initial: time.Second, MaxBackoff: 3 * time.Second, Multiplier: 2, Reset: time.Hour}, true, []step{
			{1, 0, time.Second, true}, {2, 1, 2 * time.Second, true}, {5, 4, 3 * time.Second, true}, {9, 8, 3 * time.Second, true},
			{9 + 3600, 9, time.Second, true}}},
		{"default with checkpoints", RestartStrategy{}, true, []step{{1, 0, time.Second, true}, {2, 1, 1500 * time.Millisecond, true}}},
	}
	for _, c := range cases {
		r := newRestarter(c.s, c.ck)
		for i, st := range c.steps {
			d, ok := r.next(at(st.fail), at(st.started))
			if ok != st.ok {
				t.Fatalf("%s step %d: restart %v, want %v", c.name, i, ok, st.ok)
			}
			if !ok {
				continue
			}
			if c.s.Kind == RestartDefault && c.ck { // jitter 0.1
				if lo, hi := st.delay*9/10, st.delay*11/10; d < lo || d > hi {
					t.Fatalf("%s step %d: delay %v, want within [%v, %v]", c.name, i, d, lo, hi)
				}
			} else if d != st.delay {
				t.Fatalf("%s step %d: delay %v, want %v", c.name, i, d, st.delay)
			}
		}
	}
}

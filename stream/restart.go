package stream

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// RestartStrategy decides whether and when a job restarts after a task
// failure, as Flink's restart strategies: the job cancels the failed
// attempt and starts again from its latest completed checkpoint, within
// the same Execute or Start. Options.Restart sets it; without one, a job
// with checkpoints restarts as ExponentialDelayRestart with Flink's
// defaults (Flink 1.20's default when checkpointing is enabled) and a job
// without checkpoints does not restart.
type RestartStrategy struct {
	kind       restartKind
	attempts   int           // fixed delay, exponential: restarts allowed
	delay      time.Duration // fixed delay, failure rate
	initial    time.Duration // exponential
	maxBackoff time.Duration
	multiplier float64
	reset      time.Duration // exponential: a run this long resets the backoff
	jitter     float64
	failures   int           // failure rate: failures allowed per interval
	interval   time.Duration // failure rate
}

// WithAttempts returns a copy of an exponential-delay strategy that fails
// the job after n restarts in a row, the count starting again when the
// backoff does (Flink's exponential-delay.attempts-before-reset-backoff);
// n <= 0 restarts without limit. Other strategies are returned unchanged.
func (s *RestartStrategy) WithAttempts(n int) *RestartStrategy {
	c := *s
	if c.kind == restartExponential {
		c.attempts = max(n, 0)
	}
	return &c
}

type restartKind uint8

const (
	restartDefault restartKind = iota
	restartNone
	restartFixed
	restartExponential
	restartFailureRate
)

// NoRestart fails the job at its first task failure.
func NoRestart() *RestartStrategy { return &RestartStrategy{kind: restartNone} }

// FixedDelayRestart restarts the job up to attempts times, waiting delay
// (on the job's Clock) before each restart.
func FixedDelayRestart(attempts int, delay time.Duration) *RestartStrategy {
	return &RestartStrategy{kind: restartFixed, attempts: attempts, delay: delay}
}

// ExponentialDelayRestart restarts the job without limit, waiting initial
// before the first restart and multiplier times longer before each next
// one, up to maxBackoff, each wait varied by up to jitter (a fraction) of
// itself; once the job ran resetThreshold without failing the wait starts
// at initial again.
func ExponentialDelayRestart(initial, maxBackoff time.Duration, multiplier float64, resetThreshold time.Duration, jitter float64) *RestartStrategy {
	return &RestartStrategy{kind: restartExponential, initial: initial, maxBackoff: maxBackoff, multiplier: multiplier,
		reset: resetThreshold, jitter: jitter}
}

// FailureRateRestart restarts the job after delay as long as fewer than
// failures failures happened within interval; the failure that reaches
// failures fails the job.
func FailureRateRestart(failures int, interval, delay time.Duration) *RestartStrategy {
	return &RestartStrategy{kind: restartFailureRate, failures: failures, interval: interval, delay: delay}
}

// defaultExponential is Flink 1.20's restart-strategy.exponential-delay
// defaults: initial backoff 1 s, max backoff 1 min, multiplier 1.5, reset
// threshold 1 h, jitter 0.1.
func defaultExponential() *RestartStrategy {
	return ExponentialDelayRestart(time.Second, time.Minute, 1.5, time.Hour, 0.1)
}

// restarter applies a strategy to one job's failures.
type restarter struct {
	s        RestartStrategy
	restarts int
	backoff  time.Duration
	failedAt []time.Time // failure rate: the failures within interval
	lastFail time.Time
	inRow    int // exponential: restarts since the backoff was reset
}

func newRestarter(s *RestartStrategy, checkpointing bool) *restarter {
	if s == nil || s.kind == restartDefault {
		if !checkpointing {
			s = NoRestart()
		} else {
			s = defaultExponential()
		}
	}
	return &restarter{s: *s}
}

// next says whether the job restarts after a failure at now, after a run
// that started at started, and after what delay.
func (r *restarter) next(now, started time.Time) (time.Duration, bool) {
	s := &r.s
	switch s.kind {
	case restartFixed:
		if r.restarts >= s.attempts {
			return 0, false
		}
		r.restarts++
		return s.delay, true
	case restartExponential:
		if r.backoff == 0 || now.Sub(started) >= s.reset {
			r.backoff, r.inRow = s.initial, 0
		} else {
			r.backoff = min(time.Duration(float64(r.backoff)*s.multiplier), s.maxBackoff)
		}
		if s.attempts > 0 && r.inRow >= s.attempts {
			return 0, false
		}
		r.inRow++
		d := r.backoff
		if s.jitter > 0 && d > 0 {
			j := float64(d) * s.jitter
			d += time.Duration(j * (2*rand.Float64() - 1))
		}
		r.restarts++
		return max(d, 0), true
	case restartFailureRate:
		keep := r.failedAt[:0]
		for _, t := range r.failedAt {
			if now.Sub(t) < s.interval {
				keep = append(keep, t)
			}
		}
		r.failedAt = append(keep, now)
		if len(r.failedAt) >= s.failures {
			return 0, false
		}
		r.restarts++
		return s.delay, true
	}
	return 0, false
}

// String names the strategy and its limit, for messages.
func (r *restarter) String() string {
	s := &r.s
	switch s.kind {
	case restartNone:
		return "none"
	case restartFixed:
		return fmt.Sprintf("fixed-delay: %d restarts", s.attempts)
	case restartExponential:
		if s.attempts > 0 {
			return fmt.Sprintf("exponential-delay: %d restarts", s.attempts)
		}
		return "exponential-delay"
	case restartFailureRate:
		return fmt.Sprintf("failure-rate: %d failures within %v", s.failures, s.interval)
	}
	return "default"
}

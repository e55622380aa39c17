package stream

import (
	"time"

	"github.com/weirdata/weir/stream/internal/runner"
)

// RestartStrategy decides whether and when a job restarts after a task
// failure, as Flink's restart strategies: the job cancels the failed
// attempt and starts again from its latest completed checkpoint, within
// the same Execute or Start. Options.Restart sets it; without one, a job
// with checkpoints restarts as ExponentialDelayRestart with Flink's
// defaults (Flink 1.20's default when checkpointing is enabled) and a job
// without checkpoints does not restart.
type RestartStrategy struct{ s runner.RestartStrategy }

// NoRestart fails the job at its first task failure.
func NoRestart() *RestartStrategy {
	return &RestartStrategy{runner.RestartStrategy{Kind: runner.RestartNone}}
}

// FixedDelayRestart restarts the job up to attempts times, waiting delay
// (on the job's Clock) before each restart.
func FixedDelayRestart(attempts int, delay time.Duration) *RestartStrategy {
	return &RestartStrategy{runner.RestartStrategy{Kind: runner.RestartFixed, Attempts: attempts, Delay: delay}}
}

// ExponentialDelayRestart restarts the job without limit, waiting initial
// before the first restart and multiplier times longer before each next
// one, up to maxBackoff, each wait varied by up to jitter (a fraction) of
// itself; once the job ran resetThreshold without failing the wait starts
// at initial again.
func ExponentialDelayRestart(initial, maxBackoff time.Duration, multiplier float64, resetThreshold time.Duration, jitter float64) *RestartStrategy {
	return &RestartStrategy{runner.RestartStrategy{Kind: runner.RestartExponential, Initial: initial, MaxBackoff: maxBackoff,
		Multiplier: multiplier, Reset: resetThreshold, Jitter: jitter}}
}

// FailureRateRestart restarts the job after delay as long as fewer than
// failures failures happened within interval; the failure that reaches
// failures fails the job.
func FailureRateRestart(failures int, interval, delay time.Duration) *RestartStrategy {
	return &RestartStrategy{runner.RestartStrategy{Kind: runner.RestartFailureRate, Failures: failures, Interval: interval, Delay: delay}}
}

func (r *RestartStrategy) strategy() runner.RestartStrategy {
	if r == nil {
		return runner.RestartStrategy{}
	}
	return r.s
}

// WithAttempts returns a copy of an exponential-delay strategy that fails
// the job after n restarts in a row, the count starting again when the
// backoff does (Flink's exponential-delay.attempts-before-reset-backoff);
// n <= 0 restarts without limit. Other strategies are returned unchanged.
func (r *RestartStrategy) WithAttempts(n int) *RestartStrategy {
	c := *r
	if c.s.Kind == runner.RestartExponential {
		c.s.Attempts = max(n, 0)
	}
	return &c
}

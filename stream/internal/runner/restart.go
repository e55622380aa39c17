package runner

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// RestartKind is a restart strategy's kind.
type RestartKind uint8

// The restart strategies (stream.RestartStrategy).
const (
	RestartDefault RestartKind = iota
	RestartNone
	RestartFixed
	RestartExponential
	RestartFailureRate
)

// RestartStrategy is a restart strategy's parameters.
type RestartStrategy struct {
	Kind       RestartKind
	Attempts   int           // fixed delay, exponential: restarts allowed (exponential: in a row; 0 unlimited)
	Delay      time.Duration // fixed delay, failure rate
	Initial    time.Duration // exponential
	MaxBackoff time.Duration
	Multiplier float64
	Reset      time.Duration // exponential: a run this long resets the backoff
	Jitter     float64
	Failures   int           // failure rate: failures allowed per interval
	Interval   time.Duration // failure rate
}

// DefaultExponential is Flink 1.20's restart-strategy.exponential-delay
// defaults: initial backoff 1 s, max backoff 1 min, multiplier 1.5, reset
// threshold 1 h, jitter 0.1.
func DefaultExponential() RestartStrategy {
	return RestartStrategy{Kind: RestartExponential, Initial: time.Second, MaxBackoff: time.Minute, Multiplier: 1.5,
		Reset: time.Hour, Jitter: 0.1}
}

// restarter applies a strategy to one job's failures.
type restarter struct {
	s        RestartStrategy
	restarts int
	backoff  time.Duration
	failedAt []time.Time // failure rate: the failures within interval
	inRow    int         // exponential: restarts since the backoff was reset
}

func newRestarter(s RestartStrategy, checkpointing bool) *restarter {
	if s.Kind == RestartDefault {
		if checkpointing {
			s = DefaultExponential()
		} else {
			s = RestartStrategy{Kind: RestartNone}
		}
	}
	return &restarter{s: s}
}

// next says whether the job restarts after a failure at now, after a run
// that started at started, and after what delay.
func (r *restarter) next(now, started time.Time) (time.Duration, bool) {
	s := &r.s
	switch s.Kind {
	case RestartFixed:
		if r.restarts >= s.Attempts {
			return 0, false
		}
		r.restarts++
		return s.Delay, true
	case RestartExponential:
		if r.backoff == 0 || now.Sub(started) >= s.Reset {
			r.backoff, r.inRow = s.Initial, 0
		} else {
			r.backoff = min(time.Duration(float64(r.backoff)*s.Multiplier), s.MaxBackoff)
		}
		if s.Attempts > 0 && r.inRow >= s.Attempts {
			return 0, false
		}
		r.inRow++
		d := r.backoff
		if s.Jitter > 0 && d > 0 {
			j := float64(d) * s.Jitter
			d += time.Duration(j * (2*rand.Float64() - 1))
		}
		r.restarts++
		return max(d, 0), true
	case RestartFailureRate:
		keep := r.failedAt[:0]
		for _, t := range r.failedAt {
			if now.Sub(t) < s.Interval {
				keep = append(keep, t)
			}
		}
		r.failedAt = append(keep, now)
		if len(r.failedAt) >= s.Failures {
			return 0, false
		}
		r.restarts++
		return s.Delay, true
	}
	return 0, false
}

// String names the strategy and its limit, for messages.
func (r *restarter) String() string {
	s := &r.s
	switch s.Kind {
	case RestartNone:
		return "none"
	case RestartFixed:
		return fmt.Sprintf("fixed-delay: %d restarts", s.Attempts)
	case RestartExponential:
		if s.Attempts > 0 {
			return fmt.Sprintf("exponential-delay: %d restarts", s.Attempts)
		}
		return "exponential-delay"
	case RestartFailureRate:
		return fmt.Sprintf("failure-rate: %d failures within %v", s.Failures, s.Interval)
	}
	return "default"
}

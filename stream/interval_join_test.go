package stream

import (
	"fmt"
	"testing"
	"time"
)

// TestIntervalJoinModes checks IntervalJoin in STREAMING, BATCH and
// AUTOMATIC mode against a nested-loop join over out-of-order input: a
// left element at ta joins every right element of its key at tb in [ta +
// lower, ta + upper] (either bound left out when exclusive), the pair
// carrying max(ta, tb). In STREAMING the watermark advances with the
// input, so each side's buffer is cleaned up while the join runs.
func TestIntervalJoinModes(t *testing.T) {
	as, bs := joinInput(5, 70, 0), joinInput(6, 80, 1000)
	cases := []struct {
		lower, upper     int64
		lowerEx, upperEx bool
	}{
		{-5, 7, false, false},
		{-5, 7, true, true},
		{2, 9, false, true},
		{-8, -1, true, false},
		{0, 0, false, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d%v_%d%v", c.lower, c.lowerEx, c.upper, c.upperEx), func(t *testing.T) {
			var want []string
			for _, a := range as {
				for _, b := range bs {
					lo, hi := a.Ts+c.lower, a.Ts+c.upper
					if a.K != b.K || b.Ts < lo || b.Ts > hi || (c.lowerEx && b.Ts == lo) || (c.upperEx && b.Ts == hi) {
						continue
					}
					want = append(want, fmt.Sprintf("%d:%d@%d", a.ID, b.ID, max(a.Ts, b.Ts)))
				}
			}
			runJoinModes(t, as, bs, want, func(a, b DataStream[joinEl]) DataStream[string] {
				j := IntervalJoin(KeyBy(a, joinKey), KeyBy(b, joinKey)).
					Between(time.Duration(c.lower)*time.Millisecond, time.Duration(c.upper)*time.Millisecond)
				if c.lowerEx {
					j = j.LowerBoundExclusive()
				}
				if c.upperEx {
					j = j.UpperBoundExclusive()
				}
				return IntervalJoinProcess(j, func() ProcessJoinFunction[string, joinEl, joinEl, string] {
					return ProcessJoinFunction[string, joinEl, joinEl, string]{
						ProcessElement: func(x, y joinEl, _ *JoinContext[string], out Collector[string]) error {
							out.Collect(fmt.Sprintf("%d:%d", x.ID, y.ID))
							return nil
						},
					}
				})
			})
		})
	}
}

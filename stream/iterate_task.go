package stream

import (
	"time"
)

// loopIteration is the task loop of an iteration head, Flink's
// StreamIterationHead with the original input read in the same task: the
// gate's batches, watermarks and statuses pass as in any task, and the
// records the tail fed back go into the chain between them. Watermarks
// come from the original input only: fed-back records carry their
// timestamps but no watermark (Flink's head emits the maximal watermark at
// once, so that the loop never holds event time back; downstream sees the
// input's watermarks alone in both). Once the input ended, the head keeps
// reading the feedback and ends the loop when none came for the
// iteration's maxWait (never, for zero): Flink's timeout, counted from the
// input's end; later feedback is dropped, as in Flink. Then the chain's
// end of input is called.
func (rt *taskRuntime) loopIteration(pumps []func() error, it *iteration, fb feedbackQueue, target any) error {
	if err := rt.loop(pumps, fb, target); err != nil {
		return err
	}
	deadline := time.Now().Add(it.maxWait)
	ctx := rt.tc.Context()
	for {
		if err := ctx.Err(); err != nil {
			return err // records circling forever never let the wait see the end
		}
		if err := rt.processingTime(); err != nil {
			return err
		}
		got, err := fb.drain(target, rt.batchSize)
		if err != nil {
			return err
		}
		if got {
			deadline = time.Now().Add(it.maxWait)
			continue
		}
		quiet, err := rt.waitFeedback(fb, it.maxWait, deadline)
		if err != nil || !quiet {
			if err != nil {
				return err
			}
			continue
		}
		got, err = fb.drain(target, rt.batchSize)
		if err != nil {
			return err
		}
		if !got {
			return rt.finish()
		}
		deadline = time.Now().Add(it.maxWait)
	}
}

// waitFeedback waits for feedback, the chain's next processing-time timer
// or the deadline (none when maxWait is zero); quiet says the deadline
// passed.
func (rt *taskRuntime) waitFeedback(fb feedbackQueue, maxWait time.Duration, deadline time.Time) (quiet bool, err error) {
	var expire, timer <-chan time.Time
	if maxWait > 0 {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		expire = t.C
	}
	if next, has := rt.nextProcessingTime(); has {
		t := rt.clock.Timer(time.UnixMilli(next))
		defer t.Stop()
		timer = t.C()
	}
	ctx := rt.tc.Context()
	select {
	case <-fb.ready():
	case <-timer:
	case <-expire:
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
	return false, nil
}

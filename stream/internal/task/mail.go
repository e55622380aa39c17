package task

import (
	"fmt"
	"sync/atomic"
	"time"
)

// MailHandler is an operator that other goroutines hand work to through
// its Mail (an async operator's results): the task calls ProcessMail on
// its own goroutine once the Mail was posted, between batches or while an
// operator yields.
type MailHandler interface {
	ProcessMail() error
}

// Mail is an operator's way to wake its task from any goroutine (Flink's
// MailboxExecutor.execute, for one kind of mail): Post asks for one call
// of the operator's ProcessMail. Posts before that call merge into it.
type Mail struct {
	mb      *mailbox
	pending atomic.Bool
	h       MailHandler
}

// Post asks for a call of the operator's ProcessMail on the task
// goroutine; it does not block, and it may be called from any goroutine,
// after the task ended too.
func (m *Mail) Post() {
	if !m.pending.Swap(true) {
		m.mb.signal()
	}
}

// Mail returns the Mail of the operator opening with s, whose mail h
// handles; call it in Open.
func (s *Setup) Mail(h MailHandler) *Mail {
	rt := s.Runtime
	if rt.mails == nil {
		rt.mails = make([]*Mail, len(rt.ops))
	}
	m := &Mail{mb: rt.mb, h: h}
	rt.mails[s.index] = m
	return m
}

// runMail calls the ProcessMail of each operator from index from on whose
// Mail was posted, in chain order; ran says whether any was.
func (rt *Runtime) runMail(from int) (ran bool, err error) {
	for i := from; i < len(rt.mails); i++ {
		m := rt.mails[i]
		if m == nil || !m.pending.Load() {
			continue
		}
		m.pending.Store(false) // a post from now on calls again
		ran = true
		if err := m.h.ProcessMail(); err != nil {
			return true, err
		}
	}
	return ran, nil
}

// Yield lets the task do what the operator opening with s waits for
// (Flink's MailboxExecutor.yield): the posted mail and the due
// processing-time timers of that operator and of the operators after it in
// the chain, waiting until there are some. An operator that cannot go on
// (its queue is full, its input ended with work in flight) calls it until
// it can. It returns the job's context error once the job is cancelled.
// The operators before s are not called: nothing reenters s.
func (s *Setup) Yield() error {
	rt := s.Runtime
	for {
		ran, err := rt.runMail(s.index)
		if err != nil || ran {
			return err
		}
		next, has := rt.nextProcessingTime(s.index)
		if has && rt.Now() >= next {
			now := rt.Now()
			for _, op := range rt.ops[s.index:] {
				if err := op.OnProcessingTime(now); err != nil {
					return err
				}
			}
			return nil
		}
		if err := rt.waitMail(next, has); err != nil {
			return fmt.Errorf("stream: %s: %w", s.Name, err)
		}
	}
}

// waitMail waits until mail arrives, processing time at (when has) is due
// or the job is cancelled.
func (rt *Runtime) waitMail(at int64, has bool) error {
	var timer <-chan time.Time
	if has {
		t := rt.clock.Timer(time.UnixMilli(at))
		defer t.Stop()
		timer = t.C()
	}
	ctx := rt.Context()
	select {
	case <-rt.mb.wake:
	case <-timer:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// nextProcessingTime is the earliest processing-time timer of the
// operators from index from on.
func (rt *Runtime) nextProcessingTime(from int) (int64, bool) {
	var next int64
	has := false
	for _, op := range rt.ops[from:] {
		if t, ok := op.NextProcessingTime(); ok && (!has || t < next) {
			next, has = t, true
		}
	}
	return next, has
}

// WatermarkHolder is an operator that keeps the watermarks it is given
// until the records before them are out (Flink's AsyncWaitOperator queues
// them): when HoldsWatermarks is true the task passes a watermark no
// further than the operator's OnWatermark, and the operator passes each on
// with its Setup's ReleaseWatermark, in order. The chain's watermark (the
// one Watermark returns and snapshots hold) is the one that went through
// the whole chain.
type WatermarkHolder interface {
	HoldsWatermarks() bool
}

// ReleaseWatermark passes wm, which the operator opening with s held, to
// the operators after it and on to the outputs.
func (s *Setup) ReleaseWatermark(wm int64) error {
	return s.Runtime.passWatermark(s.index+1, wm)
}

// Starter is an operator with work to do once every operator of its chain
// is open and before the first input: an async operator sends the requests
// it restored again.
type Starter interface {
	Start() error
}

// RunMail runs the mail posted to the task so far, without waiting (a
// test harness's turn of the mailbox loop).
func (rt *Runtime) RunMail() error { return rt.drainMail() }

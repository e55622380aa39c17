package flow

import (
	"context"
	"fmt"
	"sync"
)

// rounds synchronizes a fixed set of parties in numbered rounds, from 1.
// Each party arrives at the rounds in order: its k-th Arrive is its arrival
// at round k. A round is complete when every party that has not left arrived
// at it (and at least one party did). Then the decide hook runs exactly once
// for the round, and its decision, or its error, is handed to every party that
// arrived at the round. Rounds are decided one at a time, in order.
//
// A party that leaves (its task ended) no longer counts: the rounds it did
// not reach complete without it, so its leaving may itself complete a round.
// Its arrivals before it left still count.
//
// Fail, an error of the decide hook, or the end of the context of a party
// waiting for a decision fails the rounds: every waiting party, and every
// later arrival, gets the error. A party that stops waiting fails the
// rounds because it no longer takes part in the rounds the others wait for.
//
// decide runs in the goroutine of the Arrive or Leave call that completed the
// round, with that call's context, and without the lock held: it
// may take its time, and parties may arrive at later rounds meanwhile (a round
// they complete then is decided next by the same goroutine). A panic in
// decide fails the rounds, then propagates to that goroutine.
//
//	party 0: Arrive(1) ─ Wait ┐              ┌─> decision 1 ─ work ─ Arrive(2) ...
//	party 1: Arrive(1) ─ Wait ┼─ decide(1) ──┼─> decision 1 ─ work ─ Arrive(2) ...
//	party 2: ── Arrive(1) ────┘  (once)      └─> decision 1 ─ work ─ Leave
//
// Iteration runs on rounds whose parties are the subtasks of an
// iteration's tasks and whose rounds are its supersteps: every subtask
// arrives when it finished a superstep and waits (Await) for the decision
// whether another superstep follows, which the hook makes from what the
// superstep did (aggregators, termination criteria).
type rounds[D any] struct {
	decide func(ctx context.Context, round int) (D, error)

	mu       sync.Mutex
	arrivals []int  // per party: rounds it arrived at
	left     []bool // per party
	next     int    // the lowest round not decided yet
	pending  []*Round[D]
	deciding bool
	err      error
	failed   chan struct{} // closed when err is set
}

// Round is one round of a rounds, as a party that arrived at it sees it.
type Round[D any] struct {
	c    *rounds[D]
	n    int
	done chan struct{}
	d    D
	err  error
}

// newRounds returns the rounds of parties parties (numbered
// 0..parties-1) whose rounds decide decides.
func newRounds[D any](parties int, decide func(ctx context.Context, round int) (D, error)) *rounds[D] {
	return &rounds[D]{
		decide:   decide,
		arrivals: make([]int, parties),
		left:     make([]bool, parties),
		next:     1,
		failed:   make(chan struct{}),
	}
}

// Parties returns the number of parties the rounds were made with.
func (c *rounds[D]) Parties() int { return len(c.arrivals) }

// Arrive records that party arrived at its next round and returns that round,
// without waiting for its decision. If the arrival completes rounds, their
// decide hooks run now, in this goroutine, with ctx (unless another goroutine
// is deciding an earlier round: it decides them next). A party that left, or
// a party number out of range, gets a failed round.
func (c *rounds[D]) Arrive(ctx context.Context, party int) *Round[D] {
	c.mu.Lock()
	if party < 0 || party >= len(c.arrivals) {
		c.mu.Unlock()
		return c.failedRound(fmt.Errorf("flow: rounds: party %d of %d", party, len(c.arrivals)))
	}
	if c.left[party] {
		c.mu.Unlock()
		return c.failedRound(fmt.Errorf("flow: rounds: party %d arrived after it left", party))
	}
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return c.failedRound(err)
	}
	c.arrivals[party]++
	r := c.round(c.arrivals[party])
	c.advance(ctx) // unlocks
	return r
}

// Await is Arrive followed by Round.Wait: it returns the decision of the
// party's next round.
func (c *rounds[D]) Await(ctx context.Context, party int) (D, error) {
	return c.Arrive(ctx, party).Wait(ctx)
}

// Leave removes party from the rounds it did not arrive at. If the others
// all arrived at the current round, it completes now: its decide hook runs in
// this goroutine, with ctx, as in Arrive. Leaving twice is harmless.
func (c *rounds[D]) Leave(ctx context.Context, party int) {
	c.mu.Lock()
	if party < 0 || party >= len(c.arrivals) || c.left[party] {
		c.mu.Unlock()
		return
	}
	c.left[party] = true
	c.advance(ctx) // unlocks
}

// Fail fails the rounds with err: every party waiting for a decision
// gets err, and so does every later arrival. Only the first failure counts.
func (c *rounds[D]) Fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failLocked(err)
}

// Err returns the error the rounds failed with, or nil.
func (c *rounds[D]) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Failed is closed when the rounds failed (then Err says why).
func (c *rounds[D]) Failed() <-chan struct{} { return c.failed }

// Decided returns how many rounds were decided.
func (c *rounds[D]) Decided() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next - 1
}

func (c *rounds[D]) failLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	close(c.failed)
	for _, r := range c.pending {
		r.err = err
		close(r.done)
	}
	c.pending = nil
}

func (c *rounds[D]) failedRound(err error) *Round[D] {
	r := &Round[D]{c: c, done: make(chan struct{}), err: err}
	close(r.done)
	return r
}

// round returns round n, which is not decided yet, adding the rounds up to it.
func (c *rounds[D]) round(n int) *Round[D] {
	for len(c.pending) <= n-c.next {
		c.pending = append(c.pending, &Round[D]{c: c, n: c.next + len(c.pending), done: make(chan struct{})})
	}
	return c.pending[n-c.next]
}

// ready reports whether the lowest undecided round is complete.
func (c *rounds[D]) ready() bool {
	if c.err != nil || len(c.pending) == 0 {
		return false // nobody arrived at it
	}
	for p, a := range c.arrivals {
		if a < c.next && !c.left[p] {
			return false
		}
	}
	return true
}

// advance decides every complete round, in order, unless another goroutine
// is deciding (it will see the rounds this call made complete). It is called
// with c.mu held and returns with it released.
func (c *rounds[D]) advance(ctx context.Context) {
	if c.deciding {
		c.mu.Unlock()
		return
	}
	for c.ready() {
		r := c.pending[0]
		c.pending = c.pending[1:]
		c.deciding = true
		c.mu.Unlock()
		d, err := c.run(ctx, r)
		c.mu.Lock()
		c.deciding = false
		c.next++
		if err != nil {
			c.failLocked(err)
		}
		if c.err != nil {
			r.err = c.err
		} else {
			r.d = d
		}
		close(r.done)
	}
	c.mu.Unlock()
}

// run runs the decide hook for r; a panic fails the rounds, then goes on.
func (c *rounds[D]) run(ctx context.Context, r *Round[D]) (d D, err error) {
	ok := false
	defer func() {
		if !ok {
			c.mu.Lock()
			c.deciding = false
			c.failLocked(fmt.Errorf("flow: rounds: round %d: the decide hook panicked", r.n))
			r.err = c.err
			close(r.done)
			c.mu.Unlock()
		}
	}()
	d, err = c.decide(ctx, r.n)
	ok = true
	return d, err
}

// Number returns the round's number, from 1 (0 for a round an arrival that
// was refused got).
func (r *Round[D]) Number() int { return r.n }

// Done is closed once the round was decided or the rounds failed.
func (r *Round[D]) Done() <-chan struct{} { return r.done }

// Wait waits for the round's decision. If ctx ends first, it fails the
// rounds with ctx's error and returns that error.
func (r *Round[D]) Wait(ctx context.Context) (D, error) {
	select {
	case <-r.done:
		return r.d, r.err
	default:
	}
	select {
	case <-r.done:
		return r.d, r.err
	case <-ctx.Done():
		r.c.Fail(ctx.Err())
		var zero D
		return zero, ctx.Err()
	}
}

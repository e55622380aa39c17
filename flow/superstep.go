package flow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// Iteration is the runtime side of an iteration (Flink's SuperstepBarrier
// with its IterationHead): the barrier the subtasks of its tasks meet at the
// end of every superstep, the superstep running now, the iteration's end, and
// the storage that outlives supersteps.
//
// Its barrier is a Coordinator whose parties are the subtasks of the
// iteration's tasks and whose rounds are the supersteps. The end-of-superstep
// events tell each task that its superstep's input ended; the barrier tells
// the iteration that every task ended the superstep. The last subtask to
// arrive runs the decide hook once (roll the aggregators, check the
// termination criteria, swap the partial solutions): then every subtask either
// runs the next superstep or ends, and the iteration's result is readable
// (Wait returns).
//
// The iteration's users are its parties and the tasks that read its result
// once it ended; storage registered with Hold is freed when the last of them
// called Exit.
type Iteration struct {
	c      *rounds[bool]
	step   atomic.Int64
	done   chan struct{} // closed when the iteration ended, err set before
	err    error
	ending sync.Once

	mu       sync.Mutex
	users    int
	exits    int
	released bool
	release  []func()
}

// NewIteration returns an iteration whose barrier waits for parties subtasks
// (numbered 0..parties-1) and whose storage users tasks share (the parties and
// the tasks that read the result). decide runs once per superstep, after every
// party arrived, and says whether another superstep follows; an error ends the
// iteration and fails every party.
func NewIteration(parties, users int, decide func(ctx context.Context, step int) (more bool, err error)) *Iteration {
	it := &Iteration{users: users, done: make(chan struct{})}
	it.step.Store(1)
	it.c = newRounds(parties, func(ctx context.Context, step int) (bool, error) {
		more, err := decide(ctx, step)
		switch {
		case err != nil:
			it.end(err)
		case more:
			it.step.Store(int64(step + 1))
		default:
			it.end(nil)
		}
		return more, err
	})
	return it
}

func (it *Iteration) end(err error) {
	it.ending.Do(func() {
		it.err = err
		close(it.done)
	})
}

// Elsewhere says that party runs in another process of a spread job: the
// barrier here does not wait for it (each process's barrier meets its own
// parties, and the decide hook meets the other processes'). Call it before
// the parties start.
func (it *Iteration) Elsewhere(party int) { it.c.Leave(context.Background(), party) }

// Superstep returns the superstep running now, from 1. User functions may
// call it from any goroutine while the job runs.
func (it *Iteration) Superstep() int { return int(it.step.Load()) }

// Await is party's arrival at the barrier at the end of its superstep: it
// returns whether another superstep follows.
func (it *Iteration) Await(ctx context.Context, party int) (bool, error) {
	return it.c.Await(ctx, party)
}

// Fail fails the barrier: every party waiting at it, and every task waiting
// for the iteration's end, gets err.
func (it *Iteration) Fail(err error) {
	it.c.Fail(err)
	it.end(err)
}

// Wait blocks until the iteration ended: for the tasks that read its result.
func (it *Iteration) Wait(ctx context.Context) error {
	select {
	case <-it.done:
		return it.err
	case <-it.c.Failed():
		return it.c.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Hold registers free to run once every user of the iteration called Exit
// (at once if they all did).
func (it *Iteration) Hold(free func()) {
	it.mu.Lock()
	if !it.released {
		it.release = append(it.release, free)
		it.mu.Unlock()
		return
	}
	it.mu.Unlock()
	free()
}

// Exit is called once by every user when it ends; the last one frees what
// Hold registered, last first.
func (it *Iteration) Exit() {
	it.mu.Lock()
	it.exits++
	if it.exits < it.users || it.released {
		it.mu.Unlock()
		return
	}
	it.released = true
	fs := it.release
	it.release = nil
	it.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// Run drives one subtask of an iteration's task, party of its barrier: it
// puts the task's inputs numbered in (the edges inside the iteration) into
// superstep mode, then, for every superstep, runs body(step), runs what the
// superstep's operators registered with OnExit, drops what the body left
// unread of the superstep on those inputs (an operator may stop reading
// early, as a join with an empty build side skips its probe side, and its
// producers must not block on it), and arrives at the barrier. It returns
// when the barrier says the iteration ended, or with the first error.
//
// A subtask that fails neither arrives nor leaves: the job's failure cancels
// the context the others wait with, which releases them.
func (it *Iteration) Run(tc *TaskContext, party int, in []int, body func(step int) error) error {
	tc.life.iterative = true
	for _, i := range in {
		if i < 0 || i >= len(tc.inputs) {
			return fmt.Errorf("flow: vertex %q has %d inputs, no input %d", tc.Vertex, len(tc.inputs), i)
		}
		if err := tc.inputs[i].supersteps(); err != nil {
			return err
		}
	}
	ctx := tc.Context()
	for step := 1; ; step++ {
		err := body(step)
		tc.exitRun()
		if err != nil {
			return err
		}
		for _, i := range in {
			if err := tc.inputs[i].drainSuperstep(ctx); err != nil {
				return err
			}
		}
		more, err := it.Await(ctx, party)
		if err != nil {
			return err
		}
		if !more {
			it.c.Leave(ctx, party)
			return nil
		}
		for _, i := range in {
			tc.inputs[i].nextSuperstep()
		}
	}
}

// The untyped superstep mode of a Reader, for Run.

func (r *Reader[T]) supersteps() error { return r.Supersteps() }

func (r *Reader[T]) nextSuperstep() { r.NextSuperstep() }

// drainSuperstep reads and drops the rest of the superstep.
func (r *Reader[T]) drainSuperstep(ctx context.Context) error {
	for {
		if _, err := r.Next(ctx); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

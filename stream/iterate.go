package stream

import (
	"fmt"
	"sync"
	"time"
)

// IterativeStream is the head of a stream iteration (Flink's
// IterativeStream): the records of the stream it was made from and the
// records fed back by CloseWith. Use it as a DataStream for the loop's
// body.
type IterativeStream[T any] struct {
	DataStream[T]
	it *iteration
}

// iteration is one feedback loop: its head and tail nodes and the maximal
// wait of the head.
type iteration struct {
	head, tail *node
	maxWait    time.Duration
	// queues makes the feedback queues of one execution, one per subtask
	// of the head.
	queues func(n int) []feedbackQueue
}

// Iterate starts a stream iteration over ds (Flink's
// DataStream.iterate(maxWaitTime)): the IterativeStream carries ds's
// records and every record fed back by its CloseWith, at ds's parallelism.
// The head ends, and with it the loop, once ds ended and no record was fed
// back for maxWait; a maxWait of zero waits for feedback forever, for
// unbounded jobs. Iterations run in STREAMING mode only.
func Iterate[T any](ds DataStream[T], maxWait time.Duration) IterativeStream[T] {
	head := addNode[T](ds.n.env, "IterationHead", ds.edge())
	head.parallelism = ds.n.parallelism
	it := &iteration{head: head, maxWait: max(maxWait, 0)}
	it.queues = func(n int) []feedbackQueue {
		qs := make([]feedbackQueue, n)
		for i := range qs {
			qs[i] = newFeedback[T]()
		}
		return qs
	}
	head.iter = it
	head.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		op := &unionOp[T]{out: outOf[T](outs, "")}
		return []any{op}, op, nil
	}
	ds.n.env.iterations = append(ds.n.env.iterations, it)
	return IterativeStream[T]{DataStream: DataStream[T]{n: head}, it: it}
}

// CloseWith feeds feedback back to the head (Flink's closeWith): subtask i
// of feedback's operator feeds subtask i of the head, so their
// parallelisms must be equal. It returns feedback.
func (s IterativeStream[T]) CloseWith(feedback DataStream[T]) DataStream[T] {
	env := s.n.env
	if s.it.tail != nil {
		env.fail(caller(1), fmt.Errorf("CloseWith: the iteration is closed already"))
		return feedback
	}
	if feedback.n.env != env {
		env.fail(caller(1), fmt.Errorf("CloseWith: the feedback stream belongs to another program"))
		return feedback
	}
	e := feedback.edge()
	e.part = partitioning{kind: partForward}
	tail := addNode[T](env, "IterationTail", e)
	s.it.tail = tail
	it := s.it
	tail.build = func(rt *taskRuntime, _ map[string]any) ([]any, operator, error) {
		if rt.p == nil {
			return nil, nil, fmt.Errorf("iterations run in jobs only")
		}
		q := rt.p.feedback[it][rt.subtask].(*feedbackChan[T])
		return []any{q}, base{}, nil
	}
	return feedback
}

// feedbackQueue is the channel from subtask i of an iteration's tail to
// subtask i of its head, in the same process (Flink's BlockingQueueBroker).
// It is unbounded: the tail never waits for the head, so the loop has no
// cycle of waits and backpressure on the credit queues of the loop's body
// cannot deadlock it; the records in flight around the loop are held in
// memory.
type feedbackQueue interface {
	// ready receives when records were added since the last take.
	ready() <-chan time.Time
	// drain pushes what was fed back to target, an output[T], in batches
	// of at most size, and says whether there was anything.
	drain(target any, size int) (bool, error)
	// end makes later feedback a no-op: the head ended.
	end()
}

type feedbackChan[T any] struct {
	mu    sync.Mutex
	recs  []Record[T]
	spare []Record[T]
	ended bool
	wake  chan time.Time
}

func newFeedback[T any]() *feedbackChan[T] { return &feedbackChan[T]{wake: make(chan time.Time, 1)} }

// push is the tail's input: it appends a copy of b.
func (f *feedbackChan[T]) push(b []Record[T]) error {
	f.mu.Lock()
	if f.ended {
		f.mu.Unlock()
		return nil // Flink's rule: feedback after the head's timeout is lost
	}
	f.recs = append(f.recs, b...)
	f.mu.Unlock()
	select {
	case f.wake <- time.Time{}:
	default:
	}
	return nil
}

func (f *feedbackChan[T]) ready() <-chan time.Time { return f.wake }

func (f *feedbackChan[T]) drain(target any, size int) (bool, error) {
	f.mu.Lock()
	recs := f.recs
	f.recs = f.spare[:0]
	f.mu.Unlock()
	if len(recs) == 0 {
		f.spare = recs
		return false, nil
	}
	out := target.(output[T])
	var err error
	for b := recs; len(b) > 0 && err == nil; {
		n := min(len(b), size)
		err = out.push(b[:n])
		b = b[n:]
	}
	clear(recs)
	f.spare = recs[:0]
	return true, err
}

func (f *feedbackChan[T]) end() {
	f.mu.Lock()
	f.ended = true
	f.recs = nil
	f.mu.Unlock()
}

package stream

import (
	"fmt"
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
	it := newIteration[T, T](ds, maxWait)
	it.head.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		op := &unionOp[T]{out: outOf[T](outs, "")}
		return []any{op}, op, nil
	}
	return IterativeStream[T]{DataStream: DataStream[T]{n: it.head}, it: it}
}

// newIteration adds the head of an iteration over ds whose feedback is of
// type F; the caller sets its build.
func newIteration[T, F any](ds DataStream[T], maxWait time.Duration) *iteration {
	head := addNode[T](ds.n.env, "IterationHead", ds.edge())
	head.parallelism = ds.n.parallelism
	it := &iteration{head: head, maxWait: max(maxWait, 0)}
	it.queues = func(n int) []feedbackQueue {
		qs := make([]feedbackQueue, n)
		for i := range qs {
			qs[i] = newFeedback[F](fmt.Sprintf("feedback-%d-%d", head.id, i))
		}
		return qs
	}
	head.iter = it
	ds.n.env.iterations = append(ds.n.env.iterations, it)
	return it
}

// CloseWith feeds feedback back to the head (Flink's closeWith): subtask i
// of feedback's operator feeds subtask i of the head, so their
// parallelisms must be equal, and feedback must be made from the
// iteration's stream. It returns feedback.
func (s IterativeStream[T]) CloseWith(feedback DataStream[T]) DataStream[T] {
	closeIteration(s.it, feedback, caller(1))
	return feedback
}

// ConnectedIterativeStreams is the head of a stream iteration whose
// feedback has a type of its own (Flink's ConnectedIterativeStreams, from
// IterativeStream.withFeedbackType): the original input, of type I, and
// the records fed back by CloseWith, of type F, connected as in
// ConnectedStreams. Apply CoMap, CoFlatMap or CoProcess to its
// ConnectedStreams: the first function sees the input, the second the
// feedback.
type ConnectedIterativeStreams[I, F any] struct {
	ConnectedStreams[I, F]
	it *iteration
}

// feedbackPort is the output of a connected iteration's head that carries
// the records fed back.
const feedbackPort = "feedback"

// IterateWithFeedback starts a stream iteration over ds whose feedback is
// of type F (Flink's ds.iterate(maxWaitTime).withFeedbackType(F)). Its
// head reads ds and the feedback as Iterate's does, at ds's parallelism,
// and sends them to the two inputs of the co-operator applied to the
// result, subtask i to subtask i; maxWait ends the loop as in Iterate.
func IterateWithFeedback[I, F any](ds DataStream[I], maxWait time.Duration) ConnectedIterativeStreams[I, F] {
	it := newIteration[I, F](ds, maxWait)
	head := it.head
	sidePort[F](head, feedbackPort)
	head.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		op := &unionOp[I]{out: outOf[I](outs, "")}
		rt.feedbackOut = outOf[F](outs, feedbackPort)
		return []any{op}, op, nil
	}
	cs := Connect(DataStream[I]{n: head}, DataStream[F]{n: head, port: feedbackPort})
	return ConnectedIterativeStreams[I, F]{ConnectedStreams: cs, it: it}
}

// CloseWith feeds feedback back to the head as the second input of the
// co-operator (Flink's ConnectedIterativeStreams.closeWith), under
// IterativeStream.CloseWith's rules. It returns feedback.
func (s ConnectedIterativeStreams[I, F]) CloseWith(feedback DataStream[F]) DataStream[F] {
	closeIteration(s.it, feedback, caller(1))
	return feedback
}

// closeIteration adds it's tail after feedback.
func closeIteration[F any](it *iteration, feedback DataStream[F], where string) {
	env := it.head.env
	if it.tail != nil {
		env.fail(where, fmt.Errorf("CloseWith: the iteration is closed already"))
		return
	}
	if feedback.n.env != env {
		env.fail(where, fmt.Errorf("CloseWith: the feedback stream belongs to another program"))
		return
	}
	if !reaches(it.head, feedback.n, map[*node]bool{}) {
		env.fail(where, fmt.Errorf("CloseWith: Cannot close an iteration with a feedback DataStream that does not originate from said iteration"))
		return
	}
	e := feedback.edge()
	e.part = partitioning{kind: partForward}
	tail := addNode[F](env, "IterationTail", e)
	it.tail = tail
	tail.build = func(rt *taskRuntime, _ map[string]any) ([]any, operator, error) {
		if rt.p == nil {
			return nil, nil, fmt.Errorf("iterations run in jobs only")
		}
		q := rt.p.feedback[it][rt.subtask].(*feedbackChan[F])
		in := pushFunc[F](func(b []Record[F]) error {
			n, err := q.push(rt.env, b)
			rt.spilled(n)
			return err
		})
		return []any{in}, base{}, nil
	}
}

// reaches says whether from is n or one of its transitive inputs.
func reaches(from, n *node, seen map[*node]bool) bool {
	if n == from {
		return true
	}
	if seen[n] {
		return false
	}
	seen[n] = true
	for _, e := range n.inputs {
		if reaches(from, e.from, seen) {
			return true
		}
	}
	return false
}

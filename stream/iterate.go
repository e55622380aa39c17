package stream

import (
	"fmt"
	"time"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/task"
)

// IterativeStream is the head of a stream iteration (Flink's
// IterativeStream): the records of the stream it was made from and the
// records fed back by CloseWith. Use it as a DataStream for the loop's
// body.
type IterativeStream[T any] struct {
	DataStream[T]
	it *graph.Iteration
}

// Iterate starts a stream iteration over ds (Flink's
// DataStream.iterate(maxWaitTime)): the IterativeStream carries ds's
// records and every record fed back by its CloseWith, at ds's parallelism.
// The head ends, and with it the loop, once ds ended and no record was fed
// back for maxWait; a maxWait of zero waits for feedback forever, for
// unbounded jobs. Iterations run in STREAMING mode only.
func Iterate[T any](ds DataStream[T], maxWait time.Duration) IterativeStream[T] {
	it := newIteration[T, T](ds, maxWait)
	it.Head.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		q := b.Feedback.(*task.Feedback[T])
		h := task.NewHead[T](q, core.OutOf[T](outs, ""), b.Node.Name)
		q.SetTarget(h)
		return []any{h}, h, nil
	}
	return IterativeStream[T]{DataStream: stream[T](ds.env, it.Head), it: it}
}

// newIteration adds the head of an iteration over ds whose feedback is of
// type F; the caller sets its build.
func newIteration[T, F any](ds DataStream[T], maxWait time.Duration) *graph.Iteration {
	head := addNode[T](ds.env, "IterationHead", "IterationHead", ds.edge())
	head.Parallelism = ds.n.Parallelism
	it := &graph.Iteration{Head: head, MaxWait: max(maxWait, 0)}
	it.Queue = func(i int) task.FeedbackQueue {
		return task.NewFeedback[F](fmt.Sprintf("feedback-%d-%d", head.ID, i))
	}
	head.Iter = it
	ds.env.p.Iterations = append(ds.env.p.Iterations, it)
	return it
}

// CloseWith feeds feedback back to the head (Flink's closeWith): subtask i
// of feedback's operator feeds subtask i of the head, so their
// parallelisms must be equal, and feedback must be made from the
// iteration's stream. It returns feedback.
func (s IterativeStream[T]) CloseWith(feedback DataStream[T]) DataStream[T] {
	closeIteration(s.env, s.it, feedback, caller(1))
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
	it *graph.Iteration
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
	head := it.Head
	graph.SidePort[F](head, feedbackPort)
	head.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		q := b.Feedback.(*task.Feedback[F])
		q.SetTarget(core.OutOf[F](outs, feedbackPort))
		h := task.NewHead[I](q, core.OutOf[I](outs, ""), b.Node.Name)
		return []any{h}, h, nil
	}
	cs := Connect(stream[I](ds.env, head), DataStream[F]{env: ds.env, n: head, port: feedbackPort})
	return ConnectedIterativeStreams[I, F]{ConnectedStreams: cs, it: it}
}

// CloseWith feeds feedback back to the head as the second input of the
// co-operator (Flink's ConnectedIterativeStreams.closeWith), under
// IterativeStream.CloseWith's rules. It returns feedback.
func (s ConnectedIterativeStreams[I, F]) CloseWith(feedback DataStream[F]) DataStream[F] {
	closeIteration(s.ConnectedStreams.a.env, s.it, feedback, caller(1))
	return feedback
}

// closeIteration adds it's tail after feedback.
func closeIteration[F any](env *Env, it *graph.Iteration, feedback DataStream[F], where string) {
	if it.Tail != nil {
		env.fail(where, fmt.Errorf("CloseWith: the iteration is closed already"))
		return
	}
	if feedback.n.Program != it.Head.Program {
		env.fail(where, fmt.Errorf("CloseWith: the feedback stream belongs to another program"))
		return
	}
	if !graph.Reaches(it.Head, feedback.n) {
		env.fail(where, fmt.Errorf("CloseWith: Cannot close an iteration with a feedback DataStream that does not originate from said iteration"))
		return
	}
	e := feedback.edge()
	e.Part = graph.Partitioning{Kind: graph.PartForward}
	tail := addNode[F](env, "IterationTail", "IterationTail", e)
	it.Tail = tail
	tail.Build = func(b *graph.Build, _ map[string]any) ([]any, task.Operator, error) {
		q, ok := b.Feedback.(*task.Feedback[F])
		if !ok {
			return nil, nil, fmt.Errorf("iterations run in jobs only")
		}
		t := task.NewTail(q)
		return []any{t}, t, nil
	}
}

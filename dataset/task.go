package dataset

import (
	"errors"
	"io"
	"iter"

	"github.com/weirdata/weir/flow"
)

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// drive reads input 0 of a task (records of T) and pushes every batch into c,
// then ends it.
func drive[T any](tc *task, c collector[T]) error {
	in := flow.Input[T](tc.TaskContext, 0)
	for {
		b, err := in.Next(tc.Context())
		if err != nil {
			if isEOF(err) {
				return c.End()
			}
			return err
		}
		if err := c.Collect(b); err != nil {
			return err
		}
	}
}

// task is one subtask of a vertex as the dataset operators see it: the flow
// task context, whose lifecycle runs what the operators registered when the
// body returns (flow.TaskContext.OnExit, Keep), and what the operators need
// to know of the program.
type task struct {
	*flow.TaskContext
	// memShare is the managed memory each memory-using operator instance may
	// hold (0: no limit but the budget's); see Env.memoryShare.
	memShare int64
	// loop, in the tasks of an iteration, is the iteration, and step the
	// current superstep (from 1).
	loop *loop
	step int
}

// keep stores v under key for the next supersteps of a loop's task, where
// kept finds it, and registers release to run when the task ends.
func (t *task) keep(key, v any, release func()) { t.Keep(key, v, release) }

// kept returns what keep stored under key in an earlier superstep, or nil.
func (t *task) kept(key any) any { return t.Kept(key) }

// drop forgets what was kept under key; its release still runs when the task
// ends.
func (t *task) drop(key any) { t.Drop(key) }

// onExit registers f to run when the task's body returns: in a loop's tasks,
// at the end of each superstep.
func (t *task) onExit(f func()) { t.OnExit(f) }

// readBatches yields the batches of input 0 of a task (records of T) until the
// input ends; a read error stops it and is stored in *errp. A batch is valid
// until the loop asks for the next.
func readBatches[T any](tc *task, errp *error) iter.Seq[[]T] {
	return func(yield func([]T) bool) {
		in := flow.Input[T](tc.TaskContext, 0)
		for {
			b, err := in.Next(tc.Context())
			if err != nil {
				if !isEOF(err) {
					*errp = err
				}
				return
			}
			if !yield(b) {
				return
			}
		}
	}
}

// flowInput is flow.Input for a dataset task.
func flowInput[T any](tc *task, i int) *flow.Reader[T] { return flow.Input[T](tc.TaskContext, i) }

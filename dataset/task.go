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
func drive[T any](tc *task, c collector[T]) error { return flow.Pump(tc.TaskContext, 0, c) }

// readBatches yields the batches of input 0 of a task (records of T); see
// flow.Batches.
func readBatches[T any](tc *task, errp *error) iter.Seq[[]T] {
	return flow.Batches[T](tc.TaskContext, 0, errp)
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

// flowInput is flow.Input for a dataset task.
func flowInput[T any](tc *task, i int) *flow.Reader[T] { return flow.Input[T](tc.TaskContext, i) }

package dataset

import (
	"errors"
	"io"

	"github.com/weirdata/weir/flow"
)

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// task is one subtask of a vertex as the dataset operators see it: the flow
// task context, whose lifecycle runs what the operators registered when the
// body returns (flow.TaskContext.OnExit, Keep), and what the operators need
// to know of the program.
type task struct {
	*flow.TaskContext
	// memShare is the managed memory each memory-using operator instance may
	// hold (0: no limit but the budget's); see Env.memoryShare.
	memShare int64
	// spread: the job runs in several processes (Options.Spread), so a
	// source's subtasks take their splits by subtask, not from a shared
	// counter.
	spread bool
	// loop, in the tasks of an iteration, is the iteration, and step the
	// current superstep (from 1).
	loop *loop
	step int
}

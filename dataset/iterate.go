package dataset

import (
	"context"
	"fmt"

	"github.com/weirdata/weir/internal/typed"
)

// Iteration is the handle a step function gets: the current superstep, the
// iteration's aggregators and its termination criteria.
type Iteration struct{ lp *loop }

// Superstep returns the superstep running now, from 1. User functions of the
// step may call it while the job runs (it is 0 before the first run).
func (it *Iteration) Superstep() int {
	if it.lp.it == nil {
		return 0
	}
	return it.lp.it.Superstep()
}

// ConvergeWhen ends the iteration after the first superstep for which fn
// returns true. fn runs at the superstep barrier, after the aggregators rolled:
// their Previous values are that superstep's (Flink's convergence criterion).
// Spread over processes (Options.Spread), fn runs in part 0 only, on the
// values of every process.
func (it *Iteration) ConvergeWhen(fn func(superstep int) bool) {
	it.lp.converged = fn
	it.lp.model() // the planner expects fewer supersteps
}

// TerminateWhenEmpty ends the iteration after the first superstep in which
// criterion, a data set computed by the step function, is empty (Flink's
// closeWith(next, criterion)).
func TerminateWhenEmpty[C any](it *Iteration, criterion *DataSet[C]) {
	lp := it.lp
	n := newLoopTail[C](lp, criterion, "TerminateWhenEmpty at "+caller(1), nil, nil)
	lp.criterion = n
}

// Iterate runs a bulk iteration (Flink's DataSet.iterate): step computes the
// next partial solution from the current one; the first superstep starts from
// initial. The iteration ends after maxIterations supersteps, or earlier when
// a termination criterion (TerminateWhenEmpty) or a convergence criterion
// (ConvergeWhen) says so; its result is the last partial solution.
//
// The step runs inside the dataflow, as in Flink: its operators run once per
// superstep in long-lived tasks, the end of a superstep travels through the
// exchanges as an in-band event, and the partial solution stays partitioned
// in managed memory between supersteps (spilling past the budget). Data sets
// from outside the step that the step reads (loop-invariant inputs, such as
// the edges of a graph) are computed once and replayed every superstep, as
// the same Go values while they fit the budget: the step's functions must not
// modify the memory their slices point to. Sinks belong after the iteration,
// on its result.
func Iterate[T any](initial *DataSet[T], maxIterations int, step func(it *Iteration, partial *DataSet[T]) *DataSet[T]) *DataSet[T] {
	env := initial.env
	where := "Iterate at " + caller(1)
	lp := env.newLoop(where, maxIterations)
	if maxIterations < 1 {
		env.fail(where, fmt.Errorf("maxIterations is %d: want at least 1", maxIterations))
	}
	st := &bulkState[T]{}
	head := newLoopHead(lp, initial, where, func(tc *task, c collector[T]) error {
		if s := st.cur[tc.Subtask]; s != nil {
			return s.Replay(tc.Context(), env.opts.BatchSize, c.Collect)
		}
		return nil
	})
	next := step(&Iteration{lp: lp}, head)
	if next == nil || next.env != env {
		env.fail(where, fmt.Errorf("the step function returned no data set of this program"))
		return head
	}
	p := head.n.opt.Parallelism
	codec := typed.CodecOrNil[T]()
	if codec == nil {
		env.fail(where, fmt.Errorf("%s has no serializer: the partial solution is kept serialized between supersteps", typeName[T]()))
	}
	reset := func() { st.cur, st.next = make([]*typed.Spool[T], p), make([]*typed.Spool[T], p) }
	tail := newLoopTail[T](lp, next, "Next partial solution of "+where, reset, func(tc *task) *typed.Spool[T] {
		if st.next[tc.Subtask] == nil {
			s := typed.NewSpool[T](tc.Env, fmt.Sprintf("partial solution %d", tc.Subtask), codec)
			lp.hold(s.Release)
			st.next[tc.Subtask] = s
		}
		return st.next[tc.Subtask]
	})
	tail.opt.Parallelism = p
	lp.next = tail
	lp.seal(where)
	// the next partial solution becomes the current one at every barrier
	lp.onStep = append(lp.onStep, func(context.Context) error {
		st.cur, st.next = st.next, st.cur
		for _, s := range st.next {
			if s != nil {
				s.Reset()
			}
		}
		return nil
	})
	return newLoopResult(lp, "Result of "+where, head.n, func(tc *task, c collector[T]) error {
		s := st.cur[tc.Subtask]
		if s == nil {
			return nil
		}
		return s.Replay(tc.Context(), env.opts.BatchSize, c.Collect)
	})
}

// bulkState is a bulk iteration's partial solutions: per subtask, the one the
// head replays this superstep (cur) and the one the tail fills (next).
type bulkState[T any] struct {
	cur, next []*typed.Spool[T]
}

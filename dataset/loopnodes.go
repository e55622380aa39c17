package dataset

import (
	"fmt"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/optimizer"
)

// newLoopHead adds an iteration's head: in the first superstep it passes on
// initial; in every later one, what replay emits (the partial solution or
// workset the tails stored at the previous barrier).
func newLoopHead[T any](lp *loop, initial *DataSet[T], where string, replay func(tc *task, c collector[T]) error) *DataSet[T] {
	env := initial.env
	n := env.newNode(optimizer.MapPartition, "Iteration head of "+where, initial.n)
	n.opt.Parallelism = initial.n.opt.Parallelism
	n.loop, n.role = lp, loopSource
	lp.head = n
	connectInput[T](n, 0, nil)
	n.run = func(tc *task, out any) error {
		c, err := asCollector[T](n, out)
		if err != nil {
			return err
		}
		if tc.step == 1 {
			return drive(tc, c)
		}
		if err := replay(tc, c); err != nil {
			return err
		}
		return c.close()
	}
	return newDataSet[T](env, n)
}

// newReplayer adds the node that replays in, a loop-invariant input of lp's
// step, every superstep: it reads in once, in the first superstep, keeping it
// in a spool (managed memory, spilling), and replays the spool afterwards.
func newReplayer[T any](lp *loop, in *node) *node {
	env := in.env
	n := env.newNode(optimizer.MapPartition, fmt.Sprintf("Replay %s in every superstep", in.name()), in)
	n.opt.Parallelism = in.opt.Parallelism
	n.loop, n.role = lp, loopSource
	n.opt.PreservesAll = true // the same records every superstep
	connectInput[T](n, 0, nil)
	codec := codecOrNil[T](env)
	if codec == nil {
		env.fail(lp.name, fmt.Errorf("%s has no serializer: a loop-invariant input is kept serialized between supersteps", typeName[T]()))
	}
	var spools []*spool[T]
	n.reset = func() { spools = make([]*spool[T], n.opt.Parallelism) }
	n.run = func(tc *task, out any) error {
		c, err := asCollector[T](n, out)
		if err != nil {
			return err
		}
		if tc.step > 1 {
			if err := spools[tc.Subtask].replay(tc.Context(), env.opts.BatchSize, c.collect); err != nil {
				return err
			}
			return c.close()
		}
		s := newSpool[T](tc.Env, fmt.Sprintf("loop-invariant input %d", tc.Subtask), codec)
		lp.hold(s.release)
		spools[tc.Subtask] = s
		in := flow.Input[T](tc.TaskContext, 0)
		for {
			b, err := in.Next(tc.Context())
			if err != nil {
				if isEOF(err) {
					return c.close()
				}
				return err
			}
			if err := s.add(b); err != nil {
				return err
			}
			if err := c.collect(b); err != nil {
				return err
			}
		}
	}
	newDataSet[T](env, n)
	return n
}

// newLoopTail adds a tail of lp reading ds: it counts the records of every
// superstep and, when store is set, adds them to the spool store returns.
func newLoopTail[T any](lp *loop, ds *DataSet[T], name string, store func(tc *task) *spool[T]) *node {
	n := ds.env.newNode(optimizer.Sink, name, ds.n)
	lp.tail(n)
	connectInput[T](n, 0, nil)
	n.run = func(tc *task, _ any) error {
		var s *spool[T]
		if store != nil {
			s = store(tc)
		}
		count := lp.counts[n]
		in := flow.Input[T](tc.TaskContext, 0)
		for {
			b, err := in.Next(tc.Context())
			if err != nil {
				if isEOF(err) {
					return nil
				}
				return err
			}
			n.rows.Add(int64(len(b)))
			count.Add(int64(len(b)))
			if s != nil {
				if err := s.add(b); err != nil {
					return err
				}
			}
		}
	}
	return n
}

// newLoopResult adds the source of an iteration's result: its subtasks wait
// until the iteration ended, then emit what emit gives them.
func newLoopResult[T any](lp *loop, name string, emit func(tc *task, c collector[T]) error) *DataSet[T] {
	env := lp.env
	n := env.newNode(optimizer.Source, name)
	n.opt.Parallelism = lp.head.opt.Parallelism
	n.opt.EstimatedRows = lp.head.inputs[0].opt.EstimatedRows
	n.resultOf = lp
	n.run = func(tc *task, out any) error {
		c, err := asCollector[T](n, out)
		if err != nil {
			return err
		}
		if err := lp.waitDone(tc.Context()); err != nil {
			return err
		}
		if err := emit(tc, c); err != nil {
			return err
		}
		return c.close()
	}
	return newDataSet[T](env, n)
}

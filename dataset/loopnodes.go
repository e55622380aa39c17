package dataset

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/typed"
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
	codec := typed.CodecOrNil[T]()
	var first []*typed.Spool[T] // superstep 1: the initial input, per subtask
	n.reset = func() { first = make([]*typed.Spool[T], n.opt.Parallelism) }
	n.run = func(tc *task, out any) error {
		c, err := asCollector[T](n, out)
		if err != nil {
			return err
		}
		if tc.step == 1 {
			s := typed.NewSpool[T](tc.Env, fmt.Sprintf("initial input %d", tc.Subtask), codec)
			first[tc.Subtask] = s
			if err := s.Fill(tc.Context(), flowInput[T](tc, 0)); err != nil {
				return err
			}
			defer func() { s.Release(); first[tc.Subtask] = nil }()
			return emitEach(tc, c, func(c collector[T]) error {
				return s.Replay(tc.Context(), env.opts.BatchSize, c.Collect)
			})
		}
		return emitEach(tc, c, func(c collector[T]) error { return replay(tc, c) })
	}
	return newDataSet[T](env, n)
}

// emitEach runs emit once per output edge of a loop source, each in its own
// goroutine, and closes the outputs (ending the superstep). A step whose
// branches rejoin (the partial solution read by two operators that meet
// again) then cannot deadlock on a full exchange: no edge waits for another.
func emitEach[T any](tc *task, c collector[T], emit func(c collector[T]) error) error {
	outs := []collector[T]{c}
	var rows *atomic.Int64
	if cc, ok := c.(*countingCollector[T]); ok {
		if f, ok := cc.collector.(*fanout[T]); ok && len(f.outs) > 1 {
			outs, rows = f.outs, cc.rows
		}
	}
	if len(outs) == 1 {
		if err := emit(c); err != nil {
			return err
		}
		return c.End()
	}
	errs := make([]error, len(outs))
	var wg sync.WaitGroup
	for i, o := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var oc collector[T] = o
			if i == 0 {
				oc = &countingCollector[T]{collector: o, rows: rows}
			}
			if errs[i] = emit(oc); errs[i] == nil {
				errs[i] = o.End()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
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
	codec := typed.CodecOrNil[T]()
	if codec == nil {
		env.fail(lp.name, fmt.Errorf("%s has no serializer: a loop-invariant input is kept serialized between supersteps", typeName[T]()))
	}
	var spools []*typed.Spool[T]
	// the plan may ship the input into the replayer for its consumer, at
	// the consumer's parallelism (bind runs before reset)
	n.reset = func() { spools = make([]*typed.Spool[T], n.planned.Parallelism) }
	n.run = func(tc *task, out any) error {
		c, err := asCollector[T](n, out)
		if err != nil {
			return err
		}
		if tc.step == 1 {
			s := typed.NewSpool[T](tc.Env, fmt.Sprintf("loop-invariant input %d", tc.Subtask), codec)
			lp.hold(s.Release)
			spools[tc.Subtask] = s
			if err := s.Fill(tc.Context(), flowInput[T](tc, 0)); err != nil {
				return err
			}
		}
		return emitEach(tc, c, func(c collector[T]) error {
			return spools[tc.Subtask].Replay(tc.Context(), env.opts.BatchSize, c.Collect)
		})
	}
	newDataSet[T](env, n)
	return n
}

// newLoopTail adds a tail of lp reading ds: it counts the records of every
// superstep and, when store is set, adds them to the spool store returns.
func newLoopTail[T any](lp *loop, ds *DataSet[T], name string, store func(tc *task) *typed.Spool[T]) *node {
	n := ds.env.newNode(optimizer.Sink, name, ds.n)
	lp.tail(n)
	connectInput[T](n, 0, nil)
	n.run = func(tc *task, _ any) error {
		var s *typed.Spool[T]
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
				if err := s.Add(b); err != nil {
					return err
				}
			}
		}
	}
	return n
}

// newLoopResult adds the source of an iteration's result: its subtasks wait
// until the iteration ended, then emit what emit gives them. The planner
// estimates it as large as sizeOf (the partial solution or the solution
// set's input).
func newLoopResult[T any](lp *loop, name string, sizeOf *node, emit func(tc *task, c collector[T]) error) *DataSet[T] {
	env := lp.env
	n := env.newNode(optimizer.Source, name)
	n.opt.Parallelism = lp.head.opt.Parallelism
	n.opt.SizeOf = &sizeOf.opt
	n.resultOf = lp
	n.run = func(tc *task, out any) error {
		c, err := asCollector[T](n, out)
		if err != nil {
			return err
		}
		if err := lp.it.Wait(tc.Context()); err != nil {
			return err
		}
		if err := emit(tc, c); err != nil {
			return err
		}
		return c.End()
	}
	return newDataSet[T](env, n)
}

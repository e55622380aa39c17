package dataset

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/optimizer"
)

// newLoopHead adds an iteration's head: in the first superstep it passes on
// initial; in every later one, what replay emits (the partial solution or
// workset the tails stored at the previous barrier).
func newLoopHead[T any](lp *loop, initial *DataSet[T], where string, replay func(tc *task, c collector[T]) error) *DataSet[T] {
	env := initial.env
	n := env.newNode(optimizer.MapPartition, "Iteration head of "+where, initial.n)
	n.opt.Parallelism = initial.n.opt.Parallelism
	n.join(lp, loopSource)
	lp.head = n
	connectInput[T](n, 0, nil)
	codec := typed.CodecOrNil[T]()
	n.op = pulls[T](&loopHeadOp[T]{env: env, n: n, codec: codec, replay: replay})
	return newDataSet[T](env, n)
}

// loopHeadOp is an iteration head's operator.
type loopHeadOp[T any] struct {
	stateless
	env    *Env
	n      *node
	codec  *memory.Codec[T]
	replay func(tc *task, c collector[T]) error
	first  []*typed.Spool[T] // superstep 1: the initial input, per subtask
}

func (o *loopHeadOp[T]) reset() { o.first = make([]*typed.Spool[T], o.n.opt.Parallelism) }

func (o *loopHeadOp[T]) run(tc *task, c collector[T]) error {
	if tc.step == 1 {
		s := typed.NewSpool[T](tc.Env, fmt.Sprintf("initial input %d", tc.Subtask), o.codec)
		o.first[tc.Subtask] = s
		defer func() { s.Release(); o.first[tc.Subtask] = nil }() // on a failed Fill too
		if err := s.Fill(tc.Context(), flow.Input[T](tc.TaskContext, 0)); err != nil {
			return err
		}
		return emitEach(tc, c, func(c collector[T]) error {
			return s.Replay(tc.Context(), o.env.opts.BatchSize, c.Collect)
		})
	}
	return emitEach(tc, c, func(c collector[T]) error { return o.replay(tc, c) })
}

// emitEach runs emit once per output edge of a loop source, each in its own
// goroutine, and closes the outputs (ending the superstep). A step whose
// branches rejoin (the partial solution read by two operators that meet
// again) then cannot deadlock on a full exchange: no edge waits for another.
func emitEach[T any](tc *task, c collector[T], emit func(c collector[T]) error) error {
	outs := []collector[T]{c}
	var rows *atomic.Int64
	if cc, ok := c.(*flow.Counting[T]); ok {
		if f, ok := cc.Collector.(*flow.Fanout[T]); ok && len(f.Outs) > 1 {
			outs, rows = f.Outs, cc.Rows
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
				oc = &flow.Counting[T]{Collector: o, Rows: rows}
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
// in a typed.Cache (Go values in managed memory, or serialized and spilling
// when they do not fit), and replays the cache afterwards.
func newReplayer[T any](lp *loop, in *node) *node {
	env := in.env
	n := env.newNode(optimizer.MapPartition, fmt.Sprintf("Replay %s in every superstep", in.name()), in)
	n.opt.Parallelism = in.opt.Parallelism
	n.join(lp, loopSource)
	n.opt.PreservesAll = true // the same records every superstep
	connectInput[T](n, 0, nil)
	codec := typed.CodecOrNil[T]()
	if codec == nil {
		env.fail(lp.name, fmt.Errorf("%s has no serializer: a loop-invariant input is kept serialized between supersteps", typeName[T]()))
	}
	n.op = pulls[T](&replayerOp[T]{env: env, n: n, lp: lp, codec: codec})
	newDataSet[T](env, n)
	return n
}

// replayerOp is a replayer's operator. The plan may ship the input into the
// replayer for its consumer, at the consumer's parallelism (bind runs before
// reset).
type replayerOp[T any] struct {
	stateless
	env    *Env
	n      *node
	lp     *loop
	codec  *memory.Codec[T]
	caches []*typed.Cache[T]
}

func (o *replayerOp[T]) reset() { o.caches = make([]*typed.Cache[T], o.n.planned.Parallelism) }

func (o *replayerOp[T]) run(tc *task, c collector[T]) error {
	if tc.step == 1 {
		s := typed.NewCache[T](tc.Env, fmt.Sprintf("loop-invariant input %d", tc.Subtask), o.codec)
		o.lp.hold(s.Release)
		o.caches[tc.Subtask] = s
		if err := s.Fill(tc.Context(), flow.Input[T](tc.TaskContext, 0)); err != nil {
			return err
		}
		tc.Metrics.AddSpilled(s.SpilledBytes())
	}
	return emitEach(tc, c, func(c collector[T]) error {
		return o.caches[tc.Subtask].Replay(tc.Context(), o.env.opts.BatchSize, c.Collect)
	})
}

// newLoopTail adds a tail of lp reading ds: it counts the records of every
// superstep and, when store is set, adds them to the spool store returns.
// reset, when set, prepares the spools' state for an execution.
func newLoopTail[T any](lp *loop, ds *DataSet[T], name string, reset func(), store func(tc *task) *typed.Spool[T]) *node {
	n := ds.env.newNode(optimizer.Sink, name, ds.n)
	lp.tail(n)
	connectInput[T](n, 0, nil)
	n.op = pulls[none](&loopTailOp[T]{n: n, lp: lp, store: store, onReset: reset})
	return n
}

// loopTailOp is an iteration tail's operator.
type loopTailOp[T any] struct {
	stateless
	n       *node
	lp      *loop
	store   func(tc *task) *typed.Spool[T]
	onReset func()
}

func (o *loopTailOp[T]) reset() {
	if o.onReset != nil {
		o.onReset()
	}
}

func (o *loopTailOp[T]) run(tc *task, _ collector[none]) error {
	var s *typed.Spool[T]
	if o.store != nil {
		s = o.store(tc)
	}
	count := o.lp.counts[o.n]
	in := flow.Input[T](tc.TaskContext, 0)
	for {
		b, err := in.Next(tc.Context())
		if err != nil {
			if isEOF(err) {
				return nil
			}
			return err
		}
		o.n.rows.Add(int64(len(b)))
		count.Add(int64(len(b)))
		if s != nil {
			if err := s.Add(b); err != nil {
				return err
			}
		}
	}
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
	n.member().resultOf = lp
	n.op = pulls[T](&loopResultOp[T]{lp: lp, emit: emit})
	return newDataSet[T](env, n)
}

// loopResultOp is the operator of an iteration's result source.
type loopResultOp[T any] struct {
	stateless
	lp   *loop
	emit func(tc *task, c collector[T]) error
}

func (o *loopResultOp[T]) run(tc *task, c collector[T]) error {
	if err := o.lp.it.Wait(tc.Context()); err != nil {
		return err
	}
	if err := o.emit(tc, c); err != nil {
		return err
	}
	return c.End()
}

package dataset

import (
	"iter"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/optimizer"
	"github.com/weirdata/weir/resource"
)

// Resources is what a Gather function draws on: the job's memory manager
// (reservations it must release before it returns), its spill file system and
// options, and Workers, the job's parallelism: how many goroutines the
// function may keep busy at once.
type Resources struct {
	resource.Env
	Workers int
}

// Gather calls fn once, in one subtask, with every record of ds (from all of
// its subtasks) and the job's resources; fn emits any number of results and
// returns an error to fail the job. vals may be ranged over once. It is the
// seam of libraries that run a computation of their own on the job's budget,
// such as the graph package's iterations.
func Gather[T, U any](ds *DataSet[T], fn func(r Resources, vals iter.Seq[T], emit func(U)) error) *DataSet[U] {
	env := ds.env
	n := env.newNode(optimizer.MapPartition, "Gather at "+caller(1), ds.n)
	n.opt.Parallelism = 1
	connectInput[T](n, 0, nil)
	n.op = pulls[U](&gatherOp[T, U]{fn: fn, batch: env.opts.BatchSize, workers: env.opts.Parallelism})
	return newDataSet[U](env, n)
}

// gatherOp is Gather's operator.
type gatherOp[T, U any] struct {
	stateless
	fn      func(r Resources, vals iter.Seq[T], emit func(U)) error
	batch   int
	workers int
}

func (o *gatherOp[T, U]) run(tc *task, c collector[U]) error {
	e := &flow.Emitter[U]{Next: c, Batch: o.batch}
	var readErr error
	vals := func(yield func(T) bool) {
		for b := range flow.Batches[T](tc.TaskContext, 0, &readErr) {
			for i := range b {
				if !yield(b[i]) {
					return
				}
			}
		}
	}
	err := o.fn(Resources{Env: tc.Env, Workers: max(o.workers, 1)}, vals, e.Emit)
	if readErr != nil {
		return readErr
	}
	if err != nil {
		return err
	}
	if e.Err != nil {
		return e.Err
	}
	return e.End()
}

// GatherPair calls fn once, in one subtask, with the records of first and
// then those of second (from all of their subtasks), a batch at a time, and
// the job's resources. first is read to its end before second yields
// anything: ranging over second first drains first, discarding what is left
// of it. A batch is valid until the loop asks for the next. Each sequence
// may be ranged over once. The plan reads first before second, so inputs
// that share a producer are kept from deadlocking by a blocking exchange
// into second, as for a hash join's build side.
func GatherPair[A, B, U any](first *DataSet[A], second *DataSet[B], fn func(r Resources, first iter.Seq[[]A], second iter.Seq[[]B], emit func(U)) error) *DataSet[U] {
	env := first.env
	n := env.newNode(optimizer.MapPartition, "GatherPair at "+caller(1), first.n, second.n)
	n.opt.Parallelism = 1
	// every record of first reaches the one subtask, read before second: the
	// rule against rejoin deadlocks knows that of a broadcast input
	n.opt.Forced = map[int]optimizer.Ship{0: optimizer.Broadcast}
	connectInput[A](n, 0, nil)
	connectInput[B](n, 1, nil)
	n.op = pulls[U](&gatherPairOp[A, B, U]{fn: fn, batch: env.opts.BatchSize, workers: env.opts.Parallelism})
	return newDataSet[U](env, n)
}

// gatherPairOp is GatherPair's operator.
type gatherPairOp[A, B, U any] struct {
	stateless
	fn      func(r Resources, first iter.Seq[[]A], second iter.Seq[[]B], emit func(U)) error
	batch   int
	workers int
}

func (o *gatherPairOp[A, B, U]) run(tc *task, c collector[U]) error {
	e := &flow.Emitter[U]{Next: c, Batch: o.batch}
	var readErr error
	firstDone := false
	first := func(yield func([]A) bool) {
		if firstDone {
			return
		}
		for b := range flow.Batches[A](tc.TaskContext, 0, &readErr) {
			if !yield(b) {
				return
			}
		}
		firstDone = true
	}
	second := func(yield func([]B) bool) {
		if !firstDone {
			for range first {
			}
			firstDone = true
		}
		if readErr != nil {
			return
		}
		for b := range flow.Batches[B](tc.TaskContext, 1, &readErr) {
			if !yield(b) {
				return
			}
		}
	}
	err := o.fn(Resources{Env: tc.Env, Workers: max(o.workers, 1)}, first, second, e.Emit)
	if readErr != nil {
		return readErr
	}
	if err != nil {
		return err
	}
	if e.Err != nil {
		return e.Err
	}
	return e.End()
}

package dataset

import (
	"sync"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/optimizer"
)

// Union returns the records of ds and others together (a bag union: duplicates
// stay). The inputs are read concurrently, so a union of two branches of one
// producer cannot stall it.
func Union[T any](ds *DataSet[T], others ...*DataSet[T]) *DataSet[T] {
	inputs := []*node{ds.n}
	for _, o := range others {
		inputs = append(inputs, o.n)
	}
	n := ds.env.newNode(optimizer.MapPartition, "Union at "+caller(1), inputs...)
	for i := range inputs {
		connectInput[T](n, i, nil)
	}
	n.op = pulls[T](&unionOp[T]{inputs: len(inputs)})
	return newDataSet[T](ds.env, n)
}

// unionOp is Union's operator.
type unionOp[T any] struct {
	stateless
	inputs int
}

func (o *unionOp[T]) run(tc *task, c collector[T]) error { return mergeInputs(tc, o.inputs, c) }

// mergeInputs reads inputs 0..k-1 of T concurrently and passes their batches to
// c from the task's goroutine, then closes c.
func mergeInputs[T any](tc *task, k int, c collector[T]) error {
	if k == 1 {
		return drive(tc, c)
	}
	type item struct {
		batch []T
		done  chan struct{} // closed when c is done with batch
	}
	ctx := tc.Context()
	items := make(chan item)
	errs := make(chan error, k)
	var wg sync.WaitGroup
	for i := 0; i < k; i++ {
		in := flow.Input[T](tc.TaskContext, i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := make(chan struct{}, 1)
			for {
				b, err := in.Next(ctx)
				if err != nil {
					if !isEOF(err) {
						errs <- err
					}
					return
				}
				select {
				case items <- item{b, done}:
				case <-ctx.Done():
					return
				}
				select { // the batch belongs to the reader again after c used it
				case <-done:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(items) }()
	var first error
	for it := range items {
		if first == nil {
			first = c.Collect(it.batch)
		}
		it.done <- struct{}{}
	}
	close(errs)
	if first != nil {
		return first
	}
	for err := range errs {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.End()
}

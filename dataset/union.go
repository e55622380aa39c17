package dataset

import (
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

func (o *unionOp[T]) run(tc *task, c collector[T]) error {
	return flow.Merge(tc.TaskContext, o.inputs, c)
}

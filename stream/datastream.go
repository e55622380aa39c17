package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/graph"
)

// DataStream is a stream of records of type T: the output of a source or
// an operator. Type-changing transformations are package functions
// (Map(ds, fn)); type-preserving ones are methods (ds.Filter(fn)).
type DataStream[T any] struct {
	env  *Env
	n    *graph.Node
	port string
	part graph.Partitioning // how the next operator reads it
}

// Env returns the stream's program.
func (ds DataStream[T]) Env() *Env { return ds.env }

// edge returns an edge from the stream to a new node.
func (ds DataStream[T]) edge() *graph.Edge {
	return &graph.Edge{From: ds.n, Port: ds.port, Part: ds.part}
}

// stream returns the stream made by node n of env.
func stream[T any](env *Env, n *graph.Node) DataStream[T] { return DataStream[T]{env: env, n: n} }

// addNode adds a node of kind reading ins, with a main port of type O.
func addNode[O any](env *Env, name, kind string, ins ...*graph.Edge) *graph.Node {
	return graph.AddNode[O](env.p, name, kind, ins...)
}

// SetParallelism sets the number of subtasks of the operator that makes
// the stream.
func (ds DataStream[T]) SetParallelism(p int) DataStream[T] {
	if p <= 0 {
		ds.env.fail(caller(1), fmt.Errorf("%s: parallelism %d must be positive", ds.n.Name, p))
		return ds
	}
	ds.n.Parallelism = p
	return ds
}

// Name names the operator that makes the stream (in metrics and errors).
func (ds DataStream[T]) Name(name string) DataStream[T] {
	ds.n.Name = name
	return ds
}

// Forward sends subtask i's records to subtask i of the next operator,
// which must have the same parallelism.
func (ds DataStream[T]) Forward() DataStream[T] {
	ds.part = graph.Partitioning{Kind: graph.PartForward}
	return ds
}

// Rebalance distributes records round robin over the next operator's
// subtasks.
func (ds DataStream[T]) Rebalance() DataStream[T] {
	ds.part = graph.Partitioning{Kind: graph.PartRebalance}
	return ds
}

// Broadcast sends every record to every subtask of the next operator.
func (ds DataStream[T]) Broadcast() DataStream[T] {
	ds.part = graph.Partitioning{Kind: graph.PartBroadcast}
	return ds
}

// Shuffle sends every record to a subtask of the next operator chosen at
// random.
func (ds DataStream[T]) Shuffle() DataStream[T] {
	ds.part = graph.Partitioning{Kind: graph.PartShuffle, Custom: graph.Shuffle[T]()}
	return ds
}

package stream

import "fmt"

// DataStream is a stream of records of type T: the output of a source or
// an operator. Type-changing transformations are package functions
// (Map(ds, fn)); type-preserving ones are methods (ds.Filter(fn)).
type DataStream[T any] struct {
	n    *node
	port string
	part partitioning // how the next operator reads it
}

// Env returns the stream's program.
func (ds DataStream[T]) Env() *Env { return ds.n.env }

// edge returns an edge from the stream to a new node.
func (ds DataStream[T]) edge() *edge { return &edge{from: ds.n, port: ds.port, part: ds.part} }

// SetParallelism sets the number of subtasks of the operator that makes
// the stream.
func (ds DataStream[T]) SetParallelism(p int) DataStream[T] {
	if p <= 0 {
		ds.n.env.fail(caller(1), fmt.Errorf("%s: parallelism %d must be positive", ds.n.name, p))
		return ds
	}
	ds.n.parallelism = p
	return ds
}

// Name names the operator that makes the stream (in metrics and errors).
func (ds DataStream[T]) Name(name string) DataStream[T] {
	ds.n.name = name
	return ds
}

// Forward sends subtask i's records to subtask i of the next operator,
// which must have the same parallelism.
func (ds DataStream[T]) Forward() DataStream[T] {
	ds.part = partitioning{kind: partForward}
	return ds
}

// Rebalance distributes records round robin over the next operator's
// subtasks.
func (ds DataStream[T]) Rebalance() DataStream[T] {
	ds.part = partitioning{kind: partRebalance}
	return ds
}

// Broadcast sends every record to every subtask of the next operator.
func (ds DataStream[T]) Broadcast() DataStream[T] {
	ds.part = partitioning{kind: partBroadcast}
	return ds
}

// Shuffle sends every record to a subtask of the next operator chosen at
// random.
func (ds DataStream[T]) Shuffle() DataStream[T] {
	ds.part = partitioning{kind: partShuffle, custom: shuffle[T]()}
	return ds
}

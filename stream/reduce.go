package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
)

// Reduce combines every record with its key's running result (the first
// record of a key is its first result) and emits the running result per
// record, with the record's timestamp, as Flink's StreamGroupedReduceOperator.
func (ks KeyedStream[T, K]) Reduce(fn func(acc, v T) T) DataStream[T] {
	if fn == nil {
		ks.ds.env.fail(caller(1), fmt.Errorf("Reduce: nil function"))
	}
	return reduce(ks, "Reduce", fn)
}

func reduce[T any, K comparable](ks KeyedStream[T, K], name string, fn func(acc, v T) T) DataStream[T] {
	return reduceWith(ks, name, func() func(acc, v T) T { return fn })
}

// reduceWith is reduce with a function made per subtask.
func reduceWith[T any, K comparable](ks KeyedStream[T, K], name string, newFn func() func(acc, v T) T) DataStream[T] {
	n := addKeyed[T](ks, name, name)
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		r := op.NewReduce(b.MaxParallelism, ks.key, newFn(), core.OutOf[T](outs, ""), b.BatchSize())
		if b.Batch() {
			r.Final = true
			s := op.NewSortedInput[T, K](r, ks.key)
			return []any{s}, s, nil
		}
		return []any{r}, r, nil
	}
	return stream[T](ks.ds.env, n)
}

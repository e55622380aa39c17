package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
)

// KeyedConnectedStreams are two keyed streams with the same key type:
// records of one key from both go to the same subtask and share its state.
type KeyedConnectedStreams[A, B any, K comparable] struct {
	a KeyedStream[A, K]
	b KeyedStream[B, K]
}

// ConnectKeyed connects two keyed streams.
func ConnectKeyed[A, B any, K comparable](a KeyedStream[A, K], b KeyedStream[B, K]) KeyedConnectedStreams[A, B, K] {
	return KeyedConnectedStreams[A, B, K]{a: a, b: b}
}

// KeyedCoProcessFunction is Flink's KeyedCoProcessFunction: as
// KeyedProcessFunction, with ProcessElement1 for the records of the first
// stream and ProcessElement2 for those of the second.
type KeyedCoProcessFunction[K comparable, A, B, O any] struct {
	Open            func(rc *KeyedRuntimeContext[K]) error
	ProcessElement1 func(v A, ctx *KeyedContext[K], out Collector[O]) error
	ProcessElement2 func(v B, ctx *KeyedContext[K], out Collector[O]) error
	OnTimer         func(ts int64, ctx *KeyedContext[K], out Collector[O]) error
	Close           func() error
	// NotifyCheckpointComplete and NotifyCheckpointAborted, when set, are
	// Flink's CheckpointListener, as ProcessFunction's; no key is current.
	NotifyCheckpointComplete func(checkpointID int64) error
	NotifyCheckpointAborted  func(checkpointID int64) error
}

// KeyedCoProcess applies the function newFn returns (once per subtask) to
// the records of both keyed streams.
func KeyedCoProcess[A, B any, K comparable, O any](cs KeyedConnectedStreams[A, B, K], newFn func() KeyedCoProcessFunction[K, A, B, O]) DataStream[O] {
	return keyedCoProcess(cs, newFn, "KeyedCoProcess", caller(1))
}

func keyedCoProcess[A, B any, K comparable, O any](cs KeyedConnectedStreams[A, B, K], newFn func() KeyedCoProcessFunction[K, A, B, O], name, where string) DataStream[O] {
	env := cs.a.ds.env
	ea, eb := cs.a.ds.edge(), cs.b.ds.edge()
	n := addNode[O](env, name, name, ea, eb)
	if newFn == nil {
		env.fail(where, fmt.Errorf("%s: nil function", name))
	}
	n.Keyed = true
	ea.Part = graph.Partitioning{Kind: graph.PartKeyed, Custom: graph.KeyGroups(cs.a.key, cs.a.hash)}
	eb.Part = graph.Partitioning{Kind: graph.PartKeyed, Custom: graph.KeyGroups(cs.b.key, cs.b.hash)}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		fn := newFn()
		if fn.ProcessElement1 == nil || fn.ProcessElement2 == nil {
			return nil, nil, fmt.Errorf("%s: ProcessElement1 and ProcessElement2 are needed", name)
		}
		// the two-input operator is a KeyedProcess operator whose elements
		// are dispatched by input
		p, _ := keyedProcess[struct{}](b, outs, nil, fn.Open, op.KeyedProcessFns[struct{}, *KeyedContext[K], Collector[O]]{
			OnTimer: fn.OnTimer, Close: fn.Close,
			CheckpointComplete: fn.NotifyCheckpointComplete, CheckpointAborted: fn.NotifyCheckpointAborted})
		in1 := op.KeyedInput(p, cs.a.key, fn.ProcessElement1)
		in2 := op.KeyedInput(p, cs.b.key, fn.ProcessElement2)
		if b.Batch() {
			s := &op.SortedInputs2[A, B, K]{Inner: p}
			s.A.Key, s.A.To = cs.a.key, in1
			s.B.Key, s.B.To = cs.b.key, in2
			return s.Inputs(), s, nil
		}
		return []any{in1, in2}, p, nil
	}
	return stream[O](env, n)
}

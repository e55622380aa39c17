package stream

import (
	"fmt"
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

// KeyedCoProcessFunction is Flink's KeyedCoProcessFunction.
type KeyedCoProcessFunction[K comparable, A, B, O any] struct {
	Open            func(ctx *KeyedContext[K]) error
	ProcessElement1 func(v A, ctx *KeyedContext[K], out Collector[O]) error
	ProcessElement2 func(v B, ctx *KeyedContext[K], out Collector[O]) error
	OnTimer         func(ts int64, ctx *KeyedContext[K], out Collector[O]) error
	Close           func() error
}

// KeyedCoProcess applies the function newFn returns (once per subtask) to
// the records of both keyed streams.
func KeyedCoProcess[A, B any, K comparable, O any](cs KeyedConnectedStreams[A, B, K], newFn func() KeyedCoProcessFunction[K, A, B, O]) DataStream[O] {
	ea, eb := cs.a.ds.edge(), cs.b.ds.edge()
	n := addNode[O](cs.a.ds.n.env, "KeyedCoProcess", ea, eb)
	n.keyed = true
	ea.part = partitioning{kind: partKeyed, custom: keyGroups(cs.a.key, cs.a.hash, n)}
	eb.part = partitioning{kind: partKeyed, custom: keyGroups(cs.b.key, cs.b.hash, n)}
	n.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		fn := newFn()
		if fn.ProcessElement1 == nil || fn.ProcessElement2 == nil {
			return nil, nil, fmt.Errorf("KeyedCoProcess: ProcessElement1 and ProcessElement2 are needed")
		}
		// the two-input operator is a KeyedProcess operator whose elements
		// are dispatched by input
		op := &keyedProcessOp[struct{}, K, O]{}
		op.node = n
		op.fn = KeyedProcessFunction[K, struct{}, O]{Open: fn.Open, OnTimer: fn.OnTimer, Close: fn.Close}
		op.out = newEmitter(outOf[O](outs, ""), rt.batchSize)
		sides, fl := sideEmitters(n, outs, rt.batchSize)
		op.flushers = append(fl, op.out)
		op.ctx.Context = newContext(rt, &op.wm, sides)
		op.col = &collector[O]{e: op.out, ctx: &op.ctx.Context}
		in1 := keyedInput(op, cs.a.key, fn.ProcessElement1)
		in2 := keyedInput(op, cs.b.key, fn.ProcessElement2)
		if rt.batch() {
			s := &sortedInputs2[A, B, K]{inner: op}
			s.a.key, s.a.to = cs.a.key, in1
			s.b.key, s.b.to = cs.b.key, in2
			return []any{pushFunc[A](s.a.push), pushFunc[B](s.b.push)}, s, nil
		}
		return []any{in1, in2}, op, nil
	}
	return DataStream[O]{n: n}
}

// keyedInput is one input of a keyed two-input operator.
func keyedInput[T any, K comparable, O any](op *keyedProcessOp[struct{}, K, O], key func(T) K, fn func(T, *KeyedContext[K], Collector[O]) error) pushFunc[T] {
	return func(b []Record[T]) error {
		for i := range b {
			op.backend.SetCurrentKey(key(b[i].Value))
			op.ctx.ts = b[i].Timestamp
			if err := fn(b[i].Value, &op.ctx, op.col); err != nil {
				return err
			}
		}
		if err := op.backend.Err(); err != nil {
			return err
		}
		return flushAll(op.flushers)
	}
}

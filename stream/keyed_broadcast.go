package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/state"
)

// KeyedBroadcastConnectedStream is a keyed stream connected with a
// broadcast stream, read by KeyedBroadcastProcess.
type KeyedBroadcastConnectedStream[A any, K comparable, B any] struct {
	a KeyedStream[A, K]
	b BroadcastStream[B]
}

// ConnectKeyedBroadcast connects the keyed stream a with the broadcast
// stream b.
func ConnectKeyedBroadcast[A any, K comparable, B any](a KeyedStream[A, K], b BroadcastStream[B]) KeyedBroadcastConnectedStream[A, K, B] {
	return KeyedBroadcastConnectedStream[A, K, B]{a: a, b: b}
}

// KeyedBroadcastProcessFunction is Flink's KeyedBroadcastProcessFunction:
// ProcessElement is called per keyed record with its key current (keyed
// state, timers, the broadcast states read only), OnTimer per firing
// timer, ProcessBroadcastElement per broadcast record with no current key
// and the broadcast states read-write; ApplyToKeyedState visits the keyed
// state of every key from there. Open, when set, is called once before
// any record with the function's KeyedRuntimeContext, to get keyed state
// (GetState(rc, desc) and its siblings) and metrics.
type KeyedBroadcastProcessFunction[K comparable, A, B, O any] struct {
	Open                    func(rc *KeyedRuntimeContext[K]) error
	ProcessElement          func(v A, ctx *KeyedReadOnlyBroadcastContext[K], out Collector[O]) error
	ProcessBroadcastElement func(v B, ctx *KeyedBroadcastContext[K], out Collector[O]) error
	OnTimer                 func(ts int64, ctx *KeyedReadOnlyBroadcastContext[K], out Collector[O]) error
	Close                   func() error
}

// KeyedReadOnlyBroadcastContext is the context of ProcessElement and
// OnTimer: a KeyedContext (the current key, keyed state, timers) with the
// broadcast states read only (GetReadOnlyBroadcastState).
type KeyedReadOnlyBroadcastContext[K comparable] struct {
	*KeyedContext[K]
	bs *op.BroadcastStates
}

func (c *KeyedReadOnlyBroadcastContext[K]) broadcastStates() *op.BroadcastStates { return c.bs }

// KeyedBroadcastContext is ProcessBroadcastElement's context: the record's
// timestamp, the watermark, side outputs, the broadcast states read-write
// (GetBroadcastState), and ApplyToKeyedState. No key is current, so keyed
// state is reached only through ApplyToKeyedState.
type KeyedBroadcastContext[K comparable] struct {
	*Context
	bs      *op.BroadcastStates
	backend func() *state.Backend[K]
}

func (c *KeyedBroadcastContext[K]) broadcastStates() *op.BroadcastStates { return c.bs }
func (c *KeyedBroadcastContext[K]) writable()                            {}

// ApplyToKeyedState calls fn for every key of the subtask that has an
// entry in the keyed state s, with that key current (Flink's
// Context.applyToKeyedState); s is a state the function got in Open
// (state.GetValueState and its siblings). The broadcast side has no
// current key again afterwards.
func ApplyToKeyedState[K comparable, S any](ctx *KeyedBroadcastContext[K], s S, fn func(key K, s S) error) error {
	ks, ok := any(s).(interface{ KeysIn(state.Void) []K })
	if !ok {
		return fmt.Errorf("stream: ApplyToKeyedState: %T is not a keyed state of this operator's key type", s)
	}
	b := ctx.backend()
	defer b.ClearCurrentKey()
	for _, k := range ks.KeysIn(state.Void{}) {
		b.SetCurrentKey(k)
		if err := fn(k, s); err != nil {
			return err
		}
	}
	return b.Err()
}

// KeyedBroadcastProcess applies the function newFn returns (once per
// subtask) to the connected streams: ProcessElement to the keyed stream's
// records with their key current and read-only broadcast state,
// ProcessBroadcastElement to the broadcast stream's with writable
// broadcast state (Flink's KeyedBroadcastProcessFunction).
func KeyedBroadcastProcess[A any, K comparable, B, O any](cs KeyedBroadcastConnectedStream[A, K, B], newFn func() KeyedBroadcastProcessFunction[K, A, B, O]) DataStream[O] {
	env := cs.a.ds.env
	ea, eb := cs.a.ds.edge(), cs.b.ds.edge()
	n := addNode[O](env, "KeyedBroadcastProcess", "KeyedBroadcastProcess", ea, eb)
	if newFn == nil {
		env.fail(caller(1), fmt.Errorf("KeyedBroadcastProcess: nil function"))
	}
	n.Keyed = true
	ea.Part = graph.Partitioning{Kind: graph.PartKeyed, Custom: graph.KeyGroups(cs.a.key, cs.a.hash)}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		fn := newFn()
		if fn.ProcessElement == nil || fn.ProcessBroadcastElement == nil {
			return nil, nil, fmt.Errorf("KeyedBroadcastProcess: ProcessElement and ProcessBroadcastElement are needed")
		}
		bs := op.NewBroadcastStates(broadcastStates(cs.b.descs))
		ro := &KeyedReadOnlyBroadcastContext[K]{bs: bs}
		fns := op.KeyedProcessFns[struct{}, *KeyedContext[K], Collector[O]]{Close: fn.Close}
		if fn.OnTimer != nil {
			fns.OnTimer = func(ts int64, _ *KeyedContext[K], out Collector[O]) error {
				return fn.OnTimer(ts, ro, out)
			}
		}
		inner, kctx := keyedProcess[struct{}](b, outs, nil, fn.Open, fns)
		ro.KeyedContext = kctx
		rw := &KeyedBroadcastContext[K]{Context: &kctx.Context, bs: bs}
		p := op.NewKeyedBroadcast(inner, bs, cs.a.key, func(v A, _ *KeyedContext[K], out Collector[O]) error {
			return fn.ProcessElement(v, ro, out)
		}, fn.ProcessBroadcastElement, rw)
		rw.backend = p.Backend
		if b.Batch() {
			s := op.NewSortedInput[A, K](p, cs.a.key)
			return []any{s, p.BroadcastInput()}, s, nil
		}
		return p.Inputs(), p, nil
	}
	return stream[O](env, n)
}

package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
)

// BroadcastStream is a stream whose records go to every parallel instance
// of the operator reading it, with the broadcast states that operator
// keeps (Flink's BroadcastStream). Connect it to a DataStream with
// ConnectBroadcast or to a KeyedStream with ConnectKeyedBroadcast.
type BroadcastStream[T any] struct {
	ds    DataStream[T]
	descs []BroadcastDescriptor
}

// Broadcast returns ds broadcast, with the broadcast states descs name
// (Flink's DataStream.broadcast(MapStateDescriptor...)): every record of
// ds reaches every parallel instance of the operator it is connected to.
func Broadcast[T any](ds DataStream[T], descs ...BroadcastDescriptor) BroadcastStream[T] {
	seen := map[string]bool{}
	for _, d := range descs {
		if seen[d.stateName()] {
			ds.env.fail(caller(1), fmt.Errorf("Broadcast: state %q named twice", d.stateName()))
		}
		seen[d.stateName()] = true
	}
	return BroadcastStream[T]{ds: ds.Broadcast(), descs: descs}
}

// BroadcastConnectedStream is a non-keyed stream connected with a
// broadcast stream, read by BroadcastProcess.
type BroadcastConnectedStream[A, B any] struct {
	a DataStream[A]
	b BroadcastStream[B]
}

// ConnectBroadcast connects a with the broadcast stream b.
func ConnectBroadcast[A, B any](a DataStream[A], b BroadcastStream[B]) BroadcastConnectedStream[A, B] {
	return BroadcastConnectedStream[A, B]{a: a, b: b}
}

// BroadcastProcessFunction is Flink's BroadcastProcessFunction:
// ProcessElement is called for the records of the non-broadcast stream
// with read-only access to the broadcast states, ProcessBroadcastElement
// for those of the broadcast stream with read-write access; Open, when
// set, once before, with the function's RuntimeContext; Close, when set,
// once at the end.
type BroadcastProcessFunction[A, B, O any] struct {
	Open                    func(rc *RuntimeContext) error
	ProcessElement          func(v A, ctx *ReadOnlyBroadcastContext, out Collector[O]) error
	ProcessBroadcastElement func(v B, ctx *BroadcastContext, out Collector[O]) error
	Close                   func() error
}

// ReadOnlyBroadcastContext is ProcessElement's context: the record's
// timestamp, the watermark, side outputs, and the broadcast states read
// only (GetReadOnlyBroadcastState).
type ReadOnlyBroadcastContext struct {
	*Context
	bs *op.BroadcastStates
}

func (c *ReadOnlyBroadcastContext) broadcastStates() *op.BroadcastStates { return c.bs }

// BroadcastContext is ProcessBroadcastElement's context: as
// ReadOnlyBroadcastContext, with the broadcast states read-write
// (GetBroadcastState).
type BroadcastContext struct {
	*Context
	bs *op.BroadcastStates
}

func (c *BroadcastContext) broadcastStates() *op.BroadcastStates { return c.bs }
func (c *BroadcastContext) writable()                            {}

// BroadcastProcess applies the function newFn returns (once per subtask)
// to the records of the connected streams: ProcessElement to the plain
// stream's, with read-only broadcast state; ProcessBroadcastElement to the
// broadcast stream's, with writable broadcast state (Flink's
// BroadcastConnectedStream.process).
func BroadcastProcess[A, B, O any](cs BroadcastConnectedStream[A, B], newFn func() BroadcastProcessFunction[A, B, O]) DataStream[O] {
	n := addNode[O](cs.a.env, "BroadcastProcess", "BroadcastProcess", cs.a.edge(), cs.b.ds.edge())
	if newFn == nil {
		cs.a.env.fail(caller(1), fmt.Errorf("BroadcastProcess: nil function"))
	}
	n.Build = func(b *graph.Build, outs map[string]any) ([]any, task.Operator, error) {
		fn := newFn()
		if fn.ProcessElement == nil || fn.ProcessBroadcastElement == nil {
			return nil, nil, fmt.Errorf("BroadcastProcess: ProcessElement and ProcessBroadcastElement are needed")
		}
		o := outputs[O](b, outs)
		st := newCtx(b, nil, o)
		bs := op.NewBroadcastStates(broadcastStates(cs.b.descs))
		rc := newRuntimeContext(b)
		ctx := &Context{c: st, rc: rc}
		p := op.NewBroadcastProcess(op.BroadcastFns[A, B, *ReadOnlyBroadcastContext, *BroadcastContext, Collector[O]]{
			Open: opener(fn.Open, rc), ProcessElement: fn.ProcessElement, ProcessBroadcastElement: fn.ProcessBroadcastElement, Close: fn.Close},
			bs, st, &ReadOnlyBroadcastContext{Context: ctx, bs: bs}, &BroadcastContext{Context: ctx, bs: bs}, collector(o, st), o)
		ins := p.Inputs()
		if b.Batch() {
			s := &op.BufferedInput[A]{Inner: p, To: ins[0].(core.Output[A])}
			return []any{core.Output[A](s), ins[1]}, s, nil
		}
		return ins, p, nil
	}
	return stream[O](cs.a.env, n)
}

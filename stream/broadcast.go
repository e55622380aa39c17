package stream

import (
	"fmt"
	"io"
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
			ds.n.env.fail(caller(1), fmt.Errorf("Broadcast: state %q named twice", d.stateName()))
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
// for those of the broadcast stream with read-write access.
type BroadcastProcessFunction[A, B, O any] struct {
	Open                    func() error
	ProcessElement          func(v A, ctx *ReadOnlyBroadcastContext, out Collector[O]) error
	ProcessBroadcastElement func(v B, ctx *BroadcastContext, out Collector[O]) error
	Close                   func() error
}

// ReadOnlyBroadcastContext is ProcessElement's context: the record's
// timestamp, the watermark, side outputs, and the broadcast states read
// only (GetReadOnlyBroadcastState).
type ReadOnlyBroadcastContext struct {
	*Context
	bs *broadcastStates
}

func (c *ReadOnlyBroadcastContext) broadcastStates() *broadcastStates { return c.bs }

// BroadcastContext is ProcessBroadcastElement's context: as
// ReadOnlyBroadcastContext, with the broadcast states read-write
// (GetBroadcastState).
type BroadcastContext struct {
	*Context
	bs *broadcastStates
}

func (c *BroadcastContext) broadcastStates() *broadcastStates { return c.bs }
func (c *BroadcastContext) writable()                         {}

// BroadcastProcess applies the function newFn returns (once per subtask)
// to the records of both streams; the broadcast stream's records reach
// every subtask. The first input is the non-broadcast one. In BATCH mode
// the broadcast input is processed first, as Flink does: the other input
// is held (spilling under the memory budget) until both ended.
func BroadcastProcess[A, B, O any](cs BroadcastConnectedStream[A, B], newFn func() BroadcastProcessFunction[A, B, O]) DataStream[O] {
	n := addNode[O](cs.a.n.env, "BroadcastProcess", cs.a.edge(), cs.b.ds.edge())
	if newFn == nil {
		cs.a.n.env.fail(caller(1), fmt.Errorf("BroadcastProcess: nil function"))
	}
	n.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		fn := newFn()
		if fn.ProcessElement == nil || fn.ProcessBroadcastElement == nil {
			return nil, nil, fmt.Errorf("BroadcastProcess: ProcessElement and ProcessBroadcastElement are needed")
		}
		op := &broadcastProcessOp[A, B, O]{fn: fn, node: n}
		op.bs.descs = cs.b.descs
		op.out = newEmitter(outOf[O](outs, ""), rt.batchSize)
		sides, fl := sideEmitters(n, outs, rt.batchSize)
		op.flushers = append(fl, op.out)
		op.ctx = newContext(rt, &rt.watermark, sides)
		op.ro = ReadOnlyBroadcastContext{Context: &op.ctx, bs: &op.bs}
		op.rw = BroadcastContext{Context: &op.ctx, bs: &op.bs}
		col := Collector[O](&collector[O]{e: op.out, ctx: &op.ctx})
		in1 := pushFunc[A](func(b []Record[A]) error {
			for i := range b {
				op.ctx.ts = b[i].Timestamp
				if err := fn.ProcessElement(b[i].Value, &op.ro, col); err != nil {
					return err
				}
			}
			return op.done()
		})
		in2 := pushFunc[B](func(b []Record[B]) error {
			for i := range b {
				op.ctx.ts = b[i].Timestamp
				if err := fn.ProcessBroadcastElement(b[i].Value, &op.rw, col); err != nil {
					return err
				}
			}
			return op.done()
		})
		if rt.batch() {
			s := &bufferedInput[A]{inner: op, to: in1}
			return []any{output[A](s), in2}, s, nil
		}
		return []any{in1, in2}, op, nil
	}
	return DataStream[O]{n: n}
}

// broadcastProcessOp is the non-keyed broadcast operator (Flink's
// CoBroadcastWithNonKeyedOperator); its snapshot is its broadcast states.
type broadcastProcessOp[A, B, O any] struct {
	base
	node     *node
	fn       BroadcastProcessFunction[A, B, O]
	bs       broadcastStates
	ctx      Context
	ro       ReadOnlyBroadcastContext
	rw       BroadcastContext
	out      *emitter[O]
	flushers []flusher
	opened   bool
}

func (p *broadcastProcessOp[A, B, O]) open(rt *taskRuntime) error {
	if err := p.bs.open(rt, p.node.name, rt.restoredFor(p.node)); err != nil {
		return err
	}
	p.opened = true
	if p.fn.Open != nil {
		return p.fn.Open()
	}
	return nil
}

func (p *broadcastProcessOp[A, B, O]) done() error {
	if err := p.bs.err(); err != nil {
		return err
	}
	return flushAll(p.flushers)
}

func (p *broadcastProcessOp[A, B, O]) snapshot(_ int64, w io.Writer) error { return p.bs.snapshot(w) }

func (p *broadcastProcessOp[A, B, O]) close() error {
	var err error
	if p.fn.Close != nil && p.opened {
		p.opened = false
		err = p.fn.Close()
	}
	if cerr := p.bs.close(); err == nil {
		err = cerr
	}
	return err
}

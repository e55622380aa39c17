package stream

import "fmt"

// CoProcessFunction is Flink's CoProcessFunction: ProcessElement1 is
// called for the records of the first stream, ProcessElement2 for those
// of the second.
type CoProcessFunction[A, B, O any] struct {
	Open            func() error
	ProcessElement1 func(v A, ctx *Context, out Collector[O]) error
	ProcessElement2 func(v B, ctx *Context, out Collector[O]) error
	Close           func() error
}

// CoProcess applies the function newFn returns (once per subtask) to the
// records of both streams.
func CoProcess[A, B, O any](cs ConnectedStreams[A, B], newFn func() CoProcessFunction[A, B, O]) DataStream[O] {
	n := addNode[O](cs.a.n.env, "CoProcess", cs.a.edge(), cs.b.edge())
	n.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		fn := newFn()
		if fn.ProcessElement1 == nil || fn.ProcessElement2 == nil {
			return nil, nil, fmt.Errorf("CoProcess: ProcessElement1 and ProcessElement2 are needed")
		}
		op := &coProcessOp[A, B, O]{fn: fn}
		op.out = newEmitter(outOf[O](outs, ""), rt.batchSize)
		sides, fl := sideEmitters(n, outs, rt.batchSize)
		op.flushers = append(fl, op.out)
		op.ctx = newContext(rt, &rt.watermark, sides)
		col := Collector[O](&collector[O]{e: op.out, ctx: &op.ctx})
		in1 := pushFunc[A](func(b []Record[A]) error {
			for i := range b {
				op.ctx.ts = b[i].Timestamp
				if err := fn.ProcessElement1(b[i].Value, &op.ctx, col); err != nil {
					return err
				}
			}
			return flushAll(op.flushers)
		})
		in2 := pushFunc[B](func(b []Record[B]) error {
			for i := range b {
				op.ctx.ts = b[i].Timestamp
				if err := fn.ProcessElement2(b[i].Value, &op.ctx, col); err != nil {
					return err
				}
			}
			return flushAll(op.flushers)
		})
		return []any{in1, in2}, op, nil
	}
	return DataStream[O]{n: n}
}

type coProcessOp[A, B, O any] struct {
	base
	fn       CoProcessFunction[A, B, O]
	ctx      Context
	out      *emitter[O]
	flushers []flusher
	opened   bool
}

func (p *coProcessOp[A, B, O]) close() error {
	if p.fn.Close != nil && p.opened {
		p.opened = false
		return p.fn.Close()
	}
	return nil
}

func (p *coProcessOp[A, B, O]) open(*taskRuntime) error {
	p.opened = true
	if p.fn.Open != nil {
		return p.fn.Open()
	}
	return nil
}

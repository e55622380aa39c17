package stream

import "fmt"

// ProcessFunction is Flink's ProcessFunction on a non-keyed stream:
// ProcessElement is called per record with its Context (timestamp,
// watermark, processing time, side outputs); Open, when set, once before;
// Close, when set, once at the end, on every path.
type ProcessFunction[I, O any] struct {
	Open           func() error
	ProcessElement func(v I, ctx *Context, out Collector[O]) error
	Close          func() error
}

// Process applies the function newFn returns to every record of ds;
// newFn is called once per subtask.
func Process[I, O any](ds DataStream[I], newFn func() ProcessFunction[I, O]) DataStream[O] {
	n := addNode[O](ds.n.env, "Process", ds.edge())
	if newFn == nil {
		ds.n.env.fail(caller(1), fmt.Errorf("Process: nil function"))
	}
	n.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		fn := newFn()
		if fn.ProcessElement == nil {
			return nil, nil, fmt.Errorf("Process: no ProcessElement")
		}
		op := &processOp[I, O]{fn: fn}
		op.out = newEmitter(outOf[O](outs, ""), rt.batchSize)
		sides, fl := sideEmitters(n, outs, rt.batchSize)
		op.flushers = append(fl, op.out)
		op.ctx = newContext(rt, &rt.watermark, sides)
		op.col = &collector[O]{e: op.out, ctx: &op.ctx}
		return []any{op}, op, nil
	}
	return DataStream[O]{n: n}
}

type processOp[I, O any] struct {
	base
	fn       ProcessFunction[I, O]
	ctx      Context
	out      *emitter[O]
	col      Collector[O] // a pointer inside: passing it allocates nothing
	flushers []flusher
	opened   bool
}

func (p *processOp[I, O]) open(*taskRuntime) error {
	p.opened = true
	if p.fn.Open != nil {
		return p.fn.Open()
	}
	return nil
}

func (p *processOp[I, O]) close() error {
	if p.fn.Close != nil && p.opened {
		p.opened = false
		return p.fn.Close()
	}
	return nil
}

func (p *processOp[I, O]) push(b []Record[I]) error {
	for i := range b {
		p.ctx.ts = b[i].Timestamp
		if err := p.fn.ProcessElement(b[i].Value, &p.ctx, p.col); err != nil {
			return err
		}
	}
	return flushAll(p.flushers)
}

// collector emits with the timestamp of its context.
type collector[O any] struct {
	e   *emitter[O]
	ctx *Context
}

func (c collector[O]) Collect(v O) { c.e.emit(v, c.ctx.ts) }

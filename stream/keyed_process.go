package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// KeyedProcessFunction is Flink's KeyedProcessFunction: ProcessElement is
// called per record with the record's key current, OnTimer per firing
// timer with the timer's key current; Open, when set, once before any
// record, to get keyed state from ctx.Backend(); Close, when set, once at
// the end, on every path.
type KeyedProcessFunction[K comparable, I, O any] struct {
	Open           func(ctx *KeyedContext[K]) error
	ProcessElement func(v I, ctx *KeyedContext[K], out Collector[O]) error
	OnTimer        func(ts int64, ctx *KeyedContext[K], out Collector[O]) error
	Close          func() error
}

// KeyedProcess applies the function newFn returns to every record of ks;
// newFn is called once per subtask, as Flink has a function instance per
// parallel instance, so the state handles a function keeps are its
// subtask's. Records emitted from an event-time timer carry the timer's
// time; from a processing-time timer, no timestamp.
func KeyedProcess[I any, K comparable, O any](ks KeyedStream[I, K], newFn func() KeyedProcessFunction[K, I, O]) DataStream[O] {
	n := addKeyed[O](ks, "KeyedProcess")
	if newFn == nil {
		ks.ds.n.env.fail(caller(1), fmt.Errorf("KeyedProcess: nil function"))
	}
	n.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		fn := newFn()
		if fn.ProcessElement == nil {
			return nil, nil, fmt.Errorf("KeyedProcess: no ProcessElement")
		}
		op := &keyedProcessOp[I, K, O]{fn: fn, key: ks.key}
		op.node = n
		op.out = newEmitter(outOf[O](outs, ""), rt.batchSize)
		sides, fl := sideEmitters(n, outs, rt.batchSize)
		op.flushers = append(fl, op.out)
		op.ctx.Context = newContext(rt, &op.wm, sides)
		op.col = &collector[O]{e: op.out, ctx: &op.ctx.Context}
		if rt.batch() {
			s := newSortedInput[I, K](op, ks.key)
			return []any{s}, s, nil
		}
		return []any{op}, op, nil
	}
	return DataStream[O]{n: n}
}

type keyedProcessOp[I any, K comparable, O any] struct {
	keyedBase[K]
	fn       KeyedProcessFunction[K, I, O]
	key      func(I) K
	run      runKeys[K]
	ctx      KeyedContext[K]
	wm       int64
	out      *emitter[O]
	col      Collector[O] // a pointer inside: passing it allocates nothing
	flushers []flusher
}

func (p *keyedProcessOp[I, K, O]) open(rt *taskRuntime) error {
	p.wm = NoTimestamp
	if err := p.openBackend(rt); err != nil {
		return err
	}
	t, err := state.NewTimers[K, state.Void](p.backend, "_user_timers", p)
	if err != nil {
		return err
	}
	p.ctx.backend, p.ctx.timers = p.backend, t
	p.wm = t.CurrentWatermark()
	if p.fn.Open != nil {
		return p.fn.Open(&p.ctx)
	}
	return nil
}

func (p *keyedProcessOp[I, K, O]) close() error {
	var err error
	if p.fn.Close != nil && p.backend != nil {
		err = p.fn.Close()
	}
	if cerr := p.keyedBase.close(); err == nil {
		err = cerr
	}
	return err
}

func (p *keyedProcessOp[I, K, O]) push(b []Record[I]) error {
	for len(b) > 0 {
		run := b[:min(len(b), keyRun)]
		b = b[len(run):]
		loadKeys(&p.run, p.backend, p.key, run)
		for i := range run {
			p.run.setKey(p.backend, i)
			p.ctx.ts = run[i].Timestamp
			if err := p.fn.ProcessElement(run[i].Value, &p.ctx, p.col); err != nil {
				return err
			}
		}
	}
	if err := p.backend.Err(); err != nil {
		return err
	}
	return flushAll(p.flushers)
}

func (p *keyedProcessOp[I, K, O]) onWatermark(wm int64) error {
	p.wm = wm
	if err := p.ctx.timers.AdvanceWatermark(wm); err != nil {
		return err
	}
	return p.done()
}

func (p *keyedProcessOp[I, K, O]) onProcessingTime(now int64) error {
	if err := p.ctx.timers.AdvanceProcessingTime(now); err != nil {
		return err
	}
	return p.done()
}

func (p *keyedProcessOp[I, K, O]) nextProcessingTime() (int64, bool) {
	return p.ctx.timers.NextProcessingTime()
}

func (p *keyedProcessOp[I, K, O]) done() error {
	if err := p.backend.Err(); err != nil {
		return err
	}
	return flushAll(p.flushers)
}

// OnEventTime is called by the timer service for a due event-time timer.
func (p *keyedProcessOp[I, K, O]) OnEventTime(t state.Timer[K, state.Void]) error {
	return p.fire(t.Timestamp, EventTime, t.Timestamp)
}

// OnProcessingTime is called by the timer service for a due
// processing-time timer.
func (p *keyedProcessOp[I, K, O]) OnProcessingTime(t state.Timer[K, state.Void]) error {
	return p.fire(t.Timestamp, ProcessingTime, NoTimestamp)
}

func (p *keyedProcessOp[I, K, O]) fire(ts int64, d TimeDomain, outTs int64) error {
	if p.fn.OnTimer == nil {
		return nil
	}
	p.ctx.ts, p.ctx.domain = outTs, d
	return p.fn.OnTimer(ts, &p.ctx, p.col)
}

// endKey fires the current key's timers at the end of time, event time
// then processing time, and starts the next key at the minimal watermark
// (BATCH mode: event time jumps to the end per key).
func (p *keyedProcessOp[I, K, O]) endKey() error {
	p.wm = watermark.Max
	if err := p.ctx.timers.AdvanceWatermark(watermark.Max); err != nil {
		return err
	}
	if err := p.ctx.timers.AdvanceProcessingTime(watermark.Max); err != nil {
		return err
	}
	if err := p.ctx.timers.AdvanceWatermark(NoTimestamp); err != nil {
		return err
	}
	p.wm = NoTimestamp
	if err := p.done(); err != nil {
		return err
	}
	p.backend.Clear() // one key's state at a time
	return nil
}

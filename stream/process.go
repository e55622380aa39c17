package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/weirdata/weir/stream/state"
)

// ProcessFunction is Flink's ProcessFunction on a non-keyed stream:
// ProcessElement is called per record with its Context (timestamp,
// watermark, processing time, side outputs); Open, when set, once before;
// Close, when set, once at the end, on every path.
//
// A function that keeps operator (non-keyed) state sets InitializeState and
// SnapshotState, Flink's CheckpointedFunction: InitializeState is called once
// per subtask before Open with the subtask's operator state store, restored
// when the job restores (restored says so); the function registers its
// states there (state.GetOperatorListState, state.GetUnionListState,
// state.GetBroadcastState) and reads what they hold. SnapshotState is called
// when a checkpoint snapshots the subtask, before the store is written: the
// function brings its states up to date.
type ProcessFunction[I, O any] struct {
	Open            func() error
	ProcessElement  func(v I, ctx *Context, out Collector[O]) error
	Close           func() error
	InitializeState func(store *state.OperatorStore, restored bool) error
	SnapshotState   func(checkpointID int64) error
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
		op := &processOp[I, O]{fn: fn, node: n}
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
	node     *node
	store    *state.OperatorStore // with InitializeState
}

func (p *processOp[I, O]) open(rt *taskRuntime) error {
	if p.fn.InitializeState != nil {
		p.store = state.NewOperatorStore(state.OperatorOptions{Name: p.node.name, Memory: rt.mem})
		snap := rt.restoredFor(p.node)
		if snap != nil {
			if err := p.store.Restore(bytes.NewReader(snap)); err != nil {
				return err
			}
		}
		if err := p.fn.InitializeState(p.store, snap != nil); err != nil {
			return err
		}
	}
	p.opened = true
	if p.fn.Open != nil {
		return p.fn.Open()
	}
	return nil
}

// snapshot lets the function update its operator state and writes it.
func (p *processOp[I, O]) snapshot(id int64, w io.Writer) error {
	if p.store == nil {
		return nil
	}
	if p.fn.SnapshotState != nil {
		if err := p.fn.SnapshotState(id); err != nil {
			return err
		}
	}
	if err := p.store.Err(); err != nil {
		return err
	}
	return p.store.Snapshot(w)
}

func (p *processOp[I, O]) close() error {
	var err error
	if p.fn.Close != nil && p.opened {
		p.opened = false
		err = p.fn.Close()
	}
	if p.store != nil {
		err = errors.Join(err, p.store.Dispose())
		p.store = nil
	}
	return err
}

func (p *processOp[I, O]) push(b []Record[I]) error {
	for i := range b {
		p.ctx.ts = b[i].Timestamp
		if err := p.fn.ProcessElement(b[i].Value, &p.ctx, p.col); err != nil {
			return err
		}
	}
	if p.store != nil {
		if err := p.store.Err(); err != nil {
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

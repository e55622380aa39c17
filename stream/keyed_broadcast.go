package stream

import (
	"fmt"
	"io"

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
// state of every key from there. Open gets keyed state from ctx.Backend().
type KeyedBroadcastProcessFunction[K comparable, A, B, O any] struct {
	Open                    func(ctx *KeyedContext[K]) error
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
	bs *broadcastStates
}

func (c *KeyedReadOnlyBroadcastContext[K]) broadcastStates() *broadcastStates { return c.bs }

// KeyedBroadcastContext is ProcessBroadcastElement's context: the record's
// timestamp, the watermark, side outputs, the broadcast states read-write
// (GetBroadcastState), and ApplyToKeyedState. No key is current, so keyed
// state is reached only through ApplyToKeyedState.
type KeyedBroadcastContext[K comparable] struct {
	*Context
	bs      *broadcastStates
	backend **state.Backend[K]
}

func (c *KeyedBroadcastContext[K]) broadcastStates() *broadcastStates { return c.bs }
func (c *KeyedBroadcastContext[K]) writable()                         {}

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
	b := *ctx.backend
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
// subtask) to the keyed stream and the broadcast stream; the broadcast
// stream's records reach every subtask. In BATCH mode the broadcast input
// is processed first, as Flink does: the keyed input is sorted and fed
// key by key at its end.
func KeyedBroadcastProcess[A any, K comparable, B, O any](cs KeyedBroadcastConnectedStream[A, K, B], newFn func() KeyedBroadcastProcessFunction[K, A, B, O]) DataStream[O] {
	ea, eb := cs.a.ds.edge(), cs.b.ds.edge()
	n := addNode[O](cs.a.ds.n.env, "KeyedBroadcastProcess", ea, eb)
	if newFn == nil {
		cs.a.ds.n.env.fail(caller(1), fmt.Errorf("KeyedBroadcastProcess: nil function"))
	}
	n.keyed = true
	ea.part = partitioning{kind: partKeyed, custom: keyGroups(cs.a.key, cs.a.hash, n)}
	n.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		fn := newFn()
		if fn.ProcessElement == nil || fn.ProcessBroadcastElement == nil {
			return nil, nil, fmt.Errorf("KeyedBroadcastProcess: ProcessElement and ProcessBroadcastElement are needed")
		}
		op := &keyedBroadcastOp[A, K, O]{}
		op.bs.descs = cs.b.descs
		op.inner.node = n
		op.inner.fn = KeyedProcessFunction[K, struct{}, O]{Open: fn.Open, Close: fn.Close}
		if fn.OnTimer != nil {
			op.inner.fn.OnTimer = func(ts int64, _ *KeyedContext[K], out Collector[O]) error {
				return fn.OnTimer(ts, &op.ro, out)
			}
		}
		op.inner.out = newEmitter(outOf[O](outs, ""), rt.batchSize)
		sides, fl := sideEmitters(n, outs, rt.batchSize)
		op.inner.flushers = append(fl, op.inner.out)
		op.inner.ctx.Context = newContext(rt, &op.inner.wm, sides)
		op.inner.col = &collector[O]{e: op.inner.out, ctx: &op.inner.ctx.Context}
		op.ro = KeyedReadOnlyBroadcastContext[K]{KeyedContext: &op.inner.ctx, bs: &op.bs}
		op.rw = KeyedBroadcastContext[K]{Context: &op.inner.ctx.Context, bs: &op.bs, backend: &op.inner.backend}
		op.in1 = keyedInput(&op.inner, cs.a.key, func(v A, _ *KeyedContext[K], out Collector[O]) error {
			return fn.ProcessElement(v, &op.ro, out)
		})
		in2 := pushFunc[B](func(b []Record[B]) error {
			op.inner.backend.ClearCurrentKey()
			for i := range b {
				op.inner.ctx.ts = b[i].Timestamp
				if err := fn.ProcessBroadcastElement(b[i].Value, &op.rw, op.inner.col); err != nil {
					return err
				}
			}
			if err := op.bs.err(); err != nil {
				return err
			}
			return op.inner.done()
		})
		if rt.batch() {
			s := newSortedInput[A, K](op, cs.a.key)
			return []any{s, in2}, s, nil
		}
		return []any{op.in1, in2}, op, nil
	}
	return DataStream[O]{n: n}
}

// keyedBroadcastOp is the keyed broadcast operator (Flink's
// CoBroadcastWithKeyedOperator): a KeyedProcess operator for the keyed
// input with broadcast states beside its keyed backend. Its snapshot holds
// both: the keyed part restores by key group, the broadcast part whole
// into every instance.
type keyedBroadcastOp[A any, K comparable, O any] struct {
	inner keyedProcessOp[struct{}, K, O]
	bs    broadcastStates
	ro    KeyedReadOnlyBroadcastContext[K]
	rw    KeyedBroadcastContext[K]
	in1   pushFunc[A]
}

func (p *keyedBroadcastOp[A, K, O]) open(rt *taskRuntime) error {
	all := rt.restoredAll(p.inner.node)
	var keyed [][]byte
	var bcast []byte
	for i, snap := range all {
		parts, err := readParts(snap, 2)
		if err != nil {
			return err
		}
		if parts[0] != nil {
			keyed = append(keyed, parts[0])
		}
		if i == 0 {
			bcast = parts[1] // every subtask's broadcast states are the same
		}
	}
	if err := p.bs.open(rt, p.inner.node.name, bcast); err != nil {
		return err
	}
	saved, had := rt.overrides[p.inner.node]
	if rt.overrides == nil {
		rt.overrides = map[*node][][]byte{}
	}
	rt.overrides[p.inner.node] = keyed // the inner operator restores its keyed part
	err := p.inner.open(rt)
	if had {
		rt.overrides[p.inner.node] = saved
	} else {
		delete(rt.overrides, p.inner.node)
	}
	return err
}

func (p *keyedBroadcastOp[A, K, O]) push(b []Record[A]) error { return p.in1(b) }
func (p *keyedBroadcastOp[A, K, O]) endKey() error            { return p.inner.endKey() }
func (p *keyedBroadcastOp[A, K, O]) onWatermark(wm int64) error {
	return p.inner.onWatermark(wm)
}
func (p *keyedBroadcastOp[A, K, O]) onProcessingTime(now int64) error {
	return p.inner.onProcessingTime(now)
}
func (p *keyedBroadcastOp[A, K, O]) nextProcessingTime() (int64, bool) {
	return p.inner.nextProcessingTime()
}
func (p *keyedBroadcastOp[A, K, O]) notifyCheckpointComplete(id int64) error {
	return p.inner.notifyCheckpointComplete(id)
}
func (p *keyedBroadcastOp[A, K, O]) endInput() error { return p.inner.endInput() }

func (p *keyedBroadcastOp[A, K, O]) snapshot(id int64, w io.Writer) error {
	inner := func(w io.Writer) error { return p.inner.snapshot(id, w) }
	return writeParts(w, inner, p.bs.snapshot)
}

func (p *keyedBroadcastOp[A, K, O]) close() error {
	err := p.inner.close()
	if cerr := p.bs.close(); err == nil {
		err = cerr
	}
	return err
}

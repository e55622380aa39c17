package stream

import (
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// Reduce combines every record with its key's running result (the first
// record of a key is its first result) and emits the running result per
// record, with the record's timestamp, as Flink's StreamGroupedReduceOperator.
func (ks KeyedStream[T, K]) Reduce(fn func(acc, v T) T) DataStream[T] {
	return reduce(ks, "Reduce", fn)
}

func reduce[T any, K comparable](ks KeyedStream[T, K], name string, fn func(acc, v T) T) DataStream[T] {
	return reduceWith(ks, name, func() func(acc, v T) T { return fn })
}

// reduceWith is reduce with a function made per subtask.
func reduceWith[T any, K comparable](ks KeyedStream[T, K], name string, newFn func() func(acc, v T) T) DataStream[T] {
	n := addKeyed[T](ks, name)
	n.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		op := &reduceOp[T, K]{key: ks.key, fn: newFn(), out: newEmitter(outOf[T](outs, ""), rt.batchSize)}
		op.node = n
		if rt.batch() {
			op.final = true
			s := newSortedInput[T, K](op, ks.key)
			return []any{s}, s, nil
		}
		return []any{op}, op, nil
	}
	return DataStream[T]{n: n}
}

type reduceOp[T any, K comparable] struct {
	keyedBase[K]
	key func(T) K
	fn  func(acc, v T) T
	st  *state.Value[K, state.Void, T]
	run runKeys[K]
	out *emitter[T]
	// final: BATCH mode emits each key's final value only, at endKey
	final bool
	last  bool // a key is current
}

func (r *reduceOp[T, K]) open(rt *taskRuntime) error {
	if err := r.openBackend(rt); err != nil {
		return err
	}
	st, err := state.NewValue[K, state.Void, T](r.backend, state.ValueDescriptor[T]{Name: "_op_state"})
	r.st = st
	return err
}

func (r *reduceOp[T, K]) push(b []Record[T]) error {
	for len(b) > 0 {
		run := b[:min(len(b), keyRun)]
		b = b[len(run):]
		loadKeys(&r.run, r.backend, r.key, run)
		for i := range run {
			v := run[i].Value
			r.run.setKey(r.backend, i)
			if p := r.st.Ref(); p != nil {
				v = r.fn(*p, v)
				*p = v
			} else {
				if acc, ok := r.st.Value(); ok {
					v = r.fn(acc, v)
				}
				r.st.Update(v)
			}
			if !r.final {
				r.out.emit(v, run[i].Timestamp)
			}
		}
		r.last = true
	}
	if err := r.backend.Err(); err != nil {
		return err
	}
	return r.out.flush()
}

// endKey emits the current key's final value, with the timestamp of the
// end of event time (BATCH mode).
func (r *reduceOp[T, K]) endKey() error {
	if v, ok := r.st.Value(); ok && r.last {
		r.out.emit(v, watermark.Max)
	}
	r.last = false
	if err := r.backend.Err(); err != nil {
		return err
	}
	r.backend.Clear() // one key's state at a time
	return r.out.flush()
}

package op

import (
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// Reduce combines every record with its key's running result (the first
// record of a key is its first result) and emits the running result per
// record, with the record's timestamp, as Flink's
// StreamGroupedReduceOperator. In BATCH mode it emits each key's final
// value only (Final).
type Reduce[T any, K comparable] struct {
	KeyedBase[K]
	key func(T) K
	fn  func(acc, v T) T
	st  *state.Value[K, state.Void, T]
	run runKeys[K]
	out *core.Emitter[T]
	// Final: BATCH mode emits each key's final value only, at EndKey
	Final bool
	last  bool // a key is current
}

// NewReduce returns the rolling reduce of fn over records keyed by key.
func NewReduce[T any, K comparable](maxP int, key func(T) K, fn func(acc, v T) T, out core.Output[T], size int) *Reduce[T, K] {
	r := &Reduce[T, K]{key: key, fn: fn, out: core.NewEmitter(out, size)}
	r.MaxP = maxP
	return r
}

// Open opens the backend and the running results' state.
func (r *Reduce[T, K]) Open(s *task.Setup) error {
	if err := r.OpenBackend(s); err != nil {
		return err
	}
	st, err := state.NewValue[K, state.Void, T](r.Backend, state.ValueDescriptor[T]{Name: "_op_state"})
	r.st = st
	return err
}

// Push folds b into the running results.
func (r *Reduce[T, K]) Push(b []core.Record[T]) error {
	for len(b) > 0 {
		run := b[:min(len(b), keyRun)]
		b = b[len(run):]
		loadKeys(&r.run, r.Backend, r.key, run)
		for i := range run {
			v := run[i].Value
			r.run.setKey(r.Backend, i)
			if p := r.st.Ref(); p != nil {
				v = r.fn(*p, v)
				*p = v
			} else {
				if acc, ok := r.st.Value(); ok {
					v = r.fn(acc, v)
				}
				r.st.Update(v)
			}
			if !r.Final {
				r.out.Emit(v, run[i].Timestamp)
			}
		}
		r.last = true
	}
	if err := r.Backend.Err(); err != nil {
		return err
	}
	return r.out.Flush()
}

// EndKey emits the current key's final value, with the timestamp of the
// end of event time (BATCH mode).
func (r *Reduce[T, K]) EndKey() error {
	if v, ok := r.st.Value(); ok && r.last {
		r.out.Emit(v, watermark.Max)
	}
	r.last = false
	if err := r.Backend.Err(); err != nil {
		return err
	}
	r.Backend.Clear() // one key's state at a time
	return r.out.Flush()
}

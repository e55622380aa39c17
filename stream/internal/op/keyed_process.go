package op

import (
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// KeyedProcessFns are a KeyedProcessFunction's functions
// (stream.KeyedProcessFunction).
type KeyedProcessFns[I, C, Col any] struct {
	Open           func(ctx C) error
	ProcessElement func(v I, ctx C, out Col) error
	OnTimer        func(ts int64, ctx C, out Col) error
	Close          func() error
	// CheckpointComplete and CheckpointAborted, when set, are told of
	// completed and aborted checkpoints (Flink's CheckpointListener).
	CheckpointComplete func(id int64) error
	CheckpointAborted  func(id int64) error
}

// The time domains of KeyedCtx.Domain.
const (
	EventTime      uint8 = 0
	ProcessingTime uint8 = 1
)

// KeyedProcess is Flink's KeyedProcessOperator: a function per record with
// the record's key current, per firing timer with the timer's key
// current. The keyed two-input operators are one whose records are
// dispatched by input (KeyedInput).
type KeyedProcess[I any, K comparable, O, C, Col any] struct {
	KeyedBase[K]
	fn   KeyedProcessFns[I, C, Col]
	key  func(I) K
	run  runKeys[K]
	ctx  C
	col  Col
	st   *KeyedCtx[K]
	wm   int64
	outs *Outputs[O]
}

// NewKeyedProcess returns the operator of fn over records keyed by key,
// whose context ctx reads st. The operator's watermark is st.WM's target:
// set st.WM to WM().
func NewKeyedProcess[I any, K comparable, O, C, Col any](maxP int, fn KeyedProcessFns[I, C, Col], key func(I) K, ctx C, col Col, st *KeyedCtx[K], outs *Outputs[O]) *KeyedProcess[I, K, O, C, Col] {
	p := &KeyedProcess[I, K, O, C, Col]{fn: fn, key: key, ctx: ctx, col: col, st: st, outs: outs, wm: watermark.Min}
	p.MaxP = maxP
	return p
}

// WM returns the operator's watermark, for its context.
func (p *KeyedProcess[I, K, O, C, Col]) WM() *int64 { return &p.wm }

// Open opens the backend and the timers and then the function.
func (p *KeyedProcess[I, K, O, C, Col]) Open(s *task.Setup) error {
	p.wm = watermark.Min
	if err := p.OpenBackend(s); err != nil {
		return err
	}
	t, err := state.NewTimers[K, state.Void](p.Backend, "_user_timers", timerTarget[I, K, O, C, Col]{p})
	if err != nil {
		return err
	}
	t.RestoreWatermark(*s.Watermark())
	p.st.Backend, p.st.Timers = p.Backend, t
	p.wm = t.CurrentWatermark()
	if p.fn.Open != nil {
		return p.fn.Open(p.ctx)
	}
	return nil
}

// Close closes the function and the backend.
func (p *KeyedProcess[I, K, O, C, Col]) Close() error {
	var err error
	if p.fn.Close != nil && p.Backend != nil {
		err = p.fn.Close()
	}
	if cerr := p.KeyedBase.Close(); err == nil {
		err = cerr
	}
	return err
}

// Push calls the function per record of b, with its key current.
func (p *KeyedProcess[I, K, O, C, Col]) Push(b []core.Record[I]) error {
	for len(b) > 0 {
		run := b[:min(len(b), keyRun)]
		b = b[len(run):]
		loadKeys(&p.run, p.Backend, p.key, run)
		for i := range run {
			p.run.setKey(p.Backend, i)
			p.st.TS = run[i].Timestamp
			if err := p.fn.ProcessElement(run[i].Value, p.ctx, p.col); err != nil {
				return err
			}
		}
	}
	if err := p.Backend.Err(); err != nil {
		return err
	}
	return p.outs.Flush()
}

// KeyedInput returns an input of a keyed two-input operator: records of
// type T keyed by key, handed to fn with their key current.
func KeyedInput[T any, K comparable, O, C, Col any](p *KeyedProcess[struct{}, K, O, C, Col], key func(T) K, fn func(T, C, Col) error) core.PushFunc[T] {
	return func(b []core.Record[T]) error {
		for i := range b {
			p.Backend.SetCurrentKey(key(b[i].Value))
			p.st.TS = b[i].Timestamp
			if err := fn(b[i].Value, p.ctx, p.col); err != nil {
				return err
			}
		}
		if err := p.Backend.Err(); err != nil {
			return err
		}
		return p.outs.Flush()
	}
}

// OnWatermark fires the event-time timers due at wm.
func (p *KeyedProcess[I, K, O, C, Col]) OnWatermark(wm int64) error {
	p.wm = wm
	if err := p.st.Timers.AdvanceWatermark(wm); err != nil {
		return err
	}
	return p.done()
}

// OnProcessingTime fires the processing-time timers due at now.
func (p *KeyedProcess[I, K, O, C, Col]) OnProcessingTime(now int64) error {
	if err := p.st.Timers.AdvanceProcessingTime(now); err != nil {
		return err
	}
	return p.done()
}

// NextProcessingTime returns the earliest processing-time timer.
func (p *KeyedProcess[I, K, O, C, Col]) NextProcessingTime() (int64, bool) {
	return p.st.Timers.NextProcessingTime()
}

// Done checks the backend and flushes the outputs.
func (p *KeyedProcess[I, K, O, C, Col]) done() error {
	if err := p.Backend.Err(); err != nil {
		return err
	}
	return p.outs.Flush()
}

// timerTarget is the operator as its timer service calls it.
type timerTarget[I any, K comparable, O, C, Col any] struct {
	p *KeyedProcess[I, K, O, C, Col]
}

// OnEventTime is called by the timer service for a due event-time timer.
func (t timerTarget[I, K, O, C, Col]) OnEventTime(tm state.Timer[K, state.Void]) error {
	return t.p.fire(tm.Timestamp, EventTime, tm.Timestamp)
}

// OnProcessingTime is called by the timer service for a due
// processing-time timer.
func (t timerTarget[I, K, O, C, Col]) OnProcessingTime(tm state.Timer[K, state.Void]) error {
	return t.p.fire(tm.Timestamp, ProcessingTime, watermark.Min)
}

func (p *KeyedProcess[I, K, O, C, Col]) fire(ts int64, d uint8, outTs int64) error {
	if p.fn.OnTimer == nil {
		return nil
	}
	p.st.TS, p.st.Domain = outTs, d
	return p.fn.OnTimer(ts, p.ctx, p.col)
}

// EndKey fires the current key's timers at the end of time, event time
// then processing time, and starts the next key at the minimal watermark
// (BATCH mode: event time jumps to the end per key).
func (p *KeyedProcess[I, K, O, C, Col]) EndKey() error {
	p.wm = watermark.Max
	if err := p.st.Timers.AdvanceWatermark(watermark.Max); err != nil {
		return err
	}
	if err := p.st.Timers.AdvanceProcessingTime(watermark.Max); err != nil {
		return err
	}
	if err := p.st.Timers.AdvanceWatermark(watermark.Min); err != nil {
		return err
	}
	p.wm = watermark.Min
	if err := p.done(); err != nil {
		return err
	}
	p.Backend.Clear() // one key's state at a time
	return nil
}

// NotifyCheckpointComplete tells the function.
func (p *KeyedProcess[I, K, O, C, Col]) NotifyCheckpointComplete(id int64) error {
	return notify(p.fn.CheckpointComplete, id)
}

// NotifyCheckpointAborted tells the function.
func (p *KeyedProcess[I, K, O, C, Col]) NotifyCheckpointAborted(id int64) error {
	return notify(p.fn.CheckpointAborted, id)
}

package op

import (
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/watermark"
)

// Assign gives records new timestamps and makes the watermarks of its
// output from them, as Flink's TimestampsAndWatermarksOperator: the
// strategy's assigner stamps each record (given the timestamp it carries),
// its generator sees every stamped record and, every auto-watermark
// interval of processing time, is asked for a periodic watermark. The
// watermarks of the input are dropped but the maximal one, which ends
// event time; so are its idleness statuses. The watermarks it emits rise:
// one not above the last is dropped. It heads its task (the runtime's
// WatermarkOwner) and keeps no state: after a restore the operators after
// it keep the watermark they had.
type Assign[T any] struct {
	task.Base
	strategy watermark.Strategy[T]
	assigner watermark.Assigner[T]
	gen      watermark.Generator[T]
	rt       *task.Runtime
	out      *core.Emitter[T]
	every    int64 // the periodic emission's interval (ms), 0 for none
	next     int64 // the processing time of the next periodic emission
	last     int64 // the last watermark emitted
	idle     bool
	err      error
}

// NewAssign returns the Assign of s into out.
func NewAssign[T any](s watermark.Strategy[T], out core.Output[T], size int) *Assign[T] {
	return &Assign[T]{strategy: s, assigner: s.Assigner(), out: core.NewEmitter(out, size), last: watermark.Min}
}

// Open makes the generator and schedules the first periodic emission.
func (a *Assign[T]) Open(s *task.Setup) error {
	gen, err := a.strategy.NewGenerator(watermark.Context{Clock: s.Clock()})
	if err != nil {
		return err
	}
	a.gen, a.rt = gen, s.Runtime
	s.SetWatermarkOwner(a)
	if iv := s.Config().AutoWatermarkInterval.Milliseconds(); iv > 0 {
		a.every, a.next = iv, s.Now()+iv
	}
	return nil
}

// Push stamps b's records, emits them and shows each to the generator.
func (a *Assign[T]) Push(b []core.Record[T]) error {
	for i := range b {
		ts, err := a.assigner.Extract(b[i].Value, b[i].Timestamp)
		if err != nil {
			return err
		}
		a.out.Emit(b[i].Value, ts)
		a.gen.OnEvent(b[i].Value, ts, a)
		if a.err != nil {
			return a.err
		}
	}
	return a.out.Flush()
}

// OnInputWatermark forwards the maximal watermark only.
func (a *Assign[T]) OnInputWatermark(wm int64) error {
	if wm == watermark.Max {
		a.EmitWatermark(wm)
	}
	return a.err
}

// OnProcessingTime asks the generator for a periodic watermark when one is
// due.
func (a *Assign[T]) OnProcessingTime(now int64) error {
	if a.every > 0 && now >= a.next {
		a.gen.OnPeriodicEmit(a)
		a.next = now + a.every
	}
	return a.err
}

// NextProcessingTime is the next periodic emission.
func (a *Assign[T]) NextProcessingTime() (int64, bool) { return a.next, a.every > 0 }

// EndInput asks the generator for a last periodic watermark (Flink's
// finish).
func (a *Assign[T]) EndInput() error {
	a.gen.OnPeriodicEmit(a)
	a.every = 0
	return a.err
}

// EmitWatermark is the generator's: a rising watermark goes through the
// chain after the records before it, and marks the output active.
func (a *Assign[T]) EmitWatermark(wm int64) {
	if a.err != nil || wm <= a.last {
		return
	}
	a.last = wm
	if a.err = a.out.Flush(); a.err != nil {
		return
	}
	if a.idle {
		a.idle = false
		if a.err = a.rt.ForwardStatus(false); a.err != nil {
			return
		}
	}
	a.err = a.rt.ForwardWatermark(wm)
}

// MarkIdle is the generator's: the output is idle until a watermark.
func (a *Assign[T]) MarkIdle() {
	if a.err != nil || a.idle {
		return
	}
	if a.err = a.out.Flush(); a.err == nil {
		a.idle = true
		a.err = a.rt.ForwardStatus(true)
	}
}

// MarkActive is the generator's: the output is active again.
func (a *Assign[T]) MarkActive() {
	if a.err != nil || !a.idle {
		return
	}
	a.idle = false
	a.err = a.rt.ForwardStatus(false)
}

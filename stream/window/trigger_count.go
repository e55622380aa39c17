package window

import (
	"fmt"
	"time"
)

// CountTrigger fires when a window holds MaxCount elements since it last
// fired (Flink's CountTrigger); its count merges with the windows.
type CountTrigger[W Window] struct {
	max   int64
	count *Reducing[int64]
	err   error
}

// CountTriggerOf returns a CountTrigger firing every maxCount elements.
func CountTriggerOf[W Window](maxCount int64) *CountTrigger[W] {
	if maxCount <= 0 {
		return &CountTrigger[W]{err: fmt.Errorf("window: CountTrigger: count %d must be positive", maxCount)}
	}
	c, err := NewReducing("count", func(a, b int64) int64 { return a + b })
	return &CountTrigger[W]{max: maxCount, count: c, err: err}
}

// Err returns why the constructor's parameters are invalid, or nil.
func (t *CountTrigger[W]) Err() error { return t.err }

// OnElement counts the element and fires (resetting the count) at the
// maximum.
func (t *CountTrigger[W]) OnElement(_ any, _ int64, _ W, ctx TriggerContext) (TriggerResult, error) {
	if t.err != nil {
		return Continue, t.err
	}
	if err := t.count.Add(ctx, 1); err != nil {
		return Continue, err
	}
	n, _, err := t.count.Get(ctx)
	if err != nil {
		return Continue, err
	}
	if n >= t.max {
		t.count.Clear(ctx)
		return Fire, nil
	}
	return Continue, nil
}

// OnEventTime continues.
func (t *CountTrigger[W]) OnEventTime(int64, W, TriggerContext) (TriggerResult, error) {
	return Continue, nil
}

// OnProcessingTime continues.
func (t *CountTrigger[W]) OnProcessingTime(int64, W, TriggerContext) (TriggerResult, error) {
	return Continue, nil
}

// CanMerge is true.
func (t *CountTrigger[W]) CanMerge() bool { return true }

// OnMerge adds up the merged windows' counts.
func (t *CountTrigger[W]) OnMerge(_ W, ctx OnMergeContext) error { return t.count.Merge(ctx) }

// Clear drops the count.
func (t *CountTrigger[W]) Clear(_ W, ctx TriggerContext) error {
	t.count.Clear(ctx)
	return nil
}

func (t *CountTrigger[W]) String() string { return fmt.Sprintf("CountTrigger(%d)", t.max) }

// PurgingTrigger turns every FIRE of the trigger it wraps into
// FIRE_AND_PURGE (Flink's PurgingTrigger).
type PurgingTrigger[W Window] struct{ nested Trigger[W] }

// PurgingTriggerOf wraps nested.
func PurgingTriggerOf[W Window](nested Trigger[W]) *PurgingTrigger[W] {
	return &PurgingTrigger[W]{nested: nested}
}

// Err returns the nested trigger's construction error, or nil.
func (t *PurgingTrigger[W]) Err() error {
	if t.nested == nil {
		return fmt.Errorf("window: PurgingTrigger: nil nested trigger")
	}
	return Err(t.nested)
}

func purging(r TriggerResult, err error) (TriggerResult, error) {
	if r.IsFire() {
		return FireAndPurge, err
	}
	return r, err
}

// OnElement asks the nested trigger.
func (t *PurgingTrigger[W]) OnElement(elem any, ts int64, w W, ctx TriggerContext) (TriggerResult, error) {
	return purging(t.nested.OnElement(elem, ts, w, ctx))
}

// OnEventTime asks the nested trigger.
func (t *PurgingTrigger[W]) OnEventTime(time int64, w W, ctx TriggerContext) (TriggerResult, error) {
	return purging(t.nested.OnEventTime(time, w, ctx))
}

// OnProcessingTime asks the nested trigger.
func (t *PurgingTrigger[W]) OnProcessingTime(time int64, w W, ctx TriggerContext) (TriggerResult, error) {
	return purging(t.nested.OnProcessingTime(time, w, ctx))
}

// CanMerge is the nested trigger's.
func (t *PurgingTrigger[W]) CanMerge() bool { return t.nested.CanMerge() }

// OnMerge is the nested trigger's.
func (t *PurgingTrigger[W]) OnMerge(w W, ctx OnMergeContext) error { return t.nested.OnMerge(w, ctx) }

// Clear is the nested trigger's.
func (t *PurgingTrigger[W]) Clear(w W, ctx TriggerContext) error { return t.nested.Clear(w, ctx) }

func (t *PurgingTrigger[W]) String() string { return fmt.Sprintf("PurgingTrigger(%v)", t.nested) }

// ContinuousEventTimeTrigger fires a window every Interval of event time,
// and at its end (Flink's ContinuousEventTimeTrigger).
type ContinuousEventTimeTrigger[W Window] struct {
	interval int64
	fireAt   *Reducing[int64]
	err      error
}

// ContinuousEventTimeTriggerOf returns the trigger firing every interval.
func ContinuousEventTimeTriggerOf[W Window](interval time.Duration) *ContinuousEventTimeTrigger[W] {
	i, s, err := continuous("ContinuousEventTimeTrigger", interval)
	return &ContinuousEventTimeTrigger[W]{interval: i, fireAt: s, err: err}
}

// Err returns why the constructor's parameters are invalid, or nil.
func (t *ContinuousEventTimeTrigger[W]) Err() error { return t.err }

func continuous(name string, interval time.Duration) (int64, *Reducing[int64], error) {
	if interval.Milliseconds() <= 0 {
		return 0, nil, fmt.Errorf("window: %s: interval %v must be at least 1 ms", name, interval)
	}
	s, err := NewReducing("fire-time", func(a, b int64) int64 { return min(a, b) })
	return interval.Milliseconds(), s, err
}

// OnElement fires a window the watermark passed; else it registers the
// window's end and, for the first element, the next interval boundary.
func (t *ContinuousEventTimeTrigger[W]) OnElement(_ any, ts int64, w W, ctx TriggerContext) (TriggerResult, error) {
	if t.err != nil {
		return Continue, t.err
	}
	if w.MaxTimestamp() <= ctx.CurrentWatermark() {
		return Fire, nil
	}
	ctx.RegisterEventTimeTimer(w.MaxTimestamp())
	_, ok, err := t.fireAt.Get(ctx)
	if err != nil || ok {
		return Continue, err
	}
	return Continue, t.next(ts-ts%t.interval, w, ctx, true)
}

func (t *ContinuousEventTimeTrigger[W]) next(time int64, w W, ctx TriggerContext, event bool) error {
	return registerNext(t.fireAt, t.interval, time, w, ctx, event)
}

func registerNext[W Window](s *Reducing[int64], interval, time int64, w W, ctx TriggerContext, event bool) error {
	next := min(time+interval, w.MaxTimestamp())
	if err := s.Add(ctx, next); err != nil {
		return err
	}
	if event {
		ctx.RegisterEventTimeTimer(next)
	} else {
		ctx.RegisterProcessingTimeTimer(next)
	}
	return nil
}

// OnEventTime fires at the window's end and at each interval boundary.
func (t *ContinuousEventTimeTrigger[W]) OnEventTime(time int64, w W, ctx TriggerContext) (TriggerResult, error) {
	if time == w.MaxTimestamp() {
		return Fire, nil
	}
	at, ok, err := t.fireAt.Get(ctx)
	if err != nil {
		return Continue, err
	}
	if ok && at == time {
		t.fireAt.Clear(ctx)
		return Fire, t.next(time, w, ctx, true)
	}
	return Continue, nil
}

// OnProcessingTime continues.
func (t *ContinuousEventTimeTrigger[W]) OnProcessingTime(int64, W, TriggerContext) (TriggerResult, error) {
	return Continue, nil
}

// CanMerge is true.
func (t *ContinuousEventTimeTrigger[W]) CanMerge() bool { return true }

// OnMerge keeps the earliest next firing of the merged windows.
func (t *ContinuousEventTimeTrigger[W]) OnMerge(_ W, ctx OnMergeContext) error {
	if err := t.fireAt.Merge(ctx); err != nil {
		return err
	}
	at, ok, err := t.fireAt.Get(ctx)
	if ok {
		ctx.RegisterEventTimeTimer(at)
	}
	return err
}

// Clear deletes the next firing.
func (t *ContinuousEventTimeTrigger[W]) Clear(_ W, ctx TriggerContext) error {
	at, ok, err := t.fireAt.Get(ctx)
	if ok {
		ctx.DeleteEventTimeTimer(at)
		t.fireAt.Clear(ctx)
	}
	return err
}

// ContinuousProcessingTimeTrigger fires a window every Interval of
// processing time (Flink's ContinuousProcessingTimeTrigger).
type ContinuousProcessingTimeTrigger[W Window] struct {
	interval int64
	fireAt   *Reducing[int64]
	err      error
}

// ContinuousProcessingTimeTriggerOf returns the trigger firing every
// interval.
func ContinuousProcessingTimeTriggerOf[W Window](interval time.Duration) *ContinuousProcessingTimeTrigger[W] {
	i, s, err := continuous("ContinuousProcessingTimeTrigger", interval)
	return &ContinuousProcessingTimeTrigger[W]{interval: i, fireAt: s, err: err}
}

// Err returns why the constructor's parameters are invalid, or nil.
func (t *ContinuousProcessingTimeTrigger[W]) Err() error { return t.err }

// OnElement registers the next interval boundary for a window's first
// element.
func (t *ContinuousProcessingTimeTrigger[W]) OnElement(_ any, _ int64, w W, ctx TriggerContext) (TriggerResult, error) {
	if t.err != nil {
		return Continue, t.err
	}
	_, ok, err := t.fireAt.Get(ctx)
	if err != nil || ok {
		return Continue, err
	}
	now := ctx.CurrentProcessingTime()
	return Continue, registerNext(t.fireAt, t.interval, now-now%t.interval, w, ctx, false)
}

// OnEventTime continues.
func (t *ContinuousProcessingTimeTrigger[W]) OnEventTime(int64, W, TriggerContext) (TriggerResult, error) {
	return Continue, nil
}

// OnProcessingTime fires at each interval boundary and registers the next.
func (t *ContinuousProcessingTimeTrigger[W]) OnProcessingTime(time int64, w W, ctx TriggerContext) (TriggerResult, error) {
	at, ok, err := t.fireAt.Get(ctx)
	if err != nil {
		return Continue, err
	}
	if ok && at == time {
		t.fireAt.Clear(ctx)
		return Fire, registerNext(t.fireAt, t.interval, time, w, ctx, false)
	}
	return Continue, nil
}

// CanMerge is true.
func (t *ContinuousProcessingTimeTrigger[W]) CanMerge() bool { return true }

// OnMerge keeps the earliest next firing of the merged windows.
func (t *ContinuousProcessingTimeTrigger[W]) OnMerge(_ W, ctx OnMergeContext) error {
	if err := t.fireAt.Merge(ctx); err != nil {
		return err
	}
	at, ok, err := t.fireAt.Get(ctx)
	if ok {
		ctx.RegisterProcessingTimeTimer(at)
	}
	return err
}

// Clear deletes the next firing.
func (t *ContinuousProcessingTimeTrigger[W]) Clear(_ W, ctx TriggerContext) error {
	at, ok, err := t.fireAt.Get(ctx)
	if ok {
		ctx.DeleteProcessingTimeTimer(at)
		t.fireAt.Clear(ctx)
	}
	return err
}

// DeltaTrigger fires when the delta between the element and the one of the
// window's last firing exceeds Threshold (Flink's DeltaTrigger); the first
// element of a window only becomes the reference.
type DeltaTrigger[T any, W Window] struct {
	threshold float64
	delta     func(old, cur T) float64
	last      *Value[T]
	err       error
}

// DeltaTriggerOf returns a DeltaTrigger; T must be encodable by
// memory.Codec (the reference element is per-window state).
func DeltaTriggerOf[T any, W Window](threshold float64, delta func(old, cur T) float64) *DeltaTrigger[T, W] {
	if delta == nil {
		return &DeltaTrigger[T, W]{err: fmt.Errorf("window: DeltaTrigger: nil delta function")}
	}
	v, err := NewValue[T]("last-element")
	return &DeltaTrigger[T, W]{threshold: threshold, delta: delta, last: v, err: err}
}

// Err returns why the constructor's parameters are invalid, or nil.
func (t *DeltaTrigger[T, W]) Err() error { return t.err }

// OnElement fires when the delta exceeds the threshold.
func (t *DeltaTrigger[T, W]) OnElement(elem any, _ int64, _ W, ctx TriggerContext) (TriggerResult, error) {
	if t.err != nil {
		return Continue, t.err
	}
	p, ok := elem.(*T)
	if !ok {
		return Continue, fmt.Errorf("window: DeltaTrigger of %T given an element %T", (*T)(nil), elem)
	}
	last, ok, err := t.last.Get(ctx)
	if err != nil {
		return Continue, err
	}
	if !ok {
		t.last.Update(ctx, *p)
		return Continue, nil
	}
	if t.delta(last, *p) > t.threshold {
		t.last.Update(ctx, *p)
		return Fire, nil
	}
	return Continue, nil
}

// OnEventTime continues.
func (t *DeltaTrigger[T, W]) OnEventTime(int64, W, TriggerContext) (TriggerResult, error) {
	return Continue, nil
}

// OnProcessingTime continues.
func (t *DeltaTrigger[T, W]) OnProcessingTime(int64, W, TriggerContext) (TriggerResult, error) {
	return Continue, nil
}

// CanMerge is false, as Flink's.
func (t *DeltaTrigger[T, W]) CanMerge() bool { return false }

// OnMerge is refused: the trigger does not merge.
func (t *DeltaTrigger[T, W]) OnMerge(W, OnMergeContext) error {
	return fmt.Errorf("window: DeltaTrigger does not support merging windows")
}

// Clear drops the reference element.
func (t *DeltaTrigger[T, W]) Clear(_ W, ctx TriggerContext) error {
	t.last.Clear(ctx)
	return nil
}

package window

import (
	"fmt"
	"unsafe"

	"github.com/weirdata/weir/memory"
)

// TriggerResult is what a trigger decides for its window (Flink's
// TriggerResult): fire evaluates the window function, purge drops the
// window's contents (its trigger state and timers stay).
type TriggerResult uint8

// The trigger results.
const (
	Continue TriggerResult = iota
	Fire
	Purge
	FireAndPurge
)

// IsFire says whether the window function runs.
func (r TriggerResult) IsFire() bool { return r == Fire || r == FireAndPurge }

// IsPurge says whether the window's contents are dropped.
func (r TriggerResult) IsPurge() bool { return r == Purge || r == FireAndPurge }

func (r TriggerResult) String() string {
	switch r {
	case Continue:
		return "CONTINUE"
	case Fire:
		return "FIRE"
	case Purge:
		return "PURGE"
	case FireAndPurge:
		return "FIRE_AND_PURGE"
	}
	return fmt.Sprintf("TriggerResult(%d)", uint8(r))
}

// Trigger is Flink's Trigger: it decides when a window fires. Each method
// is called with the current key set and ctx bound to window w; a trigger
// keeps what it needs between calls in per-window state (Value, Reducing)
// and timers, never in its own fields, since one trigger value serves
// every key and window of an operator instance.
type Trigger[W Window] interface {
	// OnElement is called for every element added to w; elem is a pointer
	// to it (*T of the stream's type T).
	OnElement(elem any, ts int64, w W, ctx TriggerContext) (TriggerResult, error)
	// OnEventTime is called when an event-time timer of w fires.
	OnEventTime(time int64, w W, ctx TriggerContext) (TriggerResult, error)
	// OnProcessingTime is called when a processing-time timer of w fires.
	OnProcessingTime(time int64, w W, ctx TriggerContext) (TriggerResult, error)
	// CanMerge says whether the trigger supports merging windows.
	CanMerge() bool
	// OnMerge is called when windows merged into w: the trigger merges its
	// state (ctx names the merged windows) and registers its timers for w.
	OnMerge(w W, ctx OnMergeContext) error
	// Clear drops what the trigger keeps for w: its timers and state.
	Clear(w W, ctx TriggerContext) error
}

// TriggerContext is what a trigger sees of the operator, bound to the
// current key and window.
type TriggerContext interface {
	CurrentWatermark() int64
	CurrentProcessingTime() int64
	RegisterEventTimeTimer(ts int64)
	RegisterProcessingTimeTimer(ts int64)
	DeleteEventTimeTimer(ts int64)
	DeleteProcessingTimeTimer(ts int64)
	// RawState is the trigger state of that name for the current key and
	// window, as bytes; Value and Reducing give typed access to it.
	RawState(name string) RawState
	// Int64State is the trigger state of that name for the current key and
	// window holding an int64 (counts and times), kept without encoding;
	// Value[int64] and Reducing[int64] use it.
	Int64State(name string) Int64State
}

// OnMergeContext is the TriggerContext of OnMerge.
type OnMergeContext interface {
	TriggerContext
	// MergeRawState folds the state of that name of every merged window
	// into the current window's, with merge, and clears the merged ones.
	MergeRawState(name string, merge func(acc, v []byte) ([]byte, error)) error
	// MergeInt64State is MergeRawState for an Int64State.
	MergeInt64State(name string, merge func(acc, v int64) int64)
}

// Int64State is one int64 trigger state of the current key and window.
type Int64State interface {
	Get() (int64, bool)
	Update(v int64)
	Clear()
}

// RawState is one trigger state of the current key and window, kept in the
// operator's keyed state with the window as namespace.
type RawState interface {
	Get() ([]byte, bool)
	Update(b []byte)
	Clear()
}

// Value is a typed per-window trigger state holding one V (Flink's
// ValueState obtained through getPartitionedState).
type Value[V any] struct {
	name  string
	codec *memory.Codec[V]
	i64   bool // V is int64: kept in an Int64State
}

// NewValue returns the per-window trigger state of that name; V must be
// encodable by memory.Codec.
func NewValue[V any](name string) (*Value[V], error) {
	c, err := memory.NewCodec[V]()
	if err != nil {
		return nil, fmt.Errorf("window: trigger state %q: %w", name, err)
	}
	var zero V
	_, i64 := any(zero).(int64)
	return &Value[V]{name: name, codec: c, i64: i64}, nil
}

// asV and asInt64 convert between V and int64 when i64 says V is int64.
func asV[V any](x int64) V     { return *(*V)(unsafe.Pointer(&x)) }
func asInt64[V any](v V) int64 { return *(*int64)(unsafe.Pointer(&v)) }

// Get returns the value for ctx's key and window.
func (s *Value[V]) Get(ctx TriggerContext) (V, bool, error) {
	var v V
	if s.i64 {
		x, ok := ctx.Int64State(s.name).Get()
		return asV[V](x), ok, nil
	}
	b, ok := ctx.RawState(s.name).Get()
	if !ok {
		return v, false, nil
	}
	if _, err := s.codec.Decode(b, &v); err != nil {
		return v, false, fmt.Errorf("window: trigger state %q: %w", s.name, err)
	}
	return v, true, nil
}

// Update sets the value for ctx's key and window.
func (s *Value[V]) Update(ctx TriggerContext, v V) {
	if s.i64 {
		ctx.Int64State(s.name).Update(asInt64(v))
		return
	}
	ctx.RawState(s.name).Update(s.codec.Append(nil, &v))
}

// Clear removes the value for ctx's key and window.
func (s *Value[V]) Clear(ctx TriggerContext) {
	if s.i64 {
		ctx.Int64State(s.name).Clear()
		return
	}
	ctx.RawState(s.name).Clear()
}

// Reducing is a typed per-window trigger state reducing the values added
// (Flink's ReducingState); it merges with the windows.
type Reducing[V any] struct {
	Value[V]
	reduce func(a, b V) V
}

// NewReducing returns the per-window reducing trigger state of that name.
func NewReducing[V any](name string, reduce func(a, b V) V) (*Reducing[V], error) {
	v, err := NewValue[V](name)
	if err != nil {
		return nil, err
	}
	if reduce == nil {
		return nil, fmt.Errorf("window: trigger state %q: nil reduce function", name)
	}
	return &Reducing[V]{Value: *v, reduce: reduce}, nil
}

// Add reduces v into the value for ctx's key and window.
func (s *Reducing[V]) Add(ctx TriggerContext, v V) error {
	acc, ok, err := s.Get(ctx)
	if err != nil {
		return err
	}
	if ok {
		v = s.reduce(acc, v)
	}
	s.Update(ctx, v)
	return nil
}

// Merge folds the merged windows' values into the current window's
// (Flink's mergePartitionedState).
func (s *Reducing[V]) Merge(ctx OnMergeContext) error {
	if s.i64 {
		ctx.MergeInt64State(s.name, func(a, b int64) int64 { return asInt64(s.reduce(asV[V](a), asV[V](b))) })
		return nil
	}
	return ctx.MergeRawState(s.name, func(acc, b []byte) ([]byte, error) {
		var x, y V
		if _, err := s.codec.Decode(acc, &x); err != nil {
			return nil, err
		}
		if _, err := s.codec.Decode(b, &y); err != nil {
			return nil, err
		}
		r := s.reduce(x, y)
		return s.codec.Append(nil, &r), nil
	})
}

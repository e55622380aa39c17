package watermark

import (
	"errors"
	"fmt"
	"time"
)

// Strategy is Flink's WatermarkStrategy: how a source creates the generator
// of each split and assigns timestamps. Builders return new strategies and
// leave the receiver as it was. The zero Strategy generates no watermarks and
// keeps the records' timestamps.
type Strategy[T any] struct {
	newGen   func(Context) (Generator[T], error)
	assigner Assigner[T]
	align    Alignment
	err      error
}

// DefaultAlignmentUpdateInterval is how often a source subtask under
// watermark alignment reports its watermark, and its source announces the
// group's bound, unless the strategy says otherwise: Flink's
// WatermarksWithWatermarkAlignment.DEFAULT_UPDATE_INTERVAL.
const DefaultAlignmentUpdateInterval = time.Second

// Alignment is a strategy's watermark alignment (Flink's
// WatermarkAlignmentParams, FLIP-182): the sources of one Group, across
// operators, keep their watermarks within MaxDrift of the group's least.
// Every UpdateInterval each source subtask reports its watermark (the
// maximal one when idle or finished) and each source announces to its
// subtasks the bound least + MaxDrift; a split whose watermark passed the
// bound is not read until an announced bound reaches it again. MaxDrift and
// UpdateInterval are used in whole milliseconds. The zero Alignment is off.
type Alignment struct {
	Group          string
	MaxDrift       time.Duration
	UpdateInterval time.Duration
}

// Enabled reports whether a is on: it names a group.
func (a Alignment) Enabled() bool { return a.Group != "" }

// ForBoundedOutOfOrderness is the strategy of BoundedOutOfOrderness: events
// at most bound out of order (whole milliseconds, not negative).
func ForBoundedOutOfOrderness[T any](bound time.Duration) Strategy[T] {
	s := Strategy[T]{newGen: func(Context) (Generator[T], error) { return NewBoundedOutOfOrderness[T](bound) }}
	if bound < 0 {
		s.err = fmt.Errorf("watermark: the out-of-orderness bound %v is negative", bound)
	}
	return s
}

// ForMonotonousTimestamps is the strategy for ascending timestamps: the
// watermark is the largest timestamp seen minus 1.
func ForMonotonousTimestamps[T any]() Strategy[T] {
	return Strategy[T]{newGen: func(Context) (Generator[T], error) { return NewAscendingTimestamps[T](), nil }}
}

// NoWatermarks is the strategy that emits no watermarks: for jobs that use
// processing time only.
func NoWatermarks[T any]() Strategy[T] { return Strategy[T]{} }

// ForGenerator is the strategy whose generators newGen creates: a custom
// periodic or punctuated generator (see Funcs, Periodic, Punctuated).
func ForGenerator[T any](newGen func(Context) Generator[T]) Strategy[T] {
	if newGen == nil {
		return Strategy[T]{err: errors.New("watermark: ForGenerator without a generator function")}
	}
	return Strategy[T]{newGen: func(c Context) (Generator[T], error) { return newGen(c), nil }}
}

// WithTimestampAssigner returns s with timestamps from fn, given the event and
// the timestamp it carries.
func (s Strategy[T]) WithTimestampAssigner(fn func(event T, recordTimestamp int64) int64) Strategy[T] {
	s.assigner = AssignerFunc(fn)
	return s
}

// WithTimestampAssignerErr returns s with timestamps from fn, which may fail:
// Assigner().Extract reports the failure naming the record.
func (s Strategy[T]) WithTimestampAssignerErr(fn func(event T, recordTimestamp int64) (int64, error)) Strategy[T] {
	s.assigner = AssignerErrFunc(fn)
	return s
}

// WithIdleness returns s whose generators mark their output idle when no
// event came for more than timeout (see Idleness), measured on the
// Context's Clock. timeout must be above zero.
func (s Strategy[T]) WithIdleness(timeout time.Duration) Strategy[T] {
	if timeout <= 0 && s.err == nil {
		s.err = fmt.Errorf("watermark: the idle timeout %v is not above zero", timeout)
	}
	base := s.newGen
	s.newGen = func(c Context) (Generator[T], error) {
		var g Generator[T] = noWatermarks[T]{}
		if base != nil {
			var err error
			if g, err = base(c); err != nil {
				return nil, err
			}
		}
		return NewIdleness(g, timeout, c.clock())
	}
	return s
}

// WithWatermarkAlignment returns s whose sources align their watermarks
// within group: a split more than maxDrift ahead of the least watermark of
// the group's sources pauses until the others catch up. Each source subtask
// reports its watermark every updateInterval (DefaultAlignmentUpdateInterval
// when zero). group must not be empty and neither duration negative.
func (s Strategy[T]) WithWatermarkAlignment(group string, maxDrift, updateInterval time.Duration) Strategy[T] {
	if updateInterval == 0 {
		updateInterval = DefaultAlignmentUpdateInterval
	}
	if s.err == nil {
		switch {
		case group == "":
			s.err = errors.New("watermark: watermark alignment without a group")
		case maxDrift < 0:
			s.err = fmt.Errorf("watermark: the maximal watermark drift %v is negative", maxDrift)
		case updateInterval < time.Millisecond:
			s.err = fmt.Errorf("watermark: the alignment update interval %v is under a millisecond", updateInterval)
		}
	}
	s.align = Alignment{Group: group, MaxDrift: maxDrift, UpdateInterval: updateInterval}
	return s
}

// Alignment returns s's watermark alignment: the zero Alignment when s does
// not align.
func (s Strategy[T]) Alignment() Alignment { return s.align }

// Err returns why s is invalid, or nil.
func (s Strategy[T]) Err() error { return s.err }

// NewGenerator returns a new generator of s: one per split.
func (s Strategy[T]) NewGenerator(c Context) (Generator[T], error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.newGen == nil {
		return noWatermarks[T]{}, nil
	}
	return s.newGen(c)
}

// Assigner returns s's timestamp assigner.
func (s Strategy[T]) Assigner() Assigner[T] { return s.assigner }

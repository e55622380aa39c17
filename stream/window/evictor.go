package window

import (
	"fmt"
	"time"
)

// Elements are the elements of a window handed to an evictor, in the
// order they were added; Evict marks one removed (the indexes stay valid
// during the call).
type Elements interface {
	Len() int
	// Value returns a pointer to element i (*T of the stream's type T).
	Value(i int) any
	// Timestamp returns element i's timestamp (math.MinInt64, watermark.Min, for none).
	Timestamp(i int) int64
	// Evict removes element i from the window.
	Evict(i int)
}

// Evictor is Flink's Evictor: it removes elements from a window before
// and/or after the window function runs. A window with an evictor keeps
// its elements (list state), never an accumulator.
type Evictor[W Window] interface {
	EvictBefore(elems Elements, w W, ctx EvictorContext) error
	EvictAfter(elems Elements, w W, ctx EvictorContext) error
}

// EvictorContext is what an evictor sees of the operator.
type EvictorContext interface {
	CurrentWatermark() int64
	CurrentProcessingTime() int64
}

// after says whether an evictor runs after the function ("doEvictAfter").
type after bool

func (a after) before() bool { return !bool(a) }

// CountEvictor keeps the last MaxCount elements (Flink's CountEvictor).
type CountEvictor[W Window] struct {
	max int
	after
}

// CountEvictorOf returns a CountEvictor evicting before the function, or
// after it when doEvictAfter is given true.
func CountEvictorOf[W Window](maxCount int, doEvictAfter ...bool) *CountEvictor[W] {
	return &CountEvictor[W]{max: maxCount, after: after(len(doEvictAfter) > 0 && doEvictAfter[0])}
}

func (e *CountEvictor[W]) evict(elems Elements) {
	n := elems.Len()
	for i := 0; i < n-e.max; i++ {
		elems.Evict(i)
	}
}

// EvictBefore evicts unless the evictor runs after.
func (e *CountEvictor[W]) EvictBefore(elems Elements, _ W, _ EvictorContext) error {
	if e.before() {
		e.evict(elems)
	}
	return nil
}

// EvictAfter evicts when the evictor runs after.
func (e *CountEvictor[W]) EvictAfter(elems Elements, _ W, _ EvictorContext) error {
	if !e.before() {
		e.evict(elems)
	}
	return nil
}

// TimeEvictor keeps the elements within WindowSize of the window's newest
// element: it evicts every element whose timestamp is at or before the
// largest timestamp minus WindowSize (Flink's TimeEvictor).
type TimeEvictor[W Window] struct {
	size int64
	after
}

// TimeEvictorOf returns a TimeEvictor.
func TimeEvictorOf[W Window](windowSize time.Duration, doEvictAfter ...bool) *TimeEvictor[W] {
	return &TimeEvictor[W]{size: windowSize.Milliseconds(), after: after(len(doEvictAfter) > 0 && doEvictAfter[0])}
}

func (e *TimeEvictor[W]) evict(elems Elements) {
	n := elems.Len()
	if n == 0 || elems.Timestamp(0) == noTimestamp {
		return
	}
	newest := int64(noTimestamp)
	for i := 0; i < n; i++ {
		newest = max(newest, elems.Timestamp(i))
	}
	cutoff := newest - e.size
	for i := 0; i < n; i++ {
		if elems.Timestamp(i) <= cutoff {
			elems.Evict(i)
		}
	}
}

// EvictBefore evicts unless the evictor runs after.
func (e *TimeEvictor[W]) EvictBefore(elems Elements, _ W, _ EvictorContext) error {
	if e.before() {
		e.evict(elems)
	}
	return nil
}

// EvictAfter evicts when the evictor runs after.
func (e *TimeEvictor[W]) EvictAfter(elems Elements, _ W, _ EvictorContext) error {
	if !e.before() {
		e.evict(elems)
	}
	return nil
}

// DeltaEvictor evicts the elements whose delta to the window's last element
// is at or above Threshold (Flink's DeltaEvictor).
type DeltaEvictor[T any, W Window] struct {
	threshold float64
	delta     func(a, b T) float64
	after
}

// DeltaEvictorOf returns a DeltaEvictor.
func DeltaEvictorOf[T any, W Window](threshold float64, delta func(a, b T) float64, doEvictAfter ...bool) *DeltaEvictor[T, W] {
	return &DeltaEvictor[T, W]{threshold: threshold, delta: delta, after: after(len(doEvictAfter) > 0 && doEvictAfter[0])}
}

func (e *DeltaEvictor[T, W]) evict(elems Elements) error {
	n := elems.Len()
	if n == 0 {
		return nil
	}
	last, ok := elems.Value(n - 1).(*T)
	if !ok {
		return fmt.Errorf("window: DeltaEvictor of %T given an element %T", (*T)(nil), elems.Value(n-1))
	}
	for i := 0; i < n; i++ {
		if e.delta(*elems.Value(i).(*T), *last) >= e.threshold {
			elems.Evict(i)
		}
	}
	return nil
}

// EvictBefore evicts unless the evictor runs after.
func (e *DeltaEvictor[T, W]) EvictBefore(elems Elements, _ W, _ EvictorContext) error {
	if e.before() {
		return e.evict(elems)
	}
	return nil
}

// EvictAfter evicts when the evictor runs after.
func (e *DeltaEvictor[T, W]) EvictAfter(elems Elements, _ W, _ EvictorContext) error {
	if !e.before() {
		return e.evict(elems)
	}
	return nil
}

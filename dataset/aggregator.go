package dataset

import (
	"cmp"
	"sync"
)

// Aggregator combines values that the functions of an iteration's step
// contribute during a superstep, across all subtasks (Flink's iteration
// aggregators): Add contributes, and at the superstep barrier the combined
// value becomes Previous, readable in the next superstep and by ConvergeWhen.
// Add is safe from any subtask; it takes a lock, so contribute once per
// partition or batch (MapPartition) rather than once per record on hot paths.
type Aggregator[A any] struct {
	mu        sync.Mutex
	zero      A
	combine   func(a, b A) A
	cur, prev A
}

// NewAggregator registers an aggregator with the iteration: zero is its value
// before any Add, combine merges two values (associative and commutative).
func NewAggregator[A any](it *Iteration, zero A, combine func(a, b A) A) *Aggregator[A] {
	a := &Aggregator[A]{zero: zero, combine: combine, cur: zero, prev: zero}
	it.lp.aggs = append(it.lp.aggs, a)
	return a
}

// SumAggregator adds up what it is given.
func SumAggregator[N Number](it *Iteration) *Aggregator[N] {
	return NewAggregator(it, 0, func(a, b N) N { return a + b })
}

// CountAggregator counts: Add(1) per event, or Add(n).
func CountAggregator(it *Iteration) *Aggregator[int64] { return SumAggregator[int64](it) }

// MinAggregator keeps the least value, starting from start (e.g. math.MaxFloat64).
func MinAggregator[N cmp.Ordered](it *Iteration, start N) *Aggregator[N] {
	return NewAggregator(it, start, func(a, b N) N { return min(a, b) })
}

// MaxAggregator keeps the greatest value, starting from start.
func MaxAggregator[N cmp.Ordered](it *Iteration, start N) *Aggregator[N] {
	return NewAggregator(it, start, func(a, b N) N { return max(a, b) })
}

// Add contributes v to this superstep's value.
func (a *Aggregator[A]) Add(v A) {
	a.mu.Lock()
	a.cur = a.combine(a.cur, v)
	a.mu.Unlock()
}

// Previous returns the value combined over the previous superstep (zero during
// the first).
func (a *Aggregator[A]) Previous() A {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.prev
}

func (a *Aggregator[A]) roll() {
	a.mu.Lock()
	a.prev, a.cur = a.cur, a.zero
	a.mu.Unlock()
}

func (a *Aggregator[A]) clear() {
	a.mu.Lock()
	a.prev, a.cur = a.zero, a.zero
	a.mu.Unlock()
}

package dataset

import (
	"cmp"
	"fmt"
	"sync"

	"github.com/weirdata/weir/dataset/agg"
	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/memory"
)

// LoopAggregator combines values that the functions of an iteration's step
// contribute during a superstep, across all subtasks (Flink's iteration
// aggregators): Add contributes, and at the superstep barrier the combined
// value becomes Previous, readable in the next superstep and by ConvergeWhen.
// Add is safe from any subtask; it takes a lock, so contribute once per
// partition or batch (MapPartition) rather than once per record on hot paths.
//
// Spread over processes (Options.Spread), each process combines its own
// subtasks' values and the barrier combines the processes' (A needs a
// serializer then): Previous is the whole superstep's in every process.
type LoopAggregator[A any] struct {
	mu        sync.Mutex
	zero      A
	combine   func(a, b A) A
	cur, prev A
	codec     *memory.Codec[A] // nil: A has no serializer
}

// NewLoopAggregator registers an aggregator with the iteration: zero is its
// value before any Add, combine merges two values (associative and
// commutative).
func NewLoopAggregator[A any](it *Iteration, zero A, combine func(a, b A) A) *LoopAggregator[A] {
	a := &LoopAggregator[A]{zero: zero, combine: combine, cur: zero, prev: zero, codec: typed.CodecOrNil[A]()}
	it.lp.aggs = append(it.lp.aggs, a)
	return a
}

// LoopSum is a loop aggregator that adds up what it is given.
func LoopSum[N agg.Number](it *Iteration) *LoopAggregator[N] {
	return NewLoopAggregator(it, 0, func(a, b N) N { return a + b })
}

// LoopCount is a loop aggregator that counts: Add(1) per event, or Add(n).
func LoopCount(it *Iteration) *LoopAggregator[int64] { return LoopSum[int64](it) }

// LoopMin is a loop aggregator that keeps the least value, starting from
// start (e.g. math.MaxFloat64).
func LoopMin[N cmp.Ordered](it *Iteration, start N) *LoopAggregator[N] {
	return NewLoopAggregator(it, start, func(a, b N) N { return min(a, b) })
}

// LoopMax is a loop aggregator that keeps the greatest value, starting from
// start.
func LoopMax[N cmp.Ordered](it *Iteration, start N) *LoopAggregator[N] {
	return NewLoopAggregator(it, start, func(a, b N) N { return max(a, b) })
}

// Add contributes v to this superstep's value.
func (a *LoopAggregator[A]) Add(v A) {
	a.mu.Lock()
	a.cur = a.combine(a.cur, v)
	a.mu.Unlock()
}

// Previous returns the value combined over the previous superstep (zero during
// the first).
func (a *LoopAggregator[A]) Previous() A {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.prev
}

func (a *LoopAggregator[A]) roll() {
	a.mu.Lock()
	a.prev, a.cur = a.cur, a.zero
	a.mu.Unlock()
}

func (a *LoopAggregator[A]) clear() {
	a.mu.Lock()
	a.prev, a.cur = a.zero, a.zero
	a.mu.Unlock()
}

func (a *LoopAggregator[A]) codecErr() error {
	if a.codec == nil {
		return fmt.Errorf("%s has no serializer", typeName[A]())
	}
	return nil
}

func (a *LoopAggregator[A]) current() ([]byte, error) {
	if err := a.codecErr(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.codec.Append(nil, &a.cur), nil
}

// decode decodes a whole value of b.
func (a *LoopAggregator[A]) decode(b []byte) (A, error) {
	var v A
	if err := a.codecErr(); err != nil {
		return v, err
	}
	n, err := a.codec.Decode(b, &v)
	if err == nil && n != len(b) {
		err = fmt.Errorf("%d bytes after the value", len(b)-n)
	}
	return v, err
}

func (a *LoopAggregator[A]) merge(b []byte) error {
	v, err := a.decode(b)
	if err != nil {
		return err
	}
	a.Add(v)
	return nil
}

func (a *LoopAggregator[A]) set(b []byte) error {
	v, err := a.decode(b)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.cur = v
	a.mu.Unlock()
	return nil
}

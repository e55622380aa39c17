package graph

import "testing"

type myInt int64

// TestOpOf: MinCombiner's and SumCombiner's values are recognized, a
// function of one's own and a named type's are not.
func TestOpOf(t *testing.T) {
	if op := opOf(MinCombiner[int64]()); op != opMin {
		t.Errorf("MinCombiner[int64]: %v", op)
	}
	if op := opOf(SumCombiner[float64]()); op != opSum {
		t.Errorf("SumCombiner[float64]: %v", op)
	}
	if op := opOf(func(a, b int64) int64 { return min(a, b) }); op != opCall {
		t.Errorf("a function of one's own: %v", op)
	}
	if op := opOf(SumCombiner[int64]()); op != opSum {
		t.Errorf("SumCombiner[int64]: %v", op)
	}
	if f := fastGet(newMailbox(4, 1, MinCombiner[myInt]())); f != nil {
		t.Error("a fast get for a named type")
	}
	if f := fastGet(newMailbox(4, 1, MinCombiner[int32]())); f == nil {
		t.Error("no fast get for int32")
	}
}

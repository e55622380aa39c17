package graph

import (
	"testing"
	"unsafe"
)

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

// TestWorkerStatePadded: what each worker writes per vertex (its Context,
// its broadcast counts, its scratch message) is followed by at least a
// cache line it does not write, so that two workers never write to one line.
func TestWorkerStatePadded(t *testing.T) {
	if s := unsafe.Sizeof(broadcasts{}); s < 64 {
		t.Errorf("broadcasts is %d bytes, want a cache line", s)
	}
	var c Context[int64, float64, struct{}, float64]
	if used, s := unsafe.Offsetof(c.agg)+unsafe.Sizeof(c.agg), unsafe.Sizeof(c); s-used < 64 {
		t.Errorf("Context has %d bytes after its fields, want 64", s-used)
	}
	type big struct{ a [13]float64 }
	check := func(name string, size uintptr, length, capacity int) {
		if length != 1 || uintptr(capacity-1)*size < 64 && size > 0 {
			t.Errorf("%s: scratch of %d and capacity %d (%d-byte messages), want 1 and 64 bytes spare", name, length, capacity, size)
		}
	}
	f, e, b := padded[float64](), padded[struct{}](), padded[big]()
	check("float64", 8, len(f), cap(f))
	check("struct{}", 0, len(e), cap(e))
	check("big", unsafe.Sizeof(big{}), len(b), cap(b))
}
